// Generates the viewer-response CloudFront Function that gives browsers and
// downstream shared caches a short lifetime for variants, while CloudFront
// (and the cache bucket) keep the origin's long one: CloudFront caches by the
// Cache-Control it got from the origin, and this function only changes what
// the viewer receives.
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
// A signed URL that expires (`exp`, Unix seconds) is kept no longer than it
// lives: max-age is the seconds it has left when fewer. The edge refuses it
// from then on, but a copy a browser or proxy holds would outlive it. `exp`
// is read by any letter case, from the query as the viewer sent it or as the
// viewer-request function forwards it (the same name and value).

/** How long browsers and proxies keep a variant by default: an hour (see browserMaxAge). */
export const DEFAULT_BROWSER_MAX_AGE_SECONDS = 3600;

/** The statuses whose Cache-Control is the variant's: the image, a range of it, and a revalidation. */
const REWRITTEN_STATUSES = [200, 206, 304];

const MAX_AGE = 'public, max-age=';
const NO_CACHE = 'public, no-cache';

/** What viewers are told: `public, max-age=<seconds>`, or for 0 `public, no-cache` (always revalidate). */
export function browserCacheControl(maxAgeSeconds: number): string {
  return maxAgeSeconds === 0 ? NO_CACHE : MAX_AGE + maxAgeSeconds;
}

export interface ViewerResponseSettings {
  /** The Cache-Control the origin gives variants (the construct's cacheControl). */
  variantCacheControl: string;
  /** How long viewers keep them instead (browserCacheControl), or less for a URL that expires sooner. */
  browserMaxAgeSeconds: number;
}

/** The function's code, for `FunctionCode.fromInline` with `FunctionRuntime.JS_2_0`. */
export function viewerResponseFunctionCode(settings: ViewerResponseSettings): string {
  return [
    `var VARIANT = ${JSON.stringify(settings.variantCacheControl)};`,
    `var BROWSER = ${JSON.stringify(browserCacheControl(settings.browserMaxAgeSeconds))};`,
    `var BROWSER_SECONDS = ${settings.browserMaxAgeSeconds};`,
    `var STATUSES = ${JSON.stringify(REWRITTEN_STATUSES)};`,
    'function handler(event) {',
    '  var response = event.response;',
    "  var header = response.headers['cache-control'];",
    '  if (STATUSES.indexOf(response.statusCode) !== -1 && header && header.value === VARIANT) {',
    "    response.headers['cache-control'] = { value: browserLifetime(event.request.querystring) };",
    '    delete response.headers.age;',
    '  }',
    '  return response;',
    '}',
    'function browserLifetime(query) {',
    '  var left = NaN;',
    "  for (var name in query) if (name.toLowerCase() === 'exp') left = Math.floor(Number(query[name].value) - Date.now() / 1000);",
    '  if (!(left < BROWSER_SECONDS)) return BROWSER;',
    `  return left > 0 ? ${JSON.stringify(MAX_AGE)} + left : ${JSON.stringify(NO_CACHE)};`,
    '}',
    '',
  ].join('\n');
}
