// What DIT's two URL grammars (base64 JSON requests, dit-json.ts; Thumbor
// paths, thumbor.ts) share: the query parameters DIT reads beside either, its
// `signature` (a hex HMAC-SHA256 of the path and the other parameters), its
// `expires`, the refusals that name DIT's operation, and their data. The data
// (names, words) is read from the function's store at the edge (useData) and
// from this code elsewhere, as the grammar's is.

import crypto from 'crypto';
import { grammarError } from '../../grammar/errors';
import type { DialectRequest, SignatureCheck } from './dialect';

/** The names and words the DIT translators read: data, so the edge function holds only the code. */
export interface DitData {
  /** Thumbor filters that are one native pair or none: filter name to `name=value` (`$0` the filter's argument; empty: changes nothing here). */
  filters: { [filter: string]: string };
  /** sharp's position names as DIT's resize takes them, to ours. */
  positions: { [sharp: string]: string };
  /** The colour names DIT's fill takes that a URL is likely to use, as hex. */
  colours: { [name: string]: string };
  /** The query parameters DIT reads beside a request, to our names. */
  query: { [name: string]: string };
  /** The words of a refusal: `$0` the operation as DIT names it, `$1` why. */
  refusal: string;
  /** Why, by reason. */
  why: { [reason: string]: string };
}

export const DIT_DATA: DitData = {
  filters: {
    autojpg: 'format=jpeg',
    background_color: 'background=$0',
    format: 'format=$0',
    grayscale: 'grayscale=1',
    max_bytes: 'max_bytes=$0',
    no_upscale: 'enlarge=0',
    quality: 'quality=$0',
    rotate: 'rotate=$0',
    smart_crop: 'position=face',
    // Metadata is stripped unless a URL asks to keep it.
    strip_exif: '',
    strip_icc: '',
    upscale: 'enlarge=1',
  },
  positions: {
    centre: 'center',
    north: 'top',
    east: 'right',
    south: 'bottom',
    west: 'left',
    northeast: 'top-right',
    southeast: 'bottom-right',
    southwest: 'bottom-left',
    northwest: 'top-left',
    'right top': 'top-right',
    'right bottom': 'bottom-right',
    'left bottom': 'bottom-left',
    'left top': 'top-left',
  },
  colours: { white: 'fff', black: '000', transparent: '00000000' },
  query: { format: 'format', fit: 'fit', width: 'width', height: 'height', rotate: 'rotate', flip: 'flip', flop: 'flop', grayscale: 'grayscale', greyscale: 'grayscale' },
  refusal: 'DIT $0: $1.',
  why: {
    unsupported: 'not supported here',
    base64: 'not a base64-encoded JSON request',
    large: 'longer or deeper than any image request',
    object: 'expected an object',
    key: 'expected the source key, a string',
    bucket: "not one of this deployment's buckets",
    crop: "a crop in pixels needs the source's size, which the edge does not know (a native URL's crop takes fractions)",
    smart: 'needs a resize with both width and height here',
    face: 'only the first face, with no padding',
    watermark: "names a watermark of this deployment by its file's name; its placement is the watermark's own",
    quality: 'only quality is supported',
    filters: 'too many filters',
    path: 'not a Thumbor path',
  },
};

/** The data in use: this code's, or at the edge its store's. */
export let DIT: DitData;
export const useDitData = (data: object): void => {
  DIT = data as DitData;
};
// The edge's bundle drops statements labelled `fromCode` (lib/edge-function.ts) and with them the data.
fromCode: useDitData(DIT_DATA);

/** The refusal of a DIT operation, `op` as DIT names it, for `reason` (a key of DitData.why). */
export const ditRefusal = (op: string, reason: string) =>
  grammarError('invalid_parameter', DIT.refusal.replace('$0', op.slice(0, 60)).replace('$1', DIT.why[reason] as string));

/** Native pairs as they are worked out: a later value of a name replaces an earlier one, as DIT's edits do. */
export type NativeOps = { [name: string]: string };

export const hasOwn = (object: object, name: string) => ({}).hasOwnProperty.call(object, name);

/**
 * Applies the query parameters DIT reads beside any request (they override the
 * request's edits), in place: width or height 0 means none.
 */
export const applyDitQuery = (ops: NativeOps, pairs: [string, string][]): void => {
  pairs.forEach((pair) => {
    const name = pair[0];
    if (!hasOwn(DIT.query, name)) return;
    const native = DIT.query[name] as string;
    if (pair[1] === '0' && (native === 'width' || native === 'height')) delete ops[native];
    else ops[native] = pair[1];
  });
};

export const toPairs = (ops: NativeOps): [string, string][] => Object.keys(ops).map((name) => [name, ops[name] as string]);

/** DIT's `expires`, `YYYYMMDDTHHmmssZ`, in Unix seconds; NaN when it is not such a time. */
const expirySeconds = (value: string): number => {
  const parts = /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/.exec(value);
  return parts ? Date.UTC(+parts[1]!, +parts[2]! - 1, +parts[3]!, +parts[4]!, +parts[5]!, +parts[6]!) / 1000 : NaN;
};

/** Compares in time that depends only on the length. */
const same = (a: string, b: string): boolean => {
  let difference = a.length ^ b.length;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
};

/** Whether `signature` is the `algorithm` HMAC, in `encoding`, of `text` under any of `secrets` (each tried). */
export const hmacMatches = (
  algorithm: 'sha256' | 'sha1',
  encoding: 'hex' | 'base64',
  text: string,
  signature: string,
  secrets: string[],
): boolean =>
  secrets.filter((secret) => same(crypto.createHmac(algorithm, secret).update(text).digest(encoding) as string, signature)).length > 0;

/** The path as DIT's Lambda saw it (decoded), or undefined when it cannot be decoded. */
export const decodedPath = (uri: string): string | undefined => {
  try {
    return decodeURIComponent(uri);
  } catch (_malformed) {
    return undefined;
  }
};

/**
 * DIT's `signature`: the hex HMAC-SHA256 of the path, followed when there are
 * other query parameters by `?` and them, sorted, as `name=value` joined by
 * `&`; with `expires` (covered like any parameter), the URL stops working then.
 */
export const verifyDitSignature = (request: DialectRequest, secrets: string[], nowSeconds: number): SignatureCheck => {
  const pairs = request.pairs;
  const given = pairs.filter((pair) => pair[0] === 'signature');
  if (given.length === 0) return 'unsigned';
  // Sorted as DIT sorts [name, value] arrays: by their text, `name,value`.
  const others = pairs
    .filter((pair) => pair[0] !== 'signature')
    .sort((a, b) => (a.join() < b.join() ? -1 : 1))
    .map((pair) => pair.join('='));
  const path = decodedPath(request.uri);
  const text = path + (others.length ? '?' + others.join('&') : '');
  if (given.length > 1 || path == null || !hmacMatches('sha256', 'hex', text, (given[0] as [string, string])[1], secrets)) return 'invalid';
  const expires = pairs.filter((pair) => pair[0] === 'expires')[0];
  // Covered by the signature, so a malformed one is the signer's.
  return expires && !(expirySeconds(expires[1]) > nowSeconds) ? 'expired' : 'valid';
};
