// Storage faults as a viewer sees them: the local edge emulator over HTTP
// (generated CloudFront Function, edge cache on, cache bucket, the real origin
// handler), its S3 client the production one (originS3Client) behind a faulty
// proxy. A 503 reaches the viewer with Retry-After and no-store, the edge
// cache does not keep it, and the same URL works once the storage is back.

import sharp from 'sharp';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { S3_MAX_ATTEMPTS } from '../../lambda/origin/storage';
import { startEmulator, type RunningEmulator } from '../../local/emulator/start';
import { startFaultyProxy, type FaultyProxy } from '../support/faulty-proxy';
import { gradientJpeg } from '../support/images';
import { createTestBuckets, listKeys, testS3Client, type TestBuckets } from '../support/s3';
import { attempts, proxiedS3Client, WORST_CASE_MS } from './support';

let proxy: FaultyProxy;
let s3: S3Client;
let buckets: TestBuckets;
let emulator: RunningEmulator;
let folder: string;
const logs: string[] = [];

beforeAll(async () => {
  proxy = await startFaultyProxy(inject('s3Endpoint'));
  s3 = proxiedS3Client(proxy.endpoint);
  buckets = await createTestBuckets('faults emulator');
  folder = await mkdtemp(join(tmpdir(), 'faults-emulator-'));
  await mkdir(join(folder, 'faults'));
  await Promise.all(['down.jpg', 'flaky.jpg'].map(async (name) => writeFile(join(folder, 'faults', name), await gradientJpeg(640, 480))));
  emulator = await startEmulator({
    s3,
    port: 0,
    images: folder,
    edgeCache: true,
    buckets: { source: buckets.sourceBucket, cache: buckets.cacheBucket },
    log: (line) => logs.push(line),
  });
});

afterAll(async () => {
  await emulator?.close();
  s3?.destroy();
  await proxy?.close();
  await buckets?.cleanup();
  if (folder) await rm(folder, { recursive: true, force: true });
});

async function get(path: string) {
  const started = performance.now();
  const response = await fetch(emulator.url + path, { headers: { accept: 'image/webp,*/*' } });
  const body = Buffer.from(await response.arrayBuffer());
  return { status: response.status, headers: response.headers, body, ms: performance.now() - started };
}

/** The variants of `key` once the writes of the misses answered so far are done (the origin answers first). */
async function variants(key: string) {
  await emulator.settled();
  return (await listKeys(testS3Client(), buckets.cacheBucket)).filter((k) => k.startsWith(key + '/'));
}

describe('through the emulator, with the source reads failing', () => {
  it('503 with Retry-After and no-store reaches the viewer, the edge cache does not keep it, and the URL works once S3 is back', async () => {
    proxy.inject({ fault: { kind: 'error', status: 503 }, method: 'GET', bucket: buckets.sourceBucket });
    const path = '/faults/down.jpg?w=200&format=auto';

    for (const round of [1, 2]) {
      const response = await get(path);
      expect(response.status, response.body.toString()).toBe(503);
      expect(response.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('content-type')).toBe('application/json');
      // Both times from the Lambda: an error is never an edge hit.
      expect(response.headers.get('x-cache')).toBe('Miss from cloudfront');
      expect(response.headers.get('x-origin')).toBe('lambda');
      expect(JSON.parse(response.body.toString())).toEqual({ error: 'storage_unavailable', message: expect.any(String) });
      expect(response.ms).toBeLessThan(WORST_CASE_MS);
      expect(attempts(proxy, 'GET', 'faults/down.jpg')).toBe(round * S3_MAX_ATTEMPTS);
    }
    expect(await variants('faults/down.jpg')).toEqual([]);
    expect(logs.filter((line) => line.includes('"storage_unavailable"'))).toHaveLength(2);

    // The emulator itself is fine meanwhile.
    const health = await fetch(emulator.url + '/_health');
    expect(health.status).toBe(200);

    proxy.clear();
    const back = await get(path);
    expect(back.status).toBe(200);
    expect(back.headers.get('content-type')).toBe('image/webp');
    expect(back.headers.get('x-origin')).toBe('lambda');
    expect((await sharp(back.body).metadata()).width).toBe(200);
    expect(await variants('faults/down.jpg')).toEqual(['faults/down.jpg/width=200,accept=webp']);
    const hit = await get(path);
    expect(hit.headers.get('x-cache')).toBe('Hit from cloudfront');
    expect(hit.body.equals(back.body)).toBe(true);
  });

  it('a SlowDown that clears within the attempts is invisible to the viewer: 200, one stored variant', async () => {
    proxy.clear();
    proxy.inject({ fault: { kind: 'error', status: 503 }, method: 'GET', bucket: buckets.sourceBucket, times: 2 });

    const response = await get('/faults/flaky.jpg?w=160&format=auto');

    expect(response.status).toBe(200);
    expect(response.headers.get('x-origin')).toBe('lambda');
    expect((await sharp(response.body).metadata()).width).toBe(160);
    expect(attempts(proxy, 'GET', 'faults/flaky.jpg')).toBe(3);
    expect(await variants('faults/flaky.jpg')).toEqual(['faults/flaky.jpg/width=160,accept=webp']);
  });
});
