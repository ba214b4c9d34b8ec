// `npm run bench -- --auto-quality`: quality=auto against today's fixed
// defaults (DEFAULT_QUALITY), per lossy format, on every photo of the corpus.
// Both through the handler's transform(), one after the other in alternating
// order: bytes, transform CPU time (all threads), and two scores against the
// uncompressed resize: SSIMULACRA 2 (the target of quality=auto) and luma SSIM.
// Per photo, the quality auto chose and the scores; per format, the totals,
// the means, and the floor: today's 5th percentile, which no auto image
// should fall under.

import { DEFAULT_QUALITY, type Ops } from '../../lambda/grammar';
import { DEFAULT_LIMITS } from '../../lambda/origin/config';
import { autoQuality } from '../../lambda/origin/image/auto-quality';
import { budgetFor } from '../../lambda/origin/image/budget';
import { encode } from '../../lambda/origin/image/encoders';
import { transform } from '../../lambda/origin/image/transform';
import type { Corpus } from './corpus';
import { canonicalOpsOf, OPS, reference, type OpSpec } from './ops';
import { MEMORY_PER_PIXEL, rgbOf, ssimulacra2, type RgbImage } from './ssimulacra2';
import { decodePlanes, prepareReference, ssimImages } from './ssim';
import { kb, markdownTable, mean, median, ms, pairedRatio, quantile, ratio, sum } from './stats';

type LossyFormat = 'jpeg' | 'webp' | 'avif';

/** The operations compared: one per lossy format. */
const STUDIED: { op: OpSpec['name']; format: LossyFormat }[] = [
  { op: 'jpeg', format: 'jpeg' },
  { op: 'op1', format: 'webp' },
  { op: 'avif', format: 'avif' },
];

interface Made {
  bytes: number;
  cpuMs: number;
  score: number;
  ssim: number;
}

interface PhotoResult {
  photo: string;
  /** The quality auto chose (for AVIF; JPEG and WebP keep their defaults). */
  quality: number;
  fixed: Made;
  auto: Made;
}

export async function autoQualityStudy(
  corpus: Corpus,
  options: { log: (line: string) => void; progress: (line: string) => void; progressDone: () => void; header: string; command: string },
): Promise<string> {
  const budget = (bytes: number) => budgetFor(DEFAULT_LIMITS.memorySizeMb, 120_000, bytes);
  const results = new Map<LossyFormat, PhotoResult[]>();
  let scoreCost: { pixels: number; ms: number } | undefined;
  for (const { op: name, format } of STUDIED) {
    const op = OPS.find((candidate) => candidate.name === name)!;
    const rows: PhotoResult[] = [];
    for (const [index, photo] of corpus.photos.entries()) {
      options.progress(`auto quality · ${format} · ${index + 1}/${corpus.photos.length} ${photo.key}`);
      const ops = canonicalOpsOf(op, photo.key);
      const ref = await reference(op, photo.bytes, photo.facts);
      const original: RgbImage = { data: ref.data, width: ref.info.width, height: ref.info.height };
      const planes = prepareReference(await decodePlanes({ data: ref.data, width: ref.info.width, height: ref.info.height, channels: 3 }));
      const make = async (variantOps: Ops): Promise<Made> => {
        const cpu = process.cpuUsage();
        const variant = await transform(photo.bytes, variantOps, DEFAULT_LIMITS, budget(photo.bytes.length));
        const used = process.cpuUsage(cpu);
        const start = performance.now();
        const score = ssimulacra2(original, await rgbOf(variant.body));
        if (format === 'avif' && !scoreCost) scoreCost = { pixels: original.width * original.height, ms: performance.now() - start };
        return {
          bytes: variant.body.length,
          cpuMs: (used.user + used.system) / 1000,
          score,
          ssim: (await ssimImages(planes, variant.body)).y,
        };
      };
      const fixedOps = ops;
      const autoOps: Ops = { ...ops, quality: 'auto' };
      // Alternating order, so that a slow moment on a shared machine does not always hit the same one.
      const [first, second] = index % 2 ? [autoOps, fixedOps] : [fixedOps, autoOps];
      const firstMade = await make(first);
      const secondMade = await make(second);
      const [fixed, auto] = index % 2 ? [secondMade, firstMade] : [firstMade, secondMade];
      // The quality the transform chose, from the same pixels (the reference is the output before its encode).
      const quality =
        format === 'avif'
          ? await autoQuality({ data: ref.data, info: { width: ref.info.width, height: ref.info.height, channels: 3 } }, (image, trial) =>
              encode(image, { format }, trial),
            )
          : DEFAULT_QUALITY[format];
      rows.push({ photo: photo.key, quality, fixed, auto });
    }
    options.progressDone();
    options.log(`auto quality · ${format} done`);
    results.set(format, rows);
  }

  return report(corpus, options, results, scoreCost);
}

