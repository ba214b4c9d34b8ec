// The deployed request path, on a laptop, in CloudFront's order: the cache
// behavior chosen from the path as the viewer sent it (behaviors.ts); the
// generated viewer-request function; an edge cache keyed by the canonical
// URI; the behavior's origins (the default's: the S3 cache bucket first, the
// real origin handler on a 403/404; a web prefix's: the handler alone); then
// the generated viewer-response function on every answer CloudFront runs it
// for, and the response headers policy. X-Cache and X-Origin say who answered.

import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { OriginHandler } from '../../lambda/origin/handler';
import { etagMatches } from '../../lambda/origin/responses';
import type { EdgeGrammar } from '../../lambda/edge/dialects/dialect';
import { behaviorFor, type Behavior, type Origin } from './behaviors';
import {
  isResponse,
  loadFunction,
  viewerEvent,
  viewerResponseEvent,
  forwardedQuery,
  type FunctionResponse,
  type LoadedFunction,
  type ViewerRequest as FunctionRequest,
  type ViewerResponse,
  type ViewerResponseEvent,
} from './cloudfront-function';
import { EdgeCache, type CachedResponse } from './edge-cache';
import { decodeResult, functionUrlEvent } from './function-url';

export interface EmulatorOptions {
  s3: S3Client;
  cacheBucket: string;
  /** The viewer-request function files, exactly as deployed, by the grammar they read: one for each behavior's. */
  functionCodes: { [grammar in EdgeGrammar]?: string };
  /** The viewer-response function file, exactly as deployed. */
  viewerResponseCode: string;
  /** The KeyValueStore's contents (the signing secrets). */
  keyValues?: Record<string, string>;
  /** The origin handler, invoked in-process with Function URL events. */
  origin: OriginHandler;
  /** Whether responses are kept in the edge cache. */
  edgeCache: boolean;
  /** The deployment plan's cache behaviors, the default last (lib/plan.ts). */
  behaviors: Behavior[];
  /** The deployment plan's Vary, which the response headers policy sets where an answer has none. */
  vary: string;
}

export interface ViewerRequest {
  method: string;
  /** Path and query as the viewer sent them, still percent-encoded. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

export type { Origin };

/**
 * What the construct's response headers policy does to every response: nosniff
 * over whatever was there, and Vary only where none is (a variant from the cache
 * bucket has none, yet the same URL carries another format for another browser;
 * the viewer-response function's, with the client hints, is kept).
 */
function withPolicyHeaders(headers: Record<string, string>, vary: string): Record<string, string> {
  return { vary, ...headers, 'x-content-type-options': 'nosniff' };
}

/** CloudFront runs no viewer-response function for an answer of 400 or more. */
const VIEWER_RESPONSE_BELOW = 400;

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

/** The viewer's headers that have a value, each as one string (a repeated header's values joined). */
function singleValued(request: ViewerRequest): [string, string][] {
  return Object.entries(request.headers).flatMap(([name, value]): [string, string][] => {
    const text = single(value);
    return text === undefined ? [] : [[name, text]];
  });
}

/** The headers the viewer-request function sees: the viewer's, with lower-case names. */
function functionHeaders(request: ViewerRequest): Record<string, string> {
  return Object.fromEntries(singleValued(request).map(([name, text]) => [name.toLowerCase(), text]));
}

/** The headers CloudFront forwards to the Lambda: the viewer's, less those that stay at the edge. */
function lambdaHeaders(request: ViewerRequest): Record<string, string> {
  return Object.fromEntries(singleValued(request).filter(([name]) => !EDGE_ONLY_HEADERS.includes(name)));
}

/** The viewer's URL as its path and its query (without the `?`), both still percent-encoded. */
function splitUrl(url: string): { path: string; query: string } {
  const queryAt = url.indexOf('?');
  return queryAt === -1 ? { path: url, query: '' } : { path: url.slice(0, queryAt), query: url.slice(queryAt + 1) };
}

/** Whether the viewer already has this cached 200 (its If-None-Match names the ETag): a 304 then. */
function viewerHasIt(request: ViewerRequest, response: CachedResponse): boolean {
  const etag = response.headers.etag;
  return response.status === 200 && etag !== undefined && etagMatches(single(request.headers['if-none-match']), etag);
}

/** The primary origin: a variant already in the cache bucket, or undefined (403/404: fail over). */
async function fromCacheBucket(s3: S3Client, bucket: string, uri: string): Promise<CachedResponse | undefined> {
  try {
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: decodeURIComponent(uri.slice(1)) }));
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

/** The viewer-request function a behavior runs: the one of the grammar it reads, each loaded once. */
function viewerRequestFunctions(options: EmulatorOptions): (behavior: Behavior) => LoadedFunction {
  const loaded = Object.fromEntries(
    Object.entries(options.functionCodes).map(([grammar, code]) => [
      grammar,
      loadFunction(code, options.keyValues, `viewer-request-${grammar}.js`),
    ]),
  );
  return (behavior) => {
    const edgeFunction = loaded[behavior.grammar];
    if (!edgeFunction) throw new Error(`No viewer-request function for the ${behavior.grammar} grammar of ${behavior.pathPattern}.`);
    return edgeFunction;
  };
}

