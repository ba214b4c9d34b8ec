// Function URL responses, with the headers the contract promises.

import type { LambdaFunctionURLResult } from 'aws-lambda';
import { createHash } from 'node:crypto';
import type { HttpError } from './errors';
import type { Variant } from './storage';

export type Timings = Record<'fetch' | 'transform' | 'store', number>;

/** Client errors may be retried soon (the source may appear); server errors are never cached. */
const CLIENT_ERROR_CACHE_CONTROL = 'public, max-age=10';

/** The quoted MD5 of the body: what S3 reports as the stored variant's ETag. */
export function etagOf(body: Buffer): string {
  return '"' + createHash('md5').update(body).digest('hex') + '"';
}

function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const candidate = tag.trim().replace(/^W\//, '');
    return candidate === '*' || candidate === etag;
  });
}

export function variantResponse(
  variant: Variant,
  request: { method: string; ifNoneMatch?: string; cacheControl: string; timings: Timings },
): LambdaFunctionURLResult {
  const etag = etagOf(variant.body);
  const headers: Record<string, string> = {
    'content-type': variant.contentType,
    etag,
    'cache-control': request.cacheControl,
    vary: 'Accept',
    'x-content-type-options': 'nosniff',
    'server-timing': Object.entries(request.timings)
      .map(([name, ms]) => `${name};dur=${ms.toFixed(1)}`)
      .join(', '),
  };
  if (matches(request.ifNoneMatch, etag)) return { statusCode: 304, headers, body: '' };
  headers['content-length'] = String(variant.body.length);
  const body = request.method === 'HEAD' ? '' : variant.body.toString('base64');
  return { statusCode: 200, headers, body, isBase64Encoded: body !== '' };
}

export function errorResponse(error: HttpError): LambdaFunctionURLResult {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'cache-control': error.status < 500 ? CLIENT_ERROR_CACHE_CONTROL : 'no-store',
    'x-content-type-options': 'nosniff',
  };
  if (error.status === 503) headers['retry-after'] = '1';
  if (error.status === 405) headers.allow = 'GET, HEAD';
  return { statusCode: error.status, headers, body: JSON.stringify({ error: error.code, message: error.message }) };
}

/** Sends the viewer back through CloudFront, which now finds the stored variant; never cached itself. */
export function redirectResponse(location: string): LambdaFunctionURLResult {
  return { statusCode: 302, headers: { location, 'cache-control': 'no-store' }, body: '' };
}
