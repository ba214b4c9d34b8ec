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

import { PARAMS } from '../lambda/grammar/index';

/** How long browsers and proxies keep a variant by default: an hour (see browserMaxAge). */
export const DEFAULT_BROWSER_MAX_AGE_SECONDS = 3600;

/** What every image response varies on: the format negotiated from Accept. */
export const FORMAT_VARY = 'Accept';
/** The hints `width=auto` reads (the DPR only without Sec-CH-Width), and Save-Data. */
export const WIDTH_HINTS_VARY = 'Sec-CH-Width, Sec-CH-Viewport-Width, Sec-CH-DPR, Save-Data';
/** The hints `dpr=auto` alone reads. */
export const DPR_HINTS_VARY = 'Sec-CH-DPR, Save-Data';

/** Every spelling of a parameter a viewer may give (lower-case). */
function spellings(name: string): string[] {
  const param = PARAMS.find((candidate) => candidate.name === name) as (typeof PARAMS)[number];
  return [param.name as string].concat(param.aliases);
}

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
    `var HINTED = [[${JSON.stringify(spellings('width'))}, ${JSON.stringify(WIDTH_HINTS_VARY)}], [${JSON.stringify(spellings('dpr'))}, ${JSON.stringify(DPR_HINTS_VARY)}]];`,
    '',
    '/** The hints this request\'s `auto` parameters read, or an empty string. */',
    'function hintsVaried(querystring) {',
    '  var autos = [];',
    '  Object.keys(querystring).forEach(function (name) {',
    '    var field = querystring[name];',
    '    (field.multiValue || [field]).forEach(function (one) {',
    '      var value = one.value;',
    '      try { value = decodeURIComponent(value); } catch (e) {}',
    "      if (value.toLowerCase() === 'auto') autos.push(name.toLowerCase());",
    '    });',
    '  });',
    '  for (var i = 0; i < HINTED.length; i++) {',
    '    if (HINTED[i][0].some(function (spelling) { return autos.indexOf(spelling) !== -1; })) return HINTED[i][1];',
    '  }',
    "  return '';",
    '}',
    '',
    'function handler(event) {',
    '  var response = event.response;',
    "  var header = response.headers['cache-control'];",
    '  if (STATUSES.indexOf(response.statusCode) !== -1 && header && header.value === VARIANT) {',
    "    response.headers['cache-control'] = { value: browserLifetime(event.request.querystring) };",
    '    delete response.headers.age;',
    '  }',
    '  var hints = hintsVaried(event.request.querystring);',
    '  if (hints) {',
    '    var vary = response.headers.vary;',
    `    response.headers.vary = { value: (vary ? vary.value : ${JSON.stringify(FORMAT_VARY)}) + ', ' + hints };`,
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
