// Thumbor paths as DIT serves them (its thumbor-mapper.ts), in Thumbor's own
// order: `/[<hmac>|unsafe/][trim/][AxB:CxD/][fit-in/][-Wx-H/][halign/][valign/]
// [smart/][filters:f(a):g(b)/][s3:<bucket>/]<key>`, no `unsafe/` needed. A
// path with none of these segments (and no DIT `signature`) is a native URL,
// which the function serves as the native grammar does (passes).
//
// Each segment is matched by an anchored expression on what is left of the
// path, in one pass; the filters are counted before they are read. Signed:
// Thumbor's HMAC segment (base64url of HMAC-SHA1 of the rest of the path), or
// DIT's `signature` parameter (dit.ts).

import { applyDitQuery, decodedPath, DIT, ditRefusal, hasOwn, hmacMatches, toPairs, useDitData, verifyDitSignature, type NativeOps } from './dit';
import type { Dialect, DialectRequest, NativeRequest, SignatureCheck } from './dialect';

/** Thumbor's signature segment: 20 bytes of HMAC-SHA1 in base64url, with its padding. */
const HASH = /^([A-Za-z0-9_-]{27}=|unsafe)\//;
const TRIM = /^trim(:top-left|:bottom-right)?(?::(\d+))?\//;
const CROP = /^\d+x\d+:\d+x\d+\//;
const FIT_IN = /^(full-|adaptive-)?fit-in\//;
const SIZE = /^(-?)(\d*)x(-?)(\d*)\//;
const HALIGN = /^(left|right|center)\//;
const VALIGN = /^(top|bottom|middle)\//;
const SMART = /^smart\//;
// One `:name(args)` after another: no argument holds `)`, so each ends where its group does.
const FILTERS = /^filters((?::\w+\([^)]*\))+)\//;
const BUCKET = /^s3:([^/]+)\//;
/** The most filters one path may give: Thumbor's documented ones, each once. */
const MAX_FILTERS = 24;

/** A path cut into its Thumbor segments, each present or not, and the rest (the key). */
interface ThumborPath {
  hash?: string;
  signed: string;
  trim?: RegExpExecArray;
  crop?: RegExpExecArray;
  fitIn?: RegExpExecArray;
  size?: RegExpExecArray;
  halign?: RegExpExecArray;
  valign?: RegExpExecArray;
  smart?: RegExpExecArray;
  filters?: RegExpExecArray;
  bucket?: RegExpExecArray;
  key: string;
  /** Whether any segment is Thumbor's. */
  any: boolean;
}

const SEGMENTS: [keyof ThumborPath, RegExp][] = [
  ['trim', TRIM],
  ['crop', CROP],
  ['fitIn', FIT_IN],
  ['size', SIZE],
  ['halign', HALIGN],
  ['valign', VALIGN],
  ['smart', SMART],
  ['filters', FILTERS],
  ['bucket', BUCKET],
];

const cut = (uri: string): ThumborPath => {
  let rest = uri.slice(1);
  const hash = HASH.exec(rest);
  if (hash) rest = rest.slice(hash[0].length);
  const path: ThumborPath = { hash: hash ? hash[1] : undefined, signed: rest, key: '', any: !!hash };
  SEGMENTS.forEach((segment) => {
    const match = segment[1].exec(rest);
    if (!match) return;
    (path as unknown as { [name: string]: RegExpExecArray })[segment[0]] = match;
    path.any = true;
    rest = rest.slice(match[0].length);
  });
  path.key = rest;
  return path;
};

/** Thumbor's `trim[:top-left][:tolerance]`: ours trims the top-left corner's colour. */
const trim = (ops: NativeOps, match: RegExpExecArray): void => {
  if (match[1] === ':bottom-right') throw ditRefusal('trim:bottom-right', 'unsupported');
  ops.trim = match[2] || '';
};

/** `WxH` with `-` flips and fit-in: sharp's resize, which enlarges unless no_upscale() says otherwise. */
const size = (ops: NativeOps, path: ThumborPath): void => {
  const fitIn = path.fitIn;
  if (fitIn && fitIn[1] === 'adaptive-') throw ditRefusal('adaptive-fit-in', 'unsupported');
  if (fitIn) ops.fit = fitIn[1] ? 'outside' : 'inside';
  const match = path.size;
  if (!match) return;
  if (match[1]) ops.flop = '1';
  if (match[3]) ops.flip = '1';
  if (+match[2]!) ops.width = match[2]!;
  if (+match[4]!) ops.height = match[4]!;
  if (ops.width || ops.height) ops.enlarge = '1';
};

