// What DIT's two URL grammars (base64 JSON requests, dit-json.ts; Thumbor
// paths, thumbor.ts) share: the rules that turn DIT's edits and filters into
// native pairs, the query beside either (read as a native URL's), its `signature`
// (a hex HMAC-SHA256 of the path and the other parameters) and `expires`, and
// the refusals that name DIT's operation. The rules and words are data, read
// from the function's store at the edge (useData) and from this code
// elsewhere, as the grammar's are, so that the function holds only code.

import crypto from 'crypto';
import { hasOwn } from '../../grammar/canonical';
import { grammarError } from '../../grammar/errors';
import { sameText } from '../../grammar/sign';
import type { DialectRequest, SignatureCheck } from './dialect';

/**
 * A rule: what one of DIT's values (an edit at a JSON path, a Thumbor filter's
 * argument) sets among the native pairs. `name` sets that
 * parameter to the value (none for null, false or 0); `name=value` sets a fixed
 * value when the edit is given (not false). A first character changes that:
 * `?` only where the parameter is not set yet, `#` a colour (sharp's `{ r, g,
 * b, alpha }`, hex, or a name in `colours`), `!` a boolean's opposite as 0 or 1,
 * `@` a position (sharp's names through `positions`), `~` a watermark's name
 * (a key's file name without its extension), `%` the quality of one format,
 * kept when the output is that format, `-` a value that must be none. An empty
 * rule changes nothing.
 */
export type Rule = string;

/** The names and words the DIT translators read. */
export interface DitData {
  /** By JSON path (`edits.resize.width`), or `filters:<name>` for a Thumbor filter. */
  rules: { [path: string]: Rule };
  /** sharp's position names, to ours. */
  positions: { [sharp: string]: string };
  /** The colour names a URL is likely to use, as hex. */
  colours: { [name: string]: string };
  /** A refusal: `$0` the operation as DIT names it, `$1` why (a reason's words). */
  refusal: string;
  why: { [reason: string]: string };
  /** A Thumbor path's segments (thumbor.ts), as an expression's source; only a Thumbor function's data has it. */
  path?: string;
}

