// The benchmark's pure helpers (statistics, SSIM, interpolation, the quality bound), and its
// composed op's bare sharp against the handler's transform. The benchmark
// itself is `npm run bench`, never part of `npm test`.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../lambda/origin/config';
import { budgetFor } from '../../lambda/origin/image/budget';
import { transform } from '../../lambda/origin/image/transform';
import { sampleWatermark } from '../../local/emulator/samples';
import { bare, canonicalOpsOf, naive, OPS, readBenchWatermark, transformOptions } from '../../scripts/bench/ops';
import { bytesAtSsim } from '../../scripts/bench/quality';
import { best, equal, type Curve } from '../../scripts/bench/quality-bound';
import { decodePlanes, prepareReference, ssimImages, ssimPlane, ycbcrPlanes } from '../../scripts/bench/ssim';
import { markdownTable, median, p95, pairedRatio, quantile } from '../../scripts/bench/stats';

/** A deterministic textured plane: gradients plus a pseudo-random pattern. */
function texture(width: number, height: number, seed = 1): Float64Array {
  const plane = new Float64Array(width * height);
  let state = seed;
  for (let i = 0; i < plane.length; i++) {
    state = (state * 1103515245 + 12345) % 2147483648;
    const x = i % width;
    const y = Math.floor(i / width);
    plane[i] = Math.min(255, Math.max(0, 0.4 * x + 0.3 * y + (state % 64)));
  }
  return plane;
}

describe('statistics', () => {
  it('interpolates quantiles', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([1, 2, 3, 4])).toBe(2.5);
    expect(quantile([0, 10], 0.95)).toBeCloseTo(9.5);
    expect(p95(Array.from({ length: 101 }, (_, i) => i))).toBeCloseTo(95);
    expect(median([])).toBeNaN();
  });

  it('pairs ratios sample by sample', () => {
    expect(pairedRatio([110, 220, 990], [100, 200, 300])).toBeCloseTo(1.1);
  });

  it('writes a markdown table', () => {
    expect(markdownTable(['a', 'b'], [['x', '1']])).toBe('| a | b |\n| --- | ---: |\n| x | 1 |');
  });
});

describe('SSIM', () => {
  const width = 64;
  const height = 48;

  it('is 1 for identical planes', () => {
    const plane = texture(width, height);
    expect(ssimPlane(plane, plane, width, height)).toBeCloseTo(1, 10);
  });

  it('is lower for a noisier copy, and lower still for a different image', () => {
    const plane = texture(width, height, 1);
    const noisy = plane.map((value, i) => Math.min(255, Math.max(0, value + ((i * 7919) % 21) - 10)));
    const other = texture(width, height, 99).reverse();
    const slightly = ssimPlane(plane, noisy, width, height);
    const different = ssimPlane(plane, other, width, height);
    expect(slightly).toBeLessThan(0.99);
    expect(slightly).toBeGreaterThan(different);
    expect(different).toBeLessThan(0.5);
  });

  it('refuses planes of different sizes', () => {
    expect(() => ssimPlane(texture(width, height), texture(width, height - 1), width, height)).toThrow(RangeError);
  });

  it('puts neutral grey at the centre of both chroma planes', () => {
    const planes = ycbcrPlanes([128, 128, 128, 10, 10, 10], 2, 1, 3);
    expect([...planes.cb]).toEqual([128, 128].map((value) => expect.closeTo(value, 6)));
    expect([...planes.cr]).toEqual([128, 128].map((value) => expect.closeTo(value, 6)));
    expect(planes.y[0]).toBeCloseTo(128, 6);
  });

  it('ranks JPEG qualities of one image in order, with sharp decoding', async () => {
    const raw = { width: 96, height: 64, channels: 3 as const };
    const data = Buffer.alloc(raw.width * raw.height * 3);
    const plane = texture(raw.width, raw.height, 7);
    for (let i = 0; i < plane.length; i++) {
      data[i * 3] = plane[i]!;
      data[i * 3 + 1] = 255 - plane[i]!;
      data[i * 3 + 2] = (i * 13) % 256;
    }
    const reference = prepareReference(await decodePlanes({ data, ...raw }));
    const png = await sharp(data, { raw }).png().toBuffer();
    const high = await sharp(data, { raw }).jpeg({ quality: 90 }).toBuffer();
    const low = await sharp(data, { raw }).jpeg({ quality: 20 }).toBuffer();
    const lossless = await ssimImages(reference, png);
    const good = await ssimImages(reference, high);
    const poor = await ssimImages(reference, low);
    expect(lossless.y).toBeCloseTo(1, 10);
    expect(good.y).toBeLessThan(1);
    expect(poor.y).toBeLessThan(good.y);
    expect(poor.c).toBeLessThan(good.c);
  });
});

