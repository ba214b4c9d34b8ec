// `npx tsx scripts/bench/op-prices.ts [SIDE] [QUERY ...]`
// `npx tsx scripts/bench/op-prices.ts --largest [MEMORY_MB] [BUDGET_MS]`
//
// What each operation costs, measured in the real transform child (one libvips
// thread, as at the default memory): for each viewer query, on a photo-like
// source and on noise of SIDE x SIDE (default 2048), the child's CPU seconds
// and peak memory above its start beside the model's prediction
// (lambda/origin/image/budget.ts). The budget is unlimited, so nothing is refused.
// The steps' coefficients (each family's RATES in lambda/origin/image/steps/) come from these runs.
// With --largest: the largest square output the model serves for each op and
// encoder case of test/support/op-limits.ts (default 2048 MB and 25000 ms),
// the table of docs/hostile-input.md.

import sharp from 'sharp';
import { canonicalRequest, DEFAULT_GRAMMAR_OPTIONS, splitQuery, type Ops } from '../../lambda/grammar';
import { DEFAULT_LIMITS } from '../../lambda/origin/config';
import { transformProcesses } from '../../lambda/origin/transform-process';
import { largestSide, OP_CASES, type SourceKind } from '../../test/support/op-limits';

const DEFAULT_QUERIES = [
  'format=jpeg',
  'blur=100&format=jpeg',
  'blur=10&format=jpeg',
  'blur=1&format=jpeg',
  'sharpen=10&format=jpeg',
  'sharpen=1&format=jpeg',
  'blur=100&sharpen=10&format=jpeg',
  'grayscale=true&format=jpeg',
  'border=64,ff0000&format=jpeg',
  'trim=10&format=jpeg',
  'rotate=90&format=jpeg',
  'format=webp',
  'format=avif',
  'format=png',
  'quality=auto&format=avif',
];

const SOURCES: Record<SourceKind, string> = {
  noise: 'noise JPEG',
  turned: 'noise JPEG, EXIF orientation 6',
  cmyk: 'CMYK noise JPEG',
  alpha: 'PNG drawing with alpha',
  tiny: '64x64 noise JPEG',
  frames: 'GIF of 8 noise frames',
  hdr: 'Ultra HDR noise JPEG, its gain map as large',
};

/** Prints, for each case, the largest side the model accepts, as a Markdown table. */
function printLargest(memorySizeMb: number, timeBudgetMs: number) {
  const limits = { ...DEFAULT_LIMITS, memorySizeMb, timeBudgetMs };
  console.log(`| case | source | query | largest side served at ${memorySizeMb} MB, ${timeBudgetMs} ms |\n| --- | --- | --- | ---: |`);
  for (const opCase of OP_CASES) {
    const side = largestSide(opCase, limits);
    console.log(
      `| ${opCase.name} | ${SOURCES[opCase.source]} | \`${opCase.query}\` | ${side === limits.maxDimension ? `${side} (all)` : side} |`,
    );
  }
}

if (process.argv[2] === '--largest') {
  printLargest(Number(process.argv[3] ?? DEFAULT_LIMITS.memorySizeMb), Number(process.argv[4] ?? DEFAULT_LIMITS.timeBudgetMs));
  process.exit(0);
}

const [sideArg, ...opsArgs] = process.argv.slice(2);
const side = Number(sideArg ?? 2048);
const queries = opsArgs.length > 0 ? opsArgs : DEFAULT_QUERIES;

/** Soft noise (a photo's fine detail) or hard noise (the worst case), as a JPEG at quality 90. */
const source = (sigma: number, smooth: number) =>
  sharp({ create: { width: side, height: side, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma } } })
    .blur(smooth)
    .jpeg({ quality: 90 })
    .toBuffer();

const sources = { photo: await source(24, 1.5), noise: await source(60, 0.3) };
const budget = { memoryBytes: Number.MAX_SAFE_INTEGER, seconds: Number.MAX_SAFE_INTEGER };
console.log(`${side}x${side} output; CPU s measured / predicted; MB above the child's start measured / predicted`);
for (const query of queries) {
  const ops = canonicalRequest('k', splitQuery(query), DEFAULT_GRAMMAR_OPTIONS, {}).ops as Ops;
  for (const [name, bytes] of Object.entries(sources)) {
    const limits = { ...DEFAULT_LIMITS };
    // A fresh child for each: a child's allocator keeps what an earlier job freed, which would hide this job's peak.
    const transforms = transformProcesses();
    await transforms.ready();
    const { variant, report } = await transforms.run({ bytes, ops, limits, budget }, performance.now() + 600_000);
    const predicted = variant.predicted!;
    const mb = (report.peakRssMb ?? NaN) - report.startRssMb;
    console.log(
      `${query.padEnd(34)} ${name.padEnd(5)} cpu ${report.cpuSeconds.toFixed(2)} / ${predicted.seconds.toFixed(2)}` +
        `  mem ${mb.toFixed(0)} / ${(predicted.bytes / 1024 / 1024).toFixed(0)}`,
    );
  }
}
