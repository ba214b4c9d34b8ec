// Every step of the pipeline has a price (lambda/origin/image/steps/), and
// the price holds at the step's limit, through the real handler and its
// transform child on LocalStack S3. For each op and each encoder
// (test/support/op-limits.ts): the largest square output the model accepts
// for this origin's budget is asked for, with the op at its largest value; it
// is served, its transform's CPU seconds and peak memory stay within the
// prediction, what the op adds costs no more than its price says, and a tenth
// larger is refused with a 413 before decoding. CPU time, not wall time, is
// compared: the machine running the tests may be busy.

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalUri, DEFAULT_GRAMMAR_OPTIONS, type GrammarOptions } from '../../lambda/grammar';
import { describeWork } from '../../lambda/origin/image/budget';
import { planOutput } from '../../lambda/origin/image/output';
import { stepPrices } from '../../lambda/origin/image/steps';
import { checkedPlacement, watermarkVersion, type WatermarkDefinition } from '../../lambda/origin/watermarks';
import { noiseImage } from '../support/images';
import {
  headerOf,
  largestSide,
  makeSource,
  OP_CASES,
  opGrammar,
  opsOf,
  type OpCase,
  type RequestBytes,
  type SourceKind,
} from '../support/op-limits';
import { createTestOrigin, type TestOrigin } from '../support/origin';
import { throughHandler, variantLog } from './support';

/**
 * A function of 512 MB gets 0.29 of a vCPU, so the model allows about 2.6
 * CPU-seconds in this 15 s budget: the wall clock has almost six times the
 * CPU time, room for a machine busy with other work, and each case stays a
 * few CPU-seconds.
 */
const MEMORY_SIZE_MB = 512;
const TIME_BUDGET_MS = 15_000;

/**
 * How far the measured CPU may exceed the prediction, for the whole transform
 * and for what the op adds: a busy machine's shared caches slow the same work
 * down, and the prices are worst cases. A price a tenth of the truth is far outside.
 */
const CPU_MARGIN = 1.5;
const OP_CPU_MARGIN = 2;
/**
 * What the op adds is the difference of two transforms measured one after the
 * other, which differ by a few percent of their CPU on a busy machine whatever
 * the op: an op priced near nothing (metadata) on a large image is allowed that.
 */
const MEASUREMENT_NOISE = 0.05;

/** How far the measured peak may exceed the prediction: the allocator's own, and a share for what the model rounds. */
const MEMORY_MARGIN = { mb: 16, share: 0.15 };

const SIDE = 1000;
const MAX_DIMENSION = DEFAULT_GRAMMAR_OPTIONS.maxDimension;

let origin: TestOrigin;
let grammar: GrammarOptions;
let markBytes: number;

/** The bytes the handler will hold at each side, from a small source's bytes per pixel: the memory budget counts them twice (once per process). */
async function requestBytes({ source, query }: OpCase): Promise<RequestBytes> {
  const probe = (await makeSource(source, 256)).length;
  // Each overlay slot's watermark crosses with the source.
  const extra = (query.match(/watermark\d?=/g) ?? []).length * markBytes;
  // A tenth over the probe's rate: a source's real bytes at the side found must not exceed the estimate, or the limit moves under it.
  return source === 'tiny' ? () => probe + extra : (side) => Math.ceil((1.1 * probe * side * side) / 256 ** 2) + extra;
}

