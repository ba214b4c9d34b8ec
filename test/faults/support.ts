// The origin handler as deployed (lambda/origin/index.ts's S3 client:
// originS3Client, with its attempts and timeouts) but reaching LocalStack
// through a faulty proxy, and the checks every storage fault shares.

import type { S3Client } from '@aws-sdk/client-s3';
import { expect, inject } from 'vitest';
import type { OriginConfig } from '../../lambda/origin/config';
import { createOriginHandler, type InvocationContext } from '../../lambda/origin/handler';
import { originS3Client, S3_MAX_ATTEMPTS, S3_TIMEOUTS } from '../../lambda/origin/storage';
import { decodeResult, functionUrlEvent, type OriginResponse } from '../../local/emulator/function-url';
import { startFaultyProxy, type FaultyProxy } from '../support/faulty-proxy';
import { originConfig } from '../../lambda/origin/config';
import { listKeys, testS3Client, type TestBuckets } from '../support/s3';

/** The production client, reaching S3 at `endpoint` (a proxy) the way local/harness/s3-client.ts reaches LocalStack. */
export function proxiedS3Client(endpoint: string): S3Client {
  return originS3Client({
    endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
}

/**
 * The longest a call to a storage that never answers may take: every attempt
 * runs to its request timeout, with the SDK's backoff between them (at most
 * 2 x 1 s + 2 s for SlowDown), and a second of slack for a busy machine.
 */
export const WORST_CASE_MS = S3_MAX_ATTEMPTS * S3_TIMEOUTS.requestTimeout + 3_000 + 1_000;

export interface TimedResponse extends OriginResponse {
  /** Wall time of the handler call. */
  ms: number;
}

export interface FaultedOrigin {
  proxy: FaultyProxy;
  config: OriginConfig;
  logs: Record<string, unknown>[];
  request(uri: string, options?: { context?: InvocationContext }): Promise<TimedResponse>;
  /** Log entries of one event (`error`, `variant`, `store_failed`) for `uri`. */
  logged(event: string, uri: string): Record<string, unknown>[];
  close(): Promise<void>;
}

/** A handler on `buckets` whose every S3 call goes through its own faulty proxy. */
export async function faultedOrigin(buckets: TestBuckets, overrides: Partial<OriginConfig> = {}): Promise<FaultedOrigin> {
  const proxy = await startFaultyProxy(inject('s3Endpoint'));
  const s3 = proxiedS3Client(proxy.endpoint);
  const config = originConfig(buckets, overrides);
  const logs: Record<string, unknown>[] = [];
  const handle = createOriginHandler({ s3, config, log: (entry) => logs.push(entry) });
  return {
    proxy,
    config,
    logs,
    async request(uri, options = {}) {
      const start = performance.now();
      const response = decodeResult(await handle(functionUrlEvent(uri), options.context));
      return { ...response, ms: performance.now() - start };
    },
    logged: (event, uri) => logs.filter((entry) => entry.event === event && entry.uri === uri),
    async close() {
      s3.destroy();
      await proxy.close();
    },
  };
}

/** Variants of `sourceKey` in the cache bucket, read straight from LocalStack (not through the proxy). */
export async function variantsOf(buckets: TestBuckets, sourceKey: string): Promise<string[]> {
  return (await listKeys(testS3Client(), buckets.cacheBucket)).filter((key) => key.startsWith(sourceKey + '/'));
}

/** Words that would mean internal detail escaped into a response body. */
const INTERNAL_DETAIL =
  /SlowDown|InternalError|Timeout|ECONN|socket|127\.0\.0\.1|localhost|\bS3\b|aws|sdk|smithy|Error:|\.ts:\d|stack|bucket/i;

/** The contract's answer to a storage fault: 503, Retry-After, never cached, a two-field JSON body with nothing internal. */
export function expectStorageUnavailable(response: OriginResponse, buckets: TestBuckets) {
  const text = response.body.toString('utf8');
  expect(response.status, text).toBe(503);
  expect(response.headers['retry-after']).toMatch(/^[1-9]\d*$/);
  expect(response.headers['cache-control']).toBe('no-store');
  expect(response.headers['content-type']).toBe('application/json');
  expect(response.headers.location).toBeUndefined();
  expect(response.json()).toEqual({ error: 'storage_unavailable', message: expect.stringMatching(/unavailable.*try again/) });
  expect(text).not.toMatch(INTERNAL_DETAIL);
  expect(text).not.toContain(buckets.sourceBucket);
  expect(text).not.toContain(buckets.cacheBucket);
}

/** How many requests for `key` with `method` reached the proxy. */
export function attempts(proxy: FaultyProxy, method: string, key: string): number {
  return proxy.requests.filter((request) => request.method === method && request.key === key).length;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
