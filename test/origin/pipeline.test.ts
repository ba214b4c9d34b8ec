// Every parameter of the contract, through the real handler on LocalStack,
// judged by decoding what a browser would receive.

import sharp, { type Metadata } from 'sharp';
import { thumbHashToApproximateAspectRatio, thumbHashToAverageRGBA } from 'thumbhash';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Description } from '../../lambda/origin/image/describe';
import {
  ORIENTATION_CORNERS,
  alphaPng,
  animatedGif,
  animatedWebp,
  animationFrameColour,
  avifImage,
  cmykJpeg,
  gradientJpeg,
  isNear,
  noiseImage,
  opaquePng,
  orientedJpeg,
  pixelAt,
  png16,
  tiffImage,
  webpImage,
  type Orientation,
} from '../support/images';
import { createTestOrigin, type OriginResponse, type TestOrigin } from '../support/origin';

let origin: TestOrigin;

/** 300x200 landscape, red top-left, blue top-right, green bottom-left, gray bottom-right. */
const CORNERED = 'cornered.jpg';

beforeAll(async () => {
  origin = await createTestOrigin('pipeline');
  await Promise.all([
    origin.putSource(CORNERED, await orientedJpeg(1, 300, 200)),
    origin.putSource('gradient.jpg', await gradientJpeg(400, 300)),
    origin.putSource('noise.png', await noiseImage(200, 200, 'png')),
    origin.putSource('alpha.png', await alphaPng(200, 200)),
    origin.putSource('opaque.png', await opaquePng(120, 80)),
    origin.putSource('anim.gif', await animatedGif(4, 60, 40)),
    origin.putSource('anim.webp', await animatedWebp(3, 60, 40)),
    origin.putSource('cmyk.jpg', await cmykJpeg(100, 80)),
    origin.putSource('deep.png', await png16(100, 80)),
    origin.putSource('photo.avif', await avifImage(100, 80)),
    origin.putSource('photo.tiff', await tiffImage(100, 80)),
    origin.putSource('photo.webp', await webpImage(100, 80)),
    ...([1, 2, 3, 4, 5, 6, 7, 8] as Orientation[]).map(async (o) => origin.putSource(`orient/${o}.jpg`, await orientedJpeg(o, 300, 200))),
  ]);
});

async function image(uri: string, accept?: string): Promise<{ response: OriginResponse; meta: Metadata }> {
  const response = await origin.request(uri, accept ? { headers: { accept } } : {});
  expect(response.status, `${uri}: ${response.body.toString('utf8', 0, 200)}`).toBe(200);
  return { response, meta: await sharp(response.body, { animated: true }).metadata() };
}

const corner = (body: Buffer, x: number, y: number) => pixelAt(body, x, y);

describe('original', () => {
  it('serves a request without transformation in the source format, at the source size', async () => {
    const { response, meta } = await image('/gradient.jpg/original');
    expect(response.headers['content-type']).toBe('image/jpeg');
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 400, 300]);
  });

  it('strips metadata (EXIF, ICC) from the variant', async () => {
    const { meta } = await image('/orient/6.jpg/original');
    expect(meta.exif).toBeUndefined();
    expect(meta.orientation).toBeUndefined();
  });

  it('caps an implicit output size at maxDimension', async () => {
    const small = await createTestOrigin('pipeline-cap', { maxDimension: 100 });
    await small.putSource('wide.jpg', await gradientJpeg(400, 300));
    const response = await small.request('/wide.jpg/original');
    const meta = await sharp(response.body).metadata();
    expect([meta.width, meta.height]).toEqual([100, 75]);
  });
});

describe('EXIF orientation', () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8] as Orientation[])('orientation %i is displayed upright', async (o) => {
    const { response, meta } = await image(`/orient/${o}.jpg/width=150`);
    expect([meta.width, meta.height]).toEqual([150, 100]);
    expect(isNear(await corner(response.body, 5, 5), ORIENTATION_CORNERS.topLeft)).toBe(true);
    expect(isNear(await corner(response.body, 144, 5), ORIENTATION_CORNERS.topRight)).toBe(true);
    expect(isNear(await corner(response.body, 5, 94), ORIENTATION_CORNERS.bottomLeft)).toBe(true);
  });

  it('format=json reports the displayed (oriented) size', async () => {
    const response = await origin.request('/orient/6.jpg/format=json');
    expect(response.json()).toMatchObject({ width: 300, height: 200 });
  });
});

