// What S3 Intelligent-Tiering saves, at list prices (scripts/cost/prices.ts): the source bucket
// (its `tier-sources` lifecycle rule, lib/parts/buckets.ts) at a stated mix of sizes and reads,
// and a variant of the cache bucket over the days it lives, which is why that bucket is not tiered.
// An object 30 days unread is in the Infrequent Access tier, 90 days unread in Archive Instant
// Access; a read (a GET) brings it back to Frequent Access, at no fee. A month is 30 days.

import { TIERING_MIN_OBJECT_BYTES } from '../../lib/parts/buckets';
import { dollars, kb, markdownTable } from '../bench/stats';
import { TIERING_PRICES, TIERING_PRICES_DATE, type TieringPrices } from './prices';

const GB = 1024 ** 3;
const MONTH_DAYS = 30;
const INFREQUENT_AFTER_DAYS = 30;
const ARCHIVE_INSTANT_AFTER_DAYS = 90;

/** Source objects of about one size: their share of the objects and mean size. */
export interface SizeBand {
  label: string;
  share: number;
  meanBytes: number;
}

/** A source bucket once its objects have settled into their tiers. */
export interface SourceScenario {
  objects: number;
  sizes: SizeBand[];
  /** Shares of the objects last read (a miss's read of its source) in the last 30 days, and 30 to 90 days ago; the rest longer ago. */
  readIn30Days: number;
  read30To90DaysAgo: number;
}

const KB = 1024;
const MB = 1024 * KB;

/**
 * The stated access pattern: a million sources, a fifth of them under 128 KB. A source is read
 * only when a variant of it is made (CloudFront and the cache bucket, which keeps a variant 90
 * days, answer the rest), so most are read less often than every 90 days.
 */
export const SOURCE_SCENARIO: SourceScenario = {
  objects: 1_000_000,
  sizes: [
    { label: 'under 128 KB (icons, small PNGs)', share: 0.2, meanBytes: 40 * KB },
    { label: '128 KB to 1 MB (web JPEGs)', share: 0.3, meanBytes: 400 * KB },
    { label: '1 to 5 MB (phone photos)', share: 0.35, meanBytes: 2.5 * MB },
    { label: 'over 5 MB (camera originals)', share: 0.15, meanBytes: 12 * MB },
  ],
  readIn30Days: 0.1,
  read30To90DaysAgo: 0.2,
};

/** Dollars for one band of the source bucket: a month in S3 Standard, a month tiered (monitoring included), and the transitions once. */
export interface BandCost {
  label: string;
  objects: number;
  gb: number;
  standard: number;
  tiered: number;
  transitions: number;
}

/** A GB-month's price at the scenario's shares of reads: Frequent, Infrequent or Archive Instant Access. */
const tieredGbMonth = (scenario: SourceScenario, prices: TieringPrices) =>
  scenario.readIn30Days * prices.frequentGbMonth +
  scenario.read30To90DaysAgo * prices.infrequentGbMonth +
  (1 - scenario.readIn30Days - scenario.read30To90DaysAgo) * prices.archiveInstantGbMonth;

export function sourceTiering(scenario = SOURCE_SCENARIO, prices = TIERING_PRICES): BandCost[] {
  return scenario.sizes.map((band) => {
    const objects = scenario.objects * band.share;
    const gb = (objects * band.meanBytes) / GB;
    const standard = gb * prices.standardGbMonth;
    // The rule's size filter leaves the small ones in S3 Standard: no transition, no monitoring.
    if (band.meanBytes <= TIERING_MIN_OBJECT_BYTES) return { label: band.label, objects, gb, standard, tiered: standard, transitions: 0 };
    const tiered = gb * tieredGbMonth(scenario, prices) + objects * prices.monitoringObjectMonth;
    return { label: band.label, objects, gb, standard, tiered, transitions: objects * prices.transition };
  });
}

/** The size from which an object tiered for a month costs less than in S3 Standard, sitting in a tier that costs `gbMonth`. */
export const breakEvenBytes = (gbMonth: number, prices = TIERING_PRICES) =>
  (prices.monitoringObjectMonth / (prices.standardGbMonth - gbMonth)) * GB;

/** A cache-bucket variant over its life, written once and never read again (tiering's best case). */
export interface VariantLife {
  days: number;
  /** Dollars saved per GB over its life, in the lower tiers. */
  savedPerGb: number;
  /** Dollars per variant: monitoring for its life, with and without the lifecycle transition. */
  monitoring: number;
  transition: number;
  /** Sizes from which tiering pays: moved by a lifecycle rule, or written as Intelligent-Tiering. */
  breakEvenBytes: number;
  breakEvenWrittenTieredBytes: number;
}

