// HEIC sources through the real handler: made at test time by heif-enc, decoded
// by libheif (WebAssembly) in the transform child, then the same pipeline as any
// photo. Skipped with the reason when heif-enc is missing, except in CI.

import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_GRAMMAR_OPTIONS, parseCanonicalUri } from '../../lambda/grammar';
import { DEFAULT_LIMITS } from '../../lambda/origin/config';
import { describeWork, predictBytes, predictSeconds, type Work } from '../../lambda/origin/image/budget';
import type { Description } from '../../lambda/origin/image/describe';
import { heifHeader } from '../../lambda/origin/image/heif';
import { openSource } from '../../lambda/origin/image/input';
import {
  alphaAuxC,
  box,
  fakeHevcPicture,
  heicGrid,
  heicOf,
  heifEncMissing,
  heifOfItems,
  hevcPictureOf,
  imir,
  irot,
  ispe,
  withProperties,
  type HevcPicture,
} from '../support/heic';
import { ORIENTATION_CORNERS, isNear, orientedJpeg, pixelAt, pngChunk } from '../support/images';
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

  it.each(TRANSFORMED)("applies the container's $name once, and no EXIF orientation on top", async ({ orientation }) => {
    const response = await origin.request(`/turned/${orientation}.heic/format=png`);
    expect(response.status, response.body.toString('utf8', 0, 200)).toBe(200);
    await expectCornered(response.body, 300, 200);
  });

  it('shows an iPhone-like Display P3 photo in its own colours, converted to sRGB, not read as sRGB', async () => {
    // An orange as Display P3 pixels, with libvips' own Display P3 profile embedded (as iPhones embed theirs).
    const P3 = { r: 200, g: 100, b: 50 };
    const p3 = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#000' } })
      .withIccProfile('p3')
      .png()
      .toBuffer();
    const profile = (await sharp(p3).metadata()).icc!;
    const pixels = Buffer.alloc(64 * 64 * 3);
    for (let i = 0; i < pixels.length; i += 3) pixels.set([P3.r, P3.g, P3.b], i);
    // sharp would convert the pixels to a profile it is given: the profile is put in the PNG by hand instead.
    const png = await sharp(pixels, { raw: { width: 64, height: 64, channels: 3 } })
      .png()
      .toBuffer();
    const iccp = pngChunk('iCCP', Buffer.concat([Buffer.from('p3\0\0', 'latin1'), deflateSync(profile)]));
    const tagged = Buffer.concat([png.subarray(0, 33), iccp, png.subarray(33)]);
    expect((await sharp(tagged).metadata()).icc?.equals(profile), 'the PNG carries the P3 profile').toBe(true);
    const heic = heicOf(tagged, { quality: 95 });
    expect(heifHeader(heic).colourProfile).toBeInstanceOf(Buffer);
    await origin.putSource('p3.heic', heic);
    const response = await origin.request('/p3.heic/format=png');
    expect(response.status, response.body.toString('utf8', 0, 200)).toBe(200);
    // What libvips makes of the same tagged PNG: the orange in sRGB, more saturated than the numbers read as sRGB.
    const expected = await pixelAt(await sharp(tagged).png().toBuffer(), 32, 32);
    const shown = await pixelAt(response.body, 32, 32);
    expect(isNear(shown, expected, 6), `${JSON.stringify(shown)} vs ${JSON.stringify(expected)}`).toBe(true);
    expect(isNear(shown, P3, 8), `${JSON.stringify(shown)} is not the P3 numbers read as sRGB`).toBe(false);
  });

  it('prices a Display P3 HEIC above the same HEIC in sRGB: the copies that carry its profile and the conversion', async () => {
    const ops = parseCanonicalUri('/p3.heic/width=100', DEFAULT_GRAMMAR_OPTIONS).ops;
    const srgb = (await openSource(cornered, DEFAULT_LIMITS)).info;
    const p3 = { ...srgb, colourProfile: true };
    const [srgbWork, p3Work] = [srgb, p3].map((info) => describeWork(info, ops, 1, DEFAULT_GRAMMAR_OPTIONS.maxDimension)) as [Work, Work];
    expect(predictBytes(p3Work, 'jpeg') - predictBytes(srgbWork, 'jpeg')).toBe(300 * 200 * 3 * 2);
    expect(predictSeconds(p3Work, p3, 'jpeg')).toBeGreaterThan(predictSeconds(srgbWork, srgb, 'jpeg'));
  });

  it('converts a HEIC whose colour is Display P3 by its CICP code (colr nclx, primaries 12), as libheif leaves it', async () => {
    const P3 = { r: 200, g: 100, b: 50 };
    const pixels = Buffer.alloc(64 * 64 * 3);
    for (let i = 0; i < pixels.length; i += 3) pixels.set([P3.r, P3.g, P3.b], i);
    const untagged = heicOf(
      await sharp(pixels, { raw: { width: 64, height: 64, channels: 3 } })
        .png()
        .toBuffer(),
      { quality: 95 },
    );
    // colour primaries 12 (P3, D65), transfer 13 (sRGB's curve), matrix 6, full range.
    const nclx = box('colr', Buffer.from([...Buffer.from('nclx', 'latin1'), 0, 12, 0, 13, 0, 6, 0x80]));
    const heic = withProperties(untagged, [nclx]);
    expect(heifHeader(untagged).colourProfile).toBeUndefined();
    expect(heifHeader(heic).colourProfile).toBe('display-p3');
    await origin.putSource('p3-nclx.heic', heic);
    const response = await origin.request('/p3-nclx.heic/format=png');
    expect(response.status, response.body.toString('utf8', 0, 200)).toBe(200);
    const shown = await pixelAt(response.body, 32, 32);
    // The same orange as the profile-carrying photo above: redder and less green than the numbers read as sRGB.
    expect(shown.r).toBeGreaterThan(P3.r + 8);
    expect(shown.g).toBeLessThan(P3.g - 3);
  });

  it('describes it with format=json: the displayed size, after irot', async () => {
    const response = await origin.request('/turned/6.heic/format=json');
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body.toString())).toMatchObject({ format: 'heic', width: 300, height: 200, hasAlpha: false, frames: 1 });
  });

  it('describes one whose decode would not fit the budget from its header, without loading the decoder', async () => {
    // 0.75 s of transform allowed: less than libheif's compilation alone.
    const hurried = await createTestOrigin('heic-json-budget', { timeBudgetMs: 1_000 });
    await hurried.putSource('photo.heic', cornered);
    const refused = await hurried.request('/photo.heic/width=100,format=jpeg');
    expect([refused.status, refused.json().error]).toEqual([413, 'too_costly']);
    const [child] = hurried.transforms.pids();
    const response = await hurried.request('/photo.heic/format=json');
    expect(response.status).toBe(200);
    expect(response.json()).toEqual({
      width: 300,
      height: 200,
      format: 'heic',
      bytes: cornered.length,
      hasAlpha: false,
      frames: 1,
      placeholder: null,
      thumbhash: null,
      dominantColor: null,
      faces: null,
      subject: null,
    });
    // A child that loads libheif is replaced after its job (heif.ts): this one was not.
    expect(hurried.transforms.pids()).toEqual([child]);
    expect((await origin.request('/photo.heic/format=json')).json<Description>().placeholder).toMatch(/^data:image\/webp;base64,/);
  });

  it('answers a damaged HEIC with a 422, stores nothing, and serves the next request', async () => {
    const response = await origin.request('/cut.heic/width=100');
    expect(response.status).toBe(422);
    expect(JSON.parse(response.body.toString())).toMatchObject({ error: 'undecodable_image' });
    expect(await origin.cachedKeys()).not.toContainEqual(expect.stringContaining('cut.heic'));
    expect((await origin.request('/photo.heic/width=60,format=webp')).status).toBe(200);
  });

  it('refuses a HEIC over the pixel limit from its header, without loading the decoder', async () => {
    // x265 codes whole 8-pixel blocks: the decoder makes 304x200.
    expect(heifHeader(cornered)).toEqual({ width: 300, height: 200, hasAlpha: false, decodedPixels: 304 * 200 });
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

/** A 256x256 HEVC picture of one colour, from heif-enc: the tile of the grids below. */
const TILE_COLOUR = { r: 48, g: 96, b: 160 };
const tilePicture = async () =>
  hevcPictureOf(
    heicOf(
      await sharp({ create: { width: 256, height: 256, channels: 3, background: TILE_COLOUR } })
        .png()
        .toBuffer(),
      { quality: 90 },
    ),
  );

/** One hvc1 item (1) of `picture`'s bytes that says it is `width` x `height`. */
const plainItem = (picture: HevcPicture, width = picture.width, height = picture.height, data = picture.data) =>
  heifOfItems(1, [{ id: 1, type: 'hvc1', properties: [picture.hvcC, ispe(width, height)], data }]);

/** A derived primary item (1) of `type` over one huge picture (2). */
const derivedOver = (type: string) =>
  heifOfItems(1, [
    {
      id: 1,
      type,
      properties: [ispe(64, 64)],
      data: Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 0, 64]),
      references: [{ type: 'dimg', to: [2] }],
    },
    { id: 2, type: 'hvc1', properties: [fakeHevcPicture(16384, 16384).hvcC, ispe(16384, 16384)], data: fakeHevcPicture(16384, 16384).data },
  ]);