describe('resize', () => {
  it('width alone keeps the aspect ratio', async () => {
    const { meta } = await image('/gradient.jpg/width=200');
    expect([meta.width, meta.height]).toEqual([200, 150]);
  });

  it('height alone keeps the aspect ratio', async () => {
    const { meta } = await image('/gradient.jpg/height=150');
    expect([meta.width, meta.height]).toEqual([200, 150]);
  });

  it.each([
    ['cover', 100, 100],
    ['contain', 100, 100],
    ['fill', 100, 100],
    ['inside', 100, 75],
    ['outside', 133, 100],
  ])('fit=%s gives %ix%i for a 100x100 box on a 4:3 source', async (fit, width, height) => {
    const fitOp = fit === 'cover' ? '' : `,fit=${fit}`;
    const { meta } = await image(`/gradient.jpg/width=100,height=100${fitOp}`);
    expect([meta.width, meta.height]).toEqual([width, height]);
  });

  it('contain pads with white for JPEG and transparency for PNG', async () => {
    const jpeg = await image('/gradient.jpg/width=100,height=100,fit=contain');
    expect(isNear(await corner(jpeg.response.body, 50, 2), { r: 255, g: 255, b: 255 }, 10)).toBe(true);
    const png = await image('/gradient.jpg/width=100,height=100,fit=contain,format=png');
    expect((await corner(png.response.body, 50, 2)).alpha).toBe(0);
  });

  it('contain pads with the background colour when one is given', async () => {
    const { response } = await image('/gradient.jpg/width=100,height=100,fit=contain,background=00ff00');
    expect(isNear(await corner(response.body, 50, 2), { r: 0, g: 255, b: 0 }, 30)).toBe(true);
  });

  it.each([
    ['top-left', ORIENTATION_CORNERS.topLeft, ORIENTATION_CORNERS.bottomLeft],
    ['right', ORIENTATION_CORNERS.topRight, { r: 128, g: 128, b: 128 }],
    ['bottom-left', ORIENTATION_CORNERS.bottomLeft, ORIENTATION_CORNERS.bottomLeft],
  ])('position=%s crops to that part of the image', async (position, topLeft, bottomLeft) => {
    // A 100x100 crop of the 300x200 image scaled to 150x100: a third of the width.
    const { response, meta } = await image(`/${CORNERED}/width=100,height=50,position=${position}`);
    expect([meta.width, meta.height]).toEqual([100, 50]);
    if (position === 'bottom-left') {
      expect(isNear(await corner(response.body, 3, 46), bottomLeft)).toBe(true);
    } else {
      const x = position === 'right' ? 96 : 3;
      expect(isNear(await corner(response.body, x, 3), topLeft)).toBe(true);
    }
  });

  it.each(['entropy', 'attention'])('position=%s picks a crop of the requested size', async (position) => {
    const { meta } = await image(`/gradient.jpg/width=90,height=120,position=${position}`);
    expect([meta.width, meta.height]).toEqual([90, 120]);
  });

  it('never enlarges past the source unless enlarge=1', async () => {
    const kept = await image('/opaque.png/width=600');
    expect(kept.meta.width).toBe(120);
    const enlarged = await image('/opaque.png/width=600,enlarge=1');
    expect([enlarged.meta.width, enlarged.meta.height]).toEqual([600, 400]);
  });
});

