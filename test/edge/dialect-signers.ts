// How DIT's and Thumbor's own signers sign a URL, by their documented
// algorithms, for the tests of the generated functions that verify them.

import { createHmac } from 'node:crypto';

/** The secrets the signed functions' stores hold: the active one and one still verifying while it is rotated out. */
export const SECRET = 'dit-secret-0123456789';
export const OLD_SECRET = 'old-dit-secret-abcdef';

/** DIT's signature: the hex HMAC-SHA256 of the path and the other parameters, sorted (its image-request.ts). */
export const ditSignature = (path: string, query: Record<string, string> = {}, secret = SECRET): string => {
  const rest = Object.entries(query)
    .sort()
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
  return createHmac('sha256', secret)
    .update(rest ? `${path}?${rest}` : path)
    .digest('hex');
};

/** Thumbor's: base64url of the HMAC-SHA1 of the path after the signature (libthumbor's CryptoURL). */
export const thumborHash = (rest: string, secret = SECRET): string => createHmac('sha1', secret).update(rest).digest('base64url') + '=';

/** A DIT `expires` value, `YYYYMMDDTHHmmssZ`, `seconds` from now. */
export const expires = (seconds: number) =>
  new Date(Date.now() + seconds * 1000)
    .toISOString()
    .replace(/[-:]|\.\d+/g, '')
    .slice(0, 15) + 'Z';
