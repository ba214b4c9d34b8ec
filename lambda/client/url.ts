// Image URLs for front-end code: `https://<base>/<encoded key>?<params>`.
//
// Built with the edge's own grammar, so a bad key or parameter throws here,
// with the message the edge would answer 400 with, when the page is built
// rather than when a browser asks. Parameters come out under their canonical
// names, with normalised values, in the grammar's op order, with defaults and
// no-ops dropped and `dpr` folded into the size: every call that means the
// same image yields the same string, so pages share browser and CDN caches.
//
// Imports only the grammar modules that are plain code (not sign.ts, which
// needs `crypto`), so a browser bundle of this file is self-contained. Signing
// lives in ./sign.ts, for servers.

import { canonicalOps, parseViewerParams, presetName, viewerQuery } from '../grammar/canonical';
import { encodeKeyPath, validateKey } from '../grammar/key';
import {
  DEFAULT_GRAMMAR_OPTIONS,
  PARAMS,
  PARAMS_BY_NAME,
  PRESET_SPELLINGS,
  SIGNATURE_PARAMS,
  VIEWER_PARAMS,
  type GrammarOptions,
  type ParsedParams,
  type RequestedFormat,
  type Rotation,
  type ViewerParams,
} from '../grammar/params';
import { invalidParameter } from '../grammar/validate';

export type { GrammarOptions } from '../grammar/params';

/**
 * The URL parameters (see the README's parameter table), under their
 * canonical names, typed from the grammar's own parameter table. At run time
 * aliases (`w`, `q`, `fm`, ...) and any letter case are accepted as the edge
 * accepts them; an unknown name throws.
 */
export type ImageParams = Omit<ViewerParams, 'format' | 'rotate'> & {
  format?: RequestedFormat | 'jpg';
  rotate?: 0 | Rotation;
  /** A preset name of the deployment; the other parameters override it. */
  preset?: string;
};

/** The canonical name of every parameter a URL may carry, from the grammar's table: the ops in order, then `preset`. */
export const IMAGE_PARAM_NAMES: string[] = VIEWER_PARAMS.map((param) => param.name as string).concat(PRESET_SPELLINGS[0] as string);

/** `params` as name/value pairs; an unknown name, or a signature parameter, throws. */
export function imageParamPairs(params: ImageParams): [string, string][] {
  const pairs: [string, string][] = [];
  for (const [name, value] of Object.entries(params as Record<string, unknown>)) {
    if (value === undefined) continue;
    const spelling = name.toLowerCase();
    if ((SIGNATURE_PARAMS as string[]).indexOf(spelling) !== -1) {
      throw new Error(`Image parameter "${name}" is made by signedImageUrl or signedPrefix (lambda/client/sign.ts), not given.`);
    }
    if (!Object.prototype.hasOwnProperty.call(PARAMS_BY_NAME, spelling) && PRESET_SPELLINGS.indexOf(spelling) === -1) {
      throw new Error(`Unknown image parameter "${name}": expected one of ${IMAGE_PARAM_NAMES.join(', ')}.`);
    }
    pairs.push([name, typeof value === 'string' ? value : String(value)]);
  }
  return pairs;
}

const isPreset = (pair: [string, string]) => PRESET_SPELLINGS.indexOf(pair[0].toLowerCase()) !== -1;

/** Parsed viewer values as query text, canonical names in op order (booleans 1/0, `auto` kept). */
function paramsQuery(params: ParsedParams): string[] {
  const parts: string[] = [];
  PARAMS.forEach((param) => {
    const value = params[param.name];
    if (value === undefined) return;
    const text = value === true ? '1' : value === false ? '0' : String(value);
    parts.push(param.name + '=' + encodeURIComponent(text));
  });
  return parts;
}

/**
 * The canonical query string for `params` (no leading '?'; '' when nothing
 * remains). With a preset the result is `preset=<name>` followed by the
 * overrides, each normalised but all kept: whether an override is a no-op
 * depends on the preset's definition, which a browser does not have.
 */
export function imageQuery(params: ImageParams = {}, options: GrammarOptions = DEFAULT_GRAMMAR_OPTIONS): string {
  const pairs = imageParamPairs(params);
  const presets = pairs.filter(isPreset);
  // Without Accept: the edge negotiates `format=auto` (or none) for each viewer, and what
  // matters does not depend on that outcome (a quality stays unless the format is explicit).
  if (presets.length === 0) return viewerQuery(canonicalOps(parseViewerParams(pairs, options), options));

  const name = presetName(pairs) as string;
  if (name === '') throw invalidParameter('preset', name, 'a preset name');
  const overrides = pairs.filter((pair) => !isPreset(pair));
  // With the definitions at hand the grammar checks the name too; without, only the edge can.
  parseViewerParams(options.presets ? pairs : overrides, options);
  const parsed = parseViewerParams(overrides, { ...options, presetsOnly: false });
  return ['preset=' + encodeURIComponent(name)].concat(paramsQuery(parsed)).join('&');
}