describe('bytes at equal SSIM', () => {
  const sweep = [
    { ssim: 0.9, bytes: 100 },
    { ssim: 0.95, bytes: 200 },
    { ssim: 0.97, bytes: 400 },
  ];

  it('interpolates along a quality sweep', () => {
    expect(bytesAtSsim(sweep, 0.925)).toBeCloseTo(150);
    expect(bytesAtSsim(sweep, 0.97)).toBeCloseTo(400);
  });

  it('does not extrapolate', () => {
    expect(bytesAtSsim(sweep, 0.99)).toBeNaN();
    expect(bytesAtSsim(sweep, 0.8)).toBeNaN();
  });
});

describe('the composed op (pad + watermark)', () => {
  const composed = OPS.find((op) => op.name === 'composed')!;

  /** The bottom-right corner of an 800x800 output, where the watermark goes. */
  const CORNER = { left: 560, top: 690, width: 240, height: 110 };

  /** Mean absolute difference per channel of the corners of two outputs, decoded to RGB. */
  async function meanDifference(a: Buffer, b: Buffer): Promise<number> {
    const [x, y] = await Promise.all([a, b].map((image) => sharp(image).extract(CORNER).removeAlpha().raw().toBuffer()));
    let total = 0;
    for (let i = 0; i < x!.length; i++) total += Math.abs(x![i]! - y![i]!);
    return total / x!.length;
  }

  it('is drawn by bare sharp as by the handler, and is not in the AWS sample', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bench-watermark-'));
    try {
      await writeFile(join(dir, 'logo.png'), await sampleWatermark());
      const watermark = await readBenchWatermark(join(dir, 'logo.png'));
      const source = await sharp(Uint8Array.from(texture(1500, 1000, 3)), { raw: { width: 1500, height: 1000, channels: 1 } })
        .toColourspace('srgb')
        .jpeg()
        .toBuffer();
      const ops = canonicalOpsOf(composed, 'photo.jpg', watermark);
      expect(ops.watermark).toBe(`logo.${watermark.definition.version}`);
      const handler = (
        await transform(
          source,
          ops,
          DEFAULT_LIMITS,
          budgetFor(DEFAULT_LIMITS.memorySizeMb, 60_000, source.length),
          transformOptions(ops, watermark),
        )
      ).body;
      const floor = await bare(composed, source, { format: 'jpeg', hasAlpha: false, pages: 1 }, watermark);
      const padOnly = await sharp(source).resize({ width: 800, height: 800, fit: 'contain', background: '#f4f1ea' }).jpeg().toBuffer();
      expect((await sharp(floor).metadata()).width).toBe(800);
      expect((await sharp(floor).metadata()).height).toBe(800);
      expect(await meanDifference(floor, handler)).toBeLessThan(1);
      // The watermark is there: both differ from the padded image alone.
      expect(await meanDifference(floor, padOnly)).toBeGreaterThan(20);
      expect(await naive(composed, source)).toBeNull();
    } finally {
      await rm(dir, { recursive: true });
    }
  });
});

describe('the per-image quality bound', () => {
  // Two images over three quality steps: the first gains many points per byte, the second few.
  const cheap: Curve = { score: [60, 70, 80], bytes: [100, 110, 120] };
  const dear: Curve = { score: [60, 70, 80], bytes: [100, 200, 400] };

  it('spends bytes where they buy the most score, keeping the mean and the floor', () => {
    // Today both sit at the middle step: mean 70, 310 bytes.
    const result = best([cheap, dear], 70, 60);
    expect(result.mean).toBeGreaterThanOrEqual(70);
    expect(result.bytes).toBe(120 + 100); // the cheap image up to 80, the dear one down to 60
    expect(best([cheap, dear], 70, 65).bytes).toBe(110 + 200); // a floor of 65 keeps the dear one at 70
  });

  it('counts every image held at the mean, the top of its range when it cannot reach it', () => {
    expect(equal([cheap, dear], 70)).toBe(110 + 200);
    expect(equal([cheap, dear], 90)).toBe(120 + 400);
  });
});
