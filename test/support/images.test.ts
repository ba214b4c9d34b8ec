import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import {
  ORIENTATION_CORNERS,
  alphaPng,
  animatedGif,
  animatedWebp,
  animationFrameColour,
  avifImage,
  cmykJpeg,
  gradientJpeg,
  grainyScenePng,
  isNear,
  noiseImage,
  opaquePng,
  orientedJpeg,
  pixelAt,
  png16,
  tiffImage,
  webpImage,
  type Orientation,
} from './images';

const meta = (image: Buffer) => sharp(image).metadata();

describe('still fixtures', () => {
  it.each([
    ['gradientJpeg', () => gradientJpeg(64, 48), 'jpeg', false],
    ['opaquePng', () => opaquePng(64, 48), 'png', false],
    ['alphaPng', () => alphaPng(64, 48), 'png', true],
    ['webpImage', () => webpImage(64, 48), 'webp', false],
    ['webpImage alpha', () => webpImage(64, 48, { alpha: true }), 'webp', true],
    ['avifImage', () => avifImage(64, 48), 'heif', false],
    ['tiffImage', () => tiffImage(64, 48), 'tiff', false],
    ['noise png', () => noiseImage(64, 48, 'png'), 'png', false],
    ['noise jpeg', () => noiseImage(64, 48, 'jpeg'), 'jpeg', false],
    ['noise webp', () => noiseImage(64, 48, 'webp'), 'webp', false],
    ['grainyScenePng', () => grainyScenePng(64, 48), 'png', false],
  ] as const)('%s has format, size and alpha as documented, deterministically', async (_name, make, format, hasAlpha) => {
    const image = await make();
    const m = await meta(image);
    expect(m.format).toBe(format);
    expect([m.width, m.height]).toEqual([64, 48]);
    expect(m.hasAlpha).toBe(hasAlpha);
    expect(m.orientation ?? 1).toBe(1); // TIFF always carries an Orientation tag (1); the others carry none.
    expect((await make()).equals(image)).toBe(true);
  });

  it('gradientJpeg honours quality and is a smooth gradient', async () => {
    const low = await gradientJpeg(200, 100, { quality: 30 });
    const high = await gradientJpeg(200, 100);
    expect(low.length).toBeLessThan(high.length);
    expect(isNear(await pixelAt(high, 0, 0), { r: 0, g: 0, b: 255 }, 12)).toBe(true);
    expect(isNear(await pixelAt(high, 199, 99), { r: 255, g: 255, b: 0 }, 12)).toBe(true);
  });

  it('avifImage is AV1-compressed HEIF', async () => {
    expect((await meta(await avifImage(64, 48))).compression).toBe('av1');
  });

  it.each([
    ['alphaPng', () => alphaPng(80, 60)],
    ['webpImage alpha', () => webpImage(80, 60, { alpha: true })],
  ] as const)('%s has transparent corners and an opaque orange centre', async (_name, make) => {
    const image = await make();
    for (const [x, y] of [
      [0, 0],
      [79, 0],
      [0, 59],
      [79, 59],
    ] as const) {
      expect((await pixelAt(image, x, y)).alpha).toBe(0);
    }
    const centre = await pixelAt(image, 40, 30);
    expect(centre.alpha).toBe(255);
    expect(isNear(centre, { r: 255, g: 140, b: 0 }, 10)).toBe(true);
  });

  it('opaquePng has 3 channels', async () => {
    expect((await meta(await opaquePng(10, 10))).channels).toBe(3);
  });

  it('cmykJpeg is a 4-channel CMYK JPEG that decodes to the gradient', async () => {
    const image = await cmykJpeg(64, 48);
    const m = await meta(image);
    expect([m.format, m.space, m.channels, m.width, m.height]).toEqual(['jpeg', 'cmyk', 4, 64, 48]);
    expect(isNear(await pixelAt(image, 63, 47), { r: 255, g: 255, b: 0 })).toBe(true);
    expect((await cmykJpeg(64, 48)).equals(image)).toBe(true);
  });

  it('png16 is a 16-bit PNG with distinct 16-bit values', async () => {
    const image = await png16(300, 20);
    const m = await meta(image);
    expect([m.format, m.depth, m.channels, m.hasAlpha, m.width, m.height]).toEqual(['png', 'ushort', 3, false, 300, 20]);
    const { data } = await sharp(image).toColourspace('rgb16').raw({ depth: 'ushort' }).toBuffer({ resolveWithObject: true });
    const red = new Uint16Array(data.buffer, data.byteOffset, data.length / 2).filter((_, i) => i % 3 === 0);
    // More distinct reds than 8 bits could hold along a 300 px ramp.
    expect(new Set(red).size).toBeGreaterThan(256);
    expect((await png16(300, 20)).equals(image)).toBe(true);
  });

  it('noiseImage PNG at 2500x2500 is really big (> 4.5 MB)', async () => {
    const image = await noiseImage(2500, 2500, 'png');
    expect(image.length).toBeGreaterThan(4.5 * 1024 * 1024);
    const m = await meta(image);
    expect([m.format, m.width, m.height]).toEqual(['png', 2500, 2500]);
  }, 30_000);
});

