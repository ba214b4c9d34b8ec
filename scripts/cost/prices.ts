// List prices `npm run cost` uses, per region, with where each comes from and
// when it was read. On-demand, first pricing tier, no free tier, no Savings
// Plans. Re-check the pages before relying on a figure; change it here only.

export const PRICES_DATE = '2026-11-24';

export interface RegionPrices {
  /** Lambda, arm64: dollars per GB-second of duration (INIT included) and per request. */
  lambdaGbSecond: number;
  lambdaRequest: number;
  /** S3 Standard: dollars per GET, per PUT, per GB-month stored. */
  s3Get: number;
  s3Put: number;
  s3GbMonth: number;
}

const PER_MILLION = 1e-6;
const PER_THOUSAND = 1e-3;

/**
 * The origin's and the buckets' region. CloudFront is priced by the viewer's region instead (below).
 * Lambda: https://aws.amazon.com/lambda/pricing/ (Arm, first 7.5 billion GB-s a month; INIT is billed as duration).
 * S3: https://aws.amazon.com/s3/pricing/ (S3 Standard, first 50 TB a month).
 */
export const REGION_PRICES: Record<string, RegionPrices> = {
  'us-east-1': {
    lambdaGbSecond: 0.0000133334,
    lambdaRequest: 0.2 * PER_MILLION,
    s3Get: 0.0004 * PER_THOUSAND,
    s3Put: 0.005 * PER_THOUSAND,
    s3GbMonth: 0.023,
  },
  'eu-west-1': {
    lambdaGbSecond: 0.0000133334,
    lambdaRequest: 0.2 * PER_MILLION,
    s3Get: 0.0004 * PER_THOUSAND,
    s3Put: 0.005 * PER_THOUSAND,
    s3GbMonth: 0.023,
  },
  'eu-central-1': {
    lambdaGbSecond: 0.0000133334,
    lambdaRequest: 0.2 * PER_MILLION,
    s3Get: 0.00043 * PER_THOUSAND,
    s3Put: 0.0054 * PER_THOUSAND,
    s3GbMonth: 0.0245,
  },
};

/**
 * CloudFront, viewers in the United States, Mexico, Canada, Europe and Israel: dollars per HTTPS
 * request and per CloudFront Functions invocation. https://aws.amazon.com/cloudfront/pricing/
 */
export const CLOUDFRONT_PRICES = { request: 0.01 / 10_000, functionInvocation: 0.1 * PER_MILLION };

/** CloudFront invalidation: dollars per path (a wildcard is one path) beyond the first 1,000 paths a month, account-wide. Same page. */
export const INVALIDATION_PRICES = { path: 0.005, freePathsPerMonth: 1000 };

/**
 * API Gateway HTTP APIs, us-east-1, first 300 million requests a month, dollars per request (each
 * 512 KB or part of it): https://aws.amazon.com/api-gateway/pricing/. The management API's price,
 * written down on 2026-12-05 from AWS's long-published figure, not a fresh read of the page.
 */
export const HTTP_API_PRICES = { request: 1.0 * PER_MILLION };

/**
 * Per-transform list prices of the services a team would move from, dollars per transform.
 * Cloudflare Images: https://developers.cloudflare.com/images/pricing/ ($0.50 per 1,000 unique
 * transformations a month, 5,000 included). Vercel: https://vercel.com/docs/image-optimization/limits-and-pricing
 * (Pro and Enterprise beyond the included usage, by region; cache reads and writes are billed besides).
 */
export const COMPARISON_PRICES = {
  cloudflareTransform: 0.5 * PER_THOUSAND,
  vercelTransform: { low: 0.05 * PER_THOUSAND, high: 0.0812 * PER_THOUSAND },
};

/**
 * S3 Intelligent-Tiering and the lifecycle transition into it, us-east-1 only (`npm run cost` prices
 * tiering there, whatever --region): https://aws.amazon.com/s3/pricing/ ("Storage": S3 Standard and
 * S3 Intelligent-Tiering's Frequent, Infrequent and Archive Instant Access tiers, first 50 TB a month,
 * and its monitoring and automation fee for objects of 128 KB and more; "Requests & data retrievals":
 * Lifecycle Transition requests into Intelligent-Tiering). The figures AWS has published since the
 * Archive Instant Access tier came (November 2021), written down on TIERING_PRICES_DATE without a fresh
 * read of the page: re-check them there before relying on one.
 */
export const TIERING_PRICES_DATE = '2026-12-05';

export interface TieringPrices {
  /** Dollars per GB-month: S3 Standard, and Intelligent-Tiering's three automatic tiers. */
  standardGbMonth: number;
  frequentGbMonth: number;
  infrequentGbMonth: number;
  archiveInstantGbMonth: number;
  /** Dollars per object a month that Intelligent-Tiering monitors (128 KB and more). */
  monitoringObjectMonth: number;
  /** Dollars per object a lifecycle rule moves into Intelligent-Tiering. */
  transition: number;
}

export const TIERING_PRICES: TieringPrices = {
  standardGbMonth: REGION_PRICES['us-east-1']!.s3GbMonth,
  frequentGbMonth: 0.023,
  infrequentGbMonth: 0.0125,
  archiveInstantGbMonth: 0.004,
  monitoringObjectMonth: 0.0025 * PER_THOUSAND,
  transition: 0.01 * PER_THOUSAND,
};
