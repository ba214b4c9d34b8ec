// Where a web source may be fetched from: before each request (the first and
// every redirect), the URL's scheme, credentials and host are checked, the
// host is resolved here, and every address it has must be public. The request
// then connects to those addresses only, so a name that resolves differently
// a moment later (DNS rebinding) changes nothing.

import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { HttpError } from '../errors';
import { addressRefusal } from './addresses';

/** Resolves a host name to all its addresses, as `dns.lookup` with `all` does. */
export type Resolve = (hostname: string) => Promise<LookupAddress[]>;

const systemResolve: Resolve = (hostname) => lookup(hostname, { all: true, verbatim: true });

export interface DestinationRules {
  /** Hosts a URL (and every redirect) may name, lower-case, exact match (e.g. 'images.example.com'). */
  allowedHosts: readonly string[];
  /** Test-only: lets loopback addresses through. Set only by code (tests, the local emulator), never from an environment variable or CDK prop. */
  allowLoopback?: boolean;
  /** Test-only: resolves host names instead of the system's resolver. */
  resolve?: Resolve;
}

export const notAllowed = (detail: string) =>
  new HttpError('source_not_allowed', 'The source is not at an address this service may fetch from.', detail);

export const unavailable = (detail: string) =>
  new HttpError('source_unavailable', "The source's web server did not answer with the image; try again later.", detail);

/** The checked addresses to connect to for `url`, or a `source_not_allowed` error naming why not. */
export async function checkedAddresses(url: URL, rules: DestinationRules): Promise<LookupAddress[]> {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw notAllowed(`scheme ${url.protocol}`);
  if (url.username || url.password) throw notAllowed(`credentials in ${url.host}`);
  if (!rules.allowedHosts.includes(url.hostname)) throw notAllowed(`host ${url.hostname} is not allowed`);
  // A literal IP is never looked up (nor would the connection's lookup hook see it): judge it here.
  const literal = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let addresses: LookupAddress[];
  if (isIP(literal)) {
    addresses = [{ address: literal, family: isIP(literal) }];
  } else {
    try {
      addresses = await (rules.resolve ?? systemResolve)(url.hostname);
    } catch (error) {
      throw unavailable(`resolving ${url.hostname}: ${(error as Error).message}`);
    }
    if (addresses.length === 0) throw unavailable(`${url.hostname} has no address`);
  }
  for (const { address } of addresses) {
    const refusal = addressRefusal(address, rules.allowLoopback);
    if (refusal) throw notAllowed(`${url.hostname} is ${address}: ${refusal}`);
  }
  return addresses;
}
