// Signed image URLs, for servers only: the secret must never reach a browser,
// and this module needs `crypto` (through the grammar's signUri).
//
// A signature covers the canonical URI computed WITHOUT Accept negotiation
// (format=auto left unresolved), exactly what the edge recomputes from the
// path and query it receives, so one signed URL serves every browser. With an
// expiry it covers the time too; a prefix grant covers every key under a
// folder, for the variants it allows (lambda/grammar/sign.ts, signedText).

import crypto from 'crypto';
import { canonicalRequest, canonicalUri, opsSegment, splitQuery } from '../grammar/canonical';
import { validateKey } from '../grammar/key';
import {
  DEFAULT_GRAMMAR_OPTIONS,
  PRESET_SPELLINGS,
  type GrammarOptions,
  type SignatureParams,
  type UnresolvedOps,
} from '../grammar/params';
import { signedText, signUri } from '../grammar/sign';
import { dialectImageUrl } from './dialect-url';
import { imageOrigin, imageQuery, imageUrl, withSignature, type ImageParams } from './url';

/** The signing secret, or the secret and when what it signs stops working. */
export type SigningKey = string | { secret: string; expires?: ExpiryTime };

/** A Date, or Unix seconds. */
export type ExpiryTime = Date | number;

export interface PrefixGrant {
  /** The signing secret. */
  secret: string;
  /** When the grant stops working. Advised: a grant covers a whole folder. */
  expires?: ExpiryTime;
  /**
   * The variants the grant allows, e.g. `[{ width: 320 }, { width: 640 }]` or
   * `[{ preset: 'thumb' }]`; absent: any parameters at all. Each is matched
   * after canonicalisation (aliases, snapping to sizes, presets expanded).
   */
  allow?: ImageParams[];
}

/** The largest `exp`: ten digits of seconds, until 2286. More is a time in milliseconds by mistake. */
const MAX_EXPIRY_SECONDS = 9_999_999_999;

/** `expires` as the `exp` parameter (whole Unix seconds), refusing a time past, malformed or in milliseconds. */
function expiryParam(expires: ExpiryTime, now: number): string {
  const seconds = expires instanceof Date ? Math.floor(expires.getTime() / 1000) : expires;
  if (!Number.isInteger(seconds) || seconds > MAX_EXPIRY_SECONDS) {
    throw new Error(`Invalid expiry ${String(expires)}: expected a Date or whole Unix seconds (at most ten digits, not milliseconds).`);
  }
  if (seconds <= now / 1000) throw new Error(`The expiry ${new Date(seconds * 1000).toISOString()} is already past.`);
  return String(seconds);
}

/** The canonical ops a request for `params` has at the edge, before negotiation. */
function signedOps(params: ImageParams, options: GrammarOptions): UnresolvedOps {
  const pairs = splitQuery(imageQuery(params, options));
  if (!options.presets && pairs.some((pair) => pair[0] === PRESET_SPELLINGS[0])) {
    throw new Error(
      "Signing a preset URL needs options.presets, the same definitions the edge has: the signature covers the preset's expansion.",
    );
  }
  return canonicalRequest('/any-key', pairs, options).ops; // the ops do not depend on the key
}

/** The canonical URI a signature for this request covers, e.g. `/photos/cat.jpg/width=640`. */
export function signedUri(key: string, params: ImageParams = {}, options: GrammarOptions = DEFAULT_GRAMMAR_OPTIONS): string {
  return canonicalUri(validateKey(key), signedOps(params, options));
}

/** A signature parameter's value in a query: percent-encoded, but a space as `+` and `/` and `,` left readable. */
const queryValue = (text: string) => encodeURIComponent(text).replace(/%20/g, '+').replace(/%2F/g, '/').replace(/%2C/g, ',');

/** The query text of signature parameters, `sig` last. */
function signatureQuery(signature: SignatureParams): string {
  const names: (keyof SignatureParams)[] = ['prefix', 'exp', 'allow', 'sig'];
  return names
    .filter((name) => signature[name] !== undefined)
    .map((name) => name + '=' + queryValue(signature[name] as string))
    .join('&');
}

/**
 * imageUrl(base, key, params, options) with `sig` appended, and `exp` before
 * it when `signingKey` says when the URL expires. Give `options` as the edge has
 * them (sizes, presets).
 */
