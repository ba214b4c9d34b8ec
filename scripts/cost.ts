// `npm run cost [-- --region eu-west-1] [--memory 2048] [--bench <file.json>]`
//
// Dollars per million misses and per million hits, per operation: measured
// durations (scripts/cost/measured.ts, the bench's figures) times the list
// prices (scripts/cost/prices.ts, dated, by region), at the origin's memory
// size. What a miss pays for:
//   CloudFront   the request, and the viewer-request and viewer-response functions
//   S3           the cache bucket's failed GET (the origin group's first try), the
//                origin's GET of a remembered failure (.failures/<hash>, a 404 almost
//                always), the source's GET, the variant's conditional PUT
//   Lambda       the request, and the invocation until that PUT ends (billed per ms,
//                at the memory size); a cold start adds its INIT, billed the same
// A hit at the edge pays CloudFront only; a hit in the cache bucket one GET more.
// Storage: the mean variant the bench made, a month in S3 Standard. Data transfer
// to viewers is left out, as it is from the per-transform prices compared.
// Then storage tiering (scripts/cost/tiering.ts): what Intelligent-Tiering saves
// on the source bucket at a stated access pattern, and why the cache bucket is not tiered;
// managing images (scripts/cost/manage.ts): uploads validated, keys deleted;
// and subjects (scripts/cost/subjects.ts): what the models add to a miss.

import { readFileSync } from 'node:fs';
import { DEFAULT_LIMITS } from '../lambda/origin/config';
import { commandLine, UsageError } from '../local/harness/command-line';
import { dollars, markdownTable } from './bench/stats';
import { BENCH_2026_11_23, type Measured } from './cost/measured';
import { CLOUDFRONT_PRICES, COMPARISON_PRICES, PRICES_DATE, REGION_PRICES, type RegionPrices } from './cost/prices';
import { MANAGE_BENCH_2026_12_05, manageReport } from './cost/manage';
import { SUBJECT_BENCH_2026_12_06, subjectsReport } from './cost/subjects';
import { tieringReport } from './cost/tiering';
import { consoleOutput, runIfMain, type Output } from './operator-command';

export const USAGE = `usage: npm run cost -- [--region ${Object.keys(REGION_PRICES).join('|')}] [--memory MB] [--bench file.json]
  --region   where the origin and the buckets run (default us-east-1; CloudFront is priced for
             viewers in North America and Europe)
  --memory   the origin Lambda's memory size in MB (default ${DEFAULT_LIMITS.memorySizeMb}, the construct's)
  --bench    measured figures in the shape of scripts/cost/measured.ts (default: the bench run
             recorded in docs/performance.md)`;

const MILLION = 1e6;
const GB = 1024 ** 3;

/** Requests a miss makes to S3 (see the top of this file). */
export const MISS_S3_GETS = 3;
/** Function invocations per request: viewer-request and viewer-response. */
const FUNCTIONS_PER_REQUEST = 2;

export interface CostOptions {
  region: string;
  memoryMb: number;
  measured: Measured;
}

/** Dollars per million of each, for one operation. */
export interface OperationCost {
  name: string;
  label: string;
  missMs: number;
  lambda: number;
  s3: number;
  cloudfront: number;
  miss: number;
  coldStart: number;
  /** A million variants stored for a month; undefined without a measured size. */
  storage?: number;
}

function regionPrices(region: string): RegionPrices {
  const prices = REGION_PRICES[region];
  if (!prices) throw new UsageError(`no prices for region "${region}": expected one of ${Object.keys(REGION_PRICES).join(', ')}`);
  return prices;
}

/** Lambda's charge for `ms` of duration at `memoryMb`, billed by the millisecond. */
const durationCost = (ms: number, memoryMb: number, prices: RegionPrices) =>
  (Math.ceil(ms) / 1000) * (memoryMb / 1024) * prices.lambdaGbSecond;

const edgeHit = () => CLOUDFRONT_PRICES.request + FUNCTIONS_PER_REQUEST * CLOUDFRONT_PRICES.functionInvocation;

export function operationCosts(options: CostOptions): OperationCost[] {
  const prices = regionPrices(options.region);
  return options.measured.operations.map((op) => {
    const lambda = prices.lambdaRequest + durationCost(op.missInvocationMs, options.memoryMb, prices);
    const s3 = MISS_S3_GETS * prices.s3Get + prices.s3Put;
    const cloudfront = edgeHit();
    return {
      name: op.name,
      label: op.label,
      missMs: op.missInvocationMs,
      lambda: lambda * MILLION,
      s3: s3 * MILLION,
      cloudfront: cloudfront * MILLION,
      miss: (lambda + s3 + cloudfront) * MILLION,
      coldStart: durationCost(options.measured.coldInitMs, options.memoryMb, prices) * MILLION,
      ...(op.variantBytes === undefined ? {} : { storage: (op.variantBytes / GB) * prices.s3GbMonth * MILLION }),
    };
  });
}

