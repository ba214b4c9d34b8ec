// Every miss is bounded in memory, time and the handler's own thread, through
// the real handler (its transform child included) on LocalStack S3:
// - memory: TIFF and PNG of every band count and bit depth in every EXIF
//   orientation are served as displayed, the transform's measured memory
//   stays under the model's prediction, and at the 100 MP limit a decode that
//   cannot fit is refused before it starts;
// - time: a negotiated AVIF too large to encode in time falls back to a
//   format that is, an explicit one is refused at once, and what overruns
//   anyway is killed at the deadline with nothing left running;
// - replays: an expensive failure is answered from memory until it expires.

import { HeadObjectCommand } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { MEMORY_SHARE } from '../../lambda/origin/image/budget';
import { deepImage, gradientJpeg, type Orientation } from '../support/images';
import { createTestOrigin, type TestOrigin } from '../support/origin';
import { layeredSvg, NOISE_MB, startHostileEmulator, throughEmulator, throughHandler, variantLog } from './support';

/** What Chromium sends for an <img>: AVIF and WebP accepted, so the edge writes accept=avif. */
const NEGOTIATED = 'accept=avif';

/** What Chromium sends with an <img>. */
const CHROMIUM_ACCEPT = 'image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8';

describe('memory: every band count and bit depth in every orientation', () => {
  let origin: TestOrigin;
  beforeAll(async () => {
    origin = await createTestOrigin('bounds memory');
  });

  const cases = (['tiff', 'png'] as const).flatMap((format) =>
    ([1, 2, 3, 4] as const).flatMap((bands) =>
      ([8, 16] as const).map((bits) => ({ format, bands, bits, name: `${format} ${bands} band(s) ${bits}-bit` })),
    ),
  );

  it.for(cases)('$name, orientations 1 to 8: served as displayed, within the predicted memory', async ({ format, bands, bits }) => {
    for (const orientation of [1, 2, 3, 4, 5, 6, 7, 8] as Orientation[]) {
      const key = `deep/${format}-${bands}-${bits}-${orientation}`;
      await origin.putSource(key, await deepImage(format, 1200, 800, { bands, bits, orientation }));
      const uri = `/${key}/${NEGOTIATED}`;
      const response = await throughHandler(origin, uri, { status: 200 });
      const meta = await sharp(response.body).metadata();
      // Orientations 5 to 8 swap the sides.
      expect([meta.width, meta.height], `${key}`).toEqual(orientation >= 5 ? [800, 1200] : [1200, 800]);
      const logged = variantLog(origin, uri);
      expect(logged.TransformRss - logged.transformStartMb, `${key}: measured work (MB) against the prediction`).toBeLessThanOrEqual(
        logged.predictedMb + NOISE_MB,
      );
    }
  });

  it('an AVIF, whose decoder holds about six times its pixels and cannot shrink on load, is served small within the predicted memory', async () => {
    const side = 3072;
    const noise = sharp({
      create: { width: side, height: side, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 30 } },
    });
    await origin.putSource('decoder/noise.avif', await noise.avif({ quality: 50, effort: 0 }).toBuffer());
    const uri = '/decoder/noise.avif/width=100,format=jpeg';
    await throughHandler(origin, uri, { status: 200 });
    const logged = variantLog(origin, uri);
    const measured = logged.TransformRss - logged.transformStartMb;
    expect(measured, 'the decode is real work, not noise (MB)').toBeGreaterThan(3 * NOISE_MB);
    expect(measured, 'measured work (MB) against the prediction').toBeLessThanOrEqual(logged.predictedMb + NOISE_MB);
  });

  it('at the 100 MP limit, a 16-bit RGBA TIFF that must be turned is refused before decoding; asked smaller, it is served within the memory share', async () => {
    const turned = await deepImage('tiff', 10_000, 10_000, { bands: 4, bits: 16, orientation: 6 });
    await origin.putSource('limit/turned.tif', turned);
    const start = performance.now();
    const refused = await throughHandler(origin, `/limit/turned.tif/${NEGOTIATED}`, { status: 413, code: 'too_costly' });
    expect(refused.json().message).toMatch(/from a 10000x10000 source would (need about \d+ MB|take about \d+ s), over the/);
    expect(performance.now() - start, 'refused from the header, without decoding').toBeLessThan(3_000);

    const uri = `/limit/turned.tif/width=1024,${NEGOTIATED}`;
    await throughHandler(origin, uri, { status: 200 });
    const logged = variantLog(origin, uri);
    expect(logged.TransformRss + logged.MemoryRss, 'both processes at their peak (MB)').toBeLessThanOrEqual(
      origin.config.memorySizeMb * MEMORY_SHARE,
    );
  });
});

