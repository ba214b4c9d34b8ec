// Web origins: a key prefix served from a site over HTTP(S) instead of a
// bucket. `shop/` mapped to `https://shop.example.com/images/` reads the key
// `shop/a/b.jpg` from `https://shop.example.com/images/a/b.jpg`, and only
// that site's host may answer it (redirects included).

import { isObject, mustBe } from '../../common/checks';
import { prefixesRefusal } from '../../common/sources';
import { encodeKeyPath } from '../../grammar';

export interface WebOrigin {
  /** The base URL a key's remainder is appended to: http(s), ending in `/`, no credentials, query or fragment. */
  url: string;
  /** How long a variant is served as it is before its source is asked again whether it changed. */
  revalidateSeconds: number;
}

/** A day: a web source has no event that says it changed, so its variants are checked this often. */
export const DEFAULT_REVALIDATE_SECONDS = 86_400;

/** Path segments of letters, digits, `.`, `_` and `-` (prefixesRefusal has refused `.` and `..` already). */
const PATH_PATTERN_PREFIX = /^(?:[A-Za-z0-9._-]+\/)+$/;

export interface WebSource {
  url: URL;
  /** The one host the fetch may talk to. */
  host: string;
  origin: WebOrigin;
}

/**
 * The web source of `key`, which is under `prefix`, served by `origin`. Keys
 * have no empty, `.` or `..` segments (validateKey), so the URL stays under
 * the base path.
 */
export function webSourceAt(key: string, prefix: string, origin: WebOrigin): WebSource {
  const url = new URL(origin.url + encodeKeyPath(key.slice(prefix.length)).slice(1));
  return { url, host: url.hostname, origin };
}

/**
 * Why `url` cannot be a web origin's base URL, or undefined when it can: the
 * synth-time check (lib/) and the environment reader share it.
 */
export function webOriginUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'an absolute http(s) URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'an http(s) URL';
  if (parsed.username || parsed.password) return 'a URL without credentials';
  if (parsed.search || parsed.hash || url.includes('?') || url.includes('#')) return 'a URL without a query or fragment';
  if (!parsed.pathname.endsWith('/') || parsed.href !== url)
    return 'a URL in its normal form ending in "/" (e.g. https://example.com/images/)';
  return undefined;
}

/**
 * `given` (prefix to `{ url, revalidateSeconds? }`) checked as web origins, the
 * default revalidation applied: what the construct checks at synth and the
 * origin when it reads its environment. `name` is the setting as the operator
 * wrote it; `fail` makes the error thrown.
 */
export function checkedWebOrigins(
  given: Record<string, unknown>,
  name: string,
  fail: (message: string) => Error,
): Record<string, WebOrigin> {
  const prefixes = Object.keys(given);
  const refusal = prefixesRefusal(name, prefixes);
  if (refusal) throw fail(refusal);
  return Object.fromEntries(
    prefixes.map((prefix) => {
      const field = `${name}[${JSON.stringify(prefix)}]`;
      // Each web prefix is also a CloudFront path pattern (`/<prefix>*`), matched as written.
      if (!PATH_PATTERN_PREFIX.test(prefix))
        throw fail(
          mustBe(
            `a ${name} prefix`,
            'made of letters, digits, ".", "_" and "-", which a CloudFront path pattern matches as written',
            prefix,
          ),
        );
      const origin = given[prefix];
      if (!isObject(origin)) throw fail(mustBe(field, 'an object such as {"url":"https://example.com/images/"}', origin));
      const urlProblem = typeof origin.url === 'string' ? webOriginUrlProblem(origin.url) : 'an absolute http(s) URL';
      if (urlProblem) throw fail(mustBe(`${field}.url`, urlProblem, origin.url));
      // The construct's prop gives a Duration (revalidateAfter), the context and the environment seconds.
      const after = origin.revalidateAfter as { toSeconds(options: { integral: boolean }): number } | undefined;
      const seconds = origin.revalidateSeconds ?? after?.toSeconds({ integral: false }) ?? DEFAULT_REVALIDATE_SECONDS;
      if (!Number.isSafeInteger(seconds) || (seconds as number) < 1)
        throw fail(mustBe(`${field}.revalidateSeconds`, 'a whole number of seconds, at least 1', seconds));
      return [prefix, { url: origin.url as string, revalidateSeconds: seconds as number }];
    }),
  );
}