describe('rotate, flip, flop', () => {
  it('rotate=90 turns the image a quarter clockwise after orientation', async () => {
    const { response, meta } = await image(`/${CORNERED}/rotate=90`);
    expect([meta.width, meta.height]).toEqual([200, 300]);
    // The top-left red block is now at the top-right.
    expect(isNear(await corner(response.body, 195, 5), ORIENTATION_CORNERS.topLeft)).toBe(true);
  });

  it('rotate=180 puts the top-left corner at the bottom-right', async () => {
    const { response } = await image(`/${CORNERED}/rotate=180`);
    expect(isNear(await corner(response.body, 295, 195), ORIENTATION_CORNERS.topLeft)).toBe(true);
  });

  it('rotate happens before resize, so width and height describe the output', async () => {
    const { meta } = await image(`/${CORNERED}/width=100,rotate=270`);
    expect([meta.width, meta.height]).toEqual([100, 150]);
  });

  it('flip mirrors top to bottom, flop left to right', async () => {
    const flipped = await image(`/${CORNERED}/flip=1`);
    expect(isNear(await corner(flipped.response.body, 5, 195), ORIENTATION_CORNERS.topLeft)).toBe(true);
    const flopped = await image(`/${CORNERED}/flop=1`);
    expect(isNear(await corner(flopped.response.body, 295, 5), ORIENTATION_CORNERS.topLeft)).toBe(true);
  });
});

describe('filters and colour', () => {
  const spread = async (body: Buffer) => (await sharp(body).stats()).channels[0]!.stdev;

  it('blur smooths the image', async () => {
    const plain = await image('/noise.png/format=png');
    const blurred = await image('/noise.png/blur=3,format=png');
    expect(await spread(blurred.response.body)).toBeLessThan((await spread(plain.response.body)) / 2);
  });

  it('sharpen increases local contrast', async () => {
    const plain = await image('/gradient.jpg/width=200,blur=2,format=png');
    const sharpened = await image('/gradient.jpg/width=200,blur=2,sharpen=5,format=png');
    expect(sharpened.response.body.equals(plain.response.body)).toBe(false);
    const edges = async (body: Buffer) =>
      (
        await sharp(body)
          .convolve({ width: 3, height: 3, kernel: [0, -1, 0, -1, 4, -1, 0, -1, 0] })
          .stats()
      ).channels[0]!.stdev;
    expect(await edges(sharpened.response.body)).toBeGreaterThan(await edges(plain.response.body));
  });

  it('grayscale removes colour', async () => {
    const { response } = await image(`/${CORNERED}/grayscale=1`);
    const red = await corner(response.body, 5, 5);
    expect(Math.abs(red.r - red.g)).toBeLessThan(3);
    expect(Math.abs(red.g - red.b)).toBeLessThan(3);
  });

  it('converts a CMYK source to sRGB with the right colours', async () => {
    const { meta, response } = await image('/cmyk.jpg/original');
    expect(meta.space).toBe('srgb');
    expect(meta.channels).toBe(3);
    const reference = await sharp(await cmykJpeg(100, 80))
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    const pixel = await corner(response.body, 50, 40);
    const offset = (40 * reference.info.width + 50) * reference.info.channels;
    expect(isNear(pixel, { r: reference.data[offset]!, g: reference.data[offset + 1]!, b: reference.data[offset + 2]! }, 12)).toBe(true);
  });

  it('reduces a 16-bit PNG to 8 bits per channel', async () => {
    const { meta } = await image('/deep.png/format=png');
    expect(meta.depth).toBe('uchar');
  });
});

describe('alpha and background', () => {
  it('flattens transparency onto white for JPEG', async () => {
    const { response, meta } = await image('/alpha.png/format=jpeg');
    expect(meta.hasAlpha).toBe(false);
    expect(isNear(await corner(response.body, 2, 2), { r: 255, g: 255, b: 255 }, 8)).toBe(true);
  });

  it('flattens onto the background colour when one is given', async () => {
    const { response } = await image('/alpha.png/background=0000ff,format=jpeg');
    expect(isNear(await corner(response.body, 2, 2), { r: 0, g: 0, b: 255 }, 30)).toBe(true);
  });

  it('keeps transparency for PNG and WebP', async () => {
    for (const format of ['png', 'webp']) {
      const { response, meta } = await image(`/alpha.png/format=${format}`);
      expect(meta.hasAlpha).toBe(true);
      expect((await corner(response.body, 2, 2)).alpha).toBe(0);
    }
  });
});

