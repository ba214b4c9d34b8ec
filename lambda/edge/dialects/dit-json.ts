// DIT's base64 JSON requests: `/<base64 of {"bucket","key","edits"}>`, the
// edits being sharp's operations by name (DIT's image-request.ts decodes the
// path, image-handler.ts applies the edits). Each value at a JSON path is
// translated by its rule (dit.ts); a path without one is a 400 naming it.
//
// Bounded and linear before any parse: the path is at most MAX_REQUEST
// characters of the base64 alphabet, decoded in one pass, and the JSON's
// nesting is measured in one pass before JSON.parse sees it.

import { applyRule, decoded, DIT, ditRefusal, hasOwn, nativePairs, useDitData, verifyDitSignature, type NativeOps } from './dit';
import type { Dialect, NativeRequest } from './dialect';

/** The longest base64 path read: CloudFront's URLs are at most 8,192 bytes. */
const MAX_REQUEST = 8192;
/** The deepest nesting a request has: request, edits, resize, background. */
const MAX_DEPTH = 4;

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

const malformed = () => ditRefusal('request', 'request');

/** The text of a base64 (or base64url) string of UTF-8; throws on any other. */
const decodeBase64 = (text: string): string => {
  let bits = 0;
  let count = 0;
  let escaped = '';
  for (let i = 0; i < text.length; i++) {
    const value = BASE64.indexOf(text.charAt(i).replace('-', '+').replace('_', '/'));
    // Padding, only at the end.
    if (value < 0 && !/^={1,2}$/.test(text.slice(i))) throw malformed();
    bits = ((bits << 6) | value) & 0xfff;
    count += 6;
    if (count >= 8 && value >= 0) {
      count -= 8;
      escaped += '%' + (0x100 + ((bits >> count) & 0xff)).toString(16).slice(1);
    }
  }
  const json = decoded(escaped);
  if (json == null) throw malformed();
  return json;
};

/** Throws when `json` nests deeper than MAX_DEPTH (strings skipped, one pass). */
const checkDepth = (json: string): void => {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charAt(i);
    if (inString) {
      if (c === '\\') i++;
      else inString = c !== '"';
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    if (depth > MAX_DEPTH) throw malformed();
  }
};

type Json = { [name: string]: unknown };

/**
 * Applies the rule of every value in `value` at `path`, depth first: a value
 * that is not an object is one operation (it must have a rule), and an object
 * with a rule of its own (smartCrop) is one too; a colour's object is one value.
 */
const walk = (ops: NativeOps, path: string, value: unknown): void => {
  const isObject = value != null && typeof value === 'object' && !(value instanceof Array);
  const ruled = hasOwn(DIT.rules, path);
  if (!isObject || ruled) applyRule(ops, path, value);
  if (isObject && !(ruled && (DIT.rules[path] as string).charAt(0) === '#')) {
    Object.keys(value as Json).forEach((name) => walk(ops, path ? path + '.' + name : name, (value as Json)[name]));
  }
};

export const ditJson: Dialect = {
  translate: (request): NativeRequest => {
    const text = request.uri.slice(1);
    if (text.length > MAX_REQUEST) throw malformed();
    const json = decodeBase64(text);
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
    // DIT crops to the face even without a resize; ours places a resize's cover crop.
    if (ops.position === 'face' && !(ops.width && ops.height)) throw ditRefusal('edits.smartCrop', 'smart');
    const translated: NativeRequest = { key: parsed.key, pairs: nativePairs(ops, request.pairs) };
    if (parsed.bucket != null) translated.bucket = String(parsed.bucket);
    return translated;
  },
  verify: verifyDitSignature,
  useData: useDitData,
};
