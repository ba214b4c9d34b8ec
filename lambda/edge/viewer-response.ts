// The viewer-response CloudFront Function (cloudfront-js-2.0). It gives
// browsers and downstream shared caches a short lifetime for variants, while
// CloudFront (and the cache bucket) keep the origin's long one: CloudFront
// caches by the Cache-Control it got from the origin, and this function only
// changes what the viewer receives. lib/viewer-response-function.ts bundles
// it as lib/edge-function.ts bundles the viewer-request function, with the
// deployment's settings baked in (RESPONSE below).
//
// Why a function and not a response headers policy: a policy's custom header
// applies to every response of the behavior whatever its status, so
// overriding Cache-Control there would also make a 302 or an error that
// says `no-store` cacheable in browsers. CloudFront runs no viewer-response
// function for an origin answer of 400 or more, and this one rewrites only a
// 200, 206 or 304 whose Cache-Control is exactly the variants' own
// (`cacheControl`): errors and redirects keep the origin's header.
//
// It also drops `Age`: CloudFront's Age counts from when it cached the
// object, and a browser subtracts it from max-age, so an image CloudFront has
// held for a day would be stale on arrival under a one-hour browser lifetime
// and revalidated on every use.
//
// And it says Vary on the client hints to a viewer who asked `width=auto` or
// `dpr=auto`: CloudFront keys the variant on the canonical URI, where the
// edge wrote the width the hints chose, but browsers and proxies key on the
// URL they asked for, which is the same for a phone and a desktop. An
// explicit URL does not vary on hints. The function reads `auto` from the
// query, whichever spelling it sees: the viewer's own, or the one the
// viewer-request function forwards (`width=auto`). Presets cannot hold `auto`
// (presetRefusal), as the query would not show it.
//
// A signed URL that expires (`exp`, Unix seconds) is kept no longer than it
// lives: max-age is the seconds it has left when fewer. The edge refuses it
// from then on, but a copy a browser or proxy holds would outlive it. `exp`
// is read by any letter case, from the query as the viewer sent it or as the
// viewer-request function forwards it (the same name and value).

import type { CloudFrontFunctionsEvent, CloudFrontFunctionsQuerystring } from 'aws-lambda';

/** What every image response varies on: the format negotiated from Accept. */
export const FORMAT_VARY = 'Accept';

const MAX_AGE = 'public, max-age=';
const NO_CACHE = 'public, no-cache';

/** What viewers are told: `public, max-age=<seconds>`, or for 0 `public, no-cache` (always revalidate). */
export const browserCacheControl = (maxAgeSeconds: number): string => (maxAgeSeconds === 0 ? NO_CACHE : MAX_AGE + maxAgeSeconds);

/** The deployment's settings, baked into the function as constants (lib/viewer-response-function.ts). */
export interface ResponseSettings {
  /** The Cache-Control the origin gives variants (the construct's cacheControl). */
  variantCacheControl: string;
  /** How long viewers keep them instead, or less for a URL that expires sooner. */
  browserMaxAgeSeconds: number;
  /** Per parameter whose `auto` reads client hints: its spellings (lower-case), and the hints it reads. */
  hinted: [string[], string][];
}

/** The settings, each field defined by the bundler. */
declare const RESPONSE: ResponseSettings;

/** The statuses whose Cache-Control is the variant's: the image, a range of it, and a revalidation. */
const REWRITTEN_STATUSES = [200, 206, 304];

/** The hints this request's `auto` parameters read, or an empty string. */
const hintsVaried = (querystring: CloudFrontFunctionsQuerystring): string => {
  const autos: string[] = [];
  Object.keys(querystring).forEach((name) => {
    const field = querystring[name] as CloudFrontFunctionsQuerystring[string];
    (field.multiValue || [field]).forEach((one) => {
      let value = one.value;
      try {
        value = decodeURIComponent(value);
      } catch (_malformed) {
        // Left as sent: it cannot be `auto`.
      }
      if (value.toLowerCase() === 'auto') autos.push(name.toLowerCase());
    });
  });
  const hinted = RESPONSE.hinted.filter((entry) => entry[0].some((spelling) => autos.indexOf(spelling) !== -1))[0];
  return hinted ? hinted[1] : '';
};

/** The browser's Cache-Control: the browser lifetime, or the seconds an expiring URL has left when fewer. */
const browserLifetime = (querystring: CloudFrontFunctionsQuerystring): string => {
  let left = NaN;
  Object.keys(querystring).forEach((name) => {
    if (name.toLowerCase() === 'exp') left = Math.floor(Number((querystring[name] as { value: string }).value) - Date.now() / 1000);
  });
  if (!(left < RESPONSE.browserMaxAgeSeconds)) return browserCacheControl(RESPONSE.browserMaxAgeSeconds);
  return left > 0 ? MAX_AGE + left : NO_CACHE;
};

export const viewerResponse = (event: CloudFrontFunctionsEvent): CloudFrontFunctionsEvent['response'] => {
  const response = event.response;
  const headers = response.headers;
  const header = headers['cache-control'];
  if (REWRITTEN_STATUSES.indexOf(response.statusCode) !== -1 && header && header.value === RESPONSE.variantCacheControl) {
    headers['cache-control'] = { value: browserLifetime(event.request.querystring) };
    delete headers.age;
  }
  const hints = hintsVaried(event.request.querystring);
  if (hints) {
    const vary = headers.vary;
    headers.vary = { value: (vary ? vary.value : FORMAT_VARY) + ', ' + hints };
  }
  return response;
};
