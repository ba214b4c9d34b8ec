// A fresh Node process for the measurements a long-lived bench process cannot
// make: peak RSS of one operation on one photo, and sharp/libvips settings
// (which are per process). Cold init has its own child (cold-child.ts).
// Bundled by the bench with esbuild (sharp external) and run with plain node,
// so no TypeScript loader sits in the figures. Prints one JSON line.

import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { errorStack } from '../../lambda/common/log';
import { DEFAULT_LIMITS } from '../../lambda/origin/config';
import { budgetFor } from '../../lambda/origin/image/budget';
import { transform } from '../../lambda/origin/image/transform';
import { configureSharp } from '../../lambda/origin/sharp-settings';
import { bare, canonicalOpsOf, naive, OPS, readBenchWatermark, transformOptions, type OpName, type OpSpec, type SourceFacts } from './ops';
import { maxRssBytes } from './rss';

function opNamed(name: string): OpSpec {
  const op = OPS.find((candidate) => candidate.name === name);
  if (!op) throw new Error(`no op ${name}`);
  return op;
}

async function facts(bytes: Buffer): Promise<SourceFacts> {
  const meta = await sharp(bytes).metadata();
  return { format: meta.format, hasAlpha: meta.hasAlpha, pages: meta.pages ?? 1 };
}

/** `watermarkFile`: the bench's watermark, for an op that draws it. */
async function once(mode: string, name: OpName, file: string, watermarkFile?: string) {
  // The handler's sharp settings (cache off, threads per vCPU); the sample's are sharp's defaults.
  if (mode !== 'naive') configureSharp();
  const op = opNamed(name);
  const bytes = readFileSync(file);
  const sourceFacts = await facts(bytes);
  const watermark = watermarkFile === undefined ? undefined : await readBenchWatermark(watermarkFile);
  const rssBefore = process.memoryUsage().rss;
  const start = performance.now();
  let out: Buffer | null;
  if (mode === 'bare') out = await bare(op, bytes, sourceFacts, watermark);
  else if (mode === 'naive') out = (await naive(op, bytes))?.body ?? null;
  else {
    const ops = canonicalOpsOf(op, 'k', watermark);
    out = (
      await transform(
        bytes,
        ops,
        DEFAULT_LIMITS,
        budgetFor(DEFAULT_LIMITS.memorySizeMb, 60_000, bytes.length),
        transformOptions(ops, watermark),
      )
    ).body;
  }
  return { ms: performance.now() - start, bytes: out?.length ?? null, rssBefore, maxRss: maxRssBytes() };
}

interface SettingsJob {
  concurrency: number;
  cache: boolean;
  ops: OpName[];
  files: string[];
}

/** transform() over the files for each op, one at a time and then two at a time, with these sharp settings. */
async function settings(job: SettingsJob) {
  sharp.concurrency(job.concurrency);
  if (!job.cache) sharp.cache(false);
  const sources = job.files.map((file) => readFileSync(file));
  const run = (name: OpName, bytes: Buffer) =>
    transform(bytes, canonicalOpsOf(opNamed(name), 'k'), DEFAULT_LIMITS, budgetFor(DEFAULT_LIMITS.memorySizeMb, 120_000, bytes.length));
  await run(job.ops[0]!, sources[0]!); // warm-up
  const results: Record<string, { c1Ms: number[]; c1CpuMs: number[]; c2WallMs: number }> = {};
  for (const name of job.ops) {
    const c1Ms: number[] = [];
    const c1CpuMs: number[] = [];
    for (const bytes of sources) {
      const cpu = process.cpuUsage();
      const start = performance.now();
      await run(name, bytes);
      c1Ms.push(performance.now() - start);
      const used = process.cpuUsage(cpu);
      c1CpuMs.push((used.user + used.system) / 1000);
    }
    let next = 0;
    const start = performance.now();
    const worker = async () => {
      while (next < sources.length) await run(name, sources[next++]!);
    };
    await Promise.all([worker(), worker()]);
    results[name] = { c1Ms, c1CpuMs, c2WallMs: performance.now() - start };
  }
  return { concurrency: sharp.concurrency(), results, maxRss: maxRssBytes() };
}

async function main() {
  const [mode, ...args] = process.argv.slice(2);
  let result: unknown;
  if (mode === 'bare' || mode === 'transform' || mode === 'naive') result = await once(mode, args[0] as OpName, args[1]!, args[2]);
  else if (mode === 'settings') result = await settings(JSON.parse(args[0]!) as SettingsJob);
  else throw new Error(`unknown mode ${mode}`);
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().catch((error) => {
  process.stderr.write(errorStack(error) + '\n');
  process.exit(1);
});
