// The bytes between the handler and its transform child cross a socket of
// their own, once each way (transform-process.ts): a source and a watermark
// in, a variant out, each read into a buffer of its exact size. What a viewer
// would notice if the framing slipped: a variant cut short, or the next
// request's answer made of the previous one's bytes.

import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import type { Ops } from '../../lambda/grammar';
import { DEFAULT_LIMITS } from '../../lambda/origin/config';
import { budgetFor } from '../../lambda/origin/image/budget';
import { transformProcesses } from '../../lambda/origin/transform-process';
import { alphaPng } from '../support/images';

const transforms = transformProcesses(1);
afterAll(() => transforms.close());

/** RGBA noise as a lossless WebP: its PNG variant is about as large as its pixels. */
const noiseWebp = (side: number) =>
  sharp(randomBytes(side * side * 4), { raw: { width: side, height: side, channels: 4 } })
    .webp({ lossless: true })
    .toBuffer();

/** Whether two images have the same pixels (compared as bytes: a deep equality of megabytes is slow). */
const samePixels = async (a: Buffer, b: Buffer) => (await sharp(a).raw().toBuffer()).equals(await sharp(b).raw().toBuffer());

/** Runs `ops` on `source` in a transform child, with the watermark images given by op (`watermark`, `watermark2`...). */
async function run(source: Buffer, ops: Ops, watermarks: { [op: string]: Buffer } = {}) {
  const placement = { position: 'center' as const, margin: 0, size: 0.5, opacity: 1 };
  const options = { watermarks: Object.fromEntries(Object.entries(watermarks).map(([op, bytes]) => [op, { bytes, placement }])) };
  const job = { bytes: source, ops, limits: DEFAULT_LIMITS, budget: budgetFor(2048, 60_000, source.length), options };
  return (await transforms.run(job, performance.now() + 50_000)).variant;
}

describe('bytes crossing between the handler and the transform child', () => {
  it('a large variant arrives whole, then the next ones, with a watermark among them, are their own', async () => {
    const first = await noiseWebp(1500);
    const second = await noiseWebp(1200);
    const made = await run(first, { format: 'png' });
    expect(made.body.length, 'a PNG of noise is as large as its pixels').toBeGreaterThan(1500 * 1500 * 4);
    expect(await samePixels(made.body, first)).toBe(true);
    // Sources of other sizes, a watermark's bytes following the source's, and answers of other sizes.
    const marked = await run(second, { format: 'png' }, { watermark: await alphaPng(100, 100) });
    expect(await sharp(marked.body).metadata()).toMatchObject({ width: 1200, height: 1200 });
    const centre = (await sharp(marked.body).extract({ left: 600, top: 600, width: 1, height: 1 }).raw().toBuffer()).subarray(0, 3);
    expect([...centre], 'the watermark’s orange at the centre').toEqual([255, 140, 0]);
    const again = await run(second, { format: 'png' });
    expect(await samePixels(again.body, second)).toBe(true);
  });

  it("several watermarks cross in turn, each with its own bytes, drawn in their slots' order", async () => {
    const blue = await sharp({ create: { width: 40, height: 10, channels: 4, background: '#0000ff' } })
      .png()
      .toBuffer();
    const ops: Ops = { format: 'png', watermark: 'orange.1', watermark3: 'blue.1' };
    const marked = await run(await noiseWebp(400), ops, { watermark: await alphaPng(100, 100), watermark3: blue });
    const pixel = async (left: number, top: number) => [
      ...(await sharp(marked.body).extract({ left, top, width: 1, height: 1 }).raw().toBuffer()).subarray(0, 3),
    ];
    expect(await pixel(200, 200), 'the later slot’s blue over the first’s orange').toEqual([0, 0, 255]);
    expect(await pixel(200, 130), 'the first slot’s orange above its band').toEqual([255, 140, 0]);
  });
});
