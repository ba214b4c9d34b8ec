// URL signatures: base64url(HMAC-SHA256(secret, text)), first 32 characters,
// where the text is what the signature covers (signedText): the canonical URI,
// or with `exp` the URI and the expiry, or with `prefix` a grant for every key
// under a folder. Signing the canonical URI means every spelling of a request
// carries the same signature. The URI signed is the one before `format=auto`
// is negotiated (canonicalRequest with no Accept), so one signed URL serves
// every browser. `crypto` exists both in Node and in
// CloudFront Functions; only digest('base64') is used because it is common to both.

import crypto from 'crypto';
import { canonicalUri, opsSegment, singleValue } from './canonical';
import { encodeKeyPath } from './key';
import { SIGNATURE_PARAMS, type SignatureParams, type UnresolvedOps } from './params';

export const SIGNATURE_LENGTH = 32;

// 32 bytes are 44 base64 characters, the last one `=`: the slice drops it.
export const signUri = (text: string, secret: string): string =>
  (crypto.createHmac('sha256', secret).update(text).digest('base64') as string)
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .slice(0, SIGNATURE_LENGTH);

/** Compares in time that depends only on the length, so a guess learns nothing from timing. */
export const sameText = (a: string, b: string): boolean => {
  let difference = a.length ^ b.length;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
};

/** True when `signature` was made with any of `secrets` (several are active while one is rotated). */
// No early exit: every secret is tried whatever the outcome.
export const verifySignature = (text: string, signature: string, secrets: string[]): boolean =>
  secrets.filter((secret) => sameText(signUri(text, secret), signature)).length > 0;

/**
 * The signature parameters a viewer's query gives, each at most once. Their
 * values are not checked here: the signature covers them, so a value its
 * signer did not write (a malformed `exp`, say) fails it.
 */
export const signatureParams = (pairs: [string, string][]): SignatureParams => {
  const signature: SignatureParams = {};
  SIGNATURE_PARAMS.forEach((name) => {
    const value = singleValue(pairs, [name]);
    if (value != null) signature[name] = value;
  });
  return signature;
};

/**
 * The text a request's signature must be the HMAC of, or undefined when the
 * request is outside the scope its signature names. `ops` are the canonical
 * ops before negotiation. Each kind has its own shape, so that no signature
 * of one kind verifies as another: a canonical URI starts with `/` and holds
 * no newline; with an expiry, a newline and `exp` follow it; a prefix grant
 * is the JSON array [encoded prefix, exp or null, allow or null].
 *
 * A prefix covers the keys under it, by whole segments of the decoded key:
 * `users/42` (or `users/42/`) covers `users/42/a.jpg`, not `users/420/a.jpg`
 * nor `users/42` itself. A prefix holding `..` or an empty segment matches
 * no key, since keys cannot hold them.
 */
export const signedText = (key: string, ops: UnresolvedOps, signature: SignatureParams): string | undefined => {
  if (signature.prefix == null) return canonicalUri(key, ops) + (signature.exp ? '\n' + signature.exp : '');
  const prefix = signature.prefix.replace(/\/$/, '');
  const allowed = signature.allow == null || signature.allow.split(' ').indexOf(opsSegment(ops)) !== -1;
  // The prefix encoded as in a canonical URI, so that the text is ASCII like every other (the HMAC
  // then has the same bytes in every runtime).
  return key.indexOf(prefix + '/') === 0 && allowed ? JSON.stringify([encodeKeyPath(prefix), signature.exp, signature.allow]) : undefined;
};
