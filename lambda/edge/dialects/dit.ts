// What DIT's two URL grammars (base64 JSON requests, dit-json.ts; Thumbor
// paths, thumbor.ts) share: the rules that turn DIT's edits, Thumbor's
// segments and filters into native pairs, the query beside either (read as a
// native URL's, but for what DIT's functions do not read), its `signature` (a
// hex HMAC-SHA256 of the path and the other parameters) and `expires`, and the
// refusals that name DIT's operation. The rules and words are data, read from
// the function's store at the edge (useData) and from this code elsewhere, as
// the grammar's are, so that the function holds only code.

import crypto from 'crypto';
import { hasOwn } from '../../grammar/canonical';
import { grammarError } from '../../grammar/errors';
import type { DialectRequest, SignatureCheck } from './dialect';

/**
 * A rule: what one of DIT's values (an edit at a JSON path, a Thumbor
 * segment or filter's argument) sets among the native pairs. Its name, the
 * parameter it sets (none: it changes nothing), to the value or the value's
 * word in `values` (none for a value that is null, false, 0 or empty); or
 * with a fixed value, to that when the edit is given. A flag changes that:
 * `?` only where the parameter is not set yet, `~` a watermark's name (a
 * key's file name without its extension), `-` a value that must be none. A
 * name starting `%` is the quality of one format, which dit-json.ts keeps
 * when the output is that format.
 */
export type Rule = [name?: string, fixed?: string | null, flag?: '?' | '~' | '-'];

/** The names and words the DIT translators read. */
export interface DitData {
  /**
   * By JSON path, starting with `.` (`.edits.resize.width`), so that no key of
   * a request reaches a Thumbor rule; by Thumbor's segment (its `groups`) or
   * `filters:<name>`.
   */
  rules: { [path: string]: Rule };
  /** The words of DIT's values, by the native parameter they set: sharp's position names, colour names, withoutEnlargement's values. */
  values: { [name: string]: { [word: string]: string } };
  /** The native pairs, `name=value` lower-case, that DIT's functions refuse (an expression's source; the match names the refused): presets, and what their bundles leave out. */
  refused: string;
  /** A refusal's words, `$0` the operation as DIT names it: by its reason, or by the operation for one refused for a reason of its own. */
  why: { [reason: string]: string };
  /** A Thumbor path's segments (thumbor.ts), as an expression's source; a Thumbor function's data only. */
  path?: string;
  /** The rule of each of its groups by number: `$` stands for the group's text; none, a group thumbor.ts reads itself. */
  groups?: (string | null)[];
}

/** `word` in either case, as an expression's source (the store's expressions take no flags). */
const anyCase = (word: string): string => word.replace(/[a-z]/g, (letter) => `[${letter}${letter.toUpperCase()}]`);

/** The extensions of an image's key (DIT's list, parseRequestType, and the HEIC and HEIF a native URL here reads too). */
const IMAGE_TYPES = ['jpe?g', 'png', 'webp', 'avif', 'gif', 'tiff?', 'svg', 'heic', 'heif'];

/**
 * The segments' expression followed by the key's, in which a group of its own
 * holds the extension of a key whose last segment has one that is not an
 * image's, which DIT refuses. A key does not start with a filters segment,
 * so that a run of them is cut one way only (else each of its segments could
 * start the key, on and on); one that never closes is the key's. Not one holding `?` or `#`: a signed path that
 * decodes to one is a forgery, the signature check's 403. Each try of that
 * extension starts at a `.` and ends at the next, so it runs in linear time.
 */
const withKey = (segments: string): string =>
  segments + '((?!filters(?::\\w+\\([^)]*\\))+\\/).*?(?:\\.((?!(?:' + IMAGE_TYPES.map(anyCase).join('|') + ')$)[^./?#]+))?)$';

/**
 * The segments, each a group: 1 the HMAC (20 bytes in base64url, padded), 2
 * trim and its corner, 3 its tolerance, 4 a crop, 5 fit-in and its kind, 6
 * and 8 the flips, 7 and 9 width and height (none for 0), 10 the alignments,
 * 11 smart, 12 the filters' segments, 13 the bucket and 14 the filters'
 * segments after it (only after one: else a path could split its filters
 * between 12 and 14 in as many ways as it has segments; no argument holds
 * `)`), 15 the key and 16 its extension when it is not
 * an image's (withKey; thumbor.ts reads it of the decoded key). Each optional segment matches one way (a filters segment
 * starts `filters:`, the bucket's `s3:`), so it runs in linear time.
 */
