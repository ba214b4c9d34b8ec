// Function URL responses, with the headers the contract promises.

import { createHash } from 'node:crypto';
import type { HttpError } from './errors';
import type { Variant } from './storage';

/**
 * A Function URL response: status, headers and the body's bytes, which the
 * streaming entry point writes as they are (no base64 round trip).
 */
export interface FunctionUrlResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: Buffer;
}

const NO_BODY = Buffer.alloc(0);

/** What Server-Timing reports: the phases before the response (the variant's write comes after it). */
export type ResponseTimings = Record<'fetch' | 'transform', number>;

/** Client errors may be retried soon (the source may appear); server errors are never cached. */
const CLIENT_ERROR_CACHE_CONTROL = 'public, max-age=10';

/**
 * The WebP a first viewer gets while its AVIF is made after the response:
 * browsers keep it a minute, CloudFront not at all (s-maxage=0, and the cache
 * policy's minimum TTL is 0), so the next request finds the AVIF.
 */
export const DEFERRED_AVIF_CACHE_CONTROL = 'public, max-age=60, s-maxage=0';

/** The quoted MD5 of the body: what S3 reports as the stored variant's ETag. */
export function etagOf(body: Buffer): string {
  return '"' + createHash('md5').update(body).digest('hex') + '"';
}

/** Whether an If-None-Match header names `etag` (weakly compared, as for GET and HEAD) or is `*`. */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const candidate = tag.trim().replace(/^W\//, '');
    return candidate === '*' || candidate === etag;
  });
}

/** An image's headers: its type, lifetime and the phases' timings; it varies on the format negotiated from Accept. */
const imageHeaders = (contentType: string, cacheControl: string, timings: ResponseTimings): Record<string, string> => ({
  'content-type': contentType,
  'cache-control': cacheControl,
  vary: 'Accept',
  'x-content-type-options': 'nosniff',
  'server-timing': Object.entries(timings)
    .map(([name, ms]) => `${name};dur=${ms.toFixed(1)}`)
    .join(', '),
});

export function variantResponse(
  variant: Variant,
  request: { method: string; ifNoneMatch?: string; cacheControl: string; timings: ResponseTimings },
): FunctionUrlResponse {
  const etag = etagOf(variant.body);
  const headers: Record<string, string> = { ...imageHeaders(variant.contentType, request.cacheControl, request.timings), etag };
  if (etagMatches(request.ifNoneMatch, etag)) return { statusCode: 304, headers, body: NO_BODY };
  headers['content-length'] = String(variant.body.length);
  return { statusCode: 200, headers, body: request.method === 'HEAD' ? NO_BODY : variant.body };
}

export function errorResponse(error: HttpError): FunctionUrlResponse {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'cache-control': error.status < 500 ? CLIENT_ERROR_CACHE_CONTROL : 'no-store',
    'x-content-type-options': 'nosniff',
  };
  if (error.status === 503) headers['retry-after'] = '1';
  if (error.status === 405) headers.allow = 'GET, HEAD';
  return { statusCode: error.status, headers, body: Buffer.from(JSON.stringify({ error: error.code, message: error.message })) };
}

/**
 * The fallback image in place of `error` (fallback.ts): the error's status,
 * for monitors and crawlers, and the error's own short lifetime, since the
 * fallback is never stored and so no upload's invalidation reaches a copy
 * CloudFront holds. No ETag: an error is not revalidated.
 */
export function fallbackResponse(
  error: HttpError,
  image: Pick<Variant, 'body' | 'contentType'>,
  request: { method: string; timings: ResponseTimings },
): FunctionUrlResponse {
  const headers = {
    ...imageHeaders(image.contentType, CLIENT_ERROR_CACHE_CONTROL, request.timings),
    'content-length': String(image.body.length),
  };
  return { statusCode: error.status, headers, body: request.method === 'HEAD' ? NO_BODY : image.body };
}

/** Sends the viewer back through CloudFront, which now finds the stored variant; never cached itself. */
export function redirectResponse(location: string): FunctionUrlResponse {
  return { statusCode: 302, headers: { location, 'cache-control': 'no-store' }, body: NO_BODY };
}