describe.skipIf(missing !== undefined)('HEIC containers, sized by what the decoder makes before anything is decoded', () => {
  let origin: TestOrigin;
  let picture: HevcPicture;
  const huge = fakeHevcPicture(16384, 16384);

  const sources: Record<string, () => Buffer> = {
    'grid.heic': () => heicGrid({ width: 500, height: 400, rows: 2, columns: 2, picture }),
    'one-huge-tile.heic': () => heicGrid({ width: 64, height: 64, rows: 1, columns: 1, picture: huge }),
    'tile-twice.heic': () => heicGrid({ width: 500, height: 400, rows: 2, columns: 2, picture, cells: [0, 1, 1, 2] }),
    'shared-bytes.heic': () => heicGrid({ width: 500, height: 400, rows: 2, columns: 2, picture, sharedData: true }),
    'short-tiles.heic': () => heicGrid({ width: 600, height: 400, rows: 2, columns: 2, picture }),
    'spare-column.heic': () => heicGrid({ width: 256, height: 400, rows: 2, columns: 2, picture }),
    'missing-tile.heic': () => heicGrid({ width: 500, height: 400, rows: 2, columns: 2, picture, cells: [0, 1, 2] }),
    'overlay.heic': () => derivedOver('iovl'),
    'identity.heic': () => derivedOver('iden'),
    'sps-larger.heic': () => plainItem(huge, 64, 64),
    'own-sps.heic': () =>
      plainItem(picture, picture.width, picture.height, Buffer.concat([Buffer.from([0, 0, 0, 5, 0x42, 0x01, 1, 2, 3]), picture.data])),
    'two-pictures.heic': () => plainItem(picture, picture.width, picture.height, Buffer.concat([picture.data, picture.data])),
    'large-alpha.heic': () =>
      heifOfItems(1, [
        { id: 1, type: 'hvc1', properties: [picture.hvcC, ispe(256, 256)], data: picture.data },
        {
          id: 2,
          type: 'hvc1',
          properties: [huge.hvcC, ispe(16384, 16384), alphaAuxC()],
          data: huge.data,
          references: [{ type: 'auxl', to: [1] }],
        },
      ]),
  };

  beforeAll(async () => {
    picture = await tilePicture();
    origin = await createTestOrigin('heic-containers');
    await Promise.all(Object.entries(sources).map(([key, make]) => origin.putSource(key, make())));
  }, 60_000);

  it('serves a 2x2 grid of 256x256 tiles as its 500x400 image, the tiles cut at its edges', async () => {
    const response = await origin.request('/grid.heic/format=png');
    expect(response.status, response.body.toString('utf8', 0, 200)).toBe(200);
    expect(await sharp(response.body).metadata()).toMatchObject({ width: 500, height: 400 });
    expect(isNear(await pixelAt(response.body, 499, 399), TILE_COLOUR, 8)).toBe(true);
  });

  it('refuses a 64x64 grid over one 16384x16384 tile from the header (413), without loading the decoder', async () => {
    await origin.transforms.ready();
    const before = origin.transforms.pids();
    for (const ops of ['width=32', 'format=json']) {
      const response = await origin.request(`/one-huge-tile.heic/${ops}`);
      expect(response.status).toBe(413);
      expect(JSON.parse(response.body.toString())).toMatchObject({ error: 'too_many_pixels' });
    }
    expect(origin.transforms.pids()).toEqual(before);
  });

  it("prices a small grid over a large tile at the tile's pixels, not the grid's", async () => {
    const large = fakeHevcPicture(2048, 2048);
    const [gridInfo, plainInfo] = await Promise.all(
      [heicGrid({ width: 64, height: 64, rows: 1, columns: 1, picture: large }), plainItem(fakeHevcPicture(64, 64))].map(
        async (file) => (await openSource(file, DEFAULT_LIMITS)).info,
      ),
    );
    const ops = parseCanonicalUri('/a.heic/width=32', DEFAULT_GRAMMAR_OPTIONS).ops;
    const [grid, plain] = [gridInfo!, plainInfo!].map((info) => describeWork(info, ops, 1, DEFAULT_GRAMMAR_OPTIONS.maxDimension)) as [
      Work,
      Work,
    ];
    expect(predictBytes(grid, 'jpeg') - predictBytes(plain, 'jpeg') - (gridInfo!.bytes - plainInfo!.bytes)).toBe(
      (2048 * 2048 - 64 * 64) * 14,
    );
    expect(predictSeconds(grid, gridInfo!, 'jpeg')).toBeGreaterThan(predictSeconds(plain, plainInfo!, 'jpeg') + 1);
  });

  it.each([
    ['a grid that references one tile twice', 'tile-twice.heic'],
    ['a grid whose tiles share their bytes', 'shared-bytes.heic'],
    ['a grid whose tiles fall short of its size', 'short-tiles.heic'],
    ['a grid with a column of tiles wholly outside it', 'spare-column.heic'],
    ['a 2x2 grid of 3 tiles', 'missing-tile.heic'],
    ['an overlay (iovl) over a 16384x16384 picture', 'overlay.heic'],
    ['an identity item (iden) over a 16384x16384 picture', 'identity.heic'],
    ['a 64x64 ispe over a picture its SPS codes at 16384x16384', 'sps-larger.heic'],
    ['a picture whose data carries an SPS of its own', 'own-sps.heic'],
    ['an item whose data holds two pictures', 'two-pictures.heic'],
    ['an alpha plane of 16384x16384 for a 256x256 image', 'large-alpha.heic'],
  ])('refuses %s from the header (422), without loading the decoder', async (_, key) => {
    await origin.transforms.ready();
    const before = origin.transforms.pids();
    for (const ops of ['width=32', 'format=json']) {
      const response = await origin.request(`/${key}/${ops}`);
      expect(response.status, response.body.toString('utf8', 0, 200)).toBe(422);
      expect(JSON.parse(response.body.toString())).toMatchObject({ error: 'undecodable_image' });
    }
    expect(origin.transforms.pids()).toEqual(before);
  });
});