const PATH = /* @__PURE__ */ withKey(
  '^\\/(?:([\\w-]{27}=)\\/|unsafe\\/)?(?:(trim(?::top-left|:bottom-right)?)(?::(\\d+))?\\/)?(?:(\\d+x\\d+:\\d+x\\d+)\\/)?(?:((?:full-|adaptive-)?fit-in)\\/)?(?:(-?)0*([1-9]\\d*|)x(-?)0*([1-9]\\d*|)\\/)?((?:(?:left|right|center)\\/)?(?:(?:top|bottom|middle)\\/)?)(?:(smart)\\/)?((?:filters(?::\\w+\\([^)]*\\))+\\/)*)(?:s3:([^/]+)\\/((?:filters(?::\\w+\\([^)]*\\))+\\/)*))?',
);

/** The rule of an edit at each of the JSON paths DIT documents. */
const JSON_RULES: { [path: string]: Rule } = {
  // Names the grammar does not read: dit-json.ts takes them from the ops (and overlayWith's bucket).
  '.key': ['key'],
  '.bucket': ['bucket'],
  // WebP's encoding effort: the output is the same image. DIT reads no other name at the top level (reductionEffort).
  '.effort': [],
  '.reductionEffort': [],
  '.outputFormat': ['format', null, '?'],
  '.edits.resize.width': ['width'],
  '.edits.resize.height': ['height'],
  '.edits.resize.fit': ['fit'],
  '.edits.resize.background': ['background'],
  '.edits.resize.position': ['position'],
  '.edits.resize.withoutEnlargement': ['enlarge'],
  // null is DIT's "do not orient by EXIF"; every output here is oriented.
  '.edits.rotate': ['rotate'],
  '.edits.flip': ['flip'],
  '.edits.flop': ['flop'],
  '.edits.grayscale': ['grayscale'],
  '.edits.greyscale': ['grayscale'],
  '.edits.blur': ['blur'],
  '.edits.sharpen': ['sharpen'],
  '.edits.toFormat': ['format'],
  '.edits.jpeg.quality': ['%jpeg'],
  '.edits.webp.quality': ['%webp'],
  '.edits.avif.quality': ['%avif'],
  '.edits.png.quality': ['%png'],
  '.edits.smartCrop': ['position', 'face'],
  '.edits.smartCrop.faceIndex': ['', null, '-'],
  '.edits.smartCrop.padding': ['', null, '-'],
  // Checked against the deployment's buckets at the edge (NativeRequest.overlay).
  '.edits.overlayWith.bucket': ['overlay'],
  '.edits.overlayWith.key': ['watermark', null, '~'],
};

/** The rule of each Thumbor segment (by the expression's `groups`) and filter. */
const THUMBOR_RULES: { [key: string]: Rule } = {
  // trim:bottom-right and adaptive-fit-in have no rule: they are refused.
  trim: ['trim', ''],
  'trim:top-left': ['trim', ''],
  'trim:tolerance': ['trim'],
  'fit-in': ['fit', 'inside'],
  'full-fit-in': ['fit', 'outside'],
  '-W': ['flop', '1'],
  W: ['width'],
  '-H': ['flip', '1'],
  H: ['height'],
  // The alignments (halign, then valign, each optional): where they place a cover crop.
  'left/': ['position', 'left'],
  'right/': ['position', 'right'],
  'center/': ['position', 'center'],
  'top/': ['position', 'top'],
  'bottom/': ['position', 'bottom'],
  'middle/': ['position', 'center'],
  'left/top/': ['position', 'top-left'],
  'left/middle/': ['position', 'left'],
  'left/bottom/': ['position', 'bottom-left'],
  'center/top/': ['position', 'top'],
  'center/middle/': ['position', 'center'],
  'center/bottom/': ['position', 'bottom'],
  'right/top/': ['position', 'top-right'],
  'right/middle/': ['position', 'right'],
  'right/bottom/': ['position', 'bottom-right'],
  // Faces, then what draws the eye.
  smart: ['position', 'face'],
  'filters:autojpg': ['format', 'jpeg'],
  'filters:background_color': ['background'],
  // DIT's blur and sharpen, as thumbor.ts works them out from the arguments.
  'filters:blur': ['blur'],
  'filters:sharpen': ['sharpen'],
  // With fit=contain (thumbor.ts).
  'filters:fill': ['background'],
  'filters:fill(blur)': ['fill', 'blur'],
  'filters:format': ['format'],
  'filters:grayscale': ['grayscale', '1'],
  'filters:max_bytes': ['max_bytes'],
  'filters:no_upscale': ['enlarge', '0'],
  'filters:quality': ['quality'],
  'filters:rotate': ['rotate'],
  'filters:smart_crop': ['position', 'face'],
  'filters:stretch': ['fit', 'fill', '?'],
  // Metadata is stripped unless a URL asks to keep it.
  'filters:strip_exif': [],
  'filters:strip_icc': [],
  // DIT's upscale is fit-in's fit (sharp enlarges unless told not to, as nativePairs does).
  'filters:upscale': ['fit', 'inside'],
  'filters:watermark': ['watermark', null, '~'],
};

