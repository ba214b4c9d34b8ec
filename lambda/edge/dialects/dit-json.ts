// DIT's base64 JSON requests: `/<base64 of {"bucket","key","edits"}>`, the
// edits being sharp's operations by name (DIT's image-request.ts decodes the
// path, image-handler.ts applies the edits). Translated to native pairs by
// meaning: sharp enlarges unless told not to, so a resize is `enlarge=1`
// without `withoutEnlargement`; an edit we lack is a 400 naming it.
//
// Bounded and linear before any parse: the path is at most MAX_REQUEST
// characters of the base64 alphabet, decoded in one pass, and the JSON's
// nesting is measured in one pass before JSON.parse sees it.

import { applyDitQuery, DIT, ditRefusal, hasOwn, toPairs, useDitData, verifyDitSignature, type NativeOps } from './dit';
import type { Dialect, NativeRequest } from './dialect';

/** The longest base64 path read: CloudFront's URLs are at most 8,192 bytes. */
const MAX_REQUEST = 8192;
/** The deepest nesting a request has: request, edits, resize, background. */
const MAX_DEPTH = 4;

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** The text of a base64 (or base64url) string of UTF-8; throws on any other. */
const decodeBase64 = (text: string): string => {
  const digits = text.replace(/=$|==$/, '');
  let bits = 0;
  let count = 0;
  let escaped = '';
  for (let i = 0; i < digits.length; i++) {
    const c = digits.charAt(i);
    const value = BASE64.indexOf(c === '-' ? '+' : c === '_' ? '/' : c);
    if (value < 0) throw ditRefusal('request', 'base64');
    bits = ((bits << 6) | value) & 0xfff;
    count += 6;
    if (count >= 8) {
      count -= 8;
      escaped += '%' + (0x100 + ((bits >> count) & 0xff)).toString(16).slice(1);
    }
  }
  try {
    return decodeURIComponent(escaped);
  } catch (_notUtf8) {
    throw ditRefusal('request', 'base64');
  }
};

/** Throws when `json` nests deeper than MAX_DEPTH (strings skipped, one pass). */
const checkDepth = (json: string): void => {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charAt(i);
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') {
      if (++depth > MAX_DEPTH) throw ditRefusal('request', 'large');
    } else if (c === '}' || c === ']') depth--;
  }
};

type Json = { [name: string]: unknown };
const isObject = (value: unknown): value is Json => value != null && typeof value === 'object' && !(value instanceof Array);
const objectAt = (value: unknown, op: string): Json => {
  if (!isObject(value)) throw ditRefusal(op, 'object');
  return value;
};

/** A sharp colour as DIT gives it: a CSS hex string, or `{ r, g, b, alpha }`; as our hex. */
const colour = (value: unknown): string => {
  if (!isObject(value)) return String(value);
  const hex = (n: unknown) => (0x100 + Math.round(+(n as number))).toString(16).slice(1);
  return hex(value.r) + hex(value.g) + hex(value.b) + (value.alpha == null ? '' : hex(+(value.alpha as number) * 255));
};

const RESIZE_FIELDS = ['width', 'height', 'fit', 'background', 'position', 'withoutEnlargement'];

const resize = (ops: NativeOps, value: unknown): void => {
  const given = objectAt(value, 'edits.resize');
  Object.keys(given).forEach((field) => {
    if (RESIZE_FIELDS.indexOf(field) < 0) throw ditRefusal('edits.resize.' + field, 'unsupported');
  });
  // 0 and null are "no size" to sharp.
  if (given.width) ops.width = String(given.width);
  if (given.height) ops.height = String(given.height);
  if (given.fit != null) ops.fit = String(given.fit);
  if (given.background != null) ops.background = colour(given.background);
  if (given.position != null) {
    const position = String(given.position);
    ops.position = hasOwn(DIT.positions, position) ? (DIT.positions[position] as string) : position;
  }
  if (given.width || given.height) ops.enlarge = given.withoutEnlargement ? '0' : '1';
};

