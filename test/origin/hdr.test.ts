// HDR gain maps through the real handler and its transform child on
// LocalStack S3: an Ultra HDR JPEG made in code keeps a gain map of the
// output's proportions when resized, cropped or turned to JPEG (read back
// with sharp), format=auto stays JPEG for it, and hdr=drop, another format or
// an op that cannot carry the map gives the SDR image: the source's primary,
// not a clipped HDR rendition. Hostile gain maps are dropped, the image served.

import { randomBytes } from 'node:crypto';
import sharp, { type Region, type Sharp } from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { stepsCarryGainMap } from '../../lambda/origin/image/steps';
import { parseCanonicalUri, DEFAULT_GRAMMAR_OPTIONS } from '../../lambda/grammar';
import { createTestOrigin, type TestOrigin } from '../support/origin';
import { joinUltraHdr, MPF_GAIN_MAP_OFFSET_AT, primaryOf, ultraHdrJpeg } from '../support/ultra-hdr';

let origin: TestOrigin;
/** 800x600, its gain map 200x150. */
let source: Buffer;
let gainMapBytes: number;

beforeAll(async () => {
  origin = await createTestOrigin('hdr');
  source = await ultraHdrJpeg(800, 600);
  gainMapBytes = (await sharp(source).metadata()).gainMap!.image.length;
  await origin.putSource('hdr.jpg', source);
}, 60_000);

/** The mean of the first band of `region` of a JPEG. */
async function mean(jpeg: Buffer, region: Region): Promise<number> {
  const pixels = await sharp(jpeg).extract(region).extractChannel(0).raw().toBuffer();
  return pixels.reduce((sum, value) => sum + value, 0) / pixels.length;
}

/** The answer's format, size and its gain map's size (undefined without one). */
async function answered(uri: string) {
  const response = await origin.request(uri);
  expect(response.status, response.body.toString('utf8').slice(0, 200)).toBe(200);
  const meta = await sharp(response.body).metadata();
  const map = meta.gainMap ? await sharp(meta.gainMap.image).metadata() : undefined;
  return { response, format: meta.format, size: [meta.width, meta.height], gainMap: map && [map.width, map.height] };
}

