// brightness, contrast, saturation and gamma through the emulator (the
// generated CloudFront Function, the edge cache and the real origin on
// LocalStack), on real photos: each matches sharp's own operation, or
// Cloudflare's definition, on the same resized image within rounding;
// equivalent spellings share one cache entry; the adjustments come after the
// resize and before the border; an animation keeps its frames and timing.

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../../local/emulator/start';
import { facePhotos, type PhotoName } from '../../support/face-photos';
import { pixelAt } from '../../support/images';
import { createTestBuckets, testS3Client, type TestBuckets } from '../../support/s3';

const photos = facePhotos();
const PHOTOS: PhotoName[] = ['astronaut.png', 'coffee.png'];
const WIDTH = 320;
const DELAYS = [50, 120, 300];

let emulator: RunningEmulator;
let buckets: TestBuckets;
let folder: string;

/** Three frames, each of its own colour and shown for its own time, played twice. */
async function timedAnimation(): Promise<Buffer> {
  const colours = [
    [200, 60, 40],
    [40, 160, 90],
    [70, 80, 210],
  ];
  const frames = Buffer.concat(colours.map((colour) => Buffer.alloc(48 * 48 * 3).map((_, i) => colour[i % 3]!)));
  return sharp(frames, { raw: { width: 48, height: 48 * DELAYS.length, channels: 3, pageHeight: 48 } })
    .gif({ delay: DELAYS, loop: 2 })
    .toBuffer();
}

beforeAll(async () => {
  if (!photos) return;
  folder = await mkdtemp(join(tmpdir(), 'adjustments-'));
  const files: Record<string, Buffer> = { 'frames.gif': await timedAnimation() };
  for (const name of PHOTOS) files[`photos/${name}`] = photos.read(name);
  for (const [path, body] of Object.entries(files)) {
    await mkdir(dirname(join(folder, path)), { recursive: true });
    await writeFile(join(folder, path), body);
  }
  buckets = await createTestBuckets('adjustments');
  emulator = await startEmulator({
    s3: testS3Client(),
    port: 0,
    images: folder,
    edgeCache: true,
    buckets: { source: buckets.sourceBucket, cache: buckets.cacheBucket },
    log: () => {},
  });
}, 120_000);

afterAll(async () => {
  await emulator?.close();
  await buckets?.cleanup();
  if (folder) await rm(folder, { recursive: true, force: true });
});

async function get(path: string) {
  const response = await fetch(emulator.url + path);
  return { status: response.status, cache: response.headers.get('x-cache'), body: Buffer.from(await response.arrayBuffer()) };
}

/** The 8-bit RGB pixels of an image. */
const rgb = (image: Buffer | Sharp) => (Buffer.isBuffer(image) ? sharp(image) : image).removeAlpha().toColourspace('srgb').raw().toBuffer();

/** The largest difference of one channel between two pixel buffers of the same size. */
function largestDifference(actual: Uint8Array, expected: Uint8Array): number {
  expect(actual.length).toBe(expected.length);
  let largest = 0;
  for (let i = 0; i < actual.length; i++) largest = Math.max(largest, Math.abs(actual[i]! - expected[i]!));
  return largest;
}

/** The photo resized as the service resizes it for `?width=WIDTH`, losslessly. */
const resized = (name: PhotoName) => sharp(photos!.read(name)).resize(WIDTH).png().toBuffer();