/** The study's markdown: per format, then per photo. */
function report(
  corpus: Corpus,
  options: { header: string; command: string },
  results: Map<LossyFormat, PhotoResult[]>,
  scoreCost: { pixels: number; ms: number } | undefined,
): string {
  const lines: string[] = [];
  lines.push(`### quality=auto against the fixed defaults, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`);
  lines.push('');
  lines.push(
    `${options.header}. Corpus: ${corpus.description}. \`${options.command}\`: the handler's transform() once per photo and mode, alternating which goes first.`,
  );
  lines.push('');
  lines.push(
    "Per format: bytes summed over the photos; mean SSIMULACRA 2 and luma SSIM against the uncompressed resize; the floor is today's 5th percentile of SSIMULACRA 2, " +
      '"under" counts the auto images below it; transform CPU (all threads) summed, and the median of the per-photo ratios.',
  );
  lines.push('');
  const all = [...results.values()].flat();
  const row = (label: string, rows: PhotoResult[]) => {
    const floor = quantile(
      rows.map((r) => r.fixed.score),
      0.05,
    );
    const fixedBytes = sum(rows.map((r) => r.fixed.bytes));
    const autoBytes = sum(rows.map((r) => r.auto.bytes));
    return [
      label,
      String(rows.length),
      kb(fixedBytes),
      kb(autoBytes),
      `${((autoBytes / fixedBytes - 1) * 100).toFixed(1)}%`,
      `${mean(rows.map((r) => r.fixed.score)).toFixed(2)} / ${mean(rows.map((r) => r.auto.score)).toFixed(2)}`,
      `${mean(rows.map((r) => r.fixed.ssim)).toFixed(4)} / ${mean(rows.map((r) => r.auto.ssim)).toFixed(4)}`,
      `${floor.toFixed(1)} / ${Math.min(...rows.map((r) => r.auto.score)).toFixed(1)}`,
      String(rows.filter((r) => r.auto.score < floor).length),
      `${ms(sum(rows.map((r) => r.fixed.cpuMs)))} / ${ms(sum(rows.map((r) => r.auto.cpuMs)))}`,
      ratio(
        pairedRatio(
          rows.map((r) => r.auto.cpuMs),
          rows.map((r) => r.fixed.cpuMs),
        ),
      ),
    ];
  };
  lines.push(
    markdownTable(
      [
        'format (operation)',
        'photos',
        'bytes, fixed',
        'bytes, auto',
        'change',
        'SSIMULACRA 2 fixed / auto',
        'SSIM Y fixed / auto',
        'floor (fixed p5) / auto min',
        'under the floor',
        'transform CPU ms fixed / auto',
        'CPU auto / fixed (median)',
      ],
      [
        ...STUDIED.map(({ op, format }) =>
          row(`${format} q${DEFAULT_QUALITY[format]} (${OPS.find((o) => o.name === op)!.label})`, results.get(format)!),
        ),
        row('all three', all),
      ],
    ),
  );
  lines.push('');
  lines.push('Per photo: the quality auto chose, SSIMULACRA 2 fixed → auto, bytes fixed → auto.');
  lines.push('');
  lines.push(
    markdownTable(
      ['photo', ...STUDIED.map(({ format }) => format)],
      results.get('jpeg')!.map((_, i) => [
        results.get('jpeg')![i]!.photo,
        ...STUDIED.map(({ format }) => {
          const r = results.get(format)![i]!;
          return `q${r.quality}: ${r.fixed.score.toFixed(1)} → ${r.auto.score.toFixed(1)}, ${kb(r.fixed.bytes)} → ${kb(r.auto.bytes)}`;
        }),
      ]),
    ),
  );
  lines.push('');
  if (scoreCost) {
    lines.push(
      `SSIMULACRA 2 itself (scripts/bench/ssimulacra2.ts, not run by the Lambda): ${ms(scoreCost.ms)} ms on one ${(scoreCost.pixels / 1e6).toFixed(2)} MP pair (the first 1600 px AVIF), ` +
        `${kb(MEMORY_PER_PIXEL * scoreCost.pixels)} of working memory by its count (${MEMORY_PER_PIXEL} bytes per pixel). Median transform CPU, fixed: ${ms(median(all.map((r) => r.fixed.cpuMs)))} ms.`,
    );
    lines.push('');
  }
  return lines.join('\n');
}
