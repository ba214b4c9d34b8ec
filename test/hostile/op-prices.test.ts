// Every step of the pipeline has a price (lambda/origin/image/steps.ts), and
// the price holds at the step's limit, through the real handler and its
// transform child on LocalStack S3. For each op and each encoder: the largest
// square output the model accepts for this origin's budget is asked for, with
// the op at its largest value; it is served, its transform's CPU seconds and
// peak memory stay within the prediction, what the op adds costs no more than
// its price says, and a tenth larger is refused with a 413 before decoding.
// The time budget is shorter than the default so that the cases stay a few
// CPU-seconds each; the model scales with it. CPU time, not wall time, is
// compared: the machine running the tests may be busy.

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalRequest, canonicalUri, DEFAULT_GRAMMAR_OPTIONS, splitQuery, type GrammarOptions, type Ops } from '../../lambda/grammar';
import { budgetFor, chooseFormat, describeWork } from '../../lambda/origin/image/budget';
import { framesToLoad, type SourceInfo } from '../../lambda/origin/image/input';
import { planOutput } from '../../lambda/origin/image/output';
import { stepPrices } from '../../lambda/origin/image/steps';
import { checkedPlacement, watermarkVersion, type WatermarkDefinition } from '../../lambda/origin/watermarks';
import { noiseImage } from '../support/images';
import { createTestOrigin, type TestOrigin } from '../support/origin';
import { throughHandler, variantLog } from './support';

/**
 * A function of 768 MB gets 0.43 of a vCPU, so the model allows about 3.1
 * CPU-seconds in this 12 s budget: the wall clock has room for a machine
 * busy with other work, and each case stays a few CPU-seconds.
 */
const MEMORY_SIZE_MB = 768;
const TIME_BUDGET_MS = 12_000;

/**
 * How far the measured CPU may exceed the prediction, for the whole transform
 * and for what the op adds: a busy machine's shared caches slow the same work
 * down, and the prices are worst cases. A price a tenth of the truth is far outside.
 */
const CPU_MARGIN = 1.5;
const OP_CPU_MARGIN = 2;

/** How far the measured peak may exceed the prediction: the allocator's own, and a share for what the model rounds. */
const MEMORY_MARGIN = { mb: 16, share: 0.15 };

type SourceKind = 'noise' | 'cmyk' | 'alpha' | 'tiny' | 'turned' | 'frames';

interface OpCase {
  /** The step (steps.ts) or the encoder driven to its limit. */
  name: string;
  /** The viewer query at the output side SIDE. */
  query: string;
  source: SourceKind;
  /** The same request without the op, to measure what the op adds; absent when the op is most of the work. */
  base?: { query: string; source?: SourceKind };
  /** Why the op's own price is nil. */
  free?: string;
}

/** A 64x64 source enlarged: the output's pixels are all the op's, the decode costs nothing. */
const enlarged = (ops: string) => `width=SIDE&height=SIDE&enlarge=true&${ops}`;
const FRAMES = 8;

const CASES: OpCase[] = [
  { name: 'orient', query: 'format=jpeg', source: 'turned', base: { query: 'format=jpeg', source: 'noise' } },
  { name: 'rotate', query: 'rotate=90&format=jpeg', source: 'noise', base: { query: 'format=jpeg' } },
  { name: 'mirror', query: 'flip=true&flop=true&format=jpeg', source: 'noise', base: { query: 'format=jpeg' } },
  { name: 'trim', query: 'trim=0&format=jpeg', source: 'noise', base: { query: 'format=jpeg' } },
  { name: 'crop', query: 'crop=0,0,0.5,1&format=jpeg', source: 'noise', free: 'its region is cut by resize; the decode it keeps at full size is the decode’s' },
  { name: 'flatten', query: 'background=ffffff&format=png', source: 'alpha', base: { query: 'format=png' } },
  { name: 'resize', query: enlarged('format=jpeg'), source: 'tiny' },
  { name: 'fill', query: 'width=SIDE&height=SIDE&fit=contain&fill=blur&format=jpeg', source: 'tiny', base: { query: 'width=SIDE&height=SIDE&fit=contain&format=jpeg' } },
  { name: 'blur', query: enlarged('blur=100&format=jpeg'), source: 'tiny', base: { query: enlarged('format=jpeg') } },
  { name: 'sharpen', query: enlarged('sharpen=10&format=jpeg'), source: 'tiny', base: { query: enlarged('format=jpeg') } },
  { name: 'blur and sharpen', query: enlarged('blur=100&sharpen=10&format=jpeg'), source: 'tiny', base: { query: enlarged('format=jpeg') } },
  { name: 'colour', query: 'grayscale=true&format=jpeg', source: 'cmyk', base: { query: 'format=jpeg', source: 'noise' } },
  { name: 'watermark', query: enlarged('watermark=mark&format=jpeg'), source: 'tiny', base: { query: enlarged('format=jpeg') } },
  { name: 'border', query: 'border=64,ff0000&format=jpeg', source: 'noise', base: { query: 'format=jpeg' } },
  { name: 'output', query: 'format=jpeg', source: 'noise' },
  { name: 'png encode', query: 'format=png', source: 'noise' },
  { name: 'webp encode', query: 'format=webp', source: 'noise' },
  { name: 'avif encode', query: 'format=avif', source: 'noise' },
  { name: 'quality=auto', query: 'quality=auto&format=avif', source: 'noise', base: { query: 'format=avif' } },
  { name: 'animation frames', query: 'format=webp', source: 'frames' },
];