/** `{ "quality": n }` for a format: its quality when the output is that format (or not named). */
const formatOptions = (ops: NativeOps, format: string, value: unknown): void => {
  const given = objectAt(value, 'edits.' + format);
  Object.keys(given).forEach((field) => {
    if (field !== 'quality') throw ditRefusal('edits.' + format + '.' + field, 'quality');
  });
  if (given.quality != null && (ops.format == null || ops.format === format)) ops.quality = String(given.quality);
};

/** The watermark an overlay names: its key's file name without extension; any placement is refused. */
const overlay = (ops: NativeOps, value: unknown): void => {
  const given = objectAt(value, 'edits.overlayWith');
  Object.keys(given).forEach((field) => {
    if (field !== 'bucket' && field !== 'key') throw ditRefusal('edits.overlayWith.' + field, 'watermark');
  });
  ops.watermark = String(given.key)
    .replace(/^.*\//, '')
    .replace(/\.[^.]*$/, '');
};

const smartCrop = (ops: NativeOps, value: unknown): void => {
  const given = value === true ? {} : objectAt(value, 'edits.smartCrop');
  if (given.faceIndex || given.padding) throw ditRefusal('edits.smartCrop', 'face');
  if (!ops.width || !ops.height) throw ditRefusal('edits.smartCrop', 'smart');
  ops.position = 'face';
};

const FORMAT_OPTIONS = ['jpeg', 'png', 'webp', 'avif', 'gif', 'tiff', 'heif'];
/** Edits whose value is the native parameter's, under another name or the same. */
const SAME_VALUE: { [edit: string]: string } = {
  rotate: 'rotate',
  flip: 'flip',
  flop: 'flop',
  grayscale: 'grayscale',
  greyscale: 'grayscale',
  blur: 'blur',
  sharpen: 'sharpen',
  toFormat: 'format',
};

/** The edits as native ops: resize first, so that smartCrop sees its size; toFormat before a format's quality. */
const editOps = (edits: Json): NativeOps => {
  const ops: NativeOps = {};
  const names = Object.keys(edits).sort((a, b) => rank(a) - rank(b));
  names.forEach((name) => {
    const value = edits[name];
    if (name === 'resize') resize(ops, value);
    else if (hasOwn(SAME_VALUE, name)) {
      // rotate: null is DIT's "do not orient by EXIF"; every output here is oriented.
      if (value != null) ops[SAME_VALUE[name] as string] = String(value);
    } else if (FORMAT_OPTIONS.indexOf(name) >= 0) formatOptions(ops, name, value);
    else if (name === 'smartCrop') smartCrop(ops, value);
    else if (name === 'overlayWith') overlay(ops, value);
    else throw ditRefusal('edits.' + name, 'unsupported');
  });
  return ops;
};
const rank = (name: string) => (name === 'resize' ? 0 : name === 'toFormat' ? 1 : 2);

/** The request's JSON, decoded from the path and bounded. */
const requestJson = (uri: string): Json => {
  const text = uri.slice(1);
  if (text.length > MAX_REQUEST) throw ditRefusal('request', 'large');
  const json = decodeBase64(text);
  checkDepth(json);
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (_malformed) {
    throw ditRefusal('request', 'base64');
  }
  return objectAt(parsed, 'request');
};

export const ditJson: Dialect = {
  translate: (request): NativeRequest => {
    const json = requestJson(request.uri);
    if (typeof json.key !== 'string') throw ditRefusal('key', 'key');
    // A response's headers are the deployment's, not a URL's.
    if (json.headers != null) throw ditRefusal('headers', 'unsupported');
    const ops = json.edits == null ? {} : editOps(objectAt(json.edits, 'edits'));
    if (json.outputFormat != null && ops.format == null) ops.format = String(json.outputFormat);
    applyDitQuery(ops, request.pairs);
    const translated: NativeRequest = { key: json.key, pairs: toPairs(ops) };
    if (json.bucket != null) translated.bucket = String(json.bucket);
    return translated;
  },
  verify: verifyDitSignature,
  useData: useDitData,
};
