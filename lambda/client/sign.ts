// Signed image URLs, for servers only: the secret must never reach a browser,
// and this module needs `crypto` (through the grammar's signUri).
//
// The signature covers the canonical URI computed WITHOUT Accept negotiation
// (format=auto left unresolved), exactly what the edge recomputes from the
// path and query it receives, so one signed URL serves every browser.

import { canonicalRequest, splitQuery } from '../grammar/canonical';
import { encodeKeyPath } from '../grammar/key';
import { DEFAULT_GRAMMAR_OPTIONS, PRESET_SPELLINGS, type GrammarOptions } from '../grammar/params';
import { signUri } from '../grammar/sign';
import { imageQuery, imageUrl, type ImageParams } from './url';

/** The canonical URI a signature for this request covers, e.g. `/photos/cat.jpg/width=640`. */
export function signedUri(key: string, params: ImageParams = {}, options: GrammarOptions = DEFAULT_GRAMMAR_OPTIONS): string {
  const query = imageQuery(params, options);
  const pairs = splitQuery(query);
  if (!options.presets && pairs.some((pair) => pair[0] === PRESET_SPELLINGS[0])) {
    throw new Error(
      "Signing a preset URL needs options.presets, the same definitions the edge has: the signature covers the preset's expansion.",
    );
  }
  return canonicalRequest(encodeKeyPath(key), pairs, options).uri;
}

/** imageUrl(base, key, params, options) with `sig` appended. Give `options` as the edge has them (sizes, presets). */
export function signedImageUrl(
  base: string,
  key: string,
  params: ImageParams,
  secret: string,
  options: GrammarOptions = DEFAULT_GRAMMAR_OPTIONS,
): string {
  if (!secret) throw new Error('signedImageUrl needs the signing secret.');
  const url = imageUrl(base, key, params, options);
  // base64url: no character of it needs escaping in a query.
  const sig = signUri(signedUri(key, params, options), secret);
  return url + (url.indexOf('?') === -1 ? '?' : '&') + 'sig=' + sig;
}