describe('a JPEG output of an Ultra HDR source', () => {
  it('keeps a gain map of the output’s proportions when resized, cropped and turned', async () => {
    expect(await sharp(source).metadata()).toMatchObject({ width: 800, height: 600 });
    const cases: [string, number[], number[]][] = [
      ['width=400', [400, 300], [100, 75]],
      ['width=300,height=100', [300, 100], [75, 25]],
      ['width=200,height=200,fit=contain', [200, 200], [50, 50]],
      ['width=300,rotate=90', [300, 400], [75, 100]],
      ['width=200,crop=0,0,0.5,0.5', [200, 150], [50, 38]],
      ['width=200,border=10,000000', [220, 170], [55, 43]],
    ];
    for (const [ops, size, gainMap] of cases) {
      const got = await answered(`/hdr.jpg/${ops},format=jpeg`);
      expect({ ops, size: got.size, format: got.format }).toEqual({ ops, size, format: 'jpeg' });
      // libvips cuts the map by the primary's pixels divided by its scale, rounding each side.
      expect(got.gainMap, ops).toBeDefined();
      expect(Math.abs(got.gainMap![0]! - gainMap[0]!), ops).toBeLessThanOrEqual(1);
      expect(Math.abs(got.gainMap![1]! - gainMap[1]!), ops).toBeLessThanOrEqual(1);
    }
  });

  it('keeps the map where the image is cut: its bright half stays on the left, or on top after a quarter turn', async () => {
    const plain = (await origin.request('/hdr.jpg/width=400,format=jpeg')).body;
    const map = (await sharp(plain).metadata()).gainMap!.image;
    expect(await mean(map, { left: 0, top: 0, width: 40, height: 75 })).toBeGreaterThan(240);
    expect(await mean(map, { left: 60, top: 0, width: 40, height: 75 })).toBeLessThan(140);
    const turned = (await origin.request('/hdr.jpg/width=300,rotate=90,format=jpeg')).body;
    const turnedMap = (await sharp(turned).metadata()).gainMap!.image;
    expect(await mean(turnedMap, { left: 0, top: 0, width: 75, height: 40 })).toBeGreaterThan(240);
    expect(await mean(turnedMap, { left: 0, top: 60, width: 75, height: 40 })).toBeLessThan(140);
  });

  it('turns the map with the image as its EXIF orientation says', async () => {
    await origin.putSource('turned.jpg', await ultraHdrJpeg(800, 600, { orientation: 6 }));
    const got = await answered('/turned.jpg/width=300,format=jpeg');
    expect({ size: got.size, gainMap: got.gainMap }).toEqual({ size: [300, 400], gainMap: [75, 100] });
    // The map's bright left half, as stored, is its top once turned a quarter clockwise.
    const map = (await sharp(got.response.body).metadata()).gainMap!.image;
    expect(await mean(map, { left: 0, top: 0, width: 75, height: 40 })).toBeGreaterThan(240);
    expect(await mean(map, { left: 0, top: 60, width: 75, height: 40 })).toBeLessThan(140);
  });

  it('stays JPEG with its gain map for format=auto, where any browser would get WebP or AVIF otherwise', async () => {
    for (const accept of ['accept=avif', 'accept=webp']) {
      const got = await answered(`/hdr.jpg/width=400,${accept}`);
      expect({ accept, format: got.format, gainMap: got.gainMap }).toEqual({ accept, format: 'jpeg', gainMap: [100, 75] });
      expect(got.response.headers['content-type']).toBe('image/jpeg');
    }
    // AVIF, or WebP first with the AVIF to follow (avifDeferred).
    const sdr = await answered('/hdr.jpg/width=400,hdr=drop,accept=avif');
    expect(['heif', 'webp']).toContain(sdr.format);
    expect(sdr.gainMap).toBeUndefined();
  });

  it('drops the gain map for hdr=drop, and the cache keeps the two apart', async () => {
    const kept = await answered('/hdr.jpg/width=400,format=jpeg');
    const dropped = await answered('/hdr.jpg/width=400,hdr=drop,format=jpeg');
    expect(kept.gainMap).toEqual([100, 75]);
    expect(dropped.gainMap).toBeUndefined();
    expect(dropped.size).toEqual([400, 300]);
    const keys = await origin.cachedKeys();
    expect(keys).toContain('hdr.jpg/width=400,format=jpeg');
    expect(keys).toContain('hdr.jpg/width=400,hdr=drop,format=jpeg');
  });
});

describe('an SDR output of an Ultra HDR source', () => {
  /** Mean absolute difference of two images' 8-bit sRGB pixels. */
  async function difference(a: Buffer, b: Buffer): Promise<number> {
    const [one, two] = await Promise.all([a, b].map((image) => sharp(image).toColourspace('srgb').removeAlpha().raw().toBuffer()));
    let sum = 0;
    for (let i = 0; i < one!.length; i++) sum += Math.abs(one![i]! - two![i]!);
    return sum / one!.length;
  }

  it('is the source’s primary (its own tone-mapped SDR rendition), not a clipped HDR reconstruction', async () => {
    const primary = primaryOf(source, gainMapBytes);
    expect((await sharp(primary).metadata()).gainMap).toBeUndefined();
    // What clipping would give: the HDR image the gain map makes, cut at SDR white.
    const clipped = await (sharp(source) as Sharp & { withGainMap(): Sharp }).withGainMap().toColourspace('srgb').png().toBuffer();
    const asPng = await origin.request('/hdr.jpg/format=png');
    expect(asPng.status).toBe(200);
    const fromPrimary = await sharp(primary).png().toBuffer();
    expect(await difference(asPng.body, fromPrimary)).toBe(0);
    expect(await difference(clipped, fromPrimary)).toBeGreaterThan(20);
    const dropped = (await origin.request('/hdr.jpg/hdr=drop,format=jpeg')).body;
    expect(await difference(dropped, fromPrimary)).toBeLessThan(2);
    expect(await difference(dropped, clipped)).toBeGreaterThan(20);
  });

  it('comes from every op that cannot carry the map, and each op that can keeps it', async () => {
    const asks = [
      'width=300,height=300,position=attention',
      'width=300,height=300,position=entropy',
      'trim=10',
      'brightness=1.5',
      'gamma=2',
      'width=200,height=200,fit=contain,fill=blur',
      'blur=2,sharpen=2',
      'max_bytes=100000',
      'blur=2',
      'sharpen=2',
      'grayscale=1',
      'flip=1,flop=1',
      'width=300,height=300,fp=0.2,0.2',
      'metadata=keep',
    ];
    for (const ask of asks) {
      const uri = `/hdr.jpg/${ask},format=jpeg`;
      const carries = stepsCarryGainMap(parseCanonicalUri(uri, DEFAULT_GRAMMAR_OPTIONS).ops);
      const got = await answered(uri).catch((error: Error) => {
        throw new Error(`${ask}: ${error.message}`);
      });
      expect({ ask, gainMap: got.gainMap !== undefined }).toEqual({ ask, gainMap: carries });
      if (got.gainMap) expect(Math.abs(got.gainMap[0]! / got.gainMap[1]! - got.size[0]! / got.size[1]!), ask).toBeLessThan(0.05);
    }
    expect(['trim', 'brightness', 'attention'].every((op) => asks.some((ask) => ask.includes(op)))).toBe(true);
  });
});

