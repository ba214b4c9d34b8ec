// URL signatures: base64url(HMAC-SHA256(secret, canonical URI)), first 32
// characters. Signing the canonical URI means every spelling of a request
// carries the same signature. The URI signed is the one before `format=auto`
// is negotiated (canonicalRequest with no Accept), so one signed URL serves
// every browser. `crypto` exists both in Node and in
// CloudFront Functions; only digest('base64') is used because it is common to both.

import crypto from 'crypto';

export const SIGNATURE_LENGTH = 32;

export function signUri(canonicalUri: string, secret: string): string {
  const base64 = crypto.createHmac('sha256', secret).update(canonicalUri).digest('base64') as string;
  // 32 bytes are 44 base64 characters, the last one `=`: the slice drops it.
  return base64.replace(/\+/g, '-').replace(/\//g, '_').slice(0, SIGNATURE_LENGTH);
}

/** Compares in time that depends only on the length, so a guess learns nothing from timing. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/** True when `signature` was made with any of `secrets` (several are active while one is rotated). */
export function verifySignature(canonicalUri: string, signature: string, secrets: string[]): boolean {
  let valid = false;
  // No early exit: every secret is tried whatever the outcome.
  secrets.forEach((secret) => {
    if (sameText(signUri(canonicalUri, secret), signature)) valid = true;
  });
  return valid;
}