/** Dollars per million hits: at the edge, and from the cache bucket. */
export function hitCosts(region: string): { edge: number; bucket: number } {
  const prices = regionPrices(region);
  return { edge: edgeHit() * MILLION, bucket: (edgeHit() + prices.s3Get) * MILLION };
}

export function costReport(options: CostOptions): string {
  const costs = operationCosts(options);
  const hits = hitCosts(options.region);
  const vercel = COMPARISON_PRICES.vercelTransform;
  const table = markdownTable(
    [
      'operation',
      'miss, measured',
      'Lambda',
      'S3 requests',
      'CloudFront',
      'per 1M misses',
      '+ per 1M cold starts',
      'storage: 1M variants, a month',
    ],
    costs.map((c) => [
      c.label,
      `${c.missMs} ms`,
      dollars(c.lambda),
      dollars(c.s3),
      dollars(c.cloudfront),
      `**${dollars(c.miss)}**`,
      dollars(c.coldStart),
      c.storage === undefined ? '—' : dollars(c.storage),
    ]),
  );
  return [
    `Dollars per million requests, ${options.region}, origin at ${options.memoryMb} MB (arm64). Durations measured here: ${options.measured.source}; ` +
      `cold start INIT ${options.measured.coldInitMs} ms. List prices of ${PRICES_DATE} (scripts/cost/prices.ts).`,
    '',
    table,
    '',
    `Hits: **${dollars(hits.edge)}** per million at the edge (CloudFront request and its two functions), ` +
      `**${dollars(hits.bucket)}** from the cache bucket (one S3 GET more). Data transfer to viewers is billed per GB by CloudFront and is left out.`,
    '',
    `List prices per million unique transforms, for comparison: Cloudflare Images ${dollars(COMPARISON_PRICES.cloudflareTransform * MILLION)}; ` +
      `Vercel ${dollars(vercel.low * MILLION)} to ${dollars(vercel.high * MILLION)} (by region; plus its cache writes and reads).`,
    '',
  ].join('\n');
}

/** The largest mean variant the bench measured, if it summed any. */
function largestVariant(measured: Measured): number | undefined {
  const sizes = measured.operations.flatMap((op) => (op.variantBytes === undefined ? [] : [op.variantBytes]));
  return sizes.length ? Math.max(...sizes) : undefined;
}

/** What `npm run cost` prints: the requests (the README's), then storage tiering and managing images (docs/cost.md's). */
export const fullReport = (options: CostOptions) =>
  costReport(options) +
  '\n' +
  tieringReport(largestVariant(options.measured)) +
  '\n' +
  manageReport(MANAGE_BENCH_2026_12_05, regionPrices(options.region), options.memoryMb) +
  '\n' +
  subjectsReport(SUBJECT_BENCH_2026_12_06, regionPrices(options.region), options.memoryMb);

export function parseCostArgs(argv: string[]): CostOptions | undefined {
  const values = commandLine(USAGE, { region: { type: 'string' }, memory: { type: 'string' }, bench: { type: 'string' } }, argv);
  if (!values) return undefined;
  const region = values.region ?? 'us-east-1';
  regionPrices(region);
  const memoryMb = values.memory === undefined ? DEFAULT_LIMITS.memorySizeMb : Number(values.memory);
  if (!Number.isInteger(memoryMb) || memoryMb < 128 || memoryMb > 10_240)
    throw new UsageError(`--memory must be a whole number of MB from 128 to 10240, not "${values.memory}"`);
  const measured = values.bench === undefined ? BENCH_2026_11_23 : (JSON.parse(readFileSync(values.bench, 'utf8')) as Measured);
  return { region, memoryMb, measured };
}

/** Prints the report; returns the exit status (2 for a usage error, with the usage). */
export async function main(argv: string[], output: Output = consoleOutput): Promise<number> {
  let options: CostOptions | undefined;
  try {
    options = parseCostArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    output.err(`cost: ${error.message}`);
    output.err(USAGE);
    return 2;
  }
  if (options) output.out(fullReport(options));
  return 0;
}

runIfMain(import.meta.url, (argv) => main(argv));