beforeAll(async () => {
  const folder = await mkdtemp(join(tmpdir(), 'op-prices-'));
  const bytes = await noiseImage(1024, 1024, 'png');
  markBytes = bytes.length;
  const placement = checkedPlacement('mark', { position: 'center', margin: 0, size: 1 });
  const file = join(folder, 'mark.png');
  await writeFile(file, bytes);
  const mark: WatermarkDefinition = { ...placement, file, version: watermarkVersion(bytes, placement) };
  grammar = opGrammar(mark.version);
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
  const uri = canonicalUri(key, opsOf(query, side, grammar));
  const { body } = await throughHandler(origin, uri, { status: 200 });
  const logged = variantLog(origin, uri) as unknown as Record<string, number>;
  return { logged, body, cpu: logged.transformCpuSeconds!, predicted: logged.predictedSeconds! };
}

/** Whether a variant carries what the op makes that a variant can be served without (a gain map). */
async function madeWith(body: Buffer, name: string): Promise<boolean> {
  if (name !== 'gain map') throw new Error(`no way to tell whether a variant was made with ${name}`);
  return (await sharp(body).metadata()).gainMap !== undefined;
}

describe('every step has a price', () => {
  it('names a case for each step of the pipeline, and its op makes the step’s price positive', () => {
    const work = { ...describeWork(headerOf('noise', SIDE), {}, 1, MAX_DIMENSION), format: 'jpeg' as const };
    const steps = stepPrices(work).map(({ name }) => name);
    expect(OP_CASES.map(({ name }) => name)).toEqual(expect.arrayContaining(steps));
    for (const step of steps) {
      const { query, source, free } = OP_CASES.find(({ name }) => name === step)!;
      const info = headerOf(source, SIDE);
      const ops = opsOf(query, SIDE, opGrammar('any'));
      const priced = stepPrices({ ...describeWork(info, ops, 1, MAX_DIMENSION), format: planOutput(ops, info).format });
      const { price } = priced.find(({ name }) => name === step)!;
      if (free) expect(price, `${step}: ${free}`).toEqual({ seconds: 0, bytes: 0 });
      else expect(price.seconds + price.bytes, `${step}'s price when ${query}`).toBeGreaterThan(0);
    }
  });
});

describe('each op and encoder at its limit: served within the budget, measured within the price, a tenth more refused', () => {
  it.for(OP_CASES.filter(({ notDriven }) => !notDriven))('$name ($query)', { timeout: 180_000 }, async (opCase) => {
    const { name, query, source, base } = opCase;
    const side = largestSide(opCase, origin.config, await requestBytes(opCase));
    const made = await served(source, query, side, name);
    if (opCase.servedWithout) expect(await madeWith(made.body, name), `${name} at ${side}px: made with it`).toBe(true);
    expect(made.cpu, `${name} at ${side}px: transform CPU-s against the prediction`).toBeLessThanOrEqual(made.predicted * CPU_MARGIN);
    const { logged } = made;
    expect(logged.TransformRss! - logged.transformStartMb!, `${name} at ${side}px: measured MB against the prediction`).toBeLessThanOrEqual(
      logged.predictedMb! * (1 + MEMORY_MARGIN.share) + MEMORY_MARGIN.mb,
    );
    if (base) {
      const without = await served(base.source ?? source, base.query, side, `${name} base`);
      const priced = made.predicted - without.predicted;
      expect(
        made.cpu - without.cpu,
        `${name} at ${side}px: CPU-s the op added, against its price (${priced.toFixed(2)})`,
      ).toBeLessThanOrEqual(Math.max(priced, 0.05) * OP_CPU_MARGIN + MEASUREMENT_NOISE * without.cpu);
    }
    if (side === MAX_DIMENSION) return;
    const larger = Math.round(side * 1.1);
    const key = `ops/${name.replace(/\W+/g, '-')}-larger`;
    await origin.putSource(key, await makeSource(source, larger));
    if (opCase.servedWithout) {
      const without = await throughHandler(origin, canonicalUri(key, opsOf(query, larger, grammar)), { status: 200 });
      expect(await madeWith(without.body, name), `${name} at ${larger}px: ${opCase.servedWithout}`).toBe(false);
      return;
    }
    const refused = await throughHandler(origin, canonicalUri(key, opsOf(query, larger, grammar)), { status: 413, code: 'too_costly' });
    expect(refused.json().message).toMatch(/would (need about \d+ MB|take about \d+ s), over the .* allowed; ask for a smaller size/);
  });
});
