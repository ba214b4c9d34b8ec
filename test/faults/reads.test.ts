// Reading the source when S3 misbehaves: the real origin handler, with the
// production S3 client (originS3Client: attempts and timeouts), reaching
// LocalStack through a faulty proxy. A fault that lasts costs a bounded
// number of attempts and a bounded time, then a 503 with Retry-After that no
// cache keeps; a fault that clears within the attempts is invisible; nothing
// is ever stored for a failed request, and the next request works.

import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3_MAX_ATTEMPTS, S3_TIMEOUTS } from '../../lambda/origin/storage';
import type { Fault } from '../support/faulty-proxy';
import { gradientJpeg } from '../support/images';
import { createTestBuckets, putObject, testS3Client, type TestBuckets } from '../support/s3';
import { attempts, expectStorageUnavailable, faultedOrigin, sleep, variantsOf, WORST_CASE_MS, type FaultedOrigin } from './support';

let buckets: TestBuckets;
let photo: Buffer;

beforeAll(async () => {
  buckets = await createTestBuckets('faults reads');
  photo = await gradientJpeg(640, 480);
});
afterAll(() => buckets.cleanup());

/** A faulted origin and a source of its own (`reads/<name>.jpg`), so concurrent tests never share either. */
async function setUp(name: string, onTestFinished: (fn: () => Promise<void>) => void, overrides = {}) {
  const origin = await faultedOrigin(buckets, overrides);
  onTestFinished(() => origin.close());
  const key = `reads/${name}.jpg`;
  await putObject(testS3Client(), buckets.sourceBucket, key, photo, 'image/jpeg');
  return { origin, key, uri: `/${key}/width=120` };
}

async function expectServedAndStored(origin: FaultedOrigin, key: string, uri: string) {
  const response = await origin.request(uri);
  expect(response.status, response.body.toString()).toBe(200);
  expect((await sharp(response.body).metadata()).width).toBe(120);
  expect(await variantsOf(buckets, key)).toEqual([`${key}/width=120`]);
  return response;
}

describe.concurrent('a source read that keeps failing: bounded attempts, then 503 with Retry-After and no-store', () => {
  const lasting: [string, string, Fault, RegExp][] = [
    ['503 SlowDown', 'slowdown', { kind: 'error', status: 503 }, /SlowDown/],
    ['500 InternalError', 'internal', { kind: 'error', status: 500 }, /InternalError/],
    ['a connection reset', 'reset', { kind: 'reset' }, /ECONNRESET|socket hang up/],
    ['no answer at all', 'hang', { kind: 'hang' }, /TimeoutError: .*3000 ms requestTimeout/],
  ];

  it.for(lasting)('%s on every GET', async ([, name, fault, cause], { onTestFinished }) => {
    const { origin, key, uri } = await setUp(name, onTestFinished);
    origin.proxy.inject({ fault, method: 'GET', bucket: buckets.sourceBucket });

    const response = await origin.request(uri);

    expectStorageUnavailable(response, buckets);
    expect(attempts(origin.proxy, 'GET', key)).toBe(S3_MAX_ATTEMPTS);
    expect(response.ms).toBeLessThan(WORST_CASE_MS);
    if (fault.kind === 'hang') {
      // Each attempt waited out its timeout: the bound is the SDK's, not luck.
      expect(response.ms).toBeGreaterThan(S3_MAX_ATTEMPTS * S3_TIMEOUTS.requestTimeout - 200);
    }
    const [logged, ...more] = origin.logged('error', uri);
    expect(more).toEqual([]);
    expect(logged).toMatchObject({ level: 'error', code: 'storage_unavailable', status: 503 });
    expect(String(logged!.detail)).toMatch(cause); // the operator sees the cause; the viewer does not
    expect(await variantsOf(buckets, key)).toEqual([]);

    origin.proxy.clear();
    await expectServedAndStored(origin, key, uri);
  });

  it('storage unreachable (nothing listens on its port): 503 at once, 200 once it is back', async ({ onTestFinished }) => {
    const { origin, key, uri } = await setUp('refused', onTestFinished);
    await origin.proxy.refuse();

    const response = await origin.request(uri);

    expectStorageUnavailable(response, buckets);
    expect(response.ms).toBeLessThan(2_000); // refused attempts fail at once; the backoff between them is short
    expect(String(origin.logged('error', uri)[0]?.detail)).toMatch(/ECONNREFUSED/);
    expect(await variantsOf(buckets, key)).toEqual([]);

    await origin.proxy.accept();
    await expectServedAndStored(origin, key, uri);
  });

  it('a body that stops halfway: 503 after the socket timeout; the SDK does not retry a body it has started', async ({
    onTestFinished,
  }) => {
    const { origin, key, uri } = await setUp('stall', onTestFinished);
    expect(photo.length).toBeGreaterThan(4_096);
    origin.proxy.inject({ fault: { kind: 'stall', afterBytes: 4_096 }, method: 'GET', bucket: buckets.sourceBucket });

    const response = await origin.request(uri);

    expectStorageUnavailable(response, buckets);
    expect(response.ms).toBeGreaterThan(S3_TIMEOUTS.socketTimeout - 200);
    expect(response.ms).toBeLessThan(S3_TIMEOUTS.socketTimeout + 2_000);
    expect(attempts(origin.proxy, 'GET', key)).toBe(1);
    expect(String(origin.logged('error', uri)[0]?.detail)).toMatch(/TimeoutError: .*inactivity/);
    expect(await variantsOf(buckets, key)).toEqual([]);

    origin.proxy.clear();
    await expectServedAndStored(origin, key, uri);
  });
});

