// Source keys: percent-decoding from a URL path, validation, and the one
// canonical encoding used in canonical URIs.

import { grammarError } from './errors';

/** S3's limit on a key, in UTF-8 bytes. */
export const MAX_KEY_BYTES = 1024;

/** UTF-8 length without TextEncoder, which a CloudFront Function does not have. */
const utf8Length = (text: string) => encodeURIComponent(text).replace(/%[0-9A-F]{2}/g, '_').length;

const invalidKey = (reason: string) => grammarError('invalid_key', `Invalid source key: ${reason}.`);

/** Throws unless `key` is a key this service will read. */
export const validateKey = (key: string): string => {
  if (key === '') throw invalidKey('it is empty');
  // C0, DEL and the C1 controls (U+0080-U+009F).
  if (/[\u0000-\u001f\u007f-\u009f]/.test(key)) throw invalidKey('it contains a control character');
  let bytes: number;
  try {
    bytes = utf8Length(key);
  } catch (_unpaired) {
    // encodeURIComponent throws a URIError on a lone surrogate, which has no UTF-8 form.
    throw invalidKey('it is not valid Unicode');
  }
  if (bytes > MAX_KEY_BYTES) throw invalidKey(`it is longer than ${MAX_KEY_BYTES} bytes`);
  // The first empty, `.` or `..` segment, if any.
  const segment = /(?:^|\/)(\.{0,2})(?:\/|$)/.exec(key);
  if (segment) throw invalidKey(segment[1] ? `it has a "${segment[1]}" path segment` : 'it has an empty path segment');
  return key;
};

/** The key named by a URL path such as `/photos/my%20cat.jpg` (`+` is a literal plus in a path). */
export const decodeKeyPath = (path: string): string => {
  let key: string;
  try {
    key = decodeURIComponent(path.replace(/^\//, ''));
  } catch (_malformed) {
    throw invalidKey('it is not valid percent-encoded UTF-8');
  }
  return validateKey(key);
};

/**
 * RFC 3986 encoding of each segment: only unreserved characters stay literal,
 * as SigV4 expects. encodeURIComponent leaves `!'()*`; they are escaped too,
 * and the slashes put back.
 */
export const encodeKeyPath = (key: string): string =>
  ('/' + encodeURIComponent(key)).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase()).replace(/%2F/g, '/');