/** The colour names a URL is likely to use, as hex, and DIT's other name for JPEG. */
const COLOURS = { white: 'fff', black: '000', transparent: '00000000' };
const FORMATS = { jpg: 'jpeg' };

/** The native pairs DIT's functions refuse (DitData.refused): a text among them, which their bundles do not read (EDGE_READS_TEXT). */
const REFUSED = '^(?:p|preset|crop|border|fp|dpr|text(?:-[a-z]+)?)(?==)|^(?:format|fm|f)=json$';

/** An operation we lack. */
const UNSUPPORTED = 'DIT $0: not supported here.';

/** The words of a JSON request's values. */
const JSON_VALUES: DitData['values'] = {
  position: {
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
  background: COLOURS,
  // withoutEnlargement: sharp enlarges unless told not to (nativePairs).
  enlarge: { true: '0', 1: '0' },
  format: FORMATS,
};

const JSON_WHY: DitData['why'] = {
  unsupported: UNSUPPORTED,
  value: 'DIT $0: expected none.',
  // The operations refused for a reason of their own.
  request: 'DIT $0: not a base64-encoded JSON request within 8 KB and 4 levels.',
  'edits.smartCrop': 'DIT $0: needs a resize with both width and height here.',
};

const THUMBOR_WHY: DitData['why'] = {
  unsupported: UNSUPPORTED,
  // Thumbor's crop segment, refused as what its group is named (THUMBOR_DATA.groups).
  'AxB:CxD': "DIT $0: a crop in pixels needs the source's size, which the edge does not know (a native URL's crop takes fractions).",
  // The operations refused for a reason of their own.
  'filters:watermark': "DIT $0: names a watermark of this deployment by its file's name; its placement is the watermark's own.",
  filters: 'DIT $0: at most 24 filters.',
};

/** What DIT's JSON function reads from its store. */
export const DIT_JSON_DATA: DitData = { rules: JSON_RULES, values: JSON_VALUES, refused: REFUSED, why: JSON_WHY };

/** What DIT's Thumbor function reads from its store. */
export const THUMBOR_DATA: DitData = {
  rules: THUMBOR_RULES,
  values: { background: COLOURS, format: FORMATS },
  refused: REFUSED,
  why: THUMBOR_WHY,
  path: PATH,
  groups: [null, null, '$', 'trim:tolerance', 'AxB:CxD', '$', '-W', 'W', '-H', 'H', '$', '$'],
};

/**
 * This code's data: both functions' in one (the keys of their rules never
 * meet: a JSON path starts with `.`), so that either translator reads it.
 * Pure calls, which the edge's bundle drops.
 */
export const DIT_DATA: DitData = /* @__PURE__ */ Object.assign({}, THUMBOR_DATA, {
  rules: /* @__PURE__ */ Object.assign({}, JSON_RULES, THUMBOR_RULES),
  values: JSON_VALUES,
  why: /* @__PURE__ */ Object.assign({}, JSON_WHY, THUMBOR_WHY),
});

/** The data in use: this code's, or at the edge its store's. */
export let DIT: DitData;
export const useDitData = (data: object): void => {
  DIT = data as DitData;
};
// The edge's bundle drops statements labelled `fromCode` (lib/edge-function.ts) and with them the data.
fromCode: useDitData(DIT_DATA);

/**
 * The refusal of a DIT operation, `op` as DIT names it (a JSON path without
 * its first `.`), for `reason` (a key of DitData.why); without one, for the
 * operation's own reason, else as one we lack. An `op` is never a name of
 * Object's prototype: a JSON path starts with `.`, a filter's with `filters:`,
 * and a Thumbor segment is one the path's expression allows.
 */
export const ditRefusal = (op: string, reason?: string) =>
  grammarError(
    'invalid_parameter',
    (DIT.why[reason || op] || (DIT.why.unsupported as string)).replace('$0', op.slice(+(op[0] === '.'), 60)),
  );

/** Native pairs as they are worked out: a later value of a name replaces an earlier one, as DIT's edits do. */
export type NativeOps = { [name: string]: string };

// The grammar's, so that the bundle holds it once.
export { hasOwn };

/** Applies the rule for `path` (a JSON path, or what Thumbor's segment or filter is named) to its value; throws, naming it, when there is none. */
export const applyRule = (ops: NativeOps, path: string, value: unknown): void => {
  if (!hasOwn(DIT.rules, path)) throw ditRefusal(path);
  const rule = DIT.rules[path] as Rule;
  const name = rule[0];
  if (rule[2] === '-' && value) throw ditRefusal(path, 'value');
  if (!name || !value || (rule[2] === '?' && ops[name] != null)) return;
  const words = DIT.values[name] || {};
  // A watermark's name is its key's file name without the extension; any other value is its text.
  const text = String(value).replace(rule[2] === '~' ? /^.*\/|\..*/g : /^$/, '');
  ops[name] = rule[1] != null ? rule[1] : hasOwn(words, text) ? (words[text] as string) : text;
};

/**
 * The native pairs once every edit is applied, sharp enlarging unless told
 * not to. The query's parameters are read as a native URL's (DIT's own,
 * `format`, `width`... are ours too) and override the edits of the same name;
 * what DIT's functions do not read (DitData.refused) is refused.
 */
export const nativePairs = (ops: NativeOps, pairs: [string, string][]): [string, string][] => {
  if (ops.width || ops.height) ops.enlarge = ops.enlarge || '1';
  pairs.forEach((pair) => delete ops[pair[0]]);
  return Object.keys(ops)
    .map((name) => [name, ops[name] as string] as [string, string])
    .concat(pairs)
    .map((pair) => {
      const refused = RegExp(DIT.refused).exec(pair.join('=').toLowerCase());
      if (refused) throw ditRefusal(refused[0]);
      return pair;
    });
};

/**
 * Whether `signature` is the `algorithm` HMAC, in `encoding`, of `text` under
 * any of `secrets` (each tried). Compared as the HMACs of both under the same
 * secret: how long the comparison takes tells a guesser nothing about the
 * signature (they cannot choose what those HMACs are), without code to compare
 * in constant time.
 */
export const hmacMatches = (algorithm: string, encoding: 'hex' | 'base64', text: string, signature: string, secrets: string[]): boolean =>
  secrets.filter((secret) => {
    const hmac = (of: string) => crypto.createHmac(algorithm, secret).update(of).digest(encoding) as string;
    return hmac(hmac(text)) === hmac(signature);
  }).length > 0;

/** `text` percent-decoded, or undefined when it is not valid percent-encoded UTF-8. */
export const decoded = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text);
  } catch (_malformed) {
    return undefined;
  }
};

