// `npm run bench -- --settings`: sharp/libvips settings for the Lambda, each
// in a fresh process (MALLOC_ARENA_MAX is read by glibc at process start, and
// sharp.concurrency/cache are per process). Each process runs the handler's
// transform() over the corpus for a few operations, one request at a time and
// then two at a time, and reports its peak RSS. The configurations run in two
// rounds, the second in reverse order, so drift on a shared machine evens out.

import { spawnSync } from 'node:child_process';
import type { Corpus } from './corpus';
import type { OpName } from './ops';
import { kb, markdownTable, median, ms, sum } from './stats';

interface Config {
  label: string;
  mallocArenaMax?: string;
  concurrency: number;
  cache: boolean;
}

const CONFIGS: Config[] = [
  { label: 'default: concurrency 1, cache on', concurrency: 1, cache: true },
  { label: 'concurrency 1, cache off', concurrency: 1, cache: false },
  { label: 'concurrency 2, cache off', concurrency: 2, cache: false },
  { label: 'concurrency 2, cache off, MALLOC_ARENA_MAX=2', concurrency: 2, cache: false, mallocArenaMax: '2' },
  { label: 'concurrency 1, cache off, MALLOC_ARENA_MAX=2', concurrency: 1, cache: false, mallocArenaMax: '2' },
];

const OPS: OpName[] = ['op1', 'op2', 'jpeg', 'avif'];

interface ChildResult {
  concurrency: number;
  results: Record<string, { c1Ms: number[]; c1CpuMs: number[]; c2WallMs: number }>;
  maxRss: number;
}

export async function settingsStudy(
  corpus: Corpus,
  options: {
    quick: boolean;
    childScript: string;
    log: (line: string) => void;
    progress: (line: string) => void;
    progressDone: () => void;
    header: string;
  },
): Promise<string> {
  // All large photos and a spread of the others, to keep five configurations x two rounds near ten minutes.
  const bySize = [...corpus.photos].sort((a, b) => b.megapixels - a.megapixels);
  const chosen = bySize.filter((photo, i) => photo.megapixels >= 8 || i % 3 === 0);
  const files = chosen.map((photo) => photo.path);
  const large = new Set(corpus.photos.filter((photo) => photo.megapixels >= 8).map((photo) => photo.path));
  const runs = new Map<string, ChildResult[]>();
  const rounds = options.quick ? 1 : 2;
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? CONFIGS : [...CONFIGS].reverse();
    for (const config of order) {
      options.progress(`settings round ${round + 1}/${rounds} · ${config.label}`);
      const env = { ...process.env };
      delete env.MALLOC_ARENA_MAX;
      if (config.mallocArenaMax) env.MALLOC_ARENA_MAX = config.mallocArenaMax;
      const job = JSON.stringify({ concurrency: config.concurrency, cache: config.cache, ops: OPS, files });
      const result = spawnSync(process.execPath, [options.childScript, 'settings', job], { env, encoding: 'utf8' });
      if (result.status !== 0) throw new Error(`settings child failed: ${result.stderr}`);
      const parsed = JSON.parse(result.stdout.trim().split('\n').pop()!) as ChildResult;
      if (!runs.has(config.label)) runs.set(config.label, []);
      runs.get(config.label)!.push(parsed);
      options.progressDone();
      options.log(`settings round ${round + 1}/${rounds} · ${config.label} done`);
    }
  }

  const lines: string[] = [];
  lines.push(`### sharp settings study, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`);
  lines.push('');
  lines.push(
    `${options.header}. The handler's transform() over ${files.length} photos in a fresh process per configuration, ${rounds} round(s). \`npm run bench -- --settings${options.quick ? ' --quick' : ''}\`.`,
  );
  lines.push(
    'c=1: sum of per-photo times, one request at a time (median over rounds); large: the photos of 8 MP or more only. c=2: wall time with two requests in flight. Peak RSS: max over rounds.',
  );
  lines.push('');
  const baseline = runs.get(CONFIGS[0]!.label)!;
  const c1Total = (result: ChildResult, op: string, only?: Set<string>) =>
    sum(result.results[op]!.c1Ms.filter((_, i) => !only || only.has(files[i]!)));
  const c1Cpu = (result: ChildResult, op: string) => sum(result.results[op]!.c1CpuMs);
  const header = [
    'configuration',
    'sharp.concurrency()',
    ...OPS.flatMap((op) => [`${op} c=1 s (vs default)`, `${op} large c=1 s`, `${op} CPU s`, `${op} c=2 s`]),
    'peak RSS',
  ];
  const rows = CONFIGS.map((config) => {
    const results = runs.get(config.label)!;
    const cells = OPS.flatMap((op) => {
      const c1 = median(results.map((result) => c1Total(result, op))) / 1000;
      const c1Large = median(results.map((result) => c1Total(result, op, large))) / 1000;
      const cpu = median(results.map((result) => c1Cpu(result, op))) / 1000;
      const c2 = median(results.map((result) => result.results[op]!.c2WallMs)) / 1000;
      const base = median(baseline.map((result) => c1Total(result, op))) / 1000;
      return [`${c1.toFixed(1)} (${((c1 / base - 1) * 100).toFixed(0)}%)`, c1Large.toFixed(1), cpu.toFixed(1), c2.toFixed(1)];
    });
    return [config.label, String(results[0]!.concurrency), ...cells, kb(Math.max(...results.map((result) => result.maxRss)))];
  });
  lines.push(markdownTable(header, rows));
  lines.push('');
  lines.push(`Per-photo median ms for the default configuration, op1: ${ms(median(baseline[0]!.results.op1!.c1Ms))}.`);
  return lines.join('\n') + '\n';
}
