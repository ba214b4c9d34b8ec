// Thumbor paths as DIT serves them (its thumbor-mapper.ts), in Thumbor's own
// order: `/[<hmac>|unsafe/][trim/][AxB:CxD/][fit-in/][-Wx-H/][halign/][valign/]
// [smart/][filters:f(a):g(b)/...][s3:<bucket>/][filters:h(c)/...]<key>`, no
// `unsafe/` needed: any number of filters segments, before or after the bucket
// (DIT reads every `filters:` of the path). A
// path with none of these segments is a key, and its query is read as a native
// URL's: a native URL (without a preset or `sig`) means here what it means
// natively.
//
// One anchored expression cuts the path (DitData.path, read from the store
// like the rules); each segment's group has its rule (DitData.groups). The
// filters are counted before they are read. Signed: Thumbor's HMAC segment
// (base64url of HMAC-SHA1 of the rest of the path), or DIT's `signature`
// parameter (dit.ts).

import { applyRule, decoded, DIT, ditRefusal, hmacMatches, nativePairs, useDitData, verifyDitSignature, type NativeOps } from './dit';
import type { Dialect, NativeRequest, SignatureCheck } from './dialect';

const cut = (uri: string): string[] => RegExp(DIT.path as string).exec(uri) || [];

/**
 * Applies every filter of the path's segments, sorted by their text as DIT
 * applies them, each rule to its argument, or for those of several arguments
 * to what DIT makes of them: blur's sigma (given, else half the radius),
 * sharpen's (1 + radius / 2), the watermark's key (the last, a bucket before
 * it); fill is fit=contain too, with a colour or blurred. The arguments are
 * read decoded, as DIT reads its path, and spaces around their commas are allowed
 * (`blur(60,%202)`); each filter is cut from the path as sent, so a decoded
 * `)` or `:` is an argument's.
 */
const filters = (ops: NativeOps, text: string): void => {
  // Each from its `:` (so that a run of word characters is tried once), as `:name(arguments`.
  const list = (text.match(/:\w+\([^)]*/g) || []).sort();
  // At most 24, DIT's documented filters each once (a literal, and `in`: the function's bytes are few).
  if (24 in list) throw ditRefusal('filters');
  list.forEach((filter) => {
    // Its name, then its arguments, after whose commas spaces are allowed (a number's before them too).
    const args = (decoded(filter) as string).split(/[(,] */);
    // `:name`: the rule's name follows `filters` (the colon its own).
    const name = args.shift()!;
    if (name === ':watermark') {
      if (2 in args) throw ditRefusal('filters' + name);
      if (args[1]) ops.overlay = args[0]!;
    }
    if (name === ':fill') {
      // DIT's fill is a resize's: without both sides it changes nothing (a background here would flatten an alpha channel).
      if (!(ops.width && ops.height)) return;
      ops.fit = 'contain';
    }
    applyRule(
      ops,
      'filters' + (filter === ':fill(blur' ? filter + ')' : name),
      // Strings, so that a number that is not one (NaN) is refused by the grammar, not dropped.
      name === ':blur' ? +args[1]! || +args[0]! / 2 + '' : name === ':sharpen' ? 1 + +args[1]! / 2 + '' : args.pop() || true,
    );
  });
};

export const thumbor: Dialect = {
  translate: (request): NativeRequest => {
    // Every part of the path decodes when the whole does: each is cut at a character that is never escaped.
    if (decoded(request.uri) == null) throw ditRefusal('path');
    const path = cut(request.uri);
    const ops: NativeOps = {};
    path.forEach((text, group) => {
      const rule = (DIT.groups as (string | null)[])[group];
      if (text && rule) applyRule(ops, rule.replace('$', text), text);
    });
    filters(ops, [path[12], path[14]] + '');
    const key = decoded(path[15] || '') as string;
    // An extension DIT does not read as an image's, of the key as DIT reads it: decoded.
    const type = cut('/' + key)[16];
    // No rule names one (`*.bmp`): refused, naming it.
    if (type) applyRule(ops, '*.' + type, type);
    return { key, bucket: path[13], overlay: ops.overlay, pairs: nativePairs(ops, request.pairs) };
  },
  verify: (request, secrets, nowSeconds): SignatureCheck => {
    const hash = cut(request.uri)[1];
    // The path a signature covers: after the HMAC (`/` and its 28 characters, from the next `/`), or all of it.
    const path = request.uri.slice(hash ? 29 : 0);
    const text = decoded(path);
    const sent = cut(path);
    const key = decoded(sent[15] as string);
    // Its decoded text, when that cuts as the path itself does (no segment escaped, the same key): else two
    // paths share that text (`/fit-in%2F300x200/a.jpg` is the key `fit-in/300x200/a.jpg`).
    const signable = !/%/.test(sent.slice(1, 15) + '') && cut(text as string)[15] === key && text;
    if (!hash) return verifyDitSignature(request, signable, secrets, nowSeconds);
    // Thumbor's HMAC covers the path only, so a query beside it, which could ask for any other variant, voids it.
    // Its signers sign the path as they write it: as sent, or decoded when that cuts alike and holds no
    // `%` (else the text, sent as it is, would be another key, decoded once more).
    return !request.pairs.length &&
      [path, signable && !/%/.test(signable) && signable].some(
        (signed) => signed && hmacMatches('sha1', 'base64', signed.slice(1), hash.replace(/-/g, '+').replace(/_/g, '/'), secrets),
      )
      ? 'valid'
      : 'badSignature';
  },
  useData: useDitData,
};
