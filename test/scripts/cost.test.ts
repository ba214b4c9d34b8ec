// `npm run cost`: the arithmetic on figures chosen by hand against the dated
// list prices, the options, and the README's table and docs/cost.md's storage
// tiering and managing images, which must be what the command prints for the
// default settings.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../lib/project-root';
import { costReport, fullReport, hitCosts, main, operationCosts, parseCostArgs } from '../../scripts/cost';
import type { Measured } from '../../scripts/cost/measured';
import {
  deleteCost,
  invalidationCost,
  MANAGE_BENCH_2026_12_05,
  manageReport,
  type ManageMeasured,
  uploadCost,
} from '../../scripts/cost/manage';
import { REGION_PRICES, TIERING_PRICES } from '../../scripts/cost/prices';
import { SUBJECT_BENCH_2026_12_06, type SubjectMeasured, subjectsReport } from '../../scripts/cost/subjects';
import { dollars } from '../../scripts/bench/stats';
import { breakEvenBytes, type SourceScenario, sourceTiering, tieringReport, variantTiering } from '../../scripts/cost/tiering';

const MB = 1024 * 1024;
const ONE_SECOND: Measured = {
  source: 'by hand',
  coldInitMs: 500,
  operations: [{ name: 'one', label: 'one second', missInvocationMs: 1000, variantBytes: MB }],
};

function captured() {
  const lines = { out: [] as string[], err: [] as string[] };
  return { lines, output: { out: (line: string) => lines.out.push(line), err: (line: string) => lines.err.push(line) } };
}

describe('npm run cost', () => {
  it('prices a million one-second misses at 1 GB in us-east-1 from the list prices', () => {
    const [cost] = operationCosts({ region: 'us-east-1', memoryMb: 1024, measured: ONE_SECOND });
    // Lambda: $0.20 per million requests + 1 GB-s at $0.0000133334, a million times.
    expect(cost!.lambda).toBeCloseTo(0.2 + 13.3334, 6);
    // S3: three GETs at $0.0004 per 1,000 and one PUT at $0.005 per 1,000, a million times.
    expect(cost!.s3).toBeCloseTo(3 * 0.4 + 5, 6);
    // CloudFront: $0.01 per 10,000 HTTPS requests, two functions at $0.10 per million.
    expect(cost!.cloudfront).toBeCloseTo(1 + 0.2, 6);
    expect(cost!.miss).toBeCloseTo(cost!.lambda + cost!.s3 + cost!.cloudfront, 9);
    // INIT of 500 ms at 1 GB, billed as duration; a 1 MiB variant a month in S3 Standard at $0.023 per GB.
    expect(cost!.coldStart).toBeCloseTo(0.5 * 13.3334, 6);
    expect(cost!.storage).toBeCloseTo((0.023 / 1024) * 1e6, 6);
  });

  it('bills duration by the started millisecond, in proportion to the memory size', () => {
    const at = (ms: number, memoryMb: number) =>
      operationCosts({
        region: 'us-east-1',
        memoryMb,
        measured: { ...ONE_SECOND, operations: [{ name: 'x', label: 'x', missInvocationMs: ms }] },
      })[0]!.lambda - 0.2;
    expect(at(0.1, 1024)).toBeCloseTo(at(1, 1024), 9);
    expect(at(100, 2048)).toBeCloseTo(2 * at(100, 1024), 9);
  });

  it('prices S3 by the region and hits without the Lambda', () => {
    const [virginia] = operationCosts({ region: 'us-east-1', memoryMb: 1024, measured: ONE_SECOND });
    const [frankfurt] = operationCosts({ region: 'eu-central-1', memoryMb: 1024, measured: ONE_SECOND });
    expect(frankfurt!.s3).toBeGreaterThan(virginia!.s3);
    expect(hitCosts('us-east-1')).toEqual({ edge: expect.closeTo(1.2, 9), bucket: expect.closeTo(1.6, 9) });
  });

  it('answers a bad region or memory size with exit status 2 and the usage', async () => {
    for (const argv of [['--region', 'mars-1'], ['--memory', '64'], ['--memory', 'lots'], ['--nope']]) {
      const { lines, output } = captured();
      expect(await main(argv, output)).toBe(2);
      expect(lines.err.join('\n')).toMatch(/^cost: .*\nusage: npm run cost/);
    }
  });

  it("prints the README's table and docs/cost.md's tiering for the default settings", async () => {
    const { lines, output } = captured();
    expect(await main([], output)).toBe(0);
    const options = parseCostArgs([])!;
    expect(lines.out.join('\n')).toBe(fullReport(options));
    const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
    expect(readme).toContain(costReport(options).trim());
    const costDoc = readFileSync(join(PROJECT_ROOT, 'docs/cost.md'), 'utf8');
    // The largest mean variant of the recorded bench run: the 1200 w JPEG's.
    expect(fullReport(options)).toContain(tieringReport((1.7 * MB) / 16));
    expect(costDoc).toContain(tieringReport((1.7 * MB) / 16).trim());
  });
});