/**
 * `https://<host>` from a host name (`d111111abcdef8.cloudfront.net`) or an
 * origin (`https://images.example.com`, `http://localhost:3000`). A path is
 * refused: the edge reads the whole path as the source key.
 */
export function imageOrigin(base: string): string {
  const invalid = () =>
    new Error(
      `Invalid image base "${base}": expected a host such as d111111abcdef8.cloudfront.net or an origin such as https://images.example.com, with no path.`,
    );
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(base) ? base : 'https://' + base);
  } catch {
    throw invalid();
  }
  if (
    (url.protocol !== 'https:' && url.protocol !== 'http:') ||
    url.pathname !== '/' ||
    url.search ||
    url.hash ||
    url.username ||
    url.password
  ) {
    throw invalid();
  }
  return url.origin;
}

/** The URL of `key` transformed by `params`, e.g. `https://d1.cloudfront.net/photos/my%20cat.jpg?width=640`. */
export function imageUrl(base: string, key: string, params: ImageParams = {}, options: GrammarOptions = DEFAULT_GRAMMAR_OPTIONS): string {
  const origin = imageOrigin(base);
  validateKey(key);
  const query = imageQuery(params, options);
  return origin + encodeKeyPath(key) + (query ? '?' + query : '');
}

/**
 * `url` with signature parameters appended: how a page signs the URLs it
 * builds with a prefix grant its server made (signedPrefix in ./sign.ts).
 */
export function withSignature(url: string, signature: string): string {
  return url + (url.indexOf('?') === -1 ? '?' : '&') + signature;
}

/** The width a request for `width` gets: snapped up to the next allowed size when sizes are known. */
function servedWidth(width: number, options: GrammarOptions): number {
  const sizes = options.sizes;
  if (!sizes) return width;
  for (const size of sizes) if (size >= width) return size;
  return width; // imageUrl has already refused it with the grammar's message
}

/**
 * A `srcset` value, `<url> 320w, <url> 640w, ...`, one candidate per width,
 * ascending. Widths that snap to the same allowed size give one candidate,
 * described by the size it is served at. `dpr` is refused: `w` descriptors
 * already let the browser pick for the screen's density.
 */
export function srcset(
  base: string,
  key: string,
  widths: number[],
  params: ImageParams = {},
  options: GrammarOptions = DEFAULT_GRAMMAR_OPTIONS,
): string {
  if (widths.length === 0) throw new Error('srcset needs at least one width.');
  for (const name of Object.keys(params)) {
    const spelling = name.toLowerCase();
    if ((params as Record<string, unknown>)[name] === undefined) continue;
    if (spelling === 'dpr') throw new Error('srcset takes no dpr: its w descriptors already let the browser pick for the screen density.');
    if (PARAMS_BY_NAME[spelling]?.name === 'width')
      throw new Error(`srcset takes its widths as an argument, not as the parameter "${name}".`);
  }
  const candidates = new Map<string, number>();
  for (const width of widths) {
    const url = imageUrl(base, key, { ...params, width }, options);
    if (!candidates.has(url)) candidates.set(url, servedWidth(width, options));
  }
  return [...candidates]
    .sort((a, b) => a[1] - b[1])
    .map(([url, width]) => `${url} ${width}w`)
    .join(', ');
}

/**
 * The parameters of a card (docs/templates.md): the template's name and its
 * fills, text slots' texts and image slots' source keys, as `fills` (the hex
 * of their JSON, keys sorted so that one card has one URL). The URL's key
 * fills the template's first image slot: `imageUrl(base, 'photos/beach.jpg',
 * cardParams('og', { title: 'Summer sale' }))`, or signedImageUrl with them.
 */
export function cardParams(template: string, fills: { [slot: string]: string } = {}, params: ImageParams = {}): ImageParams {
  const sorted: { [slot: string]: string } = {};
  Object.keys(fills)
    .sort()
    .forEach((slot) => {
      sorted[slot] = fills[slot] as string;
    });
  const bytes = new TextEncoder().encode(JSON.stringify(sorted));
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return { ...params, template, ...(Object.keys(sorted).length ? { fills: hex } : {}) };
}
