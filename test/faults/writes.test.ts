// Writing the variant when S3 misbehaves: the real origin handler with the
// production S3 client, through a faulty proxy. The image is good, so a
// failed write still serves it (and logs store_failed) unless it is too
// large to return inline; the next miss writes it. However the writes fail
// or race, the cache bucket ends with at most one whole copy.

import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CACHE_CONTROL } from '../../lambda/origin/config';
import { S3_MAX_ATTEMPTS, S3_TIMEOUTS } from '../../lambda/origin/storage';
import type { Fault } from '../support/faulty-proxy';
import { gradientJpeg } from '../support/images';
import { createTestBuckets, putObject, testS3Client, type TestBuckets } from '../support/s3';
import { attempts, expectStorageUnavailable, faultedOrigin, variantsOf, WORST_CASE_MS, type TimedResponse } from './support';

let buckets: TestBuckets;
let photo: Buffer;

beforeAll(async () => {
  buckets = await createTestBuckets('faults writes');
  photo = await gradientJpeg(640, 480);
});
afterAll(() => buckets.cleanup());

const md5 = (body: Buffer) => `"${createHash('md5').update(body).digest('hex')}"`;

async function setUp(name: string, onTestFinished: (fn: () => Promise<void>) => void, overrides = {}) {
  const origin = await faultedOrigin(buckets, overrides);
  onTestFinished(() => origin.close());
  const key = `writes/${name}.jpg`;
  await putObject(testS3Client(), buckets.sourceBucket, key, photo, 'image/jpeg');
  return { origin, key, uri: `/${key}/width=120`, variant: `${key}/width=120` };
}

async function expectImage(response: TimedResponse) {
  expect(response.status, response.body.toString()).toBe(200);
  expect(response.headers['content-type']).toBe('image/jpeg');
  expect(response.headers['cache-control']).toBe(DEFAULT_CACHE_CONTROL);
  expect(response.headers.etag).toBe(md5(response.body));
  expect((await sharp(response.body).metadata()).width).toBe(120);
}

/** The one stored copy of `variant`: S3's ETag is the MD5 of what was served. */
async function expectStoredOnce(key: string, variant: string, served: TimedResponse) {
  expect(await variantsOf(buckets, key)).toEqual([variant]);
  const head = await testS3Client().send(new HeadObjectCommand({ Bucket: buckets.cacheBucket, Key: variant }));
  expect(head.ETag).toBe(served.headers.etag);
  expect(head.ContentType).toBe('image/jpeg');
}

describe.concurrent('a variant write that keeps failing: the image is still served, the failure logged, the next miss stores it', () => {
  const lasting: [string, string, Fault, RegExp][] = [
    ['503 SlowDown', 'slowdown', { kind: 'error', status: 503 }, /SlowDown/],
    ['500 InternalError', 'internal', { kind: 'error', status: 500 }, /InternalError/],
    ['a connection reset', 'reset', { kind: 'reset' }, /ECONNRESET|socket hang up/],
    ['no answer at all', 'hang', { kind: 'hang' }, /TimeoutError: .*3000 ms requestTimeout/],
  ];

  it.for(lasting)('%s on every PUT', async ([, name, fault, cause], { onTestFinished }) => {
    const { origin, key, uri, variant } = await setUp(name, onTestFinished);
    origin.proxy.inject({ fault, method: 'PUT', bucket: buckets.cacheBucket });

    const served = await origin.request(uri);

    await expectImage(served);
    expect(served.ms).toBeLessThan(WORST_CASE_MS + 1_000);
    // Retried, and never more than the attempts allow. On a loaded machine an attempt can end at its
    // 1 s connection timeout before the proxy has seen it, so a hang may show one attempt fewer.
    const seen = attempts(origin.proxy, 'PUT', variant);
    expect(seen).toBeLessThanOrEqual(S3_MAX_ATTEMPTS);
    expect(seen).toBeGreaterThanOrEqual(fault.kind === 'hang' ? S3_MAX_ATTEMPTS - 1 : S3_MAX_ATTEMPTS);
    const [failed, ...more] = origin.logged('store_failed', uri);
    expect(more).toEqual([]);
    expect(failed).toMatchObject({ level: 'error', uri });
    expect(String(failed!.detail)).toMatch(cause);
    expect(origin.logged('variant', uri).map((entry) => entry.stored)).toEqual(['failed']);
    expect(origin.logged('error', uri)).toEqual([]);
    expect(await variantsOf(buckets, key)).toEqual([]);

    origin.proxy.clear();
    const again = await origin.request(uri);
    await expectImage(again);
    expect(again.headers.etag).toBe(served.headers.etag);
    expect(origin.logged('variant', uri).map((entry) => entry.stored)).toEqual(['failed', 'created']);
    await expectStoredOnce(key, variant, again);
  });

  it('too large to return inline: 503 after the attempts, never a redirect to nothing; then 302 once stored', async ({
    onTestFinished,
  }) => {
    const { origin, key, uri, variant } = await setUp('too-large', onTestFinished, { maxInlineBytes: 1_000 });
    origin.proxy.inject({ fault: { kind: 'error', status: 503 }, method: 'PUT', bucket: buckets.cacheBucket });

    const response = await origin.request(uri);

    expectStorageUnavailable(response, buckets);
    expect(attempts(origin.proxy, 'PUT', variant)).toBe(S3_MAX_ATTEMPTS);
    expect(origin.logged('store_failed', uri)).toHaveLength(1);
    expect(origin.logged('error', uri)).toMatchObject([{ code: 'storage_unavailable', status: 503 }]);
    expect(await variantsOf(buckets, key)).toEqual([]);

    origin.proxy.clear();
    const again = await origin.request(uri);
    expect(again.status).toBe(302);
    expect(again.headers.location).toBe(`/${key}?width=120`);
    expect(await variantsOf(buckets, key)).toEqual([variant]);
  });
});

