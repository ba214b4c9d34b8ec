// The composition operations (a blurred fill, trim, crop regions, borders)
// through the real handler on LocalStack, judged by decoding what a browser
// would receive.

import sharp, { type Metadata } from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ORIENTATION_CORNERS,
  alphaPng,
  animatedGif,
  animationFrameColour,
  gradientJpeg,
  isNear,
  opaquePng,
  orientedJpeg,
  pixelAt,
  type Rgb,
} from '../support/images';
import { createTestOrigin, type TestOrigin } from '../support/origin';

let origin: TestOrigin;

const WHITE = { r: 255, g: 255, b: 255 };
const RED = { r: 255, g: 0, b: 0 };
const { topLeft, topRight, bottomLeft, bottomRight } = ORIENTATION_CORNERS;

/** A `width` x `height` PNG of `outer`, with `rings` of colour inward (each `ring` pixels wide) and `inner` filling the rest. */
function framed(width: number, height: number, outer: Rgb, rings: { colour: Rgb; ring: number }[]): Promise<Buffer> {
  let inset = 0;
  const layers = rings.map(({ colour, ring }) => {
    inset += ring;
    return {
      input: { create: { width: width - 2 * inset, height: height - 2 * inset, channels: 3 as const, background: colour } },
      left: inset,
      top: inset,
    };
  });
  return sharp({ create: { width, height, channels: 3, background: outer } })
    .composite(layers)
    .png()
    .toBuffer();
}

/**
 * Displayed as 100x60 (stored turned, EXIF orientation 6): green, with a red
 * block at x 40..60, y 20..40 and a blue stripe down the right 20 pixels, so
 * the displayed top-left corner is green and the stored one blue.
 */
function stripedTurned(): Promise<Buffer> {
  const block = (width: number, height: number, background: Rgb) => ({ create: { width, height, channels: 3 as const, background } });
  return sharp({ create: { width: 100, height: 60, channels: 3, background: { r: 0, g: 160, b: 0 } } })
    .composite([
      { input: block(20, 20, RED), left: 40, top: 20 },
      { input: block(20, 60, { r: 0, g: 0, b: 255 }), left: 80, top: 0 },
    ])
    .png()
    .toBuffer()
    .then((displayed) => sharp(displayed).rotate(270).withMetadata({ orientation: 6 }).jpeg({ quality: 100 }).toBuffer());
}

beforeAll(async () => {
  origin = await createTestOrigin('composition');
  await Promise.all([
    // 300x200: red top-left, blue top-right, green bottom-left, gray bottom-right, white between.
    origin.putSource('cornered.jpg', await orientedJpeg(1, 300, 200)),
    origin.putSource('cornered-6.jpg', await orientedJpeg(6, 300, 200)),
    origin.putSource('gradient.jpg', await gradientJpeg(400, 300)),
    origin.putSource('small.png', await opaquePng(120, 80)),
    origin.putSource('alpha.png', await alphaPng(200, 200)),
    origin.putSource('anim.gif', await animatedGif(4, 60, 40)),
    // White, then a 10-pixel light gray ring, then red: 160x100 in all.
    origin.putSource(
      'framed.png',
      await framed(160, 100, WHITE, [
        { colour: { r: 225, g: 225, b: 225 }, ring: 10 },
        { colour: RED, ring: 20 },
      ]),
    ),
    origin.putSource('uniform.png', await framed(100, 80, { r: 40, g: 90, b: 200 }, [])),
    origin.putSource('striped-6.jpg', await stripedTurned()),
  ]);
});

async function image(uri: string): Promise<{ body: Buffer; meta: Metadata }> {
  const response = await origin.request(uri);
  expect(response.status, `${uri}: ${response.body.toString('utf8', 0, 200)}`).toBe(200);
  return { body: response.body, meta: await sharp(response.body, { animated: true }).metadata() };
}

const near = async (body: Buffer, x: number, y: number, colour: Rgb, tolerance?: number) =>
  isNear(await pixelAt(body, x, y), colour, tolerance);

