// Thumbor paths as DIT serves them (its thumbor-mapper.ts), in Thumbor's own
// order: `/[<hmac>|unsafe/][trim/][AxB:CxD/][fit-in/][-Wx-H/][halign/][valign/]
// [smart/][filters:f(a):g(b)/][s3:<bucket>/]<key>`, no `unsafe/` needed. A
// path with none of these segments is a key, and its query is read as a native
// URL's: a native URL (without a preset or `sig`) means here what it means
// natively.
//
// One anchored expression cuts the path; each optional segment matches one
// way, so it runs in linear time. The filters are counted before they are
// read. Signed: Thumbor's HMAC segment (base64url of HMAC-SHA1 of the rest of
// the path), or DIT's `signature` parameter (dit.ts).

import {
  applyRule,
  decoded,
  DIT,
  DIT_DATA,
  ditRefusal,
  hasOwn,
  hmacMatches,
  nativePairs,
  useDitData,
  verifyDitSignature,
  type DitData,
  type NativeOps,
} from './dit';
import type { Dialect, NativeRequest, SignatureCheck } from './dialect';

/**
 * The segments, each a group: 1 the HMAC (20 bytes in base64url, padded) or
 * `unsafe`, 2 trim and its corner, 3 its tolerance, 4 a crop, 5 fit-in's kind,
 * 6 and 8 the flips, 7 and 9 width and height, 10 halign, 11 valign, 12 smart,
 * 13 the filters (no argument holds `)`), 14 the bucket, 15 the key. Data, as
 * DIT's rules are: the edge reads it from its store (THUMBOR_DATA).
 */
const PATH =
  '^\\/(?:([\\w-]{27}=|unsafe)\\/)?(?:(trim(?::top-left|:bottom-right)?)(?::(\\d+))?\\/)?(\\d+x\\d+:\\d+x\\d+\\/)?(?:(full-|adaptive-|)fit-in\\/)?(?:(-?)(\\d*)x(-?)(\\d*)\\/)?(?:(left|right|center)\\/)?(?:(top|bottom|middle)\\/)?(smart\\/)?(?:filters((?::\\w+\\([^)]*\\))+)\\/)?(?:s3:([^/]+)\\/)?(.*)$';

/** DIT's data with Thumbor's path: what a Thumbor function reads from its store (a pure call, which the edge's bundle drops). */
export const THUMBOR_DATA: DitData = /* @__PURE__ */ Object.assign({}, DIT_DATA, { path: PATH });
// As dit.ts's own (dropped from the edge's bundle): DIT's data, with the path.
fromCode: useDitData(THUMBOR_DATA);

/** The most filters one path may give: DIT's documented ones, each once. */
const MAX_FILTERS = 24;

const cut = (uri: string): string[] => RegExp(DIT.path as string).exec(uri) || [];

const number = (text: string | undefined) => (text ? +text : NaN);

/** The filters that are more than one rule. */
const FILTERS: { [filter: string]: (ops: NativeOps, args: string[]) => void } = {
  // DIT's blur: the sigma when given, else half the radius.
  blur: (ops, args) => {
    ops.blur = String(number(args[1]) || number(args[0]) / 2);
  },
  // DIT's sharpen: a sigma of 1 + radius / 2.
  sharpen: (ops, args) => {
    ops.sharpen = String(1 + number(args[1]) / 2);
  },
  fill: (ops, args) => {
    ops.fit = 'contain';
    if (args[0] === 'blur') ops.fill = 'blur';
    else applyRule(ops, 'filters:background_color', args[0]);
  },
  watermark: (ops, args) => {
    if (args.length > 2) throw ditRefusal('filters:watermark', 'watermark');
    applyRule(ops, 'edits.overlayWith.key', args[args.length - 1]);
  },
};

const filters = (ops: NativeOps, text: string): void => {
  const list = text.slice(1, -1).split('):');
  if (list.length > MAX_FILTERS) throw ditRefusal('filters', 'filters');
  list.forEach((filter) => {
    const name = filter.slice(0, filter.indexOf('('));
    const args = filter.slice(name.length + 1);
    if (hasOwn(FILTERS, name)) (FILTERS[name] as (ops: NativeOps, args: string[]) => void)(ops, args.split(','));
    else applyRule(ops, 'filters:' + name, args);
  });
};

/** `WxH` with `-` flips and fit-in, halign and valign that place a cover crop, `smart` that finds faces (then what draws the eye). */
const geometry = (ops: NativeOps, path: string[]): void => {
  if (path[5] != null) applyRule(ops, path[5] + 'fit-in', true);
  if (path[6]) ops.flop = '1';
  if (path[8]) ops.flip = '1';
  if (+path[7]!) ops.width = path[7]!;
  if (+path[9]!) ops.height = path[9]!;
  const vertical = path[11] && path[11] !== 'middle' ? path[11] : '';
  const horizontal = path[10] && path[10] !== 'center' ? path[10] : '';
  if (path[10] || path[11]) ops.position = [vertical, horizontal].filter((side) => side).join('-') || 'center';
  if (path[12]) ops.position = 'face';
};

export const thumbor: Dialect = {
  translate: (request): NativeRequest => {
    const path = cut(request.uri);
    if (path[4]) throw ditRefusal(path[4].slice(0, -1), 'crop');
    const ops: NativeOps = {};
    // trim:bottom-right, like adaptive-fit-in below, has no rule: it is refused.
    if (path[2]) applyRule(ops, path[2], path[3] || '');
    geometry(ops, path);
    if (path[13]) filters(ops, path[13]);
    const key = decoded(path[15] || '');
    if (key == null) throw ditRefusal('path', 'unsupported');
    const translated: NativeRequest = { key, pairs: nativePairs(ops, request.pairs) };
    if (path[14]) translated.bucket = path[14];
    return translated;
  },
  verify: (request, secrets, nowSeconds): SignatureCheck => {
    const path = cut(request.uri);
    const hash = path[1];
    if (!hash || hash === 'unsafe') return verifyDitSignature(request, secrets, nowSeconds);
    const signature = hash.replace(/-/g, '+').replace(/_/g, '/');
    // What follows the HMAC, as sent or decoded: Thumbor's signers sign the path as they write it.
    const signed = request.uri.slice(hash.length + 2);
    const texts = [signed, decoded(signed)];
    return texts.some((text) => text != null && hmacMatches('sha1', 'base64', text, signature, secrets)) ? 'valid' : 'invalid';
  },
  useData: useDitData,
};
