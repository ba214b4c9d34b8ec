// Runs the real origin handler against this run's LocalStack, with its own
// buckets, as Lambda would: a Function URL event in, a Function URL result out.

import type { LambdaFunctionURLEvent, LambdaFunctionURLResult } from 'aws-lambda';
import { afterAll } from 'vitest';
import { DEFAULT_CACHE_CONTROL, DEFAULT_LIMITS, DEFAULT_MAX_INLINE_BYTES, type OriginConfig } from '../../lambda/origin/config';
import { createOriginHandler, type InvocationContext } from '../../lambda/origin/handler';
import { createTestBuckets, listKeys, putObject, type TestBuckets } from './s3';

export interface OriginResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The JSON body (error responses, format=json). */
  json(): any;
}

export interface TestOrigin extends TestBuckets {
  config: OriginConfig;
  /** Every structured log entry the handler wrote. */
  logs: Record<string, unknown>[];
  /** Uploads a source object. */
  putSource(key: string, body: Buffer | string, contentType?: string): Promise<void>;
  /** Invokes the handler for a canonical URI such as `/cat.jpg/width=100`. */
  request(uri: string, options?: { method?: string; headers?: Record<string, string>; context?: InvocationContext }): Promise<OriginResponse>;
  /** Keys in the cache bucket. */
  cachedKeys(): Promise<string[]>;
}

export function functionUrlEvent(uri: string, method = 'GET', headers: Record<string, string> = {}): LambdaFunctionURLEvent {
  const [rawPath = '', rawQueryString = ''] = uri.split('?');
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    headers,
    isBase64Encoded: false,
    requestContext: {
      accountId: 'anonymous',
      apiId: 'test',
      domainName: 'test.lambda-url.us-east-1.on.aws',
      domainPrefix: 'test',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'vitest' },
      requestId: 'test',
      routeKey: '$default',
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
  };
}

export function decodeResult(result: LambdaFunctionURLResult): OriginResponse {
  if (typeof result !== 'object') throw new Error('the handler returned a bare string');
  const body = Buffer.from(result.body ?? '', result.isBase64Encoded ? 'base64' : 'utf8');
  return {
    status: result.statusCode ?? 200,
    headers: (result.headers ?? {}) as Record<string, string>,
    body,
    json: () => JSON.parse(body.toString('utf8')),
  };
}

/**
 * A handler on fresh buckets for one test file; the buckets are removed after
 * the file's tests. `overrides` changes limits or settings for this origin.
 */
export async function createTestOrigin(label: string, overrides: Partial<OriginConfig> = {}): Promise<TestOrigin> {
  const buckets = await createTestBuckets(label);
  afterAll(() => buckets.cleanup());
  const config: OriginConfig = {
    ...DEFAULT_LIMITS,
    sourceBucket: buckets.sourceBucket,
    cacheBucket: buckets.cacheBucket,
    maxInlineBytes: DEFAULT_MAX_INLINE_BYTES,
    cacheControl: DEFAULT_CACHE_CONTROL,
    ...overrides,
  };
  const logs: Record<string, unknown>[] = [];
  const handle = createOriginHandler({ s3: buckets.s3, config, log: (entry) => logs.push(entry) });
  return {
    ...buckets,
    config,
    logs,
    putSource: async (key, body, contentType) => {
      await putObject(buckets.s3, buckets.sourceBucket, key, body, contentType);
    },
    request: async (uri, options = {}) =>
      decodeResult(await handle(functionUrlEvent(uri, options.method, options.headers), options.context)),
    cachedKeys: () => listKeys(buckets.s3, buckets.cacheBucket),
  };
}
