// AWS Signature Version 4, checked: what API Gateway's IAM authorisation does
// before a route runs, for the emulator's `/_manage/` routes. The signature
// is made again from the request as it arrived (the canonical request of the
// SigV4 documentation: method, path, query, the signed headers, the payload's
// SHA-256) with the one secret the emulator knows, and compared in constant
// time. Only the Authorization header is read; a presigned URL (the
// signature in the query) is not accepted.

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export interface SigV4Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  service: string;
}

/** What `npm start`'s management routes accept: LocalStack's credentials, signed for API Gateway. */
export const EMULATOR_CREDENTIALS: SigV4Credentials = {
  accessKeyId: 'test',
  secretAccessKey: 'test',
  region: 'us-east-1',
  service: 'execute-api',
};

/** A request as it arrived: its path and query still percent-encoded, its whole body. */
export interface ArrivedRequest {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** Why a request is refused: a code and a message naming what is wrong. */
export interface SigV4Refusal {
  error: 'missing_signature' | 'malformed_signature' | 'invalid_credentials' | 'request_expired' | 'invalid_signature';
  message: string;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';

/** How far X-Amz-Date may be from now, either way, as AWS allows. */
export const MAX_SKEW_MS = 15 * 60 * 1000;

const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** RFC 3986 encoding, as SigV4 wants it: every byte but the unreserved characters. */
const uriEncode = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());

/** Percent-escapes decoded, or the text as it is where they are not valid UTF-8. */
function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The canonical URI of a path as sent: `.` and `..` segments resolved, then the
 * path as the client signed it encoded once more (every service but S3 signs the
 * path encoded twice), slashes kept.
 */
function canonicalUri(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '..') segments.pop();
    else if (segment !== '.' && segment !== '') segments.push(segment);
  }
  const joined = `/${segments.join('/')}${segments.length > 0 && path.endsWith('/') ? '/' : ''}`;
  return uriEncode(joined).replace(/%2F/g, '/');
}

/** The canonical query: each name and value decoded and encoded again, sorted by name, then by value. */
function canonicalQuery(query: string): string {
  const pairs = query
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const split = pair.indexOf('=');
      const [name, value] = split === -1 ? [pair, ''] : [pair.slice(0, split), pair.slice(split + 1)];
      return [uriEncode(decoded(name)), uriEncode(decoded(value))] as const;
    });
  pairs.sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
  return pairs.map(([name, value]) => `${name}=${value}`).join('&');
}

/** A header's value as signed: repeated values joined by commas, spaces trimmed and runs of them made one. */
function headerValue(value: string | string[]): string {
  return (Array.isArray(value) ? value.join(',') : value).trim().replace(/\s+/g, ' ');
}

interface Authorization {
  accessKeyId: string;
  date: string;
  region: string;
  service: string;
  signedHeaders: string[];
  signature: string;
}

/** The Authorization header's parts: `AWS4-HMAC-SHA256 Credential=<key>/<date>/<region>/<service>/aws4_request, SignedHeaders=<a;b>, Signature=<hex>`. */
function parseAuthorization(header: string): Authorization | undefined {
  if (!header.startsWith(ALGORITHM + ' ')) return undefined;
  const parts = new Map<string, string>();
  for (const part of header.slice(ALGORITHM.length + 1).split(',')) {
    const split = part.indexOf('=');
    if (split > 0) parts.set(part.slice(0, split).trim(), part.slice(split + 1).trim());
  }
  const scope = parts.get('Credential')?.split('/');
  const signedHeaders = parts.get('SignedHeaders')?.split(';');
  const signature = parts.get('Signature');
  if (scope?.length !== 5 || scope[4] !== 'aws4_request' || !signedHeaders || !signature || !/^[0-9a-f]{64}$/.test(signature))
    return undefined;
  const [accessKeyId, date, region, service] = scope as [string, string, string, string];
  return { accessKeyId, date, region, service, signedHeaders, signature };
}

/** X-Amz-Date (`20261205T090000Z`) as a time, or undefined when it is not one. */
function amzTime(text: string): number | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second] = match.map(Number) as number[];
  const time = Date.UTC(year!, month! - 1, day!, hour!, minute!, second!);
  return Number.isNaN(time) ? undefined : time;
}

