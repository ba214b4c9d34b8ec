// Runs the real origin handler against this run's LocalStack, with its own
// buckets, as Lambda would: a Function URL event in, a Function URL result out.

import { afterAll } from 'vitest';
import { originConfig, type OriginConfig } from '../../lambda/origin/config';
import { createOriginHandler, type InvocationContext } from '../../lambda/origin/handler';
import { transformProcesses, type TransformProcesses } from '../../lambda/origin/transform-process';
import { decodeResult, functionUrlEvent, type OriginResponse } from '../../local/emulator/function-url';
import { createTestBuckets, listKeys, putObject, type TestBuckets } from './s3';

export type { OriginResponse };

export interface TestOrigin extends TestBuckets {
  config: OriginConfig;
  /** Every structured log entry the handler wrote. */
  logs: Record<string, unknown>[];
  /** Uploads a source object. */
  putSource(key: string, body: Buffer | string, contentType?: string): Promise<void>;
  /** Invokes the handler for a canonical URI such as `/cat.jpg/width=100`. */
  request(
    uri: string,
    options?: { method?: string; headers?: Record<string, string>; context?: InvocationContext },
  ): Promise<OriginResponse>;
  /** Keys in the cache bucket. */
  cachedKeys(): Promise<string[]>;
  /** The handler's transform processes (to see which are alive). */
  transforms: TransformProcesses;
}

/**
 * A handler on fresh buckets for one test file; the buckets are removed after
 * the file's tests. `overrides` changes limits or settings for this origin.
 */
export async function createTestOrigin(
  label: string,
  overrides: Partial<OriginConfig> = {},
  options: { allowLoopbackWebOrigins?: boolean } = {},
): Promise<TestOrigin> {
  const buckets = await createTestBuckets(label);
  afterAll(() => buckets.cleanup());
  const config = originConfig(buckets, overrides);
  const logs: Record<string, unknown>[] = [];
  const transforms = transformProcesses();
  afterAll(() => transforms.close());
  await transforms.ready(); // the time a test measures is the request's, not Node's start
  const handle = createOriginHandler({ s3: buckets.s3, config, log: (entry) => logs.push(entry), transforms, ...options });
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
    transforms,
  };
}
