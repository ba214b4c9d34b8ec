// What managing images costs (docs/manage.md), per million: uploads (the
// API's ticket, the presigned POST, the validator's run, the copy to the
// key, one status call), and keys deleted in batches of 100. Durations are
// the management bench's (scripts/bench/manage.ts), measured on this
// project's shared x86 machine; prices are list prices (scripts/cost/prices.ts).

import { dollars, markdownTable } from '../bench/stats';
import { HTTP_API_PRICES, INVALIDATION_PRICES, PRICES_DATE, type RegionPrices } from './prices';

const MILLION = 1e6;

/** The management bench's medians, milliseconds. */
export interface ManageMeasured {
  source: string;
  ticketMs: number;
  validationMs: number;
  validationP95Ms: number;
  /** One DELETE /images call of `deleteBatch` keys. */
  deleteMs: number;
  deleteBatch: number;
}

export const MANAGE_BENCH_2026_12_05: ManageMeasured = {
  source: 'npx tsx scripts/bench/manage.ts --rounds 3, 2026-12-05 12:01 UTC, the bench photos of 0.1 to 18 MP',
  ticketMs: 0.4,
  validationMs: 96.8,
  validationP95Ms: 499,
  deleteMs: 8.4,
  deleteBatch: 40,
};

/** The API Lambda's memory size (lib/parts/manage.ts); the validator runs at the origin's. */
export const API_MEMORY_MB = 256;

/** One invocation of `ms` at `memoryMb`: the request and the duration, billed by the started millisecond. */
const invocation = (ms: number, memoryMb: number, prices: RegionPrices) =>
  prices.lambdaRequest + (Math.ceil(ms) / 1000) * (memoryMb / 1024) * prices.lambdaGbSecond;

export interface ManageCost {
  api: number;
  lambda: number;
  s3: number;
  total: number;
}

/**
 * A million uploads: two API calls (the ticket, then one status), the API
 * Lambda for both, the validator; S3's POST and the validator's GET and
 * COPY (its deletes are free). S3's events reach EventBridge's default bus
 * at no charge (AWS services' events are free).
 */
export function uploadCost(measured: ManageMeasured, prices: RegionPrices, memoryMb: number): ManageCost {
  const api = 2 * HTTP_API_PRICES.request;
  const lambda = 2 * invocation(measured.ticketMs, API_MEMORY_MB, prices) + invocation(measured.validationMs, memoryMb, prices);
  const s3 = 2 * prices.s3Put + prices.s3Get;
  return { api: api * MILLION, lambda: lambda * MILLION, s3: s3 * MILLION, total: (api + lambda + s3) * MILLION };
}

/** A million keys deleted, 100 a call: the calls, and the API Lambda for each at the measured time per key. Deletes are free in S3. */
export function deleteCost(measured: ManageMeasured, prices: RegionPrices): ManageCost {
  const calls = MILLION / 100;
  const api = calls * HTTP_API_PRICES.request;
  const lambda = calls * invocation((measured.deleteMs / measured.deleteBatch) * 100, API_MEMORY_MB, prices);
  return { api, lambda, s3: 0, total: api + lambda };
}

/** Variants per deleted key in the example: a srcset of four widths. */
const VARIANTS_PER_KEY = 4;

/** CloudFront's charge for `paths` invalidated in one month. */
export const invalidationCost = (paths: number) => Math.max(0, paths - INVALIDATION_PRICES.freePathsPerMonth) * INVALIDATION_PRICES.path;

export function manageReport(measured: ManageMeasured, prices: RegionPrices, memoryMb: number): string {
  const row = (name: string, cost: ManageCost) => [
    name,
    dollars(cost.api),
    dollars(cost.lambda),
    dollars(cost.s3),
    `**${dollars(cost.total)}**`,
  ];
  return [
    `Managing images, dollars per million, validator at ${memoryMb} MB and API Lambda at ${API_MEMORY_MB} MB (arm64). ` +
      `Durations: ${measured.source} (validation ${measured.validationMs} ms median, ${measured.validationP95Ms} ms p95). List prices of ${PRICES_DATE}.`,
    '',
    markdownTable(
      ['per million', 'API Gateway', 'Lambda', 'S3 requests', 'total'],
      [
        row('uploads, each validated and checked once', uploadCost(measured, prices, memoryMb)),
        row('keys deleted, 100 a call', deleteCost(measured, prices)),
      ],
    ),
    '',
    `A deleted key's variants are purged too, each invalidated in CloudFront by its exact path at $${INVALIDATION_PRICES.path} a path ` +
      `beyond ${INVALIDATION_PRICES.freePathsPerMonth.toLocaleString('en-US')} a month: a million keys of ${VARIANTS_PER_KEY} variants each ` +
      `cost **$${invalidationCost(MILLION * VARIANTS_PER_KEY).toLocaleString('en-US')}** of invalidations, far more than their deletion.`,
    '',
  ].join('\n');
}
