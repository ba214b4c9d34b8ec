// `npm run bench -- --quality-bound`: what any per-image choice of quality
// could save against the fixed defaults, per lossy format. Every photo is
// encoded at three qualities around the default and scored in full with
// SSIMULACRA 2; between them, score is interpolated linearly and bytes
// log-linearly, per quality step. Two allocations, each knowing every
// image's exact curve:
//   best      the fewest bytes with the corpus mean kept and no image under
//             today's 5th percentile (each image spends where a byte buys the
//             most score: one price per score point for all, searched)
//   equal     every image at today's mean score (what a perceptual target does)

import { DEFAULT_QUALITY } from '../../lambda/grammar';
import { encode } from '../../lambda/origin/image/encoders';
import sharp from 'sharp';
import type { Corpus } from './corpus';
import { OPS, reference } from './ops';
import { rgbOf, ssimulacra2 } from './ssimulacra2';
import { markdownTable, mean, quantile, sum } from './stats';

type LossyFormat = 'jpeg' | 'webp' | 'avif';

const SWEEPS: { op: string; format: LossyFormat; qualities: [number, number, number] }[] = [
  { op: 'jpeg', format: 'jpeg', qualities: [55, 75, 90] },
  { op: 'op1', format: 'webp', qualities: [55, 75, 90] },
  { op: 'avif', format: 'avif', qualities: [35, 50, 65] },
];

/** One photo's score and bytes at every quality step of the sweep's range. */
export interface Curve {
  score: number[];
  bytes: number[];
}

const between = (qualities: number[], values: number[], quality: number) => {
  const i = quality <= qualities[1]! ? 0 : 1;
  const t = (quality - qualities[i]!) / (qualities[i + 1]! - qualities[i]!);
  return values[i]! + t * (values[i + 1]! - values[i]!);
};

function curveOf(qualities: number[], scores: number[], bytes: number[]): Curve {
  const steps = Array.from({ length: qualities[2]! - qualities[0]! + 1 }, (_, i) => qualities[0]! + i);
  const logBytes = bytes.map(Math.log);
  return { score: steps.map((q) => between(qualities, scores, q)), bytes: steps.map((q) => Math.exp(between(qualities, logBytes, q))) };
}

/** The fewest total bytes with the mean score at least `target` and no image under `floor`: one price per point for all images, bisected. */
export function best(curves: Curve[], target: number, floor: number): { bytes: number; mean: number } {
  const pick = (price: number) =>
    curves.map((curve) => {
      let chosen = -1;
      curve.score.forEach((score, i) => {
        if (score < floor) return;
        if (chosen < 0 || curve.bytes[i]! - price * score < curve.bytes[chosen]! - price * curve.score[chosen]!) chosen = i;
      });
      return chosen < 0 ? curve.score.length - 1 : chosen;
    });
  const meanOf = (picks: number[]) => mean(picks.map((i, n) => curves[n]!.score[i]!));
  let [low, high] = [0, 1e7];
  for (let round = 0; round < 60; round++) {
    const price = (low + high) / 2;
    if (meanOf(pick(price)) >= target) high = price;
    else low = price;
  }
  const picks = pick(high);
  return { bytes: sum(picks.map((i, n) => curves[n]!.bytes[i]!)), mean: meanOf(picks) };
}

/** Every image at `target` (the nearest step at or above it, the top of the range when none is). */
export function equal(curves: Curve[], target: number): number {
  return sum(
    curves.map((curve) => {
      const i = curve.score.findIndex((score) => score >= target);
      return curve.bytes[i < 0 ? curve.bytes.length - 1 : i]!;
    }),
  );
}

export async function qualityBoundStudy(
  corpus: Corpus,
  options: { log: (line: string) => void; progress: (line: string) => void; progressDone: () => void; header: string; command: string },
): Promise<string> {
  const rows: string[][] = [];
  for (const sweep of SWEEPS) {
    const op = OPS.find((candidate) => candidate.name === sweep.op)!;
    const curves: Curve[] = [];
    for (const [index, photo] of corpus.photos.entries()) {
      options.progress(`quality bound · ${sweep.format} · ${index + 1}/${corpus.photos.length} ${photo.key}`);
      const ref = await reference(op, photo.bytes, photo.facts);
      const raw = { width: ref.info.width, height: ref.info.height, channels: 3 as const };
      const scores: number[] = [];
      const bytes: number[] = [];
      for (const quality of sweep.qualities) {
        const out = await encode(sharp(ref.data, { raw }), { format: sweep.format }, quality).toBuffer();
        scores.push(ssimulacra2({ data: ref.data, width: raw.width, height: raw.height }, await rgbOf(out)));
        bytes.push(out.length);
      }
      curves.push(curveOf(sweep.qualities, scores, bytes));
    }
    options.progressDone();
    options.log(`quality bound · ${sweep.format} done`);
    const at = DEFAULT_QUALITY[sweep.format] - sweep.qualities[0];
    const today = curves.map((curve) => curve.score[at]!);
    const todayBytes = sum(curves.map((curve) => curve.bytes[at]!));
    const target = mean(today);
    const floor = quantile(today, 0.05);
    const cheapest = best(curves, target, floor);
    const change = (bytes: number) => `${((bytes / todayBytes - 1) * 100).toFixed(1)}%`;
    rows.push([
      `${sweep.format} q${DEFAULT_QUALITY[sweep.format]} (sweep q${sweep.qualities.join('/')})`,
      String(curves.length),
      target.toFixed(2),
      floor.toFixed(1),
      `${change(cheapest.bytes)} (mean ${cheapest.mean.toFixed(2)})`,
      change(equal(curves, target)),
    ]);
  }
  return [
    `### What per-image quality could save, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    '',
    `${options.header}. Corpus: ${corpus.description}. \`${options.command}\`: each photo encoded at three qualities and scored with SSIMULACRA 2; bytes against the fixed default's.`,
    '',
    markdownTable(
      ['format', 'photos', 'mean today', 'floor (p5 today)', 'best allocation: bytes (mean)', 'every image at the mean: bytes'],
      rows,
    ),
    '',
  ].join('\n');
}