describe('contain (fit=pad) with fill=blur', () => {
  it('fills the rest of the box with a blurred copy of the image instead of the background', async () => {
    const plain = await image('/cornered.jpg/width=100,height=100,fit=contain');
    const { body, meta } = await image('/cornered.jpg/width=100,height=100,fit=contain,fill=blur');
    expect([meta.width, meta.height]).toEqual([100, 100]);
    // The 300x200 image is 100x67 in the middle; above it, contain alone pads white.
    expect(await near(plain.body, 3, 3, WHITE, 10)).toBe(true);
    const above = await pixelAt(body, 3, 3);
    expect(isNear(above, WHITE, 60), 'the padding is not the background').toBe(false);
    expect(above.r, 'above the red corner the copy is reddish').toBeGreaterThan(above.b);
    const aboveRight = await pixelAt(body, 96, 3);
    expect(aboveRight.b, 'above the blue corner it is bluish').toBeGreaterThan(aboveRight.r);
    // The image itself is sharp and whole: its corners at the edges of the 100x67 band.
    expect(await near(body, 3, 20, topLeft)).toBe(true);
    expect(await near(body, 96, 79, bottomRight)).toBe(true);
    expect(await near(body, 50, 50, WHITE)).toBe(true);
  });

  it('places the image by position, and does not enlarge a small image: the fill covers the box', async () => {
    const top = await image('/cornered.jpg/width=100,height=100,fit=contain,fill=blur,position=top');
    expect(await near(top.body, 3, 3, topLeft)).toBe(true);
    const small = await image('/small.png/width=300,height=300,fit=contain,fill=blur');
    expect([small.meta.width, small.meta.height]).toEqual([300, 300]);
    const edge = await pixelAt(small.body, 3, 3);
    expect(edge.alpha, 'the corner is filled, not transparent').toBe(255);
  });

  it('gives the first frame of an animation, as a still image', async () => {
    const { body, meta } = await image('/anim.gif/width=90,height=90,fit=contain,fill=blur');
    expect([meta.width, meta.height, meta.pages ?? 1]).toEqual([90, 90, 1]);
    expect(await near(body, 45, 45, animationFrameColour(0))).toBe(true);
  });

  it('applies blur and grayscale to the whole canvas', async () => {
    const { body } = await image('/cornered.jpg/width=100,height=100,fit=contain,fill=blur,grayscale=1');
    const above = await pixelAt(body, 3, 3);
    expect([above.r, above.g]).toEqual([above.b, above.b]);
  });
});

describe('trim', () => {
  it('removes the border of the corner colour, before resizing', async () => {
    const trimmed = await image('/framed.png/trim=10');
    // White is trimmed; the light gray ring differs from it by more than 10.
    expect([trimmed.meta.width, trimmed.meta.height]).toEqual([140, 80]);
    const resized = await image('/framed.png/width=70,trim=10');
    expect([resized.meta.width, resized.meta.height]).toEqual([70, 40]);
  });

  it('with a higher threshold, trims what differs less than it', async () => {
    const { body, meta } = await image('/framed.png/trim=40');
    expect([meta.width, meta.height]).toEqual([100, 40]);
    expect(await near(body, 2, 2, RED)).toBe(true);
  });

  it('keeps a uniform image whole', async () => {
    const { meta } = await image('/uniform.png/trim=10');
    expect([meta.width, meta.height]).toEqual([100, 80]);
  });

  it('trims by the displayed top-left pixel of an EXIF-turned source, mirrored or not', async () => {
    // Green trimmed: from the red block to the blue stripe, the whole height. By the stored corner (blue) it would be 80x60.
    const { body, meta } = await image('/striped-6.jpg/trim=10');
    // Within a pixel: JPEG's chroma blurs the block's edge.
    expect(Math.abs(meta.width! - 60)).toBeLessThanOrEqual(1);
    expect(meta.height).toBe(60);
    expect(await near(body, 55, 30, { r: 0, g: 0, b: 255 })).toBe(true);
    // Mirrored left-right the displayed corner is blue: the stripe goes, the green stays.
    const mirrored = await image('/striped-6.jpg/flop=1,trim=10');
    expect(Math.abs(mirrored.meta.width! - 80)).toBeLessThanOrEqual(1);
    expect(mirrored.meta.height).toBe(60);
  });

  it('trims the image as turned', async () => {
    const { meta } = await image('/framed.png/rotate=90,trim=10');
    expect([meta.width, meta.height]).toEqual([80, 140]);
  });

  it('gives the first frame of an animation', async () => {
    const { meta } = await image('/anim.gif/trim=10');
    expect(meta.pages ?? 1).toBe(1);
  });
});