/**
 * DIT's `signature`: the hex HMAC-SHA256 of `path` (the request's path as
 * DIT's Lambda saw it, decoded; false or undefined when none can be signed),
 * followed when there are other query parameters by `?` and them, sorted as
 * DIT sorts [name, value] arrays, as `name=value` joined by `&`. `expires`
 * (`YYYYMMDDTHHmmssZ`, which sorts as the time does) is covered like any
 * parameter; the URL stops working then.
 *
 * That text is unescaped, so only what DIT's signer writes is read from it:
 * a path without `?` or `#` (sent as `%3F`, `%23`), and pairs of one `=`
 * each, the name without `&`, `?`, `#` or a control character, the value
 * without `&` (nor `=`: no parameter's value holds either). Anything else could
 * spell another request's text (`expires%3D<t>%26format=webp` is the pairs
 * `expires=<t>` and `format=webp`): it is invalid.
 */
export const verifyDitSignature = (
  request: DialectRequest,
  path: string | false | undefined,
  secrets: string[],
  nowSeconds: number,
): SignatureCheck => {
  const given = request.pairs.filter((pair) => pair[0] === 'signature');
  // Sorted by their text, `name,value`, as Array.prototype.sort does without a comparison.
  const others = request.pairs.filter((pair) => pair[0] !== 'signature').sort();
  const expires = others.filter((pair) => pair[0] === 'expires')[0];
  const query = others.map((pair) => pair.join('='));
  const signable = /^\/[^?#]*$/.test(path as string) && query.every((pair) => /^[^=&?#\0-\x1f\x7f]*=[^=&]*$/.test(pair));
  const text = path + (others.length ? '?' + query.join('&') : '');
  return !given.length
    ? 'unsigned'
    : given[1] || !signable || !hmacMatches('sha256', 'hex', text, (given[0] as [string, string])[1], secrets)
      ? 'badSignature'
      : // Covered by the signature, so a malformed one is the signer's: it never works.
        expires && !(/^\d{8}T\d{6}Z$/.test(expires[1]) && expires[1] > new Date(nowSeconds * 1000).toISOString().replace(/[-:]|\.\d+/g, ''))
        ? 'expired'
        : 'valid';
};