describe('a hostile gain map', () => {
  const primary = () => primaryOf(source, gainMapBytes);
  const mapOf = (width: number, height: number) =>
    sharp({ create: { width, height, channels: 3, background: '#808080' } })
      .jpeg()
      .toBuffer();

  it('larger than the primary, or of another shape, is dropped and the SDR image served', async () => {
    for (const [width, height] of [
      [8000, 6000],
      [200, 10],
      [1, 1],
    ] as const) {
      const key = `hostile-${width}x${height}.jpg`;
      await origin.putSource(key, joinUltraHdr(await sharp(primary()).jpeg().toBuffer(), await mapOf(width, height)));
      const got = await answered(`/${key}/width=400,format=jpeg`);
      expect({ key, size: got.size, gainMap: got.gainMap }).toEqual({ key, size: [400, 300], gainMap: undefined });
    }
  });

  it('of a valid header but random data is dropped and the SDR image served, as its primary alone would be', async () => {
    const map = await sharp({
      create: { width: 200, height: 150, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } },
    })
      .grayscale()
      .jpeg()
      .toBuffer();
    // The scan's header kept, its entropy-coded data (up to the end-of-image marker) replaced by random
    // bytes with no 0xFF among them: libultrahdr finds such a map (a marker in its data would hide it).
    const scan = map.lastIndexOf(Buffer.from([0xff, 0xda]));
    const data = scan + 2 + map.readUInt16BE(scan + 2);
    const random = randomBytes(map.length - 2 - data).map((byte) => (byte === 0xff ? 0x7f : byte));
    const damaged = Buffer.concat([map.subarray(0, data), random, map.subarray(map.length - 2)]);
    expect(await sharp(damaged).metadata()).toMatchObject({ format: 'jpeg', width: 200, height: 150 });
    const jpeg = await sharp(primary()).jpeg().toBuffer();
    const hostile = joinUltraHdr(jpeg, damaged);
    expect((await sharp(hostile).metadata()).gainMap).toBeDefined();
    await origin.putSource('random-map.jpg', hostile);
    await origin.putSource('random-map-primary.jpg', jpeg);
    const got = await answered('/random-map.jpg/width=400,format=jpeg');
    expect({ size: got.size, gainMap: got.gainMap }).toEqual({ size: [400, 300], gainMap: undefined });
    expect(got.response.body.equals((await answered('/random-map-primary.jpg/width=400,format=jpeg')).response.body)).toBe(true);
  });

  it('truncated, or behind an MPF index that points out of the file, leaves a served image', async () => {
    const truncated = source.subarray(0, source.length - Math.floor(gainMapBytes / 2));
    const pointingOut = Buffer.from(source);
    pointingOut.writeUInt32BE(0x7fffffff, MPF_GAIN_MAP_OFFSET_AT(pointingOut));
    await origin.putSource('truncated-map.jpg', truncated);
    await origin.putSource('mpf-out.jpg', pointingOut);
    const cut = await answered('/truncated-map.jpg/width=400,format=jpeg');
    expect({ size: cut.size, gainMap: cut.gainMap }).toEqual({ size: [400, 300], gainMap: undefined });
    // libultrahdr finds the map after the primary's end whatever the index says: kept, and still of the output's shape.
    const out = await answered('/mpf-out.jpg/width=400,format=jpeg');
    expect({ size: out.size, gainMap: out.gainMap }).toEqual({ size: [400, 300], gainMap: [100, 75] });
  });
});