/** halign and valign place a cover crop; `smart` finds faces, then what draws the eye. */
const position = (ops: NativeOps, path: ThumborPath): void => {
  const vertical = path.valign && path.valign[1] !== 'middle' ? path.valign[1] : '';
  const horizontal = path.halign && path.halign[1] !== 'center' ? path.halign[1] : '';
  if (path.halign || path.valign) ops.position = [vertical, horizontal].filter((side) => side).join('-') || 'center';
  if (path.smart) ops.position = 'face';
};

const number = (text: string | undefined) => (text === '' || text == null ? NaN : +text);

/** The filters that are more than one native pair, or need the others. */
const SPECIAL: { [filter: string]: (ops: NativeOps, args: string) => void } = {
  // DIT's blur: the sigma when given, else half the radius.
  blur: (ops, args) => {
    const values = args.split(',');
    const sigma = number(values[1]);
    ops.blur = String(sigma === sigma ? sigma : number(values[0]) / 2);
  },
  // DIT's sharpen: a sigma of 1 + radius / 2.
  sharpen: (ops, args) => {
    ops.sharpen = String(1 + number(args.split(',')[1]) / 2);
  },
  fill: (ops, args) => {
    ops.fit = 'contain';
    if (args === 'blur') ops.fill = 'blur';
    else ops.background = hasOwn(DIT.colours, args) ? (DIT.colours[args] as string) : args;
  },
  stretch: (ops) => {
    if (!ops.fit) ops.fit = 'fill';
  },
  proportion: (ops, args) => {
    if (!ops.width || !ops.height) throw ditRefusal('proportion', 'unsupported');
    ops.width = String(Math.round(+ops.width * number(args)));
    ops.height = String(Math.round(+ops.height * number(args)));
  },
  watermark: (ops, args) => {
    const values = args.split(',');
    if (values.length > 2) throw ditRefusal('watermark', 'watermark');
    ops.watermark = (values[values.length - 1] as string).replace(/^.*\//, '').replace(/\.[^.]*$/, '');
  },
  smart_crop: (ops, args) => {
    if (args.replace(/[0,]/g, '')) throw ditRefusal('smart_crop', 'face');
    if (!ops.width || !ops.height) throw ditRefusal('smart_crop', 'smart');
    ops.position = 'face';
  },
};

const filter = (ops: NativeOps, name: string, args: string): void => {
  if (hasOwn(SPECIAL, name)) return (SPECIAL[name] as (ops: NativeOps, args: string) => void)(ops, args);
  if (!hasOwn(DIT.filters, name)) throw ditRefusal('filters:' + name, 'unsupported');
  const pair = (DIT.filters[name] as string).replace('$0', args);
  if (pair) ops[pair.slice(0, pair.indexOf('='))] = pair.slice(pair.indexOf('=') + 1);
};

const filters = (ops: NativeOps, match: RegExpExecArray): void => {
  const list = (match[1] as string).slice(1).split(/\):/);
  if (list.length > MAX_FILTERS) throw ditRefusal('filters', 'filters');
  list.forEach((text) => {
    const open = text.indexOf('(');
    filter(ops, text.slice(0, open), text.slice(open + 1).replace(/\)$/, ''));
  });
};

const isNative = (request: DialectRequest) => !cut(request.uri).any && !request.pairs.some((pair) => pair[0] === 'signature');

export const thumbor: Dialect = {
  translate: (request): NativeRequest => {
    const path = cut(request.uri);
    if (path.crop) throw ditRefusal(path.crop[0].slice(0, -1), 'crop');
    const ops: NativeOps = {};
    if (path.trim) trim(ops, path.trim);
    size(ops, path);
    position(ops, path);
    if (path.filters) filters(ops, path.filters);
    applyDitQuery(ops, request.pairs);
    const key = decodedPath(path.key);
    if (key == null) throw ditRefusal('path', 'path');
    const translated: NativeRequest = { key, pairs: toPairs(ops) };
    if (path.bucket) translated.bucket = path.bucket[1];
    return translated;
  },
  verify: (request, secrets, nowSeconds): SignatureCheck => {
    const path = cut(request.uri);
    if (!path.hash || path.hash === 'unsafe') return verifyDitSignature(request, secrets, nowSeconds);
    const signature = path.hash.replace(/-/g, '+').replace(/_/g, '/');
    // Signed as sent or decoded: Thumbor's signers sign the path as they write it.
    const signed = [path.signed, decodedPath(path.signed) as string];
    return signed.some((text) => text != null && hmacMatches('sha1', 'base64', text, signature, secrets)) ? 'valid' : 'invalid';
  },
  passes: isNative,
  useData: useDitData,
};