describe.each([
  ['animatedGif', animatedGif, 'gif'],
  ['animatedWebp', animatedWebp, 'webp'],
] as const)('%s', (_name, make, format) => {
  it('has the requested frames, page height, delays and distinct frame colours', async () => {
    const image = await make(4, 40, 30);
    const m = await sharp(image, { animated: true }).metadata();
    expect([m.format, m.pages, m.pageHeight, m.width, m.height]).toEqual([format, 4, 30, 40, 120]);
    expect(m.delay).toEqual([100, 100, 100, 100]);
    expect(m.loop).toBe(0);
    // pages is reported even without { animated: true } (pageHeight is not).
    expect((await meta(image)).pages).toBe(4);
    for (let page = 0; page < 4; page++) {
      expect(isNear(await pixelAt(image, 20, 15, { page }), animationFrameColour(page), 10)).toBe(true);
      expect(isNear(animationFrameColour(page), animationFrameColour(page + 1), 40)).toBe(false);
    }
    expect((await make(4, 40, 30)).equals(image)).toBe(true);
  });
});

describe('orientedJpeg', () => {
  const W = 90;
  const H = 60;
  const corners = [
    ['topLeft', 0.1, 0.1],
    ['topRight', 0.9, 0.1],
    ['bottomLeft', 0.1, 0.9],
    ['bottomRight', 0.9, 0.9],
  ] as const;

  it.each([1, 2, 3, 4, 5, 6, 7, 8] as const)('orientation %i: EXIF tag, stored size, corners after autoOrient', async (o: Orientation) => {
    const image = await orientedJpeg(o, W, H);
    const m = await meta(image);
    expect(m.format).toBe('jpeg');
    expect(m.orientation).toBe(o);
    expect([m.width, m.height]).toEqual(o >= 5 ? [H, W] : [W, H]);
    expect(m.autoOrient).toEqual({ width: W, height: H });

    const upright = await sharp(image).autoOrient().png().toBuffer();
    const um = await meta(upright);
    expect([um.width, um.height]).toEqual([W, H]);
    for (const [corner, fx, fy] of corners) {
      const colour = await pixelAt(upright, Math.floor(W * fx), Math.floor(H * fy));
      expect(isNear(colour, ORIENTATION_CORNERS[corner]), `${corner} is ${JSON.stringify(colour)}`).toBe(true);
    }
    expect(isNear(await pixelAt(upright, W / 2, H / 2), { r: 255, g: 255, b: 255 })).toBe(true);
    expect((await orientedJpeg(o, W, H)).equals(image)).toBe(true);
  });

  it('stored pixels differ from the displayed layout for every orientation but 1', async () => {
    for (const o of [1, 2, 3, 4, 5, 6, 7, 8] as const) {
      const image = await orientedJpeg(o, W, H);
      const { width = 0, height = 0 } = await meta(image);
      const storedCorners = await Promise.all(corners.map(([, fx, fy]) => pixelAt(image, Math.floor(width * fx), Math.floor(height * fy))));
      const upright = corners.every(([corner], i) => isNear(storedCorners[i]!, ORIENTATION_CORNERS[corner]));
      expect(upright, `orientation ${o}`).toBe(o === 1);
    }
  });

  it('rejects portrait sizes', () => {
    expect(() => orientedJpeg(6, 40, 60)).toThrow(RangeError);
  });
});

describe('isNear', () => {
  it('compares each channel against the tolerance', () => {
    expect(isNear({ r: 200, g: 10, b: 10 }, { r: 240, g: 0, b: 0 })).toBe(true);
    expect(isNear({ r: 199, g: 0, b: 0 }, { r: 240, g: 0, b: 0 })).toBe(false);
    expect(isNear({ r: 250, g: 0, b: 0 }, { r: 240, g: 0, b: 0 }, 5)).toBe(false);
  });
});