/** The source at a side, and what its header says (as input.ts reads it), for the search of the largest side. */
async function makeSource(kind: SourceKind, side: number): Promise<Buffer> {
  switch (kind) {
    case 'noise':
      return noiseImage(side, side, 'jpeg');
    case 'turned':
      return sharp(await noiseImage(side, side, 'jpeg')).withMetadata({ orientation: 6 }).jpeg({ quality: 90 }).toBuffer();
    case 'cmyk':
      return sharp(await noiseImage(side, side, 'jpeg')).toColourspace('cmyk').jpeg({ quality: 90 }).toBuffer();
    case 'alpha':
      return sharp(await noiseImage(side, side, 'png')).ensureAlpha(0.5).png({ compressionLevel: 1 }).toBuffer();
    case 'tiny':
      return noiseImage(64, 64, 'jpeg');
    case 'frames': {
      const frames = await sharp(await noiseImage(side, side * FRAMES, 'png')).raw().toBuffer();
      // Few colours keep the palette search quick; the frames stay noise to the encoder.
      return sharp(frames, { raw: { width: side, height: side * FRAMES, channels: 3, pageHeight: side } }).gif({ effort: 1, colours: 4, dither: 0 }).toBuffer();
    }
  }
}

function headerOf(kind: SourceKind, side: number): SourceInfo {
  const [width, height] = kind === 'tiny' ? [64, 64] : [side, side];
  const channels = kind === 'cmyk' || kind === 'alpha' ? 4 : 3;
  return {
    format: kind === 'alpha' ? 'png' : kind === 'frames' ? 'gif' : 'jpeg',
    width,
    height,
    frames: kind === 'frames' ? FRAMES : 1,
    hasAlpha: kind === 'alpha',
    bytes: width * height * channels,
    channels,
    depth: 'uchar',
    orientation: kind === 'turned' ? 6 : 1,
    progressive: false,
  };
}

/** The grammar of this origin: its one watermark's version is known once the file is written. */
const GRAMMAR: GrammarOptions = { ...DEFAULT_GRAMMAR_OPTIONS, watermarks: { mark: 'unwritten' } };

const opsOf = (query: string, side: number) => canonicalRequest('k', splitQuery(query.replaceAll('SIDE', String(side))), GRAMMAR, {}).ops as Ops;

const MAX_DIMENSION = DEFAULT_GRAMMAR_OPTIONS.maxDimension;

/** Whether the model accepts `query` on the source of `kind` at `side`, with this origin's budget. */
function accepted(origin: TestOrigin, kind: SourceKind, query: string, side: number): boolean {
  const info = headerOf(kind, side);
  const ops = opsOf(query, side);
  const plan = planOutput(ops, info);
  const frames = plan.animated ? framesToLoad(info, origin.config) : 1;
  const budget = budgetFor(origin.config.memorySizeMb, origin.config.timeBudgetMs, info.bytes);
  try {
    chooseFormat(describeWork(info, ops, frames, MAX_DIMENSION), info, plan.candidates, budget);
    return true;
  } catch {
    return false;
  }
}

/** The largest side (to 8 pixels) the model accepts, by bisection: prices grow with the side. */
function largestSide(origin: TestOrigin, kind: SourceKind, query: string): number {
  let [low, high] = [8, MAX_DIMENSION];
  if (accepted(origin, kind, query, high)) return high;
  while (high - low > 8) {
    const middle = Math.round((low + high) / 2);
    if (accepted(origin, kind, query, middle)) low = middle;
    else high = middle;
  }
  return low;
}