describe('time: the encoder is chosen so that it finishes', () => {
  let origin: TestOrigin;
  beforeAll(async () => {
    origin = await createTestOrigin('bounds time');
    await origin.putSource('large/photo.jpg', await gradientJpeg(4000, 3000));
  });

  it('a negotiated AVIF of a 12 MP photo falls back to WebP, which the viewer accepts', async () => {
    const response = await throughHandler(origin, `/large/photo.jpg/${NEGOTIATED}`, { status: 200 });
    expect(response.headers['content-type']).toBe('image/webp');
    expect((await sharp(response.body).metadata()).width).toBe(4000);
    // Smaller, the AVIF fits: the viewer gets WebP at once, and the AVIF is made after and stored.
    const small = await throughHandler(origin, `/large/photo.jpg/width=1600,${NEGOTIATED}`, { status: 200 });
    expect(small.headers['content-type']).toBe('image/webp');
    const stored = await origin.s3.send(
      new HeadObjectCommand({ Bucket: origin.cacheBucket, Key: `large/photo.jpg/width=1600,${NEGOTIATED}` }),
    );
    expect(stored.ContentType).toBe('image/avif');
  });

  it('an explicit AVIF of the same size is refused at once with what it would take, and nothing is stored or remembered', async () => {
    const start = performance.now();
    const response = await throughHandler(origin, '/large/photo.jpg/format=avif', { status: 413, code: 'too_costly' });
    expect(response.json().message).toMatch(
      /AVIF from a 4000x3000 source would take about \d+ s, over the [\d.]+ s allowed; ask for a smaller size or another format/,
    );
    expect(performance.now() - start).toBeLessThan(3_000);
    expect(response.headers['cache-control']).toBe('public, max-age=10');
    expect(await origin.cachedKeys()).not.toContainEqual(expect.stringMatching(/^\.failures\//));
  });
});

describe('what overruns is killed at the deadline, and remembered', () => {
  it('504 at the budget with the transform process gone; the handler thread stayed free; a replay is answered from memory until it expires', async () => {
    const origin = await createTestOrigin('bounds deadline', { svgPolicy: 'rasterize', timeBudgetMs: 1_500, failureTtlSeconds: 3 });
    // About 20 CPU-seconds of drawing on an idle machine, over ten times the budget: a busy one only adds to it.
    await origin.putSource('bomb.svg', layeredSvg(5, 400), 'image/svg+xml');
    const [working] = origin.transforms.pids();

    // The handler's event loop keeps ticking while the child draws.
    let worstLag = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      worstLag = Math.max(worstLag, performance.now() - last - 20);
      last = performance.now();
    }, 20);
    const start = performance.now();
    await throughHandler(origin, '/bomb.svg/original', { status: 504, code: 'timeout' });
    const answeredIn = performance.now() - start;
    clearInterval(ticker);
    expect(answeredIn).toBeLessThan(1_500 + 1_000);
    expect(worstLag, 'longest event-loop stall (ms)').toBeLessThan(200);

    // The child that drew is dead: no CPU of this request runs after its answer.
    expect(() => process.kill(working!, 0)).toThrow(/ESRCH/);
    expect(origin.transforms.pids()).not.toContain(working);

    // A replay costs a cache-bucket read, not another invocation's worth of drawing.
    const replayStart = performance.now();
    const replay = await origin.request('/bomb.svg/original');
    expect([replay.status, replay.json().error]).toEqual([504, 'timeout']);
    expect(performance.now() - replayStart).toBeLessThan(500);
    expect(origin.logs.at(-1)).toMatchObject({ event: 'error', code: 'timeout', detail: expect.stringMatching(/remembered failure/) });

    // Once the memory expires, the request is tried again in full.
    await new Promise((resolve) => setTimeout(resolve, 3_100));
    const retried = performance.now();
    const again = await origin.request('/bomb.svg/original');
    expect(again.status).toBe(504);
    expect(performance.now() - retried).toBeGreaterThanOrEqual(1_400);
  });
});

describe('through the emulator, as a browser asks', () => {
  it('a plain GET of a 12 MP photo from Chromium gets WebP, and /_health answers all the while', async () => {
    const emulator = await startHostileEmulator('bounds emulator', { 'large/photo.jpg': await gradientJpeg(4000, 3000) });
    const image = throughEmulator(emulator, '/large/photo.jpg', { status: 200, at: 'origin' }, { headers: { accept: CHROMIUM_ACCEPT } });
    // The transform runs in its own process: the emulator's thread stays free for other requests.
    let settled = false;
    void image.finally(() => (settled = true));
    let slowestHealth = 0;
    let healthChecks = 0;
    while (!settled) {
      const start = performance.now();
      const health = await emulator.get('/_health');
      expect(health.status).toBe(200);
      slowestHealth = Math.max(slowestHealth, performance.now() - start);
      healthChecks++;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const answer = await image;
    expect(answer.headers['content-type']).toBe('image/webp');
    expect(answer.headers['x-origin']).toBe('lambda');
    expect(healthChecks).toBeGreaterThan(3);
    expect(slowestHealth, '/_health while the photo was made (ms)').toBeLessThan(500);
    // The variant is stored under the negotiated key, as WebP.
    expect(await emulator.cachedKeys()).toContain('large/photo.jpg/accept=avif');
  });
});
