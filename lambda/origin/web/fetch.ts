// A source fetched from a web origin, the hostile internet: only from
// allow-listed hosts at public addresses (destination.ts, checked again on
// every redirect, followed here by hand), with no credentials or cookies sent,
// at most `maxBytes` read, the whole fetch ended by the caller's signal, and
// the type told by the bytes, never by Content-Type.

import http, { type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { HttpError } from '../errors';
import { detectFormat, SNIFF_BYTES } from '../image/detect';
import { readBounded } from '../storage';
import { checkedAddresses, notAllowed, unavailable, type DestinationRules } from './destination';

export interface WebFetchOptions extends DestinationRules {
  /** Bytes read at most; more is 413 source_too_large (Content-Length first, then counted). */
  maxBytes: number;
  /** Ends the whole fetch (name resolution, connection, redirects, body): the caller's deadline. Any abort is a 504 timeout. */
  signal: AbortSignal;
  /** The validators of the copy we have, for a conditional request. */
  validators?: { etag?: string; lastModified?: string };
  /** Test-only: the certificates trusted instead of Node's (a local https server's self-signed one). Set only by code, never from the environment. */
  trustedCertificates?: string | Buffer;
}

export type WebFetchResult = { status: 'fetched'; bytes: Buffer; etag?: string; lastModified?: string } | { status: 'not-modified' };

/** Redirects followed at most; one more is a 502. */
export const MAX_REDIRECTS = 3;

/** Sent with every request, so an origin's operator can tell these fetches apart. */
export const USER_AGENT = 'edge-image-transformer';

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

const timedOut = () => new HttpError('timeout', 'The source did not arrive in time.', 'web source: the fetch was aborted at the deadline');

/** Exactly these headers, and the Host and Connection Node adds: no cookie, no authorization, nothing of the viewer's. */
function requestHeaders(validators: WebFetchOptions['validators']): OutgoingHttpHeaders {
  return {
    'user-agent': USER_AGENT,
    accept: 'image/*',
    // Compressed bodies would be sniffed, and counted, as their compressed bytes.
    'accept-encoding': 'identity',
    ...(validators?.etag && { 'if-none-match': validators.etag }),
    ...(validators?.lastModified && { 'if-modified-since': validators.lastModified }),
  };
}

/** A lookup that answers with the addresses already checked, whatever the name would resolve to now. */
const pinnedLookup =
  (addresses: LookupAddress[]): LookupFunction =>
  (_hostname, options, callback) => {
    if (options.all) return callback(null, addresses);
    const [first] = addresses as [LookupAddress];
    callback(null, first.address, first.family);
  };

/** `work`, or the timeout error as soon as `signal` aborts. */
async function beforeDeadline<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  let stop: () => void = () => {};
  const aborted = new Promise<never>((_, reject) => {
    stop = () => reject(timedOut());
    signal.addEventListener('abort', stop, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    signal.removeEventListener('abort', stop);
  }
}

function get(url: URL, addresses: LookupAddress[], headers: OutgoingHttpHeaders, options: WebFetchOptions): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    // A fresh connection each time (no agent's pool), to the checked addresses; Node keeps the
    // URL's host name for the Host header, TLS SNI and the certificate check, which no
    // NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment may turn off. Each checked address is
    // tried in turn (an IPv6 one first is no use where there is no IPv6 route, as in Lambda).
    const connection = { agent: false, lookup: pinnedLookup(addresses), autoSelectFamily: true, rejectUnauthorized: true } as const;
    const trust = options.trustedCertificates === undefined ? {} : { ca: options.trustedCertificates };
    const request = client.request(url, { headers, signal: options.signal, ...connection, ...trust }, resolve);
    request.on('error', reject);
    request.end();
  });
}

/** The body, at most `maxBytes`, refused as soon as its first bytes show it is no image. */
function readImage(response: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = response.headers['content-length'];
  return readBounded(response, declared === undefined ? undefined : Number(declared), maxBytes, {
    bytes: SNIFF_BYTES,
    check(head) {
      if (detectFormat(head) === undefined) {
        throw new HttpError(
          'unsupported_media_type',
          'The web source did not send an image.',
          `declared ${response.headers['content-type']}`,
        );
      }
    },
  });
}

/** What an upstream status other than 200, 304 or a redirect means to a viewer. */
function upstreamFailure(status: number): HttpError {
  // Like a bucket without ListBucket, many sites answer 401 or 403 for what they will not serve.
  if ([401, 403, 404, 410].includes(status))
    return new HttpError('not_found', 'The web origin has no image at this path.', `web source answered ${status}`);
  return unavailable(`web source answered ${status}`);
}

/**
 * Fetches `url`, following at most MAX_REDIRECTS redirects, each checked as
 * the first. Throws HttpError: 403 source_not_allowed (scheme, credentials,
 * host or address refused), 404 not_found, 413 source_too_large, 415
 * unsupported_media_type, 502 source_unavailable, 504 timeout.
 */
export async function fetchWebSource(url: URL, options: WebFetchOptions): Promise<WebFetchResult> {
  const { signal } = options;
  const headers = requestHeaders(options.validators);
  const conditional = Boolean(options.validators?.etag || options.validators?.lastModified);
  let current = url;
  for (let redirects = 0; ; redirects++) {
    if (signal.aborted) throw timedOut();
    const addresses = await beforeDeadline(checkedAddresses(current, options), signal);
    let response: IncomingMessage | undefined;
    try {
      response = await get(current, addresses, headers, options);
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (REDIRECT_STATUSES.has(status) && location !== undefined) {
        if (redirects === MAX_REDIRECTS) throw unavailable(`more than ${MAX_REDIRECTS} redirects`);
        current = redirectTarget(location, current);
        continue;
      }
      if (status === 304 && conditional) return { status: 'not-modified' };
      if (status !== 200) throw upstreamFailure(status);
      const bytes = await readImage(response, options.maxBytes);
      return { status: 'fetched', bytes, etag: response.headers.etag, lastModified: response.headers['last-modified'] };
    } catch (error) {
      if (signal.aborted) throw timedOut();
      if (error instanceof HttpError) throw error;
      throw unavailable(`${(error as NodeJS.ErrnoException).code ?? ''} ${(error as Error).message}`.trim());
    } finally {
      // The body of a redirect or a refusal is never read; with no pooled agent this closes the connection.
      response?.destroy();
    }
  }
}

/** Where a redirect from `from` leads; never from https down to http, which would send the fetch in the clear. */
export function redirectTarget(location: string, from: URL): URL {
  let target: URL;
  try {
    target = new URL(location, from);
  } catch {
    throw unavailable(`redirect to an invalid URL ${location.slice(0, 200)}`);
  }
  if (from.protocol === 'https:' && target.protocol === 'http:') throw notAllowed(`redirect from https to ${target.href.slice(0, 200)}`);
  return target;
}