export function signedImageUrl(
  base: string,
  key: string,
  params: ImageParams,
  signingKey: SigningKey,
  options: GrammarOptions = DEFAULT_GRAMMAR_OPTIONS,
): string {
  const { secret, expires } = typeof signingKey === 'string' ? { secret: signingKey, expires: undefined } : signingKey;
  if (!secret) throw new Error('signedImageUrl needs the signing secret.');
  const url = imageUrl(base, key, params, options);
  const signature: SignatureParams = { exp: expires === undefined ? undefined : expiryParam(expires, Date.now()) };
  signature.sig = signUri(signedText(validateKey(key), signedOps(params, options), signature) as string, secret);
  return withSignature(url, signatureQuery(signature));
}

/**
 * The query parameters that sign every key under `prefix` (whole path
 * segments: `users/42` covers `users/42/a.jpg`, not `users/420/a.jpg`):
 * `prefix=users/42&exp=...&allow=...&sig=...`. It holds no secret, so a server
 * can hand it to a page, which appends it to the URLs it builds with
 * imageUrl: `withSignature(imageUrl(base, key, params), grant)`.
 */
export function signedPrefix(prefix: string, grant: PrefixGrant, options: GrammarOptions = DEFAULT_GRAMMAR_OPTIONS): string {
  if (!grant.secret) throw new Error('signedPrefix needs the signing secret.');
  const folder = validateKey(prefix.replace(/\/$/, ''));
  const signature: SignatureParams = {
    prefix: folder,
    exp: grant.expires === undefined ? undefined : expiryParam(grant.expires, Date.now()),
    allow: grant.allow && grant.allow.map((params) => opsSegment(signedOps(params, options))).join(' '),
  };
  if (signature.allow === '')
    throw new Error('signedPrefix: an empty allow list would allow nothing; leave it out to allow any parameters.');
  // Every request the grant covers has the same text: signedText gives it for one of them, a
  // path under the folder with the first variant allowed.
  const allowed = grant.allow ? signedOps(grant.allow[0] as ImageParams, options) : {};
  signature.sig = signUri(signedText(folder + '/', allowed, signature) as string, grant.secret);
  return signatureQuery(signature);
}

/**
 * How a DIT URL is signed: the secret, and when it expires (DIT's `expires`);
 * or Thumbor's HMAC segment for a Thumbor path (`hmacSegment`), which has no
 * expiry and which DIT itself does not read.
 */
export type DitSigningKey = string | { secret: string; expires?: ExpiryTime; hmacSegment?: boolean };

/** DIT's `expires`, `YYYYMMDDTHHmmssZ`, from whole Unix seconds. */
const ditExpiry = (seconds: string): string =>
  new Date(+seconds * 1000)
    .toISOString()
    .replace(/[-:]|\.\d+/g, '')
    .slice(0, 15) + 'Z';

/**
 * dialectImageUrl in DIT's base64 JSON (`dit-json`) or its Thumbor path
 * (`thumbor`), signed as DIT signs: `signature`, the hex HMAC-SHA256 of the
 * path (percent-decoded) followed, with an expiry, by `?expires=<time>`, which
 * it covers. With `hmacSegment`, a Thumbor path is signed Thumbor's way instead:
 * `/<base64url HMAC-SHA1 of the rest of the path>/<the rest>`.
 */
export function signedDitImageUrl(
  dialect: 'dit-json' | 'thumbor',
  base: string,
  key: string,
  params: ImageParams,
  signingKey: DitSigningKey,
  options: GrammarOptions = DEFAULT_GRAMMAR_OPTIONS,
): string {
  const { secret, expires, hmacSegment } = typeof signingKey === 'string' ? { secret: signingKey } : signingKey;
  if (!secret) throw new Error('signedDitImageUrl needs the signing secret.');
  const origin = imageOrigin(base);
  const path = dialectImageUrl(dialect, base, key, params, options).slice(origin.length);
  if (hmacSegment) {
    if (dialect !== 'thumbor' || expires !== undefined) throw new Error("Thumbor's HMAC segment signs a Thumbor path, without an expiry.");
    const hmac = crypto
      .createHmac('sha1', secret)
      .update(decodeURIComponent(path.slice(1)))
      .digest('base64');
    return origin + '/' + hmac.replace(/\+/g, '-').replace(/\//g, '_') + path;
  }
  const query = expires === undefined ? '' : 'expires=' + ditExpiry(expiryParam(expires, Date.now()));
  const signed = decodeURIComponent(path) + (query ? '?' + query : '');
  const signature = crypto.createHmac('sha256', secret).update(signed).digest('hex');
  return origin + path + '?' + (query ? query + '&' : '') + 'signature=' + signature;
}