describe('npm run cost: storage tiering', () => {
  const GB = 1024 * MB;
  const ONE_BAND = (meanBytes: number): SourceScenario => ({
    objects: 1000,
    sizes: [{ label: 'x', share: 1, meanBytes }],
    readIn30Days: 0.1,
    read30To90DaysAgo: 0.2,
  });

  it('prices a tiered source band from the list prices, monitoring and transitions included', () => {
    const [band] = sourceTiering(ONE_BAND(GB));
    expect(band!.gb).toBe(1000);
    // 1,000 GB in S3 Standard at $0.023.
    expect(band!.standard).toBeCloseTo(23, 9);
    // 10% at $0.023, 20% at $0.0125, 70% at $0.004, and 1,000 objects monitored at $0.0025 per 1,000.
    expect(band!.tiered).toBeCloseTo(1000 * (0.1 * 0.023 + 0.2 * 0.0125 + 0.7 * 0.004) + 0.0025, 9);
    // 1,000 transitions at $0.01 per 1,000.
    expect(band!.transitions).toBeCloseTo(0.01, 9);
  });

  it('leaves objects of 128 KB and less in S3 Standard, with neither transition nor monitoring', () => {
    const [band] = sourceTiering(ONE_BAND(128 * 1024));
    expect(band!.tiered).toBe(band!.standard);
    expect(band!.transitions).toBe(0);
  });

  it("finds where the monitoring fee is paid back: a variant's life against its size", () => {
    // $0.0025 per 1,000 objects a month against $0.0105 per GB a month saved in Infrequent Access.
    expect(breakEvenBytes(TIERING_PRICES.infrequentGbMonth) / GB).toBeCloseTo(0.0000025 / 0.0105, 12);
    // Expired at 30 days, a variant never leaves Frequent Access: tiering never pays.
    expect(variantTiering(30)).toMatchObject({ savedPerGb: 0, breakEvenBytes: Infinity });
    // At 90: 60 days in Infrequent Access; three months of monitoring and one transition to pay for.
    const ninety = variantTiering(90);
    expect(ninety.savedPerGb).toBeCloseTo(2 * 0.0105, 12);
    expect(ninety.breakEvenBytes / GB).toBeCloseTo((3 * 0.0000025 + 0.00001) / (2 * 0.0105), 12);
    expect(ninety.breakEvenWrittenTieredBytes).toBeLessThan(ninety.breakEvenBytes);
    // At a year, Archive Instant Access from day 90.
    expect(variantTiering(365).savedPerGb).toBeCloseTo((60 * 0.0105 + 275 * 0.019) / 30, 12);
  });
});

describe('npm run cost: managing images', () => {
  const prices = REGION_PRICES['us-east-1']!;
  const measured: ManageMeasured = {
    source: 'by hand',
    ticketMs: 0.5,
    validationMs: 999.2,
    validationP95Ms: 2000,
    deleteMs: 40,
    deleteBatch: 50,
  };

  it('prices an upload: two API calls, the API Lambda for both, a second of the validator, a POST, a GET and a COPY', () => {
    const cost = uploadCost(measured, prices, 1024);
    expect(cost.api).toBeCloseTo(2 * 1.0, 9);
    // Each ticket bills 1 ms at 256 MB; the validator 1,000 ms at 1 GB; three requests at $0.20 a million.
    expect(cost.lambda).toBeCloseTo(1e6 * (3 * 0.2e-6 + (2 * 0.001 * 0.25 + 1) * 0.0000133334), 6);
    expect(cost.s3).toBeCloseTo(2 * 5 + 0.4, 9);
    expect(cost.total).toBeCloseTo(cost.api + cost.lambda + cost.s3, 9);
  });

  it('prices deletions by the call of 100 keys, S3 deletes being free', () => {
    // 10,000 calls, each 80 ms (0.8 ms a key) at 256 MB.
    expect(deleteCost(measured, prices)).toMatchObject({ api: expect.closeTo(0.01, 9), s3: 0 });
    expect(deleteCost(measured, prices).lambda).toBeCloseTo(10_000 * (0.2e-6 + 0.08 * 0.25 * 0.0000133334), 9);
  });

  it('prices invalidations beyond the free thousand paths a month', () => {
    expect(invalidationCost(1000)).toBe(0);
    expect(invalidationCost(4_000_000)).toBeCloseTo(3_999_000 * 0.005, 6);
  });

  it('is what docs/cost.md shows for the default settings', () => {
    const options = parseCostArgs([])!;
    const report = manageReport(MANAGE_BENCH_2026_12_05, prices, options.memoryMb);
    expect(fullReport(options)).toContain(report);
    expect(readFileSync(join(PROJECT_ROOT, 'docs/cost.md'), 'utf8')).toContain(report.trim());
  });
});

describe('npm run cost: subjects', () => {
  const prices = REGION_PRICES['us-east-1']!;
  const measured: SubjectMeasured = { source: 'by hand', firstMissAddedMs: 499.5, firstMissAddedP95Ms: 700, laterSizeAddedMs: 0 };

  it("prices a first miss's added time at the memory size with the two records written and read, and a later size's reads", () => {
    const report = subjectsReport(measured, prices, 1024);
    // 500 ms at 1 GB, two GETs and two PUTs a miss; a later size reads the two records only.
    const first = 1e6 * (0.5 * 0.0000133334 + 2 * 0.4e-6 + 2 * 5e-6);
    expect(report).toContain(`**${dollars(first)}**`);
    expect(report).toContain(`**${dollars(1e6 * 2 * 0.4e-6)}**`);
  });

  it('is what docs/cost.md shows for the default settings', () => {
    const options = parseCostArgs([])!;
    const report = subjectsReport(SUBJECT_BENCH_2026_12_06, prices, options.memoryMb);
    expect(fullReport(options)).toContain(report);
    expect(readFileSync(join(PROJECT_ROOT, 'docs/cost.md'), 'utf8')).toContain(report.trim());
  });
});
