// HEIC sources through the real handler: made at test time by heif-enc, decoded
// by libheif (WebAssembly) in the transform child, then the same pipeline as any
// photo. Skipped with the reason when heif-enc is missing, except in CI.

import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { heifHeader } from '../../lambda/origin/image/heif';
import { heicOf, heifEncMissing, imir, irot, withProperties } from '../support/heic';
import { ORIENTATION_CORNERS, isNear, orientedJpeg, pixelAt } from '../support/images';
import { createTestOrigin, type TestOrigin } from '../support/origin';

const missing = heifEncMissing();
if (missing) console.warn(`test/origin/heic.test.ts skipped: ${missing}`);

/** Stored pixels that display as the 300x200 cornered landscape once the container's transform is applied. */
const TRANSFORMED = [
  { name: 'irot 270° (EXIF 6 in the JPEG it came from)', orientation: 6, properties: [irot(3)] },
  { name: 'irot 180°', orientation: 3, properties: [irot(2)] },
  { name: 'imir, left-right', orientation: 2, properties: [imir(1)] },
  { name: 'imir, top-bottom', orientation: 4, properties: [imir(0)] },
] as const;

describe.skipIf(missing !== undefined)('HEIC sources', () => {
  let origin: TestOrigin;
  let small: TestOrigin;
  let cornered: Buffer;

  beforeAll(async () => {
    cornered = heicOf(await orientedJpeg(1, 300, 200));
    origin = await createTestOrigin('heic');
    small = await createTestOrigin('heic-small', { maxInputPixels: 300 * 200 - 1 });
    await Promise.all([
      origin.putSource('photo.heic', cornered),
      small.putSource('photo.heic', cornered),
      origin.putSource('cut.heic', cornered.subarray(0, cornered.length - 200)),
      ...TRANSFORMED.map(async ({ orientation, properties }) =>
        origin.putSource(`turned/${orientation}.heic`, withProperties(heicOf(await orientedJpeg(orientation, 300, 200)), [...properties])),
      ),
    ]);
  }, 60_000);

  async function expectCornered(body: Buffer, width: number, height: number) {
    expect(await sharp(body).metadata()).toMatchObject({ width, height });
    const [right, bottom] = [width - 5, height - 5];
    expect(isNear(await pixelAt(body, 4, 4), ORIENTATION_CORNERS.topLeft)).toBe(true);
    expect(isNear(await pixelAt(body, right, 4), ORIENTATION_CORNERS.topRight)).toBe(true);
    expect(isNear(await pixelAt(body, 4, bottom), ORIENTATION_CORNERS.bottomLeft)).toBe(true);
    expect(isNear(await pixelAt(body, right, bottom), ORIENTATION_CORNERS.bottomRight)).toBe(true);
  }

  it.each([
    ['an AVIF browser', 'accept=avif', 'image/avif'],
    ['a WebP browser', 'accept=webp', 'image/webp'],
    ['any other browser', '', 'image/jpeg'],
  ])('format=auto serves %s a %s made from it', async (_, accept, contentType) => {
    const response = await origin.request(`/photo.heic/${['width=150', accept].filter(Boolean).join(',')}`);
    expect(response.status, response.body.toString('utf8', 0, 200)).toBe(200);
    expect(response.headers['content-type']).toBe(contentType);
    await expectCornered(response.body, 150, 100);
  });

  it.each(TRANSFORMED)('applies the container\'s $name once, and no EXIF orientation on top', async ({ orientation }) => {
    const response = await origin.request(`/turned/${orientation}.heic/format=png`);
    expect(response.status, response.body.toString('utf8', 0, 200)).toBe(200);
    await expectCornered(response.body, 300, 200);
  });

  it('describes it with format=json: the displayed size, after irot', async () => {
    const response = await origin.request('/turned/6.heic/format=json');
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body.toString())).toMatchObject({ format: 'heic', width: 300, height: 200, hasAlpha: false, frames: 1 });
  });

  it('answers a damaged HEIC with a 422, stores nothing, and serves the next request', async () => {
    const response = await origin.request('/cut.heic/width=100');
    expect(response.status).toBe(422);
    expect(JSON.parse(response.body.toString())).toMatchObject({ error: 'undecodable_image' });
    expect(await origin.cachedKeys()).not.toContainEqual(expect.stringContaining('cut.heic'));
    expect((await origin.request('/photo.heic/width=60,format=webp')).status).toBe(200);
  });

  it('refuses a HEIC over the pixel limit from its header, without loading the decoder', async () => {
    expect(heifHeader(cornered)).toEqual({ width: 300, height: 200, hasAlpha: false });
    const before = small.transforms.pids();
    const response = await small.request('/photo.heic/width=100');
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body.toString())).toMatchObject({ error: 'too_many_pixels' });
    // A child that loaded libheif is replaced after its job (its memory never shrinks): this one was not.
    expect(small.transforms.pids()).toEqual(before);
  });

  it('replaces the child that decoded a HEIC, whose WebAssembly memory never shrinks', async () => {
    await origin.transforms.ready();
    const before = origin.transforms.pids();
    expect((await origin.request('/photo.heic/width=80,format=jpeg')).status).toBe(200);
    await origin.transforms.ready();
    const after = origin.transforms.pids();
    expect(after).toHaveLength(1);
    expect(after).not.toEqual(before);
  });
});