describe('crop', () => {
  it.each([
    ['0,0,0.5,0.5', topLeft, WHITE],
    ['0.5,0.5,0.5,0.5', WHITE, bottomRight],
    ['0.5,0,0.5,0.5', WHITE, WHITE],
  ])('crop=%s cuts that part of the image', async (crop, first, last) => {
    const { body, meta } = await image(`/cornered.jpg/crop=${crop}`);
    expect([meta.width, meta.height]).toEqual([150, 100]);
    expect(await near(body, 2, 2, first)).toBe(true);
    expect(await near(body, 147, 97, last)).toBe(true);
  });

  it('is a region of the image as displayed: after EXIF orientation', async () => {
    const { body, meta } = await image('/cornered-6.jpg/crop=0,0,0.5,0.5');
    expect([meta.width, meta.height]).toEqual([150, 100]);
    expect(await near(body, 2, 2, topLeft)).toBe(true);
  });

  it('is a region of the image after rotate, flip and flop', async () => {
    const flipped = await image('/cornered.jpg/flip=1,crop=0,0,0.5,0.5');
    expect(await near(flipped.body, 2, 2, bottomLeft)).toBe(true);
    const flopped = await image('/cornered.jpg/flop=1,crop=0,0,0.5,0.5');
    expect(await near(flopped.body, 2, 2, topRight)).toBe(true);
    const turned = await image('/cornered.jpg/rotate=90,crop=0,0,0.5,0.5');
    expect([turned.meta.width, turned.meta.height]).toEqual([100, 150]);
    expect(await near(turned.body, 2, 2, bottomLeft)).toBe(true);
  });

  it('comes before the resize, which sizes the region', async () => {
    const { body, meta } = await image('/cornered.jpg/width=75,height=75,crop=0,0,0.5,0.5');
    expect([meta.width, meta.height]).toEqual([75, 75]);
    expect(await near(body, 2, 2, topLeft)).toBe(true);
  });

  it('crops every frame of an animation', async () => {
    const { body, meta } = await image('/anim.gif/crop=0,0,0.5,0.5');
    expect([meta.width, meta.pageHeight, meta.pages]).toEqual([30, 20, 4]);
    expect(await near(body, 5, 5, animationFrameColour(0))).toBe(true);
  });

  it('applies to the trimmed image', async () => {
    const { meta } = await image('/framed.png/trim=40,crop=0,0,0.5,0.5');
    expect([meta.width, meta.height]).toEqual([50, 20]);
  });
});

describe('border', () => {
  it('adds the width on every side, in the colour', async () => {
    const { body, meta } = await image('/gradient.jpg/width=100,border=10,ff0000');
    expect([meta.width, meta.height]).toEqual([120, 95]);
    expect(await near(body, 2, 2, RED)).toBe(true);
    expect(await near(body, 117, 92, RED)).toBe(true);
    expect(await near(body, 60, 47, RED)).toBe(false);
  });

  it('in a transparent colour, is a transparent margin', async () => {
    const { body, meta } = await image('/alpha.png/width=100,border=5,00000000');
    expect([meta.width, meta.height]).toEqual([110, 110]);
    expect((await pixelAt(body, 1, 55)).alpha).toBe(0);
  });

  it('frames every frame of an animation', async () => {
    const { body, meta } = await image('/anim.gif/border=4,0000ff');
    expect([meta.width, meta.pageHeight, meta.pages]).toEqual([68, 48, 4]);
    expect(await near(body, 1, 1, { r: 0, g: 0, b: 255 })).toBe(true);
  });

  it('keeps the output within maxDimension: the image shrinks to leave the border room', async () => {
    const small = await createTestOrigin('composition-cap', { maxDimension: 100 });
    await small.putSource('wide.jpg', await gradientJpeg(400, 300));
    for (const [uri, size] of [
      ['/wide.jpg/width=100,border=10,000000', [100, 80]],
      ['/wide.jpg/border=10,000000', [100, 80]],
      ['/wide.jpg/width=100,height=100,border=49,000000', [100, 100]],
    ] as const) {
      const response = await small.request(uri);
      expect(response.status, uri).toBe(200);
      const meta = await sharp(response.body).metadata();
      expect([meta.width, meta.height], uri).toEqual(size);
    }
  });
});