/**
 * The work still running: here, edge misses (a read of the cache bucket whose answer the edge cache
 * will keep), and origin invocations, also after their response (a variant being stored); in
 * upload-validator.ts, validations of uploads.
 */
export function runningWork() {
  const running = new Set<Promise<unknown>>();
  return {
    track<T>(work: Promise<T>): Promise<T> {
      running.add(work);
      void work.finally(() => running.delete(work)).catch(() => {});
      return work;
    },
    /**
     * Waits for the work running now to end: then the variants of the misses answered so far are
     * in the cache bucket (or failed to be), and no answer read before a purge can enter the edge
     * cache after it. Later misses are not waited for.
     */
    async settled(): Promise<void> {
      await Promise.allSettled([...running]);
    },
  };
}

export function createEmulator(options: EmulatorOptions) {
  const edgeFunctionFor = viewerRequestFunctions(options);
  const responseFunction = loadFunction<ViewerResponseEvent, ViewerResponse>(options.viewerResponseCode, {}, 'viewer-response.js');
  const { behaviors } = options;
  const cache = new EdgeCache(options.edgeCache);
  const { track, settled } = runningWork();

  async function fromLambda(uri: string, query: string, request: ViewerRequest): Promise<CachedResponse> {
    const event = functionUrlEvent(uri + (query ? '?' + query : ''), request.method, lambdaHeaders(request));
    // Like the streaming Lambda: the response as soon as the origin has one, its work goes on.
    const result = await new Promise<Awaited<ReturnType<OriginHandler>>>((resolve, reject) => {
      track(options.origin(event, undefined, resolve).then(resolve, reject));
    });
    const { status, headers: responseHeaders, body } = decodeResult(result);
    return { status, headers: responseHeaders, body };
  }

  /**
   * The headers after the viewer-response function, given the request the viewer-request function
   * passed on (none when it answered itself: CloudFront returns that as it is) and the answer's status.
   */
  async function viewerResponseHeaders(
    passedOn: FunctionRequest | undefined,
    status: number,
    headers: Record<string, string>,
  ): Promise<Record<string, string>> {
    if (!passedOn || status >= VIEWER_RESPONSE_BELOW) return headers;
    const result = await responseFunction.handler(viewerResponseEvent(passedOn, status, headers));
    return Object.fromEntries(Object.entries(result.headers).map(([name, field]) => [name, field.value]));
  }

  /** What the viewer gets for a cached or fetched `response`: a 304 where its ETag matches, `Age` on a hit. */
  async function answer(
    request: ViewerRequest,
    passedOn: FunctionRequest | undefined,
    response: CachedResponse,
    served: { ageSeconds?: number; extra: Record<string, string> },
  ): Promise<CachedResponse> {
    let headers: Record<string, string> = { ...response.headers };
    if (served.ageSeconds !== undefined) headers.age = String(served.ageSeconds);
    const notModified = viewerHasIt(request, response);
    const status = notModified ? 304 : response.status;
    if (notModified) delete headers['content-length'];
    // The origin's own length where it gave one: its answer to a HEAD has the length, not the body.
    else headers['content-length'] ??= String(response.body.length);
    headers = { ...withPolicyHeaders(await viewerResponseHeaders(passedOn, status, headers), options.vary), ...served.extra };
    const body = notModified || request.method === 'HEAD' ? Buffer.alloc(0) : response.body;
    return { status, headers, body };
  }

  async function serve(request: ViewerRequest): Promise<CachedResponse> {
    const { path, query } = splitUrl(request.url);
    // The behavior is CloudFront's first choice, from the raw path, before the function rewrites it.
    const behavior = behaviorFor(path, behaviors);
    const result = await edgeFunctionFor(behavior).handler(
      viewerEvent(path, query, { method: request.method, headers: functionHeaders(request) }),
    );
    if (isResponse(result)) {
      return answer(request, undefined, functionResponse(result), { extra: { 'x-cache': 'FunctionGeneratedResponse from cloudfront' } });
    }
    const uri = result.uri;
    const cached = cache.lookup(uri);
    if (cached)
      return answer(request, result, cached.response, { ageSeconds: cached.ageSeconds, extra: { 'x-cache': 'Hit from cloudfront' } });

    const { origin, response } = await track(
      fromOrigins(behavior.origins, uri, forwardedQuery(result), request).then((fetched) => {
        // CloudFront caches GET and HEAD only, and the origin answers a HEAD without the body:
        // only an answer to a GET may be served to later GETs.
        if (request.method === 'GET') cache.put(uri, fetched.response);
        return fetched;
      }),
    );
    return answer(request, result, response, { extra: { 'x-cache': 'Miss from cloudfront', 'x-origin': origin } });
  }

  /** The first of a behavior's origins to answer other than 403/404 (the Lambda, last, always answers). */
  async function fromOrigins(
    origins: Origin[],
    uri: string,
    query: string,
    request: ViewerRequest,
  ): Promise<{ origin: Origin; response: CachedResponse }> {
    for (const origin of origins) {
      const response =
        origin === 'cache-bucket' ? await fromCacheBucket(options.s3, options.cacheBucket, uri) : await fromLambda(uri, query, request);
      if (response) return { origin, response };
    }
    throw new Error('A behavior ends with the Lambda, which always answers.');
  }

  return { serve, cache, settled };
}

export type Emulator = ReturnType<typeof createEmulator>;