let origin: TestOrigin;

beforeAll(async () => {
  const folder = await mkdtemp(join(tmpdir(), 'op-prices-'));
  const bytes = await noiseImage(1024, 1024, 'png');
  const placement = checkedPlacement('mark', { position: 'center', margin: 0, size: 1 });
  const file = join(folder, 'mark.png');
  await writeFile(file, bytes);
  const mark: WatermarkDefinition = { ...placement, file, version: watermarkVersion(bytes, placement) };
  GRAMMAR.watermarks = { mark: mark.version };
  // Large variants are answered inline, so that every case's answer is the variant.
  origin = await createTestOrigin('op prices', {
    memorySizeMb: MEMORY_SIZE_MB,
    timeBudgetMs: TIME_BUDGET_MS,
    maxInlineBytes: 1024 * 1024 * 1024,
    watermarkDefinitions: { mark },
  });
});

/** Asks for `query` on a source of `kind` at `side` through the handler; what the variant's log line says. */
async function served(kind: SourceKind, query: string, side: number, label: string) {
  const key = `ops/${label.replace(/\W+/g, '-')}-${kind}-${side}`;
  await origin.putSource(key, await makeSource(kind, side));
  const uri = canonicalUri(key, opsOf(query, side));
  await throughHandler(origin, uri, { status: 200 });
  const logged = variantLog(origin, uri) as unknown as Record<string, number>;
  return { uri, key, logged, cpu: logged.transformCpuSeconds!, predicted: logged.predictedSeconds! };
}

describe('every step has a price', () => {
  it('names a case here for each step of the pipeline, and its op makes the step’s price positive', () => {
    const work = { ...describeWork(headerOf('noise', 1000), {}, 1, MAX_DIMENSION), format: 'jpeg' as const };
    const steps = stepPrices(work).map(({ name }) => name);
    expect(CASES.map(({ name }) => name)).toEqual(expect.arrayContaining(steps));
    for (const step of steps) {
      const { query, source, free } = CASES.find(({ name }) => name === step)!;
      const info = headerOf(source, 1000);
      const ops = opsOf(query, 1000);
      const priced = stepPrices({ ...describeWork(info, ops, 1, MAX_DIMENSION), format: planOutput(ops, info).format });
      const { price } = priced.find(({ name }) => name === step)!;
      if (free) expect(price, `${step}: ${free}`).toEqual({ seconds: 0, bytes: 0 });
      else expect(price.seconds + price.bytes, `${step}'s price when ${query}`).toBeGreaterThan(0);
    }
  });
});

describe('each op and encoder at its limit: served within the budget, measured within the price, a tenth more refused', () => {
  it.for(CASES)('$name ($query)', { timeout: 180_000 }, async ({ name, query, source, base }) => {
    const side = largestSide(origin, source, query);
    const made = await served(source, query, side, name);
    expect(made.cpu, `${name} at ${side}px: transform CPU-s against the prediction`).toBeLessThanOrEqual(made.predicted * CPU_MARGIN);
    const { logged } = made;
    expect(logged.TransformRss! - logged.transformStartMb!, `${name} at ${side}px: measured MB against the prediction`).toBeLessThanOrEqual(
      logged.predictedMb! * (1 + MEMORY_MARGIN.share) + MEMORY_MARGIN.mb,
    );
    if (base) {
      const without = await served(base.source ?? source, base.query, side, `${name} base`);
      const added = made.cpu - without.cpu;
      const priced = made.predicted - without.predicted;
      expect(added, `${name} at ${side}px: CPU-s the op added, against its price (${priced.toFixed(2)})`).toBeLessThanOrEqual(
        Math.max(priced, 0.05) * OP_CPU_MARGIN,
      );
    }
    if (side === MAX_DIMENSION) return;
    const larger = Math.round(side * 1.1);
    const key = `ops/${name.replace(/\W+/g, '-')}-larger`;
    await origin.putSource(key, await makeSource(source, larger));
    const refused = await throughHandler(origin, canonicalUri(key, opsOf(query, larger)), { status: 413, code: 'too_costly' });
    expect(refused.json().message).toMatch(/would (need about \d+ MB|take about \d+ s), over the .* allowed; ask for a smaller size/);
  });
});
