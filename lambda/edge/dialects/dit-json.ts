// DIT's base64 JSON requests: `/<base64 of {"bucket","key","edits"}>`, the
// edits being sharp's operations by name (DIT's image-request.ts decodes the
// path, image-handler.ts applies the edits). Each value at a JSON path is
// translated by its rule (dit.ts); a path without one is a 400 naming it.
//
// Bounded and linear before any parse: the path is at most 8,192 characters
// of the base64 alphabet (CloudFront's URLs are at most 8,192 bytes), decoded
// in one pass, and the JSON's nesting is measured in four passes (a request's
// deepest: request, edits, resize, background) before JSON.parse sees it.

import { applyRule, DIT, ditRefusal, hasOwn, nativePairs, useDitData, verifyDitSignature, type NativeOps } from './dit';
import type { Dialect, NativeRequest } from './dialect';

type Json = { [name: string]: unknown };

/**
 * The request in a base64 (or base64url) path of UTF-8 JSON; anything else
 * (too long, another character, text that is not UTF-8, nesting deeper than four,
 * JSON that does not parse) throws.
 */
const parse = (text: string): Json => {
  let bits = 0;
  let escaped = '';
  // Each character adds its 6 bits (A-Z, a-z, 0-9, then + or -, / or _); the second, third and fourth of four complete a byte.
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    bits = (bits << 6) | (c > 96 ? c - 71 : c > 94 ? 63 : c > 64 ? c - 65 : c > 47 ? c + 4 : c > 46 ? 63 : 62);
    // `=` pads.
    if (i % 4 && c !== 61) escaped += '%' + (0x100 + ((bits >> (6 - (i % 4) * 2)) & 0xff)).toString(16).slice(1);
  }
  try {
    const json = decodeURIComponent(escaped);
    // The brackets, strings left out (a string runs to its closing quote, or to the end, which JSON.parse
    // refuses), lose their innermost pairs once per level: none are left within four levels.
    let brackets = json.replace(/"(?:\\.|[^"\\])*"?|[^[\]{}]/g, '');
    for (let level = 4; level--;) brackets = brackets.replace(/\[\]|\{\}/g, '');
    // Too long, another character, or too deep: nothing is parsed. sharp's colour objects, `{ r, g, b, alpha }`
    // (alpha from 0 to 1), read as their hex, one value.
    return JSON.parse(/^[\w+/-]{0,8192}={0,2}$/.test(text) && !brackets ? json : '', (_name, value) =>
      value && value.r != null
        ? [value.r, value.g, value.b]
            .concat(value.alpha == null ? [] : value.alpha * 255)
            .map((n) => (0x100 + Math.round(n)).toString(16).slice(1))
            .join('')
        : value,
    ) as Json;
  } catch (_malformed) {
    throw ditRefusal('request');
  }
};

/** Applies the rule of every value in `value` at `path`, depth first: a value that is not an object (or array) is one operation (it must have a rule), and an object with a rule of its own (smartCrop) is one too. */
const walk = (ops: NativeOps, path: string, value: unknown): void => {
  const isObject = value && typeof value === 'object';
  if (!isObject || hasOwn(DIT.rules, path)) applyRule(ops, path, value);
  if (isObject) Object.keys(value as Json).forEach((name) => walk(ops, path + '.' + name, (value as Json)[name]));
};

export const ditJson: Dialect = {
  translate: (request): NativeRequest => {
    const ops: NativeOps = {};
    // The key and the bucket are worked out with the ops (their rules), under names the grammar does not read.
    walk(ops, '', parse(request.uri.slice(1)));
    if (!ops.key) throw ditRefusal('key');
    // A format's quality counts when the output is that format, or the first when no format is asked for (the source's, which
    // the edge cannot see). Its own name (`%jpeg`) stays among the pairs, a name the grammar does not know either.
    const quality = ops[ops.format ? '%' + ops.format : (Object.keys(ops).filter((name) => name[0] === '%')[0] as string)];
    if (quality) ops.quality = quality;
    // DIT crops to the face even without a resize; ours places a resize's cover crop.
    if (ops.position === 'face' && !(ops.width && ops.height)) throw ditRefusal('edits.smartCrop');
    // Read before nativePairs, where a query's parameter of the same name would take their place.
    return { key: ops.key, bucket: ops.bucket, overlay: ops.overlay, pairs: nativePairs(ops, request.pairs) };
  },
  // The path is base64 (translate refuses any other character): decoded, it is itself.
  verify: (request, secrets, nowSeconds) => verifyDitSignature(request, request.uri, secrets, nowSeconds),
  useData: useDitData,
};
