// `npx tsx scripts/bench/segment-price.ts [SIDE ...]`
//
// What the cut-out (segment=foreground, lambda/origin/image/steps/segment.ts)
// adds to a transform, on one libvips thread: for noise of SIDE x SIDE
// (default 512, 1024, 2048, 4096), the CPU seconds and peak memory of the
// steps run to pixels with and without it, each in a fresh process (an
// allocator keeps what an earlier job freed), with a subject whose 320 px
// mask is a disc. The step's RATES and its bytes come from these runs.

import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { canonicalRequest, DEFAULT_GRAMMAR_OPTIONS, splitQuery } from '../../lambda/grammar';
import { DEFAULT_LIMITS } from '../../lambda/origin/config';
import { openSource } from '../../lambda/origin/image/input';
import { planOutput } from '../../lambda/origin/image/output';
import { applySteps } from '../../lambda/origin/image/steps';
import { SUBJECT_MASK_SIDE, type Subject } from '../../lambda/origin/image/subject';

/** A disc filling the middle of a square mask. */
function discSubject(): Subject {
  const side = SUBJECT_MASK_SIDE;
  const data = new Uint8Array(side * side);
  for (let i = 0; i < data.length; i++) data[i] = Math.hypot((i % side) - side / 2, Math.floor(i / side) - side / 2) < side / 3 ? 255 : 0;
  return { box: { x: 1 / 6, y: 1 / 6, width: 2 / 3, height: 2 / 3 }, mask: { data, width: side, height: side } };
}

/** One run in this process: prints `seconds peakMb` of the steps for `query` on noise of `side`. */
async function runOne(side: number, query: string): Promise<void> {
  sharp.concurrency(1);
  const noise = Buffer.alloc(side * side * 3);
  for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
  const png = await sharp(noise, { raw: { width: side, height: side, channels: 3 } })
    .png({ compressionLevel: 0 })
    .toBuffer();
  const ops = canonicalRequest('/a.png', splitQuery(query), DEFAULT_GRAMMAR_OPTIONS, {}).ops;
  const { info, firstFrame } = await openSource(png, DEFAULT_LIMITS);
  const image = await firstFrame();
  const startRss = process.memoryUsage().rss;
  const start = process.cpuUsage();
  const input = { ops, info, plan: planOutput(ops, info), limits: DEFAULT_LIMITS, subject: discSubject() };
  const { pipeline } = await applySteps(image, input);
  await pipeline.raw().toBuffer();
  const used = process.cpuUsage(start);
  const peakMb = process.resourceUsage().maxRSS / 1024 - startRss / 2 ** 20;
  console.log(`${(used.user + used.system) / 1e6} ${peakMb}`);
}

async function main(): Promise<void> {
  if (process.argv[2] === '--one') return runOne(Number(process.argv[3]), process.argv[4]!);
  const sides = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [512, 1024, 2048, 4096];
  console.log(
    '| side | MP | seconds without | with | s per MP added | peak MB without | with | bytes per pixel added |\n|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const side of sides) {
    const run = (query: string) =>
      execFileSync('npx', ['tsx', fileURLToPath(import.meta.url), '--one', String(side), query], { encoding: 'utf8' })
        .trim()
        .split(' ')
        .map(Number) as [number, number];
    const [without, withCut] = [run('format=png'), run('format=png&segment=foreground')];
    const mp = (side * side) / 1e6;
    const perMp = (withCut[0] - without[0]) / mp;
    const perPixel = ((withCut[1] - without[1]) * 2 ** 20) / (side * side);
    console.log(
      `| ${side} | ${mp.toFixed(2)} | ${without[0].toFixed(3)} | ${withCut[0].toFixed(3)} | ${perMp.toFixed(3)} | ${without[1].toFixed(0)} | ${withCut[1].toFixed(0)} | ${perPixel.toFixed(1)} |`,
    );
  }
}

void main();