describe.concurrent('a source read fault that clears within the attempts: 200, as if nothing happened', () => {
  const passing: [string, string, Fault, number][] = [
    ['two 503 SlowDown', 'slowdown-twice', { kind: 'error', status: 503 }, 2],
    ['two 500 InternalError', 'internal-twice', { kind: 'error', status: 500 }, 2],
    ['one connection reset', 'reset-once', { kind: 'reset' }, 1],
    ['one attempt that hangs (it times out, the next answers)', 'hang-once', { kind: 'hang' }, 1],
  ];

  it.for(passing)('%s', async ([, name, fault, times], { onTestFinished }) => {
    const { origin, key, uri } = await setUp(name, onTestFinished);
    origin.proxy.inject({ fault, method: 'GET', bucket: buckets.sourceBucket, times });

    await expectServedAndStored(origin, key, uri);

    expect(attempts(origin.proxy, 'GET', key)).toBe(times + 1);
    expect(origin.logged('variant', uri).map((entry) => entry.stored)).toEqual(['created']);
    expect(origin.logs.filter((entry) => entry.event === 'error' || entry.event === 'store_failed')).toEqual([]);
  });

  it('a slow storage (1 s for every request) is only slow: one attempt each, 200', async ({ onTestFinished }) => {
    const { origin, key, uri } = await setUp('slow', onTestFinished);
    origin.proxy.inject({ fault: { kind: 'delay', ms: 1_000 } });

    const response = await expectServedAndStored(origin, key, uri);

    expect(attempts(origin.proxy, 'GET', key)).toBe(1);
    expect(attempts(origin.proxy, 'PUT', `${key}/width=120`)).toBe(1);
    const fetchMs = Number(/fetch;dur=([\d.]+)/.exec(response.headers['server-timing'] ?? '')?.[1]);
    expect(fetchMs).toBeGreaterThanOrEqual(990);
    expect(fetchMs).toBeLessThan(S3_TIMEOUTS.requestTimeout);
  });
});

describe('a source read slower than the time budget', () => {
  it('504 on time; the late answer stores nothing (no PUT, no log of a variant); the next request works', async ({ onTestFinished }) => {
    const budget = 800;
    const { origin, key, uri } = await setUp('over-budget', onTestFinished, { timeBudgetMs: budget });
    origin.proxy.inject({ fault: { kind: 'delay', ms: 2_000 }, method: 'GET', bucket: buckets.sourceBucket, times: 1 });

    const response = await origin.request(uri);

    expect(response.status).toBe(504);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.json()).toEqual({ error: 'timeout', message: expect.stringMatching(/too long/) });
    expect(response.ms).toBeGreaterThanOrEqual(budget - 5);
    expect(response.ms).toBeLessThan(budget + 700);
    expect(origin.logged('error', uri)).toMatchObject([{ code: 'timeout', status: 504 }]);

    // The abandoned read answers at 2 s; give what follows it time to run, then look.
    await sleep(3_000);
    expect(attempts(origin.proxy, 'GET', key)).toBe(1);
    expect(attempts(origin.proxy, 'PUT', `${key}/width=120`)).toBe(0);
    expect(await variantsOf(buckets, key)).toEqual([]);
    expect(origin.logged('variant', uri)).toEqual([]);
    expect(origin.logged('store_failed', uri)).toEqual([]);

    await expectServedAndStored(origin, key, uri);
  });
});