describe('formats', () => {
  it.each([
    ['jpeg', 'image/jpeg', 'jpeg'],
    ['png', 'image/png', 'png'],
    ['webp', 'image/webp', 'webp'],
    ['avif', 'image/avif', 'heif'],
    ['gif', 'image/gif', 'gif'],
  ])('format=%s gives %s whose bytes really are that format', async (format, contentType, sharpFormat) => {
    const { response, meta } = await image(`/gradient.jpg/width=80,format=${format}`);
    expect(response.headers['content-type']).toBe(contentType);
    expect(meta.format).toBe(sharpFormat);
    expect(meta.width).toBe(80);
  });

  it.each([
    ['opaque.png', 'image/jpeg'],
    ['alpha.png', 'image/png'],
    ['photo.webp', 'image/jpeg'],
    ['anim.gif', 'image/gif'],
  ])('with no format, %s is served in its family: %s', async (key, contentType) => {
    const { response } = await image(`/${key}/width=40`);
    expect(response.headers['content-type']).toBe(contentType);
  });

  it.each([
    ['gradient.jpg', 'accept=avif', 'image/avif'],
    ['gradient.jpg', 'accept=webp', 'image/webp'],
    ['alpha.png', 'accept=avif', 'image/avif'],
    ['alpha.png', 'accept=webp', 'image/webp'],
  ])('with a negotiated format, %s,%s is served in the best one the viewer accepts: %s', async (key, accept, contentType) => {
    const { response, meta } = await image(`/${key}/width=40,${accept}`);
    expect(response.headers['content-type']).toBe(contentType);
    expect(meta.width).toBe(40);
    expect(meta.hasAlpha).toBe(key === 'alpha.png');
  });

  it.each(['photo.avif', 'photo.tiff', 'photo.webp'])('reads a %s source', async (key) => {
    const { meta } = await image(`/${key}/width=50,format=png`);
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 50, 40]);
  });

  it('lower quality gives fewer bytes', async () => {
    const low = await image('/gradient.jpg/quality=20,format=webp');
    const high = await image('/gradient.jpg/quality=95,format=webp');
    expect(low.response.body.length).toBeLessThan(high.response.body.length / 1.5);
  });
});

describe('animation', () => {
  it('keeps every frame of an animated GIF, resized per frame', async () => {
    const { meta, response } = await image('/anim.gif/width=30');
    expect([meta.format, meta.pages, meta.width, meta.pageHeight]).toEqual(['gif', 4, 30, 20]);
    expect(isNear(await pixelAt(response.body, 15, 10, { page: 1 }), animationFrameColour(1))).toBe(true);
  });

  it('turns an animated GIF into an animated WebP', async () => {
    const { meta } = await image('/anim.gif/format=webp');
    expect([meta.format, meta.pages]).toEqual(['webp', 4]);
  });

  it('keeps an animation animated (as WebP) where AVIF was asked for', async () => {
    const { meta, response } = await image('/anim.webp/width=30,format=avif');
    expect(response.headers['content-type']).toBe('image/webp');
    expect(meta.pages).toBe(3);
  });

  it('keeps an animation animated (as WebP) when the viewer accepts AVIF', async () => {
    const { meta, response } = await image('/anim.gif/width=30,accept=avif');
    expect(response.headers['content-type']).toBe('image/webp');
    expect([meta.pages, meta.width, meta.pageHeight]).toEqual([4, 30, 20]);
  });

  it('gives the first frame for a still format', async () => {
    const { meta, response } = await image('/anim.gif/format=png');
    expect(meta.pages ?? 1).toBe(1);
    expect(isNear(await pixelAt(response.body, 30, 20), animationFrameColour(0))).toBe(true);
  });

  it('turns frames by half turns and mirrors them', async () => {
    const { meta } = await image('/anim.gif/rotate=180,flop=1');
    expect([meta.pages, meta.width, meta.pageHeight]).toEqual([4, 60, 40]);
  });

  it('caps the frame count at maxFrames', async () => {
    const capped = await createTestOrigin('pipeline-frames', { maxFrames: 2 });
    await capped.putSource('anim.gif', await animatedGif(5, 20, 20));
    const response = await capped.request('/anim.gif/original');
    expect((await sharp(response.body, { animated: true }).metadata()).pages).toBe(2);
  });
});

