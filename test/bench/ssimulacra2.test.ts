// scripts/bench/ssimulacra2.ts against an independent implementation:
// PyPI's `ssimulacra2` 0.3.0 (numpy, scipy), installed once into
// .localstack/ssimulacra2-venv (git-ignored) from the pinned
// ssimulacra2-requirements.txt beside this file. Both score the same PNGs:
// a drawn scene and copies of it through the encoders at several qualities,
// blurred, and at sizes with six scales, fewer, and odd sides.

import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rgbOf, ssimulacra2, type RgbImage } from '../../scripts/bench/ssimulacra2';
import { ensureVenv } from '../../local/harness/python-venv';

const REQUIREMENTS = fileURLToPath(new URL('./ssimulacra2-requirements.txt', import.meta.url));

/** A photo-like scene: gradients, hard edges, fine stripes and grain. */
async function scene(width: number, height: number): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <defs><linearGradient id="sky" x2="0" y2="1"><stop offset="0" stop-color="#3a6fb0"/><stop offset="1" stop-color="#f2c59a"/></linearGradient>
    <pattern id="stripes" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="3" height="6" fill="#2b4a1e"/><rect x="3" width="3" height="6" fill="#6d8f3a"/></pattern></defs>
    <rect width="100%" height="100%" fill="url(#sky)"/>
    <rect y="${height * 0.6}" width="100%" height="${height * 0.4}" fill="url(#stripes)"/>
    <circle cx="${width * 0.7}" cy="${height * 0.3}" r="${height * 0.15}" fill="#fff4d0"/>
    <text x="${width * 0.05}" y="${height * 0.5}" font-size="${height * 0.12}" fill="#1a1a1a">Photo 42</text></svg>`;
  const grain = await sharp({
    create: { width, height, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 12 } },
  })
    .raw()
    .toBuffer();
  const drawn = await sharp(Buffer.from(svg)).removeAlpha().raw().toBuffer();
  const mixed = Buffer.from(drawn.map((value, i) => Math.max(0, Math.min(255, value + (grain[i]! - 128) / 2))));
  return sharp(mixed, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
}

const DISTORTIONS: { name: string; make: (original: Buffer) => Promise<Buffer> }[] = [
  { name: 'JPEG q20', make: (original) => sharp(original).jpeg({ quality: 20 }).toBuffer() },
  { name: 'JPEG q80', make: (original) => sharp(original).jpeg({ quality: 80 }).toBuffer() },
  { name: 'WebP q50', make: (original) => sharp(original).webp({ quality: 50 }).toBuffer() },
  { name: 'AVIF q40', make: (original) => sharp(original).avif({ quality: 40, effort: 2 }).toBuffer() },
  { name: 'blurred', make: (original) => sharp(original).blur(1.5).toBuffer() },
];
const SIZES = [
  { width: 320, height: 272 }, // six scales
  { width: 97, height: 61 }, // four scales, odd sides
];

describe('SSIMULACRA 2', () => {
  let dir: string;
  let python: string;
  const cases: { name: string; original: string; distorted: string }[] = [];

  beforeAll(async () => {
    python = await ensureVenv({
      name: 'ssimulacra2-venv',
      requirements: REQUIREMENTS,
      purpose: 'the SSIMULACRA 2 reference',
      log: (line) => process.stderr.write(`[ssimulacra2] ${line}\n`),
    });
    dir = await mkdtemp(join(tmpdir(), 'ssimulacra2-'));
    for (const { width, height } of SIZES) {
      const original = await scene(width, height);
      const originalFile = join(dir, `${width}x${height}.png`);
      await writeFile(originalFile, original);
      cases.push({ name: `${width}x${height} identical`, original: originalFile, distorted: originalFile });
      for (const distortion of DISTORTIONS) {
        const file = join(dir, `${width}x${height} ${distortion.name}.png`);
        await writeFile(
          file,
          await sharp(await distortion.make(original))
            .png()
            .toBuffer(),
        );
        cases.push({ name: `${width}x${height} ${distortion.name}`, original: originalFile, distorted: file });
      }
    }
  }, 300_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('scores as the reference implementation does, within 0.05 of 100 points', async () => {
    const script =
      'import json, sys\nfrom ssimulacra2 import compute_ssimulacra2\n' +
      'print(json.dumps([compute_ssimulacra2(a, b) for a, b in json.loads(sys.argv[1])]))';
    const { stdout } = await promisify(execFile)(python, ['-c', script, JSON.stringify(cases.map((c) => [c.original, c.distorted]))]);
    const expected = JSON.parse(stdout) as number[];
    const actual = await Promise.all(
      cases.map(async (c) => ssimulacra2(await rgbOf(await readFile(c.original)), await rgbOf(await readFile(c.distorted)))),
    );
    const table = cases.map((c, i) => `${c.name}: ${actual[i]!.toFixed(3)} (reference ${expected[i]!.toFixed(3)})`).join('\n');
    for (const [i] of cases.entries()) expect(Math.abs(actual[i]! - expected[i]!), table).toBeLessThan(0.05);
    // What the score is for: heavier compression scores lower, an identical copy 100.
    const score = (name: string) => actual[cases.findIndex((c) => c.name === name)]!;
    expect(score('320x272 identical')).toBe(100);
    expect(score('320x272 JPEG q20')).toBeLessThan(score('320x272 JPEG q80') - 10);
  }, 120_000);

  it('refuses images of different sizes or under 8 pixels a side', () => {
    const image = (width: number, height: number): RgbImage => ({ data: new Uint8Array(width * height * 3), width, height });
    expect(() => ssimulacra2(image(16, 16), image(16, 17))).toThrow(/sizes differ/);
    expect(() => ssimulacra2(image(7, 16), image(7, 16))).toThrow(/at least 8 pixels/);
  });
});
