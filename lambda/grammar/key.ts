// Source keys: percent-decoding from a URL path, validation, and the one
// canonical encoding used in canonical URIs.

import { grammarError } from './errors';
import { say, type Word } from './validate';

/** S3's limit on a key, in UTF-8 bytes. */
export const MAX_KEY_BYTES = 1024;

/** UTF-8 length without TextEncoder, which a CloudFront Function does not have. */
const utf8Length = (text: string) => encodeURIComponent(text).replace(/%[0-9A-F]{2}/g, '_').length;

const invalidKey = (reason: Word, detail?: unknown) => grammarError('invalid_key', say('key', say(reason, detail)));

/** Throws unless `key` is a key this service will read. */
export const validateKey = (key: string): string => {
  if (key === '') throw invalidKey('emptyKey');
  // C0, DEL and the C1 controls (U+0080-U+009F).
  if (/[\u0000-\u001f\u007f-\u009f]/.test(key)) throw invalidKey('control');
  let bytes: number;
  try {
    bytes = utf8Length(key);
  } catch (_unpaired) {
    // encodeURIComponent throws a URIError on a lone surrogate, which has no UTF-8 form.
    throw invalidKey('unicode');
  }
  if (bytes > MAX_KEY_BYTES) throw invalidKey('long', MAX_KEY_BYTES);
  // The first empty, `.` or `..` segment, if any.
  const segment = /(?:^|\/)(\.{0,2})(?:\/|$)/.exec(key);
  if (segment) throw segment[1] ? invalidKey('segment', segment[1]) : invalidKey('emptySegment');
  return key;
};

/** The key named by a URL path such as `/photos/my%20cat.jpg` (`+` is a literal plus in a path). */
export const decodeKeyPath = (path: string): string => {
  let key: string;
  try {
    key = decodeURIComponent(path.replace(/^\//, ''));
  } catch (_malformed) {
    throw invalidKey('escape');
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