describe.skipIf(!photos)('colour adjustments on real photos, through the emulator', () => {
  const cases: { query: string; expected: (image: Buffer) => Promise<Uint8Array> }[] = [
    { query: 'brightness=1.4', expected: (image) => rgb(sharp(image).modulate({ brightness: 1.4 })) },
    { query: 'brightness=0.55', expected: (image) => rgb(sharp(image).modulate({ brightness: 0.55 })) },
    // Contrast spreads L* around 50: L* x 1.5 - 25.
    { query: 'contrast=1.5', expected: (image) => rgb(sharp(image).modulate({ brightness: 1.5, lightness: -25 })) },
    { query: 'contrast=0.6', expected: (image) => rgb(sharp(image).modulate({ brightness: 0.6, lightness: 20 })) },
    { query: 'saturation=1.8', expected: (image) => rgb(sharp(image).modulate({ saturation: 1.8 })) },
    { query: 'saturation=0.25', expected: (image) => rgb(sharp(image).modulate({ saturation: 0.25 })) },
    // Cloudflare's gamma: 2 lightens, 0.5 darkens; each sRGB value v becomes 255 (v / 255)^(1 / gamma).
    { query: 'gamma=2', expected: async (image) => (await rgb(image)).map((v) => Math.round(255 * (v / 255) ** (1 / 2))) },
    { query: 'gamma=0.5', expected: async (image) => (await rgb(image)).map((v) => Math.round(255 * (v / 255) ** 2)) },
  ];

  for (const name of PHOTOS) {
    it.for(cases)(`${name}: $query matches the operation on the same resized photo within rounding`, async ({ query, expected }) => {
      const answer = await get(`/photos/${name}?width=${WIDTH}&${query}&format=png`);
      expect(answer.status).toBe(200);
      const want = await expected(await resized(name));
      expect(largestDifference(await rgb(answer.body), want), query).toBeLessThanOrEqual(1);
      // And it changed the photo: an adjustment that did nothing would also match a factor near 1.
      expect(largestDifference(await rgb(answer.body), await rgb(await resized(name)))).toBeGreaterThan(20);
    });
  }

  it('saturation=0 leaves only greys', async () => {
    const pixels = await rgb((await get(`/photos/coffee.png?width=${WIDTH}&saturation=0&format=png`)).body);
    let spread = 0;
    for (let i = 0; i < pixels.length; i += 3)
      spread = Math.max(
        spread,
        Math.max(pixels[i]!, pixels[i + 1]!, pixels[i + 2]!) - Math.min(pixels[i]!, pixels[i + 1]!, pixels[i + 2]!),
      );
    expect(spread).toBeLessThanOrEqual(1);
  });

  it('shares one cache entry between equivalent spellings, and a factor of 1 (or Cloudflare’s ignored 0) is no adjustment', async () => {
    const first = await get(`/photos/coffee.png?width=200&brightness=1.5&gamma=0.8`);
    expect(first.cache).toBe('Miss from cloudfront');
    for (const spelling of ['BRIGHTNESS=1.50&gamma=.8', 'gamma=0.80&brightness=1.5&contrast=1&saturation=1.00']) {
      const again = await get(`/photos/coffee.png?width=200&${spelling}`);
      expect(again.cache, spelling).toBe('Hit from cloudfront');
      expect(again.body.equals(first.body)).toBe(true);
    }
    const plain = await get('/photos/coffee.png?width=200&grayscale=1');
    for (const spelling of ['brightness=1&grayscale=1', 'contrast=0&grayscale=1', 'saturation=0.4&grayscale=1']) {
      expect((await get(`/photos/coffee.png?width=200&${spelling}`)).cache, spelling).toBe('Hit from cloudfront');
    }
    expect(plain.status).toBe(200);
  });

  it('refuses a value out of range or with more than two decimals, naming what is allowed', async () => {
    for (const [query, message] of [
      ['gamma=0.2', 'Invalid gamma "0.2": expected a number from 0.34 to 3 with at most two decimals.'],
      ['brightness=1.255', 'Invalid brightness "1.255": expected a number from 0 to 10 with at most two decimals.'],
      ['saturation=-1', 'Invalid saturation "-1": expected a number from 0 to 10 with at most two decimals.'],
    ]) {
      const answer = await get(`/photos/coffee.png?${query}`);
      expect(answer.status, query).toBe(400);
      expect(JSON.parse(answer.body.toString()).message).toBe(message);
    }
  });

  it('adjusts the image before the border, which keeps its colour', async () => {
    const answer = await get(`/photos/coffee.png?width=${WIDTH}&border=6,ff0000&brightness=0.3&gamma=0.5&format=png`);
    expect(await pixelAt(answer.body, 2, 2)).toEqual({ r: 255, g: 0, b: 0, alpha: 255 });
    const inner = await sharp(answer.body)
      .extract({ left: 6, top: 6, width: WIDTH, height: (await sharp(answer.body).metadata()).height - 12 })
      .png()
      .toBuffer();
    const expected = (await rgb(sharp(await resized('coffee.png')).modulate({ brightness: 0.3 }))).map((v) =>
      Math.round(255 * (v / 255) ** 2),
    );
    expect(largestDifference(await rgb(inner), expected)).toBeLessThanOrEqual(1);
  });

  it('keeps every frame of an animation, and its timing', async () => {
    // gamma takes the frames into a pass of their own, which must keep their timing.
    const answer = await get('/frames.gif?brightness=1.3&saturation=0.5&gamma=1.5&format=webp');
    const meta = await sharp(answer.body, { pages: -1 }).metadata();
    expect({ pages: meta.pages, delay: meta.delay, loop: meta.loop }).toEqual({ pages: DELAYS.length, delay: DELAYS, loop: 2 });
    const modulated = await rgb(sharp(await timedAnimation(), { pages: -1 }).modulate({ brightness: 1.3, saturation: 0.5 }));
    const source = modulated.map((v) => Math.round(255 * (v / 255) ** (1 / 1.5)));
    // WebP's loss on flat colours is a few levels.
    expect(largestDifference(await rgb(sharp(answer.body, { pages: -1 })), source)).toBeLessThanOrEqual(6);
  });
});