describe.concurrent('a variant write that recovers within the attempts', () => {
  it('one 503 SlowDown: 200, stored once, "created"', async ({ onTestFinished }) => {
    const { origin, key, uri, variant } = await setUp('slowdown-once', onTestFinished);
    origin.proxy.inject({ fault: { kind: 'error', status: 503 }, method: 'PUT', bucket: buckets.cacheBucket, times: 1 });

    const served = await origin.request(uri);

    await expectImage(served);
    expect(attempts(origin.proxy, 'PUT', variant)).toBe(2);
    expect(origin.logged('variant', uri).map((entry) => entry.stored)).toEqual(['created']);
    expect(origin.logged('store_failed', uri)).toEqual([]);
    await expectStoredOnce(key, variant, served);
  });

  it('the write reached S3 but its answer was lost: the retry finds the copy (412), which is whole', async ({ onTestFinished }) => {
    const { origin, key, uri, variant } = await setUp('answer-lost', onTestFinished);
    origin.proxy.inject({ fault: { kind: 'drop' }, method: 'PUT', bucket: buckets.cacheBucket, times: 1 });

    const served = await origin.request(uri);

    await expectImage(served);
    expect(served.ms).toBeGreaterThan(S3_TIMEOUTS.requestTimeout - 200);
    expect(attempts(origin.proxy, 'PUT', variant)).toBe(2);
    // If-None-Match: * makes the retry harmless: S3 already has the first attempt's copy.
    expect(origin.logged('variant', uri).map((entry) => entry.stored)).toEqual(['exists']);
    expect(origin.logged('store_failed', uri)).toEqual([]);
    await expectStoredOnce(key, variant, served);
  });
});

describe.concurrent('concurrent misses for one variant: all 200, exactly one object', () => {
  async function eightMisses(name: string, faults: { fault: Fault; times?: number }[], onTestFinished: (fn: () => Promise<void>) => void) {
    const { origin, key, uri, variant } = await setUp(name, onTestFinished);
    for (const { fault, times } of faults) origin.proxy.inject({ fault, times, method: 'PUT', bucket: buckets.cacheBucket });

    const responses = await Promise.all(Array.from({ length: 8 }, () => origin.request(uri)));

    for (const response of responses) {
      await expectImage(response);
      expect(response.headers.etag).toBe(responses[0]!.headers.etag);
    }
    await expectStoredOnce(key, variant, responses[0]!);
    const stored = origin.logged('variant', uri).map((entry) => entry.stored);
    expect(stored).toHaveLength(8);
    expect(stored.filter((outcome) => outcome === 'created')).toHaveLength(1);
    expect(stored.filter((outcome) => outcome === 'exists')).toHaveLength(7);
    expect(origin.logged('store_failed', uri)).toEqual([]);
    return origin;
  }

  it('8 misses at once with a slow (500 ms) PUT: the writes overlap at S3', async ({ onTestFinished }) => {
    const origin = await eightMisses('slow-put', [{ fault: { kind: 'delay', ms: 500 } }], onTestFinished);
    // Every miss wrote (conditionally); none waited for another.
    expect(attempts(origin.proxy, 'PUT', 'writes/slow-put.jpg/width=120')).toBe(8);
  });

  it('8 misses at once whose first PUT gets 503 SlowDown and the others are slow', async ({ onTestFinished }) => {
    const origin = await eightMisses(
      'slowdown-race',
      [{ fault: { kind: 'error', status: 503 }, times: 1 }, { fault: { kind: 'delay', ms: 300 } }],
      onTestFinished,
    );
    expect(attempts(origin.proxy, 'PUT', 'writes/slowdown-race.jpg/width=120')).toBe(9);
  });
});

describe('the write is bounded by what is left of the invocation', () => {
  it('a PUT that never answers, with 4 s of the invocation left: the image is served before Lambda would end it', async ({
    onTestFinished,
  }) => {
    const { origin, key, uri } = await setUp('hang-near-timeout', onTestFinished);
    origin.proxy.inject({ fault: { kind: 'hang' }, method: 'PUT', bucket: buckets.cacheBucket });
    const remaining = 4_000;
    const started = performance.now();
    const context = { getRemainingTimeInMillis: () => remaining - (performance.now() - started) };

    const served = await origin.request(uri, { context });

    // The handler keeps 1 s back to answer; Lambda would have killed it at 4 s.
    expect(served.ms).toBeLessThan(remaining - 500);
    await expectImage(served);
    expect(String(origin.logged('store_failed', uri)[0]?.detail)).toMatch(/abort/i);
    expect(await variantsOf(buckets, key)).toEqual([]);
  });
});
