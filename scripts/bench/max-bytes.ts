// `npm run bench -- --max-bytes`: max_bytes on the corpus, per lossy format
// and at three caps. Each photo through the handler's transform() with the cap
// and without, one after the other in alternating order: whether the answer
// is within the cap (or a 422 when no quality tried reaches it), the encodes
// it took, its bytes, and the transform CPU time against the uncapped one.

import type { Ops } from '../../lambda/grammar';
import { DEFAULT_LIMITS } from '../../lambda/origin/config';
import { HttpError } from '../../lambda/origin/errors';
import { budgetFor } from '../../lambda/origin/image/budget';
import { MAX_BYTES_ENCODES } from '../../lambda/origin/image/steps';
import { transform } from '../../lambda/origin/image/transform';
import type { Corpus } from './corpus';
import type { StudyLog } from './session';
import { canonicalOpsOf, OPS, type OpSpec } from './ops';
import { kb, markdownTable, mean, ms, pairedRatio, ratio, sum } from './stats';

/** One operation per lossy format (the bench's own), and the caps tried on each, in bytes. */
const STUDIED: { op: OpSpec['name']; format: string; caps: number[] }[] = [
  { op: 'jpeg', format: 'jpeg', caps: [50_000, 100_000, 200_000] },
  { op: 'op1', format: 'webp', caps: [20_000, 40_000, 80_000] },
  { op: 'avif', format: 'avif', caps: [30_000, 60_000, 120_000] },
];

interface Made {
  /** The variant's bytes, or undefined for a 422 max_bytes_unreachable. */
  bytes?: number;
  encodes: number;
  cpuMs: number;
}

export async function maxBytesStudy(corpus: Corpus, options: StudyLog & { command: string }): Promise<string> {
  const budget = (bytes: number) => budgetFor(DEFAULT_LIMITS.memorySizeMb, 120_000, bytes);
  const make = async (bytes: Buffer, ops: Ops): Promise<Made> => {
    const cpu = process.cpuUsage();
    try {
      const variant = await transform(bytes, ops, DEFAULT_LIMITS, budget(bytes.length));
      const used = process.cpuUsage(cpu);
      return { bytes: variant.body.length, encodes: variant.encodes ?? 1, cpuMs: (used.user + used.system) / 1000 };
    } catch (error) {
      if (!(error instanceof HttpError && error.code === 'max_bytes_unreachable')) throw error;
      const used = process.cpuUsage(cpu);
      return { encodes: 2, cpuMs: (used.user + used.system) / 1000 };
    }
  };
  const rows: string[][] = [];
  for (const { op: name, format, caps } of STUDIED) {
    const op = OPS.find((candidate) => candidate.name === name)!;
    for (const cap of caps) {
      const results: { capped: Made; plain: Made }[] = [];
      for (const [index, photo] of corpus.photos.entries()) {
        options.progress(`max_bytes · ${format} ${kb(cap)} · ${index + 1}/${corpus.photos.length} ${photo.key}`);
        const ops = canonicalOpsOf(op, photo.key);
        const cappedOps: Ops = { ...ops, max_bytes: cap };
        // Alternating order, so that a slow moment on a shared machine does not always hit the same one.
        const first = await make(photo.bytes, index % 2 ? cappedOps : ops);
        const second = await make(photo.bytes, index % 2 ? ops : cappedOps);
        results.push(index % 2 ? { capped: first, plain: second } : { capped: second, plain: first });
      }
      options.progressDone();
      const served = results.filter(({ capped }) => capped.bytes !== undefined);
      rows.push([
        `${format} (${op.label})`,
        kb(cap),
        String(results.length),
        String(results.filter(({ plain }) => plain.bytes! > cap).length),
        `${served.filter(({ capped }) => capped.bytes! <= cap).length} of ${served.length}`,
        String(results.length - served.length),
        `${mean(results.map(({ capped }) => capped.encodes)).toFixed(2)} / ${Math.max(...results.map(({ capped }) => capped.encodes))}`,
        `${kb(sum(served.map(({ plain }) => plain.bytes!)))} → ${kb(sum(served.map(({ capped }) => capped.bytes!)))}`,
        `${ms(sum(results.map(({ plain }) => plain.cpuMs)))} / ${ms(sum(results.map(({ capped }) => capped.cpuMs)))}`,
        ratio(
          pairedRatio(
            results.map(({ capped }) => capped.cpuMs),
            results.map(({ plain }) => plain.cpuMs),
          ),
        ),
      ]);
      options.log(`max_bytes · ${format} ${kb(cap)} done`);
    }
  }
  return [
    `### max_bytes, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    '',
    `${options.header}. Corpus: ${corpus.description}. \`${options.command}\`: the handler's transform() per photo, with the cap and without, alternating which goes first. At most ${MAX_BYTES_ENCODES} encodes a request.`,
    '',
    markdownTable(
      [
        'format (operation)',
        'cap',
        'photos',
        'over the cap uncapped',
        'within the cap',
        '422 (quality 1 over)',
        'encodes mean / most',
        'bytes uncapped → capped (served)',
        'transform CPU uncapped / capped',
        'CPU capped / uncapped (median)',
      ],
      rows,
    ),
    '',
  ].join('\n');
}
