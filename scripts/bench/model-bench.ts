// What the model benches share (faces.ts, subject-cost.ts): CPU time of this
// process, sizes on disk, a model's cold load in a fresh process, and warm
// misses through a real transform child, with and without what an earlier
// search remembered.

import { fork } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Ops } from '../../lambda/grammar';
import { DEFAULT_LIMITS, originConfig } from '../../lambda/origin/config';
import { budgetFor } from '../../lambda/origin/image/budget';
import { transform } from '../../lambda/origin/image/transform';
import { transformProcesses } from '../../lambda/origin/transform-process';
import { maxRssBytes } from './rss';
import { median, p95 } from './stats';

export const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

export const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

export function folderBytes(path: string): number {
  return statSync(path).isDirectory()
    ? readdirSync(path).reduce((sum, name) => sum + folderBytes(join(path, name)), 0)
    : statSync(path).size;
}

export interface ColdLoad {
  wallMs: number;
  cpuMs: number;
  addedRssBytes: number;
  afterFirstRssBytes: number;
}

/** `file` run again as a fresh process with `--cold`: it loads its model and sends what that took. */
export function coldLoad(file: string): Promise<ColdLoad> {
  return new Promise((resolve, reject) => {
    const child = fork(file, ['--cold'], { execArgv: ['--import', 'tsx'] });
    child.once('message', (message) => resolve(message as ColdLoad));
    child.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`cold child exited with ${code}`))));
  });
}

// The function's memory as Lambda names it, the default without it: AWS_LAMBDA_FUNCTION_MEMORY_SIZE=3538
// measures a larger function (the transform child inherits it, and sets its threads by it).
export const LIMITS = originConfig(
  { sourceBucket: 'bench', cacheBucket: 'bench' },
  { memorySizeMb: Number(process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE) || DEFAULT_LIMITS.memorySizeMb },
);
export const budget = (bytes: Buffer) => budgetFor(LIMITS.memorySizeMb, LIMITS.timeBudgetMs, bytes.length);

export interface MissJob {
  name: string;
  ops: Ops;
  /** Given what format=json's search found, as a later size of a source searched before is. */
  remembered?: boolean;
}

/** Wall ms and the child's CPU ms, p50 and p95, of `runs` transforms of each job through a warm transform child. */
export async function missTimes(bytes: Buffer, jobs: MissJob[], runs: number) {
  const transforms = transformProcesses();
  await transforms.ready();
  const walls: Record<string, number[]> = {};
  const cpu: Record<string, number[]> = {};
  const found = (await transform(bytes, { format: 'json' }, LIMITS, budget(bytes))).searched;
  try {
    for (let run = -1; run < runs; run++) {
      for (const { name, ops, remembered } of jobs) {
        const start = performance.now();
        const { report } = await transforms.run(
          { bytes, ops, limits: LIMITS, budget: budget(bytes), options: remembered ? { remembered: found } : {} },
          performance.now() + 60_000,
        );
        if (run < 0) continue; // the first round loads the models: the cold start is measured apart
        (walls[name] ??= []).push(performance.now() - start);
        (cpu[name] ??= []).push(report.cpuSeconds * 1000);
      }
    }
  } finally {
    transforms.close();
  }
  return jobs.map(({ name }) => ({
    name,
    p50: median(walls[name]!),
    p95: p95(walls[name]!),
    cpuP50: median(cpu[name]!),
    cpuP95: p95(cpu[name]!),
  }));
}

/** Prints missTimes' rows, each beside the first (the baseline): what it adds, and its GB-seconds at the function's memory. */
export function printMisses(title: string, results: Awaited<ReturnType<typeof missTimes>>): void {
  const [baseline] = results;
  const gb = LIMITS.memorySizeMb / 1024;
  console.log(`${title} (GB-s at ${LIMITS.memorySizeMb} MB over the transform's p50):`);
  const row = (p50: number, tail: number) => `p50 ${p50.toFixed(0).padStart(4)} ms, p95 ${tail.toFixed(0).padStart(4)} ms`;
  for (const { name, p50, p95: tail, cpuP50, cpuP95 } of results) {
    const added =
      name === baseline!.name
        ? ''
        : `  added: wall ${row(p50 - baseline!.p50, tail - baseline!.p95)}; CPU ${row(cpuP50 - baseline!.cpuP50, cpuP95 - baseline!.cpuP95)}`;
    console.log(
      `  ${name.padEnd(20)} wall ${row(p50, tail)}  child CPU ${row(cpuP50, cpuP95)}  ${((gb * p50) / 1000).toFixed(3)} GB-s${added}`,
    );
  }
}

/** CPU ms per run of `work` over `runs` (after one to warm up), the median wall ms, and the most memory one run took above where it started. */
export async function warmRuns(
  work: () => Promise<unknown>,
  runs = 10,
): Promise<{ cpuMs: number; wallMedianMs: number; peakBytes: number }> {
  await work();
  const walls: number[] = [];
  let peak = 0;
  const cpu = process.cpuUsage();
  for (let i = 0; i < runs; i++) {
    writeFileSync('/proc/self/clear_refs', '5');
    const startRss = process.memoryUsage.rss();
    const start = performance.now();
    await work();
    walls.push(performance.now() - start);
    peak = Math.max(peak, maxRssBytes() - startRss);
  }
  return { cpuMs: cpuMs(cpu) / runs, wallMedianMs: median(walls), peakBytes: peak };
}