describe('format=json', () => {
  it('describes the source with a tiny placeholder image', async () => {
    const response = await origin.request('/alpha.png/format=json');
    expect(response.headers['content-type']).toBe('application/json');
    const description = response.json<Description>();
    expect(description).toMatchObject({ width: 200, height: 200, format: 'png', hasAlpha: true, frames: 1 });
    expect(description.bytes).toBe((await alphaPng(200, 200)).length);
    const [, data] = /^data:image\/webp;base64,(.+)$/.exec(description.placeholder!)!;
    const placeholder = await sharp(Buffer.from(data!, 'base64')).metadata();
    expect(Math.max(placeholder.width, placeholder.height)).toBeLessThanOrEqual(16);
    expect(description.placeholder!.length).toBeLessThan(400);
  });

  it('gives a ThumbHash of the image as displayed and its dominant colour', async () => {
    // Stored 200x300 under orientation 6: displayed 300x200, landscape.
    const turnedJpeg = await orientedJpeg(6, 300, 200);
    expect((await sharp(turnedJpeg).metadata()).height).toBe(300);
    await origin.putSource('turned.jpg', turnedJpeg);
    await origin.putSource(
      'blue.jpg',
      await sharp({ create: { width: 120, height: 80, channels: 3, background: '#3366cc' } })
        .jpeg()
        .toBuffer(),
    );
    const turned = (await origin.request('/turned.jpg/format=json')).json<Description>();
    const hash = Buffer.from(turned.thumbhash!, 'base64');
    expect(hash.length).toBeLessThan(40);
    // ThumbHash keeps the aspect ratio in steps of sevenths: 7/5 for 3:2.
    expect(thumbHashToApproximateAspectRatio(hash)).toBeCloseTo(7 / 5, 5);
    const blue = (await origin.request('/blue.jpg/format=json')).json<Description>();
    expect(blue.dominantColor).toMatch(/^#[0-9a-f]{6}$/);
    const channels = (colour: string) => [1, 3, 5].map((i) => parseInt(colour.slice(i, i + 2), 16));
    channels(blue.dominantColor!).forEach((channel, i) => expect(Math.abs(channel - [0x33, 0x66, 0xcc][i]!)).toBeLessThanOrEqual(16));
    // The hash's own average colour is the photo's.
    const average = thumbHashToAverageRGBA(Buffer.from(blue.thumbhash!, 'base64'));
    expect([average.r * 255, average.g * 255, average.b * 255].map(Math.round)).toEqual(
      [0x33, 0x66, 0xcc].map((c) => expect.closeTo(c, -1.2)),
    );
  });

  it('counts the frames of an animation and reports one frame’s size', async () => {
    const description = (await origin.request('/anim.gif/format=json')).json();
    expect(description).toMatchObject({ width: 60, height: 40, format: 'gif', frames: 4 });
  });

  it('is priced: a source whose decode does not fit the budget is described from its header, without previews', async () => {
    // 0.75 s of transform allowed: a 12 MP PNG decodes line by line in about a second; one of 200x150 at once.
    const hurried = await createTestOrigin('pipeline-json-budget', { timeBudgetMs: 1_000 });
    const large = await opaquePng(4000, 3000);
    await hurried.putSource('large.png', large);
    await hurried.putSource('small.png', await opaquePng(200, 150));
    const refused = await hurried.request('/large.png/format=jpeg');
    expect([refused.status, refused.json().error]).toEqual([413, 'too_costly']);
    const started = performance.now();
    const described = await hurried.request('/large.png/format=json');
    expect(described.status).toBe(200);
    expect(described.json()).toEqual({
      width: 4000,
      height: 3000,
      format: 'png',
      bytes: large.length,
      hasAlpha: false,
      frames: 1,
      placeholder: null,
      thumbhash: null,
      dominantColor: null,
      faces: null,
      subject: null,
    });
    expect(performance.now() - started, 'answered from the header (ms)').toBeLessThan(500);
    const small = (await hurried.request('/small.png/format=json')).json();
    expect(small).toMatchObject({ width: 200, height: 150, placeholder: expect.stringMatching(/^data:image\/webp;base64,/) });
  });
});