export const DIT_DATA: DitData = {
  rules: {
    key: '',
    bucket: '',
    // WebP's encoding effort: the output is the same image.
    effort: '',
    outputFormat: '?format',
    'edits.resize.width': 'width',
    'edits.resize.height': 'height',
    'edits.resize.fit': 'fit',
    'edits.resize.background': '#background',
    'edits.resize.position': '@position',
    'edits.resize.withoutEnlargement': '!enlarge',
    // null is DIT's "do not orient by EXIF"; every output here is oriented.
    'edits.rotate': 'rotate',
    'edits.flip': 'flip',
    'edits.flop': 'flop',
    'edits.grayscale': 'grayscale',
    'edits.greyscale': 'grayscale',
    'edits.blur': 'blur',
    'edits.sharpen': 'sharpen',
    'edits.toFormat': 'format',
    'edits.jpeg.quality': '%jpeg',
    'edits.webp.quality': '%webp',
    'edits.avif.quality': '%avif',
    'edits.png.quality': '%png',
    'edits.smartCrop': 'position=face',
    'edits.smartCrop.faceIndex': '-',
    'edits.smartCrop.padding': '-',
    'edits.overlayWith.bucket': '',
    'edits.overlayWith.key': '~watermark',
    trim: 'trim',
    'trim:top-left': 'trim',
    'fit-in': 'fit=inside',
    'full-fit-in': 'fit=outside',
    'filters:autojpg': 'format=jpeg',
    'filters:background_color': '#background',
    'filters:format': 'format',
    'filters:grayscale': 'grayscale=1',
    'filters:max_bytes': 'max_bytes',
    'filters:no_upscale': 'enlarge=0',
    'filters:quality': 'quality',
    'filters:rotate': 'rotate',
    'filters:smart_crop': 'position=face',
    'filters:stretch': '?fit=fill',
    // Metadata is stripped unless a URL asks to keep it.
    'filters:strip_exif': '',
    'filters:strip_icc': '',
    'filters:upscale': 'enlarge=1',
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
  refusal: 'DIT $0: $1.',
  why: {
    unsupported: 'not supported here',
    request: 'not a base64-encoded JSON request within 8 KB and 4 levels',
    value: 'expected none',
    crop: "a crop in pixels needs the source's size, which the edge does not know (a native URL's crop takes fractions)",
    smart: 'needs a resize with both width and height here',
    watermark: "names a watermark of this deployment by its file's name; its placement is the watermark's own",
    filters: 'at most 24 filters',
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

// The grammar's, so that the bundle holds it once.
export { hasOwn };

/** A sharp colour: `{ r, g, b, alpha }` (alpha from 0 to 1), a name in `colours`, or hex. */
const colour = (value: unknown): string => {
  const hex = (n: unknown) => (0x100 + Math.round(n as number)).toString(16).slice(1);
  if (value && typeof value === 'object') {
    const rgb = value as { [channel: string]: number };
    return hex(rgb.r) + hex(rgb.g) + hex(rgb.b) + (rgb.alpha == null ? '' : hex(rgb.alpha * 255));
  }
  return hasOwn(DIT.colours, value as string) ? (DIT.colours[value as string] as string) : String(value);
};

/** Applies the rule for `path` (the operation as DIT names it) to its value; throws, naming it, when there is none. */
export const applyRule = (ops: NativeOps, path: string, value: unknown): void => {
  if (!hasOwn(DIT.rules, path)) throw ditRefusal(path, 'unsupported');
  const rule = DIT.rules[path] as Rule;
  const flag = /^[-?#!@~%]/.test(rule) ? rule.charAt(0) : '';
  const eq = rule.indexOf('=');
  const name = rule.slice(flag.length, eq < 0 ? rule.length : eq);
  if (flag === '-' && value) throw ditRefusal(path, 'value');
  if (!name || value == null || value === false || (eq < 0 && value === 0) || (flag === '?' && ops[name] != null)) return;
  const text = String(value);
  ops[flag === '%' ? rule : name] =
    eq >= 0
      ? rule.slice(eq + 1)
      : flag === '#'
        ? colour(value)
        : flag === '!'
          ? value
            ? '0'
            : '1'
          : flag === '@'
            ? hasOwn(DIT.positions, text)
              ? (DIT.positions[text] as string)
              : text
            : flag === '~'
              ? text.replace(/^.*\//, '').replace(/\.[^.]*$/, '')
              : text;
};

/**
 * The native pairs once every edit is applied: sharp enlarges unless told not
 * to; a format's quality counts when the output is that format, or when no
 * format is asked for (the source's, which the edge cannot see). The query's
 * parameters are read as a native URL's (DIT's own, `format`, `width`... are
 * ours too) and override the edits of the same name.
 */
export const nativePairs = (ops: NativeOps, pairs: [string, string][]): [string, string][] => {
  if ((ops.width || ops.height) && ops.enlarge == null) ops.enlarge = '1';
  Object.keys(ops).forEach((name) => {
    if (name.charAt(0) === '%' && (!ops.format || ops.format.replace('jpg', 'jpeg') === name.slice(1)))
      ops.quality = ops.quality || (ops[name] as string);
  });
  const query = pairs.filter((pair) => pair[0] !== 'signature' && pair[0] !== 'expires');
  // A native preset has no rule: a dialect's function reads none (its name would be ignored otherwise).
  query.forEach((pair) => /^p(reset)?$/i.test(pair[0]) && applyRule(ops, pair[0], 1));
  return Object.keys(ops)
    .filter((name) => name.charAt(0) !== '%' && !query.some((pair) => pair[0] === name))
    .map((name) => [name, ops[name] as string] as [string, string])
    .concat(query);
};

/** DIT's `expires`, `YYYYMMDDTHHmmssZ`, in Unix seconds; NaN when it is not such a time. */
const expirySeconds = (value: string): number => {
  const parts = /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/.exec(value) || [];
  return Date.UTC(+parts[1]!, +parts[2]! - 1, +parts[3]!, +parts[4]!, +parts[5]!, +parts[6]!) / 1000;
};

/** Whether `signature` is the `algorithm` HMAC, in `encoding`, of `text` under any of `secrets` (each tried). */
export const hmacMatches = (algorithm: string, encoding: 'hex' | 'base64', text: string, signature: string, secrets: string[]): boolean =>
  secrets.filter((secret) => sameText(crypto.createHmac(algorithm, secret).update(text).digest(encoding) as string, signature)).length > 0;

/** `text` percent-decoded, or undefined when it is not valid percent-encoded UTF-8. */
export const decoded = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text);
  } catch (_malformed) {
    return undefined;
  }
};

/**
 * DIT's `signature`: the hex HMAC-SHA256 of the path (as DIT's Lambda saw it,
 * decoded), followed when there are other query parameters by `?` and them,
 * sorted as DIT sorts [name, value] arrays, as `name=value` joined by `&`.
 * `expires` is covered like any parameter; the URL stops working then.
 */
export const verifyDitSignature = (request: DialectRequest, secrets: string[], nowSeconds: number): SignatureCheck => {
  const pairs = request.pairs;
  const given = pairs.filter((pair) => pair[0] === 'signature');
  const expires = pairs.filter((pair) => pair[0] === 'expires')[0];
  const others = pairs
    .filter((pair) => pair[0] !== 'signature')
    .sort((a, b) => (a.join() < b.join() ? -1 : 1))
    .map((pair) => pair.join('='));
  const text = decoded(request.uri) + (others.length ? '?' + others.join('&') : '');
  if (given.length !== 1) return given.length ? 'invalid' : 'unsigned';
  if (decoded(request.uri) == null || !hmacMatches('sha256', 'hex', text, (given[0] as [string, string])[1], secrets)) return 'invalid';
  // Covered by the signature, so a malformed one is the signer's: it never works.
  return expires && !(expirySeconds(expires[1]) > nowSeconds) ? 'expired' : 'valid';
};