export function variantTiering(days: number, prices = TIERING_PRICES): VariantLife {
  const infrequentDays = Math.max(0, Math.min(days, ARCHIVE_INSTANT_AFTER_DAYS) - INFREQUENT_AFTER_DAYS);
  const archiveDays = Math.max(0, days - ARCHIVE_INSTANT_AFTER_DAYS);
  const savedPerGb =
    (infrequentDays * (prices.standardGbMonth - prices.infrequentGbMonth) +
      archiveDays * (prices.standardGbMonth - prices.archiveInstantGbMonth)) /
    MONTH_DAYS;
  const monitoring = (days / MONTH_DAYS) * prices.monitoringObjectMonth;
  const sizeFor = (cost: number) => (savedPerGb > 0 ? (cost / savedPerGb) * GB : Infinity);
  return {
    days,
    savedPerGb,
    monitoring,
    transition: prices.transition,
    breakEvenBytes: sizeFor(monitoring + prices.transition),
    breakEvenWrittenTieredBytes: sizeFor(monitoring),
  };
}

/** The cache bucket's lifetimes compared: a month, the default 90 days, a year. */
export const VARIANT_DAYS = [30, 90, 365];

const count = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 0 });
const gigabytes = (gb: number) => gb.toLocaleString('en-US', { maximumFractionDigits: 0 });
const size = (bytes: number) => (Number.isFinite(bytes) ? kb(bytes) : 'never');
const percent = (share: number) => `${Math.round(share * 100)}%`;
/** Small sums: a tenth of a cent shows. */
const fine = (value: number) => `$${value.toFixed(4)}`;

/**
 * The report: the source bucket at SOURCE_SCENARIO, and a variant's lifetimes against its sizes
 * (`largestVariantBytes`, the largest mean variant measured, if any).
 */
export function tieringReport(largestVariantBytes?: number, scenario = SOURCE_SCENARIO, prices = TIERING_PRICES): string {
  const bands = sourceTiering(scenario, prices);
  const total = (field: 'objects' | 'gb' | 'standard' | 'tiered' | 'transitions') => bands.reduce((sum, band) => sum + band[field], 0);
  const saved = total('standard') - total('tiered');
  const monitored = bands.filter((band) => band.transitions > 0).reduce((sum, band) => sum + band.objects, 0);
  const sourceTable = markdownTable(
    ['source objects', 'objects', 'GB', 'S3 Standard, a month', 'tiered, a month', 'transitions, once'],
    [
      ...bands.map((band) => [
        band.label,
        count(band.objects),
        gigabytes(band.gb),
        dollars(band.standard),
        dollars(band.tiered),
        dollars(band.transitions),
      ]),
      [
        '**all**',
        count(total('objects')),
        gigabytes(total('gb')),
        `**${dollars(total('standard'))}**`,
        `**${dollars(total('tiered'))}**`,
        `**${dollars(total('transitions'))}**`,
      ],
    ],
  );
  const variantTable = markdownTable(
    [
      'variant lives',
      'saved per GB over its life',
      'monitoring + transition, 1,000 variants',
      'pays from (lifecycle rule)',
      'pays from (written tiered)',
    ],
    VARIANT_DAYS.map((days) => variantTiering(days, prices)).map((life) => [
      `${life.days} days`,
      fine(life.savedPerGb),
      `${fine(1000 * life.monitoring)} + ${fine(1000 * life.transition)}`,
      size(life.breakEvenBytes),
      size(life.breakEvenWrittenTieredBytes),
    ]),
  );
  const unread = 1 - scenario.readIn30Days - scenario.read30To90DaysAgo;
  return [
    `Storage tiering, us-east-1 list prices of ${TIERING_PRICES_DATE} (scripts/cost/prices.ts), a month of 30 days.`,
    '',
    `The source bucket, ${count(scenario.objects)} sources once settled: ${percent(scenario.readIn30Days)} read in the last 30 days (Frequent Access), ` +
      `${percent(scenario.read30To90DaysAgo)} 30 to 90 days ago (Infrequent Access), ${percent(unread)} not for 90 days (Archive Instant Access). ` +
      `"Tiered" includes the monitoring fee; objects under 128 KB stay in S3 Standard.`,
    '',
    sourceTable,
    '',
    `Tiering saves **${dollars(saved)} a month** (${percent(saved / total('standard'))}); the transitions cost ` +
      `${Math.ceil((total('transitions') / saved) * MONTH_DAYS)} days of that (it starts once objects are 30 days unread). Had every source been read every month, it would cost ` +
      `${dollars(monitored * prices.monitoringObjectMonth)} a month more (the monitoring of ${count(monitored)} objects) and the transitions once. ` +
      `An object pays its monitoring from ${kb(breakEvenBytes(prices.infrequentGbMonth, prices))} in Infrequent Access, ` +
      `${kb(breakEvenBytes(prices.archiveInstantGbMonth, prices))} in Archive Instant Access, ` +
      `${kb(breakEvenBytes(tieredGbMonth(scenario, prices), prices))} at these shares of reads.`,
    '',
    `The cache bucket: a variant written once and never read again (the best case for tiering; a read brings it back to Frequent Access), ` +
      `expired after its days.` +
      (largestVariantBytes === undefined ? '' : ` The largest mean variant measured is ${kb(largestVariantBytes)}.`),
    '',
    variantTable,
    '',
  ].join('\n');
}
