// The emulator the client and the command line are tested against: its
// `/_manage/` routes on this run's LocalStack, signed with the emulator's
// credentials, its source watcher quick enough for a client's wait to see an
// upload validated. Keys under `gone/` are another source bucket's, which
// breakBucket deletes, so that their delete fails (NoSuchBucket) beside
// keys that succeed.

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { afterAll, beforeAll } from 'vitest';
import { createManageClient, type Credentials, type ManageClient } from '../../../lambda/manage/client';
import { startEmulator, type RunningEmulator } from '../../../local/emulator/start';
import { createTestBuckets, deleteBucket, listKeys, putObject, type TestBuckets } from '../../support/s3';

export const EMULATOR_CREDENTIALS: Credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

export const photo = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#3a7' } })
    .jpeg()
    .toBuffer();

export interface ManageEmulator {
  emulator: RunningEmulator;
  /** The API's URL on the emulator. */
  endpoint: string;
  client(options?: { credentials?: Credentials; fetch?: typeof fetch }): ManageClient;
  /** Puts sources straight into the default source bucket. */
  put(keys: string[]): Promise<void>;
  sourceKeys(): Promise<string[]>;
  /** Runs `work` with the bucket of `gone/` deleted (a delete of a key under it fails), then makes it again. */
  withoutBucket<T>(work: () => Promise<T>): Promise<T>;
}

/** Starts an emulator for the test file (stopped after it) and returns its handles once it is up. */
export function useManageEmulator(label: string): () => ManageEmulator {
  let buckets: TestBuckets;
  let running: ManageEmulator | undefined;
  beforeAll(async () => {
    buckets = await createTestBuckets(label);
    const [images, gone] = await Promise.all([mkdtemp(join(tmpdir(), 'manage-client-')), mkdtemp(join(tmpdir(), 'manage-gone-'))]);
    await writeFile(join(images, 'seed.jpg'), await photo(64, 48));
    await writeFile(join(gone, 'x.jpg'), await photo(32, 32));
    const emulator = await startEmulator({
      images,
      prefixFolders: { 'gone/': gone },
      s3: buckets.s3,
      buckets: { source: buckets.sourceBucket, cache: buckets.cacheBucket },
      port: 0,
      edgeCache: false,
      watchIntervalMs: 300,
      log: () => {},
    });
    const endpoint = `${emulator.url}/_manage`;
    running = {
      emulator,
      endpoint,
      client: ({ credentials = EMULATOR_CREDENTIALS, fetch } = {}) =>
        createManageClient({ endpoint, region: 'us-east-1', credentials, fetch }),
      put: async (keys) => {
        await Promise.all(keys.map((key) => putObject(buckets.s3, buckets.sourceBucket, key, 'a source', 'image/jpeg')));
      },
      sourceKeys: () => listKeys(buckets.s3, buckets.sourceBucket),
      withoutBucket: async (work) => {
        const Bucket = emulator.sourceBuckets['gone/']!;
        await deleteBucket(buckets.s3, Bucket);
        try {
          return await work();
        } finally {
          // The emulator's watcher of the bucket finds it again.
          await buckets.s3.send(new CreateBucketCommand({ Bucket }));
        }
      },
    };
  }, 120_000);
  afterAll(async () => {
    await running?.emulator.close();
    await buckets?.cleanup();
  });
  return () => running!;
}

/** A fetch that records each call's method, URL and body before making it. */
export function recordingFetch(): { fetch: typeof fetch; calls: { method: string; url: string; body?: unknown }[] } {
  const calls: { method: string; url: string; body?: unknown }[] = [];
  const recording: typeof fetch = (input, init) => {
    const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
    calls.push({ method: init?.method ?? 'GET', url: String(input), body });
    return fetch(input, init);
  };
  return { fetch: recording, calls };
}
