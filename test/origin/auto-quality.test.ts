// quality=auto: the AVIF quality the origin chooses per image
// (auto-quality.ts), that it is the quality the variant is encoded at, that
// JPEG and WebP keep their defaults, that the budget counts the extra pixels,
// and that the handler answers and stores it as any variant.

import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_GRAMMAR_OPTIONS, parseCanonicalUri, type Ops } from '../../lambda/grammar';
import { DEFAULT_LIMITS } from '../../lambda/origin/config';
import { AVIF_AUTO_QUALITY, autoQuality, proxyOf } from '../../lambda/origin/image/auto-quality';
import { budgetFor, describeWork, predictBytes, predictSeconds } from '../../lambda/origin/image/budget';
import { openSource } from '../../lambda/origin/image/input';
import { encode } from '../../lambda/origin/image/encoders';
import { transform } from '../../lambda/origin/image/transform';
import { alphaPng, gradientJpeg, noiseImage } from '../support/images';
import { createTestOrigin, type TestOrigin } from '../support/origin';

const opsOf = (segment: string): Ops => parseCanonicalUri(`/k/${segment}`, DEFAULT_GRAMMAR_OPTIONS).ops;
const budget = (bytes: Buffer) => budgetFor(DEFAULT_LIMITS.memorySizeMb, 120_000, bytes.length);

async function pixelsOf(image: Buffer) {
  const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true });
  return { data, info: { width: info.width, height: info.height, channels: info.channels } };
}

let smooth: Buffer;
let busy: Buffer;
let disc: Buffer;

beforeAll(async () => {
  smooth = await gradientJpeg(640, 480, { quality: 95 });
  busy = await noiseImage(640, 480, 'png');
  disc = await alphaPng(300, 200);
});

const chosenFor = async (image: Buffer) => autoQuality(await pixelsOf(image), (proxy, trial) => encode(proxy, { format: 'avif' }, trial));

describe('the AVIF quality chosen', () => {
  it('is higher for a busy image than for a smooth one, within its range', async () => {
    const [forSmooth, forBusy] = [await chosenFor(smooth), await chosenFor(busy)];
    expect(forBusy).toBeGreaterThan(forSmooth);
    expect(forSmooth).toBeGreaterThanOrEqual(AVIF_AUTO_QUALITY.min);
    expect(forBusy).toBeLessThanOrEqual(AVIF_AUTO_QUALITY.max);
  });

  it.each([
    [1600, 1000, 256, 256],
    [1600, 200, 256, 192],
    [2000, 40, 256, 40],
    [300, 200, 300, 200], // no larger than the sample: the whole image
  ])('is read from a sample of at most 256x256 pixels (%ix%i: %ix%i)', async (width, height, sampleWidth, sampleHeight) => {
    const image = await pixelsOf(await gradientJpeg(width, height));
    const sample = proxyOf(image);
    expect([sample.info.width, sample.info.height]).toEqual([sampleWidth, sampleHeight]);
    expect(sample.data.length).toBe(sampleWidth * sampleHeight * image.info.channels);
  });

  it('takes its tiles from the image, unchanged', async () => {
    const image = await pixelsOf(busy);
    const sample = proxyOf(image);
    // The first tile's first row is a run of the image's pixels: its first 64 pixels match somewhere in the image's rows.
    const firstRow = sample.data.subarray(0, 64 * 3);
    expect(image.data.indexOf(firstRow)).toBeGreaterThanOrEqual(0);
  });
});

describe('a quality=auto variant', () => {
  it.each([
    ['a smooth', () => smooth],
    ['a busy', () => busy],
  ])('in AVIF is encoded at the quality chosen for its pixels (%s image)', async (_, image) => {
    const auto = await transform(image(), opsOf('quality=auto,format=avif'), DEFAULT_LIMITS, budget(image()));
    const explicit = await transform(image(), opsOf(`quality=${await chosenFor(image())},format=avif`), DEFAULT_LIMITS, budget(image()));
    expect(auto.body.equals(explicit.body)).toBe(true);
    expect(auto.contentType).toBe('image/avif');
  });

  it.each(['jpeg', 'webp'])('in %s is its fixed default', async (format) => {
    const auto = await transform(busy, opsOf(`quality=auto,format=${format}`), DEFAULT_LIMITS, budget(busy));
    const fixed = await transform(busy, opsOf(`format=${format}`), DEFAULT_LIMITS, budget(busy));
    expect(auto.body.equals(fixed.body)).toBe(true);
  });

  it('is priced with the pixels it holds and the sample it encodes first', async () => {
    const { info } = await openSource(busy, DEFAULT_LIMITS);
    const fixed = describeWork(info, opsOf('width=600,format=avif'), 1, DEFAULT_LIMITS.maxDimension);
    const auto = describeWork(info, opsOf('width=600,quality=auto,format=avif'), 1, DEFAULT_LIMITS.maxDimension);
    expect(predictBytes(auto, 'avif') - predictBytes(fixed, 'avif')).toBe((600 * 450 + 256 * 256) * 4);
    expect(predictSeconds(auto, info, 'avif')).toBeGreaterThan(predictSeconds(fixed, info, 'avif'));
    // A negotiated AVIF may fall back to WebP, whose quality auto leaves fixed: nothing more to hold.
    expect(predictBytes(auto, 'webp')).toBe(predictBytes(fixed, 'webp'));
  });
});

describe('quality=auto through the handler', () => {
  let origin: TestOrigin;

  beforeAll(async () => {
    origin = await createTestOrigin('auto-quality');
    await origin.putSource('disc.png', disc);
    await origin.putSource('smooth.jpg', smooth);
  }, 60_000);

  it('answers with the image, and stores it under its own key', async () => {
    const response = await origin.request('/smooth.jpg/width=320,quality=auto,format=avif');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('image/avif');
    expect((await sharp(response.body).metadata()).width).toBe(320);
    await expect.poll(() => origin.cachedKeys()).toContain('smooth.jpg/width=320,quality=auto,format=avif');
  });

  it('leaves a lossless format as it is: PNG has no quality to choose', async () => {
    const response = await origin.request('/disc.png/width=100,quality=auto');
    const fixed = await transform(disc, opsOf('width=100'), DEFAULT_LIMITS, budget(disc));
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('image/png');
    expect(response.body.equals(fixed.body)).toBe(true);
  });
});
