// The pure transform (lambda/origin/image/transform.ts) called directly, with
// real sharp on generated images and no storage: source bytes and canonical
// ops in, the variant a viewer would receive out, judged by decoding it.

import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { DEFAULT_GRAMMAR_OPTIONS, parseCanonicalUri, type Ops } from '../../lambda/grammar';
import { DEFAULT_LIMITS } from '../../lambda/origin/config';
import { HttpError } from '../../lambda/origin/errors';
import { budgetFor, type Budget } from '../../lambda/origin/image/budget';
import { FACE_MODEL_LOAD_COST, faceModelLoaded } from '../../lambda/origin/image/faces';
import { SUBJECT_MODEL_LOAD_COST, subjectModelLoaded } from '../../lambda/origin/image/subject';
import { transform } from '../../lambda/origin/image/transform';
import {
  ORIENTATION_CORNERS,
  alphaPng,
  animatedGif,
  animationFrameColour,
  gradientJpeg,
  isNear,
  orientedJpeg,
  pixelAt,
  type Orientation,
  type Rgb,
} from '../support/images';

const opsOf = (segment: string): Ops => parseCanonicalUri(`/k/${segment}`, DEFAULT_GRAMMAR_OPTIONS).ops;
const budgetOf = (bytes: Buffer): Budget => budgetFor(DEFAULT_LIMITS.memorySizeMb, DEFAULT_LIMITS.timeBudgetMs, bytes.length);
const run = (bytes: Buffer, segment: string) => transform(bytes, opsOf(segment), DEFAULT_LIMITS, budgetOf(bytes));

/** That the output's corners, two pixels in, show these colours: top-left, top-right, bottom-left, bottom-right. */
async function expectCorners(image: Buffer, expected: Rgb[]) {
  const { width = 0, height = 0 } = await sharp(image).metadata();
  const at = [
    [2, 2],
    [width - 3, 2],
    [2, height - 3],
    [width - 3, height - 3],
  ] as const;
  const seen = await Promise.all(at.map(([x, y]) => pixelAt(image, x, y)));
  expect(seen.map((colour, i) => isNear(colour, expected[i]!))).toEqual([true, true, true, true]);
}

const { topLeft, topRight, bottomLeft, bottomRight } = ORIENTATION_CORNERS;

describe('transform', () => {
  it('resizes to the width asked, keeping the aspect ratio and the source format', async () => {
    const variant = await run(await gradientJpeg(400, 300), 'width=100');
    const meta = await sharp(variant.body).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 100, 75]);
    expect([variant.contentType, variant.width, variant.height]).toEqual(['image/jpeg', 100, 75]);
  });

  it.each([1, 3, 6, 8] as Orientation[])('shows a source with EXIF orientation %i upright', async (orientation) => {
    const variant = await run(await orientedJpeg(orientation, 300, 200), 'width=150');
    expect([variant.width, variant.height]).toEqual([150, 100]);
    await expectCorners(variant.body, [topLeft, topRight, bottomLeft, bottomRight]);
  });

  it('turns a quarter clockwise: rotate=90 takes the top-left corner to the top-right', async () => {
    const variant = await run(await orientedJpeg(1, 300, 200), 'rotate=90');
    expect([variant.width, variant.height]).toEqual([200, 300]);
    await expectCorners(variant.body, [bottomLeft, topLeft, bottomRight, topRight]);
  });

  it('mirrors before it turns: rotate=90,flop=1 takes the top-left corner to the bottom-right (turning first would put it top-left)', async () => {
    // The dialects' translations rest on this order: Cloudflare mirrors first too, imgix turns first.
    const variant = await run(await orientedJpeg(1, 300, 200), 'rotate=90,flop=1');
    await expectCorners(variant.body, [bottomRight, topRight, bottomLeft, topLeft]);
  });

  it('crops a cover box on the side position names', async () => {
    const source = await orientedJpeg(1, 300, 200);
    const left = await run(source, 'width=100,height=100,position=left');
    const right = await run(source, 'width=100,height=100,position=right');
    expect([left.width, left.height, right.width, right.height]).toEqual([100, 100, 100, 100]);
    expect(isNear(await pixelAt(left.body, 2, 2), topLeft)).toBe(true);
    expect(isNear(await pixelAt(right.body, 97, 2), topRight)).toBe(true);
    expect(isNear(await pixelAt(right.body, 2, 2), topLeft)).toBe(false);
  });

  it('flattens transparency onto the background colour for JPEG, and keeps it for PNG', async () => {
    const disc = await alphaPng(200, 200);
    const jpeg = await run(disc, 'background=ff0000,format=jpeg');
    expect(jpeg.contentType).toBe('image/jpeg');
    expect(isNear(await pixelAt(jpeg.body, 1, 1), { r: 255, g: 0, b: 0 })).toBe(true);
    const png = await run(disc, 'format=png');
    expect((await pixelAt(png.body, 1, 1)).alpha).toBe(0);
  });

  it('makes the negotiated AVIF, or the WebP first when the AVIF would keep the viewer waiting', async () => {
    const photo = await gradientJpeg(2000, 1500);
    const avif = await run(photo, 'width=200,accept=avif');
    expect(avif.contentType).toBe('image/avif');
    expect(avif.avifDeferred).toBeUndefined();
    const first = await transform(photo, opsOf('accept=avif'), DEFAULT_LIMITS, budgetOf(photo), { deferAvif: true });
    expect([first.contentType, first.avifDeferred, first.width]).toEqual(['image/webp', true, 2000]);
  });

  it('keeps every frame of an animation, resized', async () => {
    const variant = await run(await animatedGif(3, 60, 40), 'width=30');
    const meta = await sharp(variant.body, { animated: true }).metadata();
    expect([meta.format, meta.pages, meta.width, meta.pageHeight]).toEqual(['gif', 3, 30, 20]);
    expect(isNear(await pixelAt(variant.body, 15, 10, { page: 2 }), animationFrameColour(2))).toBe(true);
  });

  it('describes the source as JSON for format=json', async () => {
    const variant = await run(await orientedJpeg(6, 300, 200), 'format=json');
    expect(variant.contentType).toBe('application/json');
    expect(JSON.parse(variant.body.toString('utf8'))).toMatchObject({ width: 300, height: 200 });
  });

  it('refuses work that does not fit the budget with a 413 saying what it would take', async () => {
    const photo = await gradientJpeg(2000, 1500);
    const tiny: Budget = { memoryBytes: 1024 * 1024, seconds: 10 };
    const refusal = await transform(photo, opsOf('width=1000'), DEFAULT_LIMITS, tiny).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(HttpError);
    expect(refusal).toMatchObject({ code: 'too_costly', status: 413 });
    // A process that has searched for faces and the subject (format=json above) holds both models: its budget counts them.
    const held = (faceModelLoaded() ? FACE_MODEL_LOAD_COST.bytes : 0) + (subjectModelLoaded() ? SUBJECT_MODEL_LOAD_COST.bytes : 0);
    const allowed = Math.ceil((tiny.memoryBytes - held) / 1024 / 1024);
    expect((refusal as Error).message).toContain(`over the ${allowed} MB allowed`);
  });
});
