// DIT's base64 JSON requests: `/<base64 of {"bucket","key","edits"}>`, the
// edits being sharp's operations by name (DIT's image-request.ts decodes the
// path, image-handler.ts applies the edits). Each value at a JSON path is
// translated by its rule (dit.ts); a path without one is a 400 naming it.
//
// Bounded and linear before any parse: the path is at most MAX_REQUEST
// characters of the base64 alphabet, decoded in one pass, and the JSON's
// nesting is measured in MAX_DEPTH passes before JSON.parse sees it.

import { applyRule, decoded, DIT, ditRefusal, hasOwn, nativePairs, useDitData, verifyDitSignature, type NativeOps } from './dit';
import type { Dialect, NativeRequest } from './dialect';

/** The longest base64 path read: CloudFront's URLs are at most 8,192 bytes. */
const MAX_REQUEST = 8192;
/** The deepest nesting a request has: request, edits, resize, background. */
const MAX_DEPTH = 4;

const malformed = () => ditRefusal('request', 'request');

/** The text of a base64 (or base64url) string of UTF-8; throws on any other. */
const decodeBase64 = (text: string): string => {
  if (text.length > MAX_REQUEST || !/^[\w+/-]*={0,2}$/.test(text)) throw malformed();
  let bits = 0;
  let escaped = '';
  // Each character adds its 6 bits (A-Z, a-z, 0-9, then + or -, / or _); the second, third and fourth of four complete a byte.
  text.split('').forEach((character, i) => {
    const c = character.charCodeAt(0);
    bits = (bits << 6) | (c > 96 ? c - 71 : c > 94 ? 63 : c > 64 ? c - 65 : c > 47 ? c + 4 : c > 46 ? 63 : 62);
    if (i % 4 && character !== '=') escaped += '%' + (0x100 + ((bits >> (6 - (i % 4) * 2)) & 0xff)).toString(16).slice(1);
  });
  const json = decoded(escaped);
  if (json == null) throw malformed();
  return json;
};

/** Throws when `json` nests deeper than MAX_DEPTH: its brackets, strings left out, lose their innermost pairs once per level. */
const checkDepth = (json: string): void => {
  // A string runs to its closing quote, or to the end (which JSON.parse refuses).
  let brackets = json.replace(/"(?:\\.|[^"\\])*"?|[^[\]{}]/g, '');
  for (let level = 0; level < MAX_DEPTH; level++) brackets = brackets.replace(/\[]|{}/g, '');
  if (brackets) throw malformed();
};

type Json = { [name: string]: unknown };

/** sharp's colour object, `{ r, g, b, alpha }` (alpha from 0 to 1), as hex. */
const hex = (rgb: Json) =>
  [rgb.r, rgb.g, rgb.b]
    .concat(rgb.alpha == null ? [] : (rgb.alpha as number) * 255)
    .map((n) => (0x100 + Math.round(n as number)).toString(16).slice(1))
    .join('');

/**
 * Applies the rule of every value in `value` at `path`, depth first: a value
 * that is not an object is one operation (it must have a rule), and an object
 * with a rule of its own (smartCrop) is one too; a colour's object is one value.
 */
const walk = (ops: NativeOps, path: string, value: unknown): void => {
  const isObject = !!value && typeof value === 'object' && !(value instanceof Array);
  const ruled = hasOwn(DIT.rules, path);
  const colour = ruled && (DIT.rules[path] as string)[0] === '#';
  if (!isObject || ruled) applyRule(ops, path, isObject && colour ? hex(value as Json) : value);
  if (isObject && !colour) Object.keys(value as Json).forEach((name) => walk(ops, path + '.' + name, (value as Json)[name]));
};

export const ditJson: Dialect = {
  translate: (request): NativeRequest => {
    const json = decodeBase64(request.uri.slice(1));
    checkDepth(json);
    let parsed: Json;
    try {
      parsed = JSON.parse(json) as Json;
    } catch (_malformed) {
      throw malformed();
    }
    if (!parsed || typeof parsed.key !== 'string') throw ditRefusal('key', 'unsupported');
    const ops: NativeOps = {};
    walk(ops, '', parsed);
    // A format's quality counts when the output is that format, or when no format is asked for (the source's, which the edge cannot see).
    Object.keys(ops).forEach((name) => {
      if (name[0] !== '%') return;
      if (!ops.format || ops.format === name.slice(1)) ops.quality = ops.quality || (ops[name] as string);
      delete ops[name];
    });
    // DIT crops to the face even without a resize; ours places a resize's cover crop.
    if (ops.position === 'face' && !(ops.width && ops.height)) throw ditRefusal('edits.smartCrop', 'smart');
    return { key: parsed.key, pairs: nativePairs(ops, request.pairs), bucket: parsed.bucket == null ? undefined : String(parsed.bucket) };
  },
  verify: verifyDitSignature,
  useData: useDitData,
};
