// ImageTransformerProps, origin Lambda: the sharp function that makes the variants, and its limits.

import type { Duration } from 'aws-cdk-lib';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { SvgPolicy } from '../../lambda/origin/config';

/** The props of the origin Lambda: its size, time, limits, caching headers and concurrency. */
export interface OriginLambdaProps {
  /**
   * Memory of the origin Lambda, in MB (CPU grows with it: 1769 MB is one vCPU).
   * @default 2048
   */
  readonly memorySize?: number;

  /**
   * Timeout of the origin Lambda, 5 s to 110 s. The origin's own time budget
   * (TIME_BUDGET_MS) is set a little below it, so a slow transform is a clean
   * 504 rather than a killed invocation; CloudFront waits for the origin 10 s
   * longer than this (a cold start's init phase does not count towards it).
   * @default Duration.seconds(30)
   */
  readonly timeout?: Duration;

  /**
   * How long a transform that ran out of time or killed its process is
   * answered from memory (a 504 or 500 read from the cache bucket) instead of
   * costing another full invocation; CloudFront never caches those answers.
   * @default Duration.seconds(300)
   */
  readonly failureTtl?: Duration;

  /**
   * Largest source object read, in bytes; larger sources are a 413.
   * @default 33554432 (32 MiB)
   */
  readonly maxSourceBytes?: number;

  /**
   * Largest source in pixels, all frames together; larger sources are a 413.
   * @default 100000000 (100 MP)
   */
  readonly maxInputPixels?: number;

  /**
   * Frames kept from an animation; later frames are dropped.
   * @default 200
   */
  readonly maxFrames?: number;

  /**
   * What an SVG source gets: `refuse` (415) or `rasterize` (drawn by librsvg
   * with no network, file or script access; see "SVG sources" in docs/hostile-input.md).
   * @default 'refuse'
   */
  readonly svgPolicy?: SvgPolicy;

  /**
   * Largest response body returned inline by the Lambda; a larger variant is
   * stored and the viewer is redirected to it (a streamed Function URL answer
   * goes at full speed for its first 6 MB only, then at 2 MB/s). At most 4718592.
   * @default 4500000
   */
  readonly maxInlineBytes?: number;

  /**
   * `Cache-Control` of the variants as the origin sends and the cache bucket
   * stores them: how long CloudFront keeps a variant (up to its cache policy's
   * 365 days). Viewers get browserMaxAge instead.
   * @default 'public, max-age=31536000, immutable'
   */
  readonly cacheControl?: string;

  /**
   * How long browsers and downstream shared caches (proxies) keep a variant
   * before they revalidate it: a viewer-response CloudFront Function tells
   * them `public, max-age=<this>` (`public, no-cache` for 0) instead of
   * cacheControl, on images only (never on errors or redirects). A
   * revalidation is a conditional request that CloudFront answers 304 from
   * its cache, without the origin. The trade-off: a replaced or taken-down
   * image stays in a browser for up to this long after its invalidation;
   * shorter means more (cheap, small) requests to CloudFront.
   * @default Duration.hours(1)
   */
  readonly browserMaxAge?: Duration;

  /**
   * Reserved concurrency of the origin Lambda: a cap on simultaneous
   * transforms, and so on what a flood of cache misses can cost; it costs
   * nothing itself, but takes that much from the account's concurrency for
   * every other function, and misses beyond it are throttled (viewers get a
   * 5xx for images not yet made; the OriginThrottles alarm fires).
   * A fixed value, applied by CloudFormation as it is: `cdk deploy` fails
   * when the account cannot spare it (Lambda keeps 100 of an account's
   * concurrency unreserved, or all of it below a quota of 100).
   * @default - the originConcurrencyCap, sized to what the account can spare
   */
  readonly originReservedConcurrency?: number;

  /**
   * Without originReservedConcurrency: the origin's reserved concurrency,
   * applied at deploy time by a small custom resource as this cap or as much
   * as the account can spare, whichever is lower. On an account with no room
   * (a new account's quota of 10 or 50) it reserves nothing and says so in
   * the stack output OriginConcurrencyCap. `false`: no cap (and any it set
   * is removed). Raise it with a higher number, or with a fixed
   * originReservedConcurrency.
   * @default DEFAULT_ORIGIN_CONCURRENCY_CAP (50)
   */
  readonly originConcurrencyCap?: number | false;

  /**
   * Provisioned concurrency on the origin's live alias: that many execution
   * environments kept initialised (sharp loaded), so misses up to that
   * concurrency have no cold start. Billed for every hour it is configured,
   * used or not; misses beyond it are served on demand, with cold starts.
   * At most originReservedConcurrency when both are set.
   * @default - none (on demand: pay per request, cold starts on bursts)
   */
  readonly originProvisionedConcurrency?: number;

  /**
   * Retention of the Lambdas' CloudWatch log groups.
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;
}
