// The deployed request path, on a laptop: the generated CloudFront Function,
// an edge cache keyed by the canonical URI, then the origin group (the S3
// cache bucket first, the real origin handler on a 403/404), exactly as
// CloudFront applies them; a web origin's prefix goes to the origin handler
// alone, as its own cache behavior does. X-Cache and X-Origin say who answered.

import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { OriginHandler } from '../../lambda/origin/handler';
import { isResponse, loadFunction, viewerEvent, forwardedQuery, type FunctionResponse } from './cloudfront-function';
import { EdgeCache, type CachedResponse } from './edge-cache';
import { decodeResult, functionUrlEvent } from './function-url';

export interface EmulatorOptions {
  s3: S3Client;
  cacheBucket: string;
  /** The viewer-request function file, exactly as deployed. */
  functionCode: string;
  /** The KeyValueStore's contents (the signing secrets). */
  keyValues?: Record<string, string>;
  /** The origin handler, invoked in-process with Function URL events. */
  origin: OriginHandler;
  /** Whether responses are kept in the edge cache. */
  edgeCache: boolean;
  /**
   * Key prefixes of web origins: their own cache behavior goes to the origin
   * handler alone, which keeps their variants in the cache bucket itself.
   */
  webPrefixes?: string[];
}

export interface ViewerRequest {
  method: string;
  /** Path and query as the viewer sent them, still percent-encoded. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

export type Origin = 'cache-bucket' | 'lambda';

/**
 * Added to every response, as the construct's response headers policy does: a
 * variant from the cache bucket has no Vary of its own, yet the same URL
 * carries another format for another browser.
 */
const RESPONSE_HEADERS: Record<string, string> = { 'x-content-type-options': 'nosniff', vary: 'Accept' };

/** Conditional headers stay at the edge: CloudFront fetches whole objects to cache them. */
const EDGE_ONLY_HEADERS = ['host', 'if-none-match', 'if-modified-since'];

function functionResponse(result: FunctionResponse): CachedResponse {
  const headers: Record<string, string> = {};
  for (const [name, field] of Object.entries(result.headers)) headers[name] = field.value;
  return { status: result.statusCode, headers, body: Buffer.from(result.body.data, 'utf8') };
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

function etagMatches(request: ViewerRequest, response: CachedResponse): boolean {
  const ifNoneMatch = single(request.headers['if-none-match']);
  const etag = response.headers.etag;
  if (!ifNoneMatch || !etag || response.status !== 200) return false;
  return ifNoneMatch.split(',').some((tag) => ['*', etag].includes(tag.trim().replace(/^W\//, '')));
}

export function createEmulator(options: EmulatorOptions) {
  const edgeFunction = loadFunction(options.functionCode, options.keyValues);
  const cache = new EdgeCache(options.edgeCache);
  /** Origin invocations still running after their response (a variant being stored). */
  const running = new Set<Promise<unknown>>();

  /** The primary origin: a variant already in the cache bucket, or undefined (403/404: fail over). */
  async function fromCacheBucket(uri: string): Promise<CachedResponse | undefined> {
    try {
      const object = await options.s3.send(
        new GetObjectCommand({ Bucket: options.cacheBucket, Key: decodeURIComponent(uri.slice(1)) }),
      );
      const headers: Record<string, string> = {};
      if (object.ContentType) headers['content-type'] = object.ContentType;
      if (object.CacheControl) headers['cache-control'] = object.CacheControl;
      if (object.ETag) headers.etag = object.ETag;
      if (object.LastModified) headers['last-modified'] = object.LastModified.toUTCString();
      return { status: 200, headers, body: Buffer.from(await object.Body!.transformToByteArray()) };
    } catch (error) {
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 403 || status === 404) return undefined;
      throw error;
    }
  }

  async function fromLambda(uri: string, query: string, request: ViewerRequest): Promise<CachedResponse> {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      const text = single(value);
      if (text !== undefined && !EDGE_ONLY_HEADERS.includes(name)) headers[name] = text;
    }
    const event = functionUrlEvent(uri + (query ? '?' + query : ''), request.method, headers);
    // Like the streaming Lambda: the response as soon as the origin has one, its work goes on.
    const result = await new Promise<Awaited<ReturnType<OriginHandler>>>((resolve, reject) => {
      const invocation = options.origin(event, undefined, resolve).then(resolve, reject);
      running.add(invocation);
      void invocation.finally(() => running.delete(invocation));
    });
    const { status, headers: responseHeaders, body } = decodeResult(result);
    return { status, headers: responseHeaders, body };
  }

  /**
   * Waits for the origin invocations running now to end: then the variants of the misses
   * answered so far are in the cache bucket (or failed to be). Later misses are not waited for.
   */
  async function settled(): Promise<void> {
    await Promise.allSettled([...running]);
  }

  function answer(request: ViewerRequest, response: CachedResponse, extra: Record<string, string>): CachedResponse {
    const headers: Record<string, string> = { ...response.headers, ...RESPONSE_HEADERS, ...extra };
    if (etagMatches(request, response)) {
      delete headers['content-length'];
      return { status: 304, headers, body: Buffer.alloc(0) };
    }
    // The origin's own length where it gave one: its answer to a HEAD has the length, not the body.
    headers['content-length'] ??= String(response.body.length);
    return { status: response.status, headers, body: request.method === 'HEAD' ? Buffer.alloc(0) : response.body };
  }

  async function serve(request: ViewerRequest): Promise<CachedResponse> {
    const queryAt = request.url.indexOf('?');
    const path = queryAt === -1 ? request.url : request.url.slice(0, queryAt);
    const query = queryAt === -1 ? '' : request.url.slice(queryAt + 1);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      const text = single(value);
      if (text !== undefined) headers[name.toLowerCase()] = text;
    }
    const result = await edgeFunction.handler(viewerEvent(path, query, { method: request.method, headers }));
    if (isResponse(result)) {
      return answer(request, functionResponse(result), { 'x-cache': 'FunctionGeneratedResponse from cloudfront' });
    }
    const uri = result.uri;
    const cached = cache.get(uri);
    if (cached) return answer(request, cached, { 'x-cache': 'Hit from cloudfront' });

    const web = (options.webPrefixes ?? []).some((prefix) => decodeURIComponent(uri.slice(1)).startsWith(prefix));
    let origin: Origin = 'cache-bucket';
    let response = web ? undefined : await fromCacheBucket(uri);
    if (!response) {
      origin = 'lambda';
      response = await fromLambda(uri, forwardedQuery(result), request);
    }
    // CloudFront caches GET and HEAD only, and the origin answers a HEAD without the body:
    // only an answer to a GET may be served to later GETs.
    if (request.method === 'GET') cache.put(uri, response);
    return answer(request, response, { 'x-cache': 'Miss from cloudfront', 'x-origin': origin });
  }

  return { serve, cache, settled };
}

export type Emulator = ReturnType<typeof createEmulator>;
