// The Lambda entry point (lambda/origin/index.ts) as the Node runtime invokes
// it: a response-streaming handler, run through local/harness/lambda-runtime.ts, its S3
// client configured from the environment as in AWS, reaching LocalStack through
// a proxy that can hold a write back. The viewer's response must be whole
// (status, headers, bytes) when the stream ends, before the variant's write;
// the invocation ends once the variant is stored.

import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { functionUrlEvent } from '../../local/emulator/function-url';
import { installLambdaRuntime, invokeStreaming, type StreamedResponse } from '../../local/harness/lambda-runtime';
import { PROJECT_ROOT } from '../../local/harness/python-venv';
import { startFaultyProxy, type FaultyProxy } from '../support/faulty-proxy';
import { heicOf, heifEncMissing } from '../support/heic';
import { gradientJpeg, noiseImage } from '../support/images';
import { createTestBuckets, listKeys, putObject, type TestBuckets } from '../support/s3';
import { FACE_DETECTOR_EXTERNALS } from '../../lib/face-detector';

let buckets: TestBuckets;
let proxy: FaultyProxy;
let handler: unknown;

/** Under this, a variant is returned inline; the big source below makes a larger one. */
const MAX_INLINE_BYTES = 200_000;
const HELD_WRITE_MS = 1_500;

beforeAll(async () => {
  buckets = await createTestBuckets('entry');
  proxy = await startFaultyProxy(inject('s3Endpoint'));
  await putObject(buckets.s3, buckets.sourceBucket, 'entry/photo.jpg', await gradientJpeg(800, 600), 'image/jpeg');
  await putObject(buckets.s3, buckets.sourceBucket, 'entry/noise.png', await noiseImage(1200, 1200, 'png'), 'image/png');
  if (!heifEncMissing())
    await putObject(buckets.s3, buckets.sourceBucket, 'entry/phone.heic', heicOf(await gradientJpeg(400, 300)), 'image/heic');
  Object.assign(process.env, {
    SOURCE_BUCKET: buckets.sourceBucket,
    CACHE_BUCKET: buckets.cacheBucket,
    MAX_INLINE_BYTES: String(MAX_INLINE_BYTES),
    AWS_ENDPOINT_URL_S3: proxy.endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    METRICS: 'false',
  });
  installLambdaRuntime();
  ({ handler } = await import('../../lambda/origin/index'));
});
afterAll(async () => {
  await proxy?.close();
  await buckets?.cleanup();
});

const context = { getRemainingTimeInMillis: () => 30_000, awsRequestId: 'entry-test' };
const md5 = (body: Buffer) => `"${createHash('md5').update(body).digest('hex')}"`;
const cached = async () => listKeys(buckets.s3, buckets.cacheBucket);

/** Invokes the entry point; `settledAt` is filled in when the invocation ends. */
function invoke(uri: string, method = 'GET') {
  const invocation = invokeStreaming(handler, functionUrlEvent(uri, method), context);
  const timeline = { start: performance.now(), settledAt: undefined as number | undefined };
  const done = invocation.done.then(() => {
    timeline.settledAt = performance.now();
  });
  return { response: invocation.response, done, timeline };
}

