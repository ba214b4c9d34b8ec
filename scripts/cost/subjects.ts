// What subjects cost (docs/subjects.md), per million: the time a first
// position=auto or segment=foreground miss adds over the same crop placed by
// attention (the source searched by the models), and what a later size of
// the same source adds (the records read beside the source, no inference).
// Durations are the subject bench's (scripts/bench/subject-cost.ts), measured
// on this project's shared x86 machine; prices are list prices (prices.ts).

import { dollars, markdownTable } from '../bench/stats';
import { PRICES_DATE, type RegionPrices } from './prices';

const MILLION = 1e6;

/** The subject bench's figures: wall ms a miss adds over attention's, median and p95. */
export interface SubjectMeasured {
  source: string;
  firstMissAddedMs: number;
  firstMissAddedP95Ms: number;
  laterSizeAddedMs: number;
}

export const SUBJECT_BENCH_2026_12_06: SubjectMeasured = {
  source:
    'npx tsx scripts/bench/subject-cost.ts --runs 20, 2026-12-06 00:32 UTC, coffee.png at 1600 px to 400x800, one model thread (2048 MB), load average 1.2 on the shared 2-core machine',
  firstMissAddedMs: 532,
  firstMissAddedP95Ms: 552,
  laterSizeAddedMs: 0,
};

/** Per-image list prices of the paid services that do the same, where published. */
export const PAID_SUBJECT_PRICES = {
  /** Rekognition Image, group 2 (DetectLabels), first million images a month: one call per image analysed. */
  rekognitionLabels: 0.001,
};

/** A miss's added duration at `memoryMb`, billed by the millisecond, and the records' reads (a GET each for faces and subject). */
const addedCost = (ms: number, memoryMb: number, prices: RegionPrices, gets: number) =>
  (Math.ceil(Math.max(0, ms)) / 1000) * (memoryMb / 1024) * prices.lambdaGbSecond + gets * prices.s3Get;

export function subjectsReport(measured: SubjectMeasured, prices: RegionPrices, memoryMb: number): string {
  const first = addedCost(measured.firstMissAddedMs, memoryMb, prices, 2) + 2 * prices.s3Put;
  const later = addedCost(measured.laterSizeAddedMs, memoryMb, prices, 2);
  return [
    `Subjects, dollars per million misses over the same crop placed by attention, origin at ${memoryMb} MB (arm64). ` +
      `Durations: ${measured.source}. List prices of ${PRICES_DATE}.`,
    '',
    markdownTable(
      ['per million', 'added ms (p50 / p95)', 'added cost'],
      [
        [
          'first miss of a source (models run, records written)',
          `${measured.firstMissAddedMs} / ${measured.firstMissAddedP95Ms}`,
          `**${dollars(first * MILLION)}**`,
        ],
        ['a later size (records read)', `${measured.laterSizeAddedMs}`, `**${dollars(later * MILLION)}**`],
        [
          'Rekognition DetectLabels, one call an image (what a paid label crop adds)',
          '',
          dollars(PAID_SUBJECT_PRICES.rekognitionLabels * MILLION),
        ],
      ],
    ),
    '',
  ].join('\n');
}