/** The checks of the request that come before its signature: the scope, the time, the headers signed. */
function scopeRefusal(request: ArrivedRequest, auth: Authorization, credentials: SigV4Credentials, now: number): SigV4Refusal | undefined {
  const header = (name: string) => request.headers[name];
  if (auth.accessKeyId !== credentials.accessKeyId)
    return { error: 'invalid_credentials', message: `The access key ${JSON.stringify(auth.accessKeyId)} is not the emulator's.` };
  if (auth.region !== credentials.region || auth.service !== credentials.service)
    return {
      error: 'invalid_credentials',
      message: `The credential scope names ${auth.region}/${auth.service}; sign for ${credentials.region}/${credentials.service}.`,
    };
  const amzDate = header('x-amz-date');
  const time = typeof amzDate === 'string' ? amzTime(amzDate) : undefined;
  if (time === undefined) return { error: 'malformed_signature', message: 'X-Amz-Date is missing or not of the form 20261205T090000Z.' };
  if (!(amzDate as string).startsWith(auth.date))
    return { error: 'malformed_signature', message: `The credential scope's date ${auth.date} is not X-Amz-Date's.` };
  if (Math.abs(now - time) > MAX_SKEW_MS)
    return { error: 'request_expired', message: `X-Amz-Date ${amzDate as string} is more than 15 minutes from the emulator's time.` };
  for (const name of ['host', 'x-amz-date']) {
    if (!auth.signedHeaders.includes(name)) return { error: 'malformed_signature', message: `SignedHeaders must include ${name}.` };
  }
  const missing = auth.signedHeaders.find((name) => header(name) === undefined);
  if (missing !== undefined) return { error: 'malformed_signature', message: `The signed header ${missing} is not in the request.` };
  return undefined;
}

/** The payload's hash as signed: x-amz-content-sha256 where it is sent (it must be the body's), the body's otherwise. */
function payloadHash(request: ArrivedRequest): string | SigV4Refusal {
  const hash = sha256Hex(request.body);
  const declared = request.headers['x-amz-content-sha256'];
  if (declared === undefined) return hash;
  if (declared !== hash)
    return {
      error: 'invalid_signature',
      message: 'x-amz-content-sha256 is not the SHA-256 of the body (an unsigned payload is not accepted).',
    };
  return declared;
}

/** The signature of the request as it arrived, made with `credentials`' secret. */
function expectedSignature(request: ArrivedRequest, auth: Authorization, credentials: SigV4Credentials, hash: string): string {
  const canonical = [
    request.method.toUpperCase(),
    canonicalUri(request.path),
    canonicalQuery(request.query),
    ...auth.signedHeaders.map((name) => `${name}:${headerValue(request.headers[name]!)}`),
    '',
    auth.signedHeaders.join(';'),
    hash,
  ].join('\n');
  const scope = `${auth.date}/${auth.region}/${auth.service}/aws4_request`;
  const stringToSign = [ALGORITHM, request.headers['x-amz-date'] as string, scope, sha256Hex(canonical)].join('\n');
  let key: Buffer = hmac('AWS4' + credentials.secretAccessKey, auth.date);
  for (const part of [auth.region, auth.service, 'aws4_request']) key = hmac(key, part);
  return createHmac('sha256', key).update(stringToSign).digest('hex');
}

/** Undefined when `request` carries a valid SigV4 signature made with `credentials` within 15 minutes of `now`; the refusal otherwise. */
export function verifySigV4(request: ArrivedRequest, credentials: SigV4Credentials, now = Date.now()): SigV4Refusal | undefined {
  const header = request.headers.authorization;
  if (header === undefined) {
    return {
      error: 'missing_signature',
      message: `The request is not signed: sign it with AWS SigV4 (access key ${credentials.accessKeyId}, region ${credentials.region}, service ${credentials.service}).`,
    };
  }
  const auth = typeof header === 'string' ? parseAuthorization(header) : undefined;
  if (!auth) return { error: 'malformed_signature', message: `The Authorization header is not an ${ALGORITHM} signature.` };
  const refusal = scopeRefusal(request, auth, credentials, now);
  if (refusal) return refusal;
  const hash = payloadHash(request);
  if (typeof hash !== 'string') return hash;
  const expected = Buffer.from(expectedSignature(request, auth, credentials, hash), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(auth.signature, 'hex')))
    return {
      error: 'invalid_signature',
      message: 'The signature does not match the request: it was signed with another secret, or changed since.',
    };
  return undefined;
}