describe('the streaming Lambda entry point', () => {
  it('streams the variant to the viewer before the write to the cache bucket ends, and stores it before the invocation ends', async () => {
    proxy.clear();
    proxy.inject({ fault: { kind: 'delay', ms: HELD_WRITE_MS }, method: 'PUT', bucket: buckets.cacheBucket, times: 1 });
    const { response, done, timeline } = invoke('/entry/photo.jpg/width=320,format=webp');

    const answer: StreamedResponse = await response;
    const answeredAt = performance.now();
    expect(answer.statusCode, answer.body.toString()).toBe(200);
    expect(answer.headers['content-type']).toBe('image/webp');
    expect(answer.headers['content-length']).toBe(String(answer.body.length));
    expect(answer.headers.etag).toBe(md5(answer.body));
    expect(answer.headers['server-timing']).toMatch(/^fetch;dur=[\d.]+, transform;dur=[\d.]+$/);
    const meta = await sharp(answer.body).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 320, 240]);

    // The write is still held by the proxy: the viewer did not wait for it, the invocation does.
    expect(timeline.settledAt).toBeUndefined();
    expect(await cached()).toEqual([]);
    await done;
    expect(timeline.settledAt! - answeredAt).toBeGreaterThan(HELD_WRITE_MS / 2);
    expect(await cached()).toEqual(['entry/photo.jpg/width=320,format=webp']);
    expect(proxy.requests.filter((request) => request.method === 'PUT').map((request) => request.fault)).toEqual(['delay']);
  });

  it('sends status and headers with an empty body: HEAD, and 304 for a matching If-None-Match', async () => {
    proxy.clear();
    const head = invoke('/entry/photo.jpg/width=200', 'HEAD');
    const answer = await head.response;
    await head.done;
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toBe('image/jpeg');
    expect(Number(answer.headers['content-length'])).toBeGreaterThan(0);
    expect(answer.body.length).toBe(0);

    const event = functionUrlEvent('/entry/photo.jpg/width=200,format=png', 'GET');
    const first = invokeStreaming(handler, event, context);
    const full = await first.response;
    await first.done;
    const conditional = invokeStreaming(handler, { ...event, headers: { 'if-none-match': full.headers.etag! } }, context);
    const notModified = await conditional.response;
    await conditional.done;
    expect(notModified.statusCode).toBe(304);
    expect(notModified.headers.etag).toBe(full.headers.etag);
    expect(notModified.body.length).toBe(0);
  });

  it('sends a contract error with its status and JSON body, and stores nothing', async () => {
    proxy.clear();
    const before = await cached();
    const missing = invoke('/entry/no-such-photo.jpg/width=100');
    const answer = await missing.response;
    await missing.done;
    expect(answer.statusCode).toBe(404);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(JSON.parse(answer.body.toString())).toMatchObject({ error: 'not_found' });
    expect(await cached()).toEqual(before);
  });

  it('redirects a variant too large to stream inline only once it is stored', async () => {
    proxy.clear();
    proxy.inject({ fault: { kind: 'delay', ms: HELD_WRITE_MS }, method: 'PUT', bucket: buckets.cacheBucket, times: 1 });
    const big = invoke('/entry/noise.png/format=png');
    const answer = await big.response;
    const waited = performance.now() - big.timeline.start;
    await big.done;
    expect(answer.statusCode).toBe(302);
    expect(answer.headers.location).toBe('/entry/noise.png?format=png');
    expect(waited).toBeGreaterThanOrEqual(HELD_WRITE_MS);
    expect(await cached()).toContain('entry/noise.png/format=png');
  });
});

describe('the bundle as the CDK construct builds it (minified CommonJS, sharp, libheif-js and the face detector runtime outside)', () => {
  it('starts its transform child from the bundled file and serves a miss, a HEIC one too', async () => {
    // Inside the project, so that the bundle finds sharp in node_modules as it does next to it in Lambda.
    const outfile = join(PROJECT_ROOT, '.cache', 'test-bundle', `origin-${process.pid}.cjs`);
    await build({
      entryPoints: [join(PROJECT_ROOT, 'lambda/origin/index.ts')],
      outfile,
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      minify: true,
      mainFields: ['module', 'main'],
      external: ['sharp', 'libheif-js', ...FACE_DETECTOR_EXTERNALS],
      logLevel: 'error',
    });
    const bundled = (await import(pathToFileURL(outfile).href)) as { default: { handler: unknown } };
    const invocation = invokeStreaming(bundled.default.handler, functionUrlEvent('/entry/photo.jpg/width=120,format=webp'), context);
    const response = await invocation.response;
    await invocation.done;
    expect(response.statusCode).toBe(200);
    expect(await sharp(response.body).metadata()).toMatchObject({ format: 'webp', width: 120 });
    const missing = heifEncMissing();
    if (missing) return console.warn(`the bundled HEIC miss is not tried: ${missing}`);
    const heic = invokeStreaming(bundled.default.handler, functionUrlEvent('/entry/phone.heic/width=100,format=jpeg'), context);
    const decoded = await heic.response;
    await heic.done;
    expect(decoded.statusCode).toBe(200);
    expect(await sharp(decoded.body).metadata()).toMatchObject({ format: 'jpeg', width: 100, height: 75 });
  });
});
