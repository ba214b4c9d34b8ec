// The ImageTransformer construct: everything `cdk deploy` creates.
//
//   viewer ─▶ CloudFront (viewer-request CloudFront Function: validate,
//             canonicalise, verify signatures) ─▶ edge cache (key = canonical URI)
//          ─▶ origin group: 1. cache bucket (S3, OAC)
//                           2. on 403/404: the origin Lambda's `live` alias, through
//                              its Function URL (OAC, AWS_IAM)
//   source bucket ─ created/removed events ─▶ invalidation Lambda
//   sourceBuckets (by key prefix) ─ EventBridge: Object Created/Deleted ─▶ the same
//             (purge the source's variants, invalidate CloudFront, eager presets)
//             ─ an event still failing after Lambda's retries ─▶ failure queue (SQS),
//               alarmed, replayed with `npm run replay-invalidations`
//
// Operating it (lib/monitoring.ts): the origin's metrics in Embedded Metric
// Format, a dashboard, alarms (optionally to SNS), and CodeDeploy canaries
// that move the `live` alias and roll back when a deployment alarm fires.
//
// This file holds the props and the wiring: lib/resolved-settings.ts resolves
// the props once, and each part in lib/parts/ builds its resources.

import type { CustomResource, Duration, SecretValue } from 'aws-cdk-lib';
import type * as acm from 'aws-cdk-lib/aws-certificatemanager';
import type * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as codedeploy from 'aws-cdk-lib/aws-codedeploy';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { HdrMode, Preset } from '../lambda/grammar';
import type { SvgPolicy } from '../lambda/origin/config';
import type { WatermarkProps } from './watermarks';
import type { ImageTransformerAlarms } from './monitoring';
import { buildBuckets } from './parts/buckets';
import { buildDelivery } from './parts/delivery';
import { buildEdgeFunctions } from './parts/edge-functions';
import { buildInvalidation } from './parts/invalidation';
import { buildOperations } from './parts/operations';
import { buildOriginFunction } from './parts/origin-function';
import { deploymentPlan } from './plan';
import type { DialectName } from '../lambda/edge/dialects/dialect';
import { resolveSettings } from './resolved-settings';

export { ImageTransformerConfigError } from './settings';
export { ALARM_THRESHOLDS, type ImageTransformerAlarms } from './monitoring';
export { ORIGIN_ALIAS_NAME } from './parts/origin-alias';
export { DEFAULT_ORIGIN_CONCURRENCY_CAP } from './resolved-settings';

/** Cross-origin (CORS) response headers for the images. */
export interface ImageTransformerCors {
  /** Origins allowed to read the images from script (`Access-Control-Allow-Origin`), e.g. `['https://example.com']`; `['*']` for any. */
  readonly allowOrigins: string[];
  /** How long a browser may cache a preflight answer. @default - no Access-Control-Max-Age header */
  readonly maxAge?: Duration;
}

/** A site a key prefix is served from (see {@link ImageTransformerProps.webOrigins}). */
export interface WebOriginProps {
  /** The base URL a key's remainder is appended to: http(s), ending in `/`, without credentials, query or fragment. */
  readonly url: string;
  /**
   * How long a variant is served before the site is asked whether its image changed.
   * @default Duration.days(1)
   */
  readonly revalidateAfter?: Duration;
}

export interface ImageTransformerProps {
  // ------------------------------------------------------------------ storage

  /**
   * The bucket holding the original images. Its keys are the URL paths
   * (`https://<domain>/<key>?w=640`). The construct grants the origin Lambda
   * read access and subscribes the invalidation Lambda to its object
   * created/removed events (for an imported bucket, through CDK's
   * notifications custom resource, which keeps the bucket's other
   * notifications).
   * @default - a new private bucket (Block Public Access, TLS only, S3-managed encryption)
   */
  readonly sourceBucket?: s3.IBucket;

  /**
   * More buckets of originals, each serving the keys under a prefix:
   * `{ 'archive/': archiveBucket }` serves `https://<domain>/archive/2020/a.jpg?w=640`
   * from object `2020/a.jpg` of archiveBucket (the prefix is not part of its
   * keys, so an existing bucket works as it is). Every other key reads
   * sourceBucket, as without this. Prefixes end with "/" and none starts
   * another; a bucket serves one prefix. The origin Lambda may only
   * s3:GetObject from them. Changes reach the invalidation Lambda through
   * EventBridge, which the construct turns on for each of them (for an
   * imported bucket through CDK's notifications custom resource, which keeps
   * the bucket's other notifications); the buckets must be in the stack's
   * account and region. See "Several buckets" in docs/configuration.md.
   * @default - none: every key reads sourceBucket
   */
  readonly sourceBuckets?: { [prefix: string]: s3.IBucket };

  /**
   * How long a generated variant stays in the cache bucket before S3 deletes
   * it (it is made again on the next request). Whole days.
   * @default Duration.days(90)
   */
  readonly variantExpiration?: Duration;

  /**
   * Delete the buckets this construct creates (cache, log and, when created
   * here, source), with their objects, and the Lambda log groups, when the
   * stack is deleted. An imported source bucket is never touched.
   * @default false - buckets and log groups are retained
   */
  readonly autoDeleteObjects?: boolean;

  // ------------------------------------------------------------------ URL grammar

  /**
   * Largest width or height a request may ask for and an output may have
   * (also the origin's MAX_DIMENSION).
   * @default 8192
   */
  readonly maxDimension?: number;

  /**
   * Allowed widths and heights (breakpoints). A requested size snaps up to the
   * next one; one above the largest is a 400. Bounds the variants per source.
   * @default - any size from 1 to maxDimension
   */
  readonly sizes?: number[];

  /**
   * Named parameter sets for `?preset=<name>`, e.g.
   * `{ thumb: { width: '200', height: '200', fit: 'cover' } }`. Checked at synth
   * time by the same grammar the edge runs: a typo fails `cdk synth`.
   * @default - no presets
   */
  readonly presets?: { [name: string]: Preset };

  /**
   * Serve presets only: any parameter other than `preset` is a 400.
   * Needs at least one preset.
   * @default false
   */
  readonly presetsOnly?: boolean;

  /**
   * Watermarks a URL asks for by name with `wm=<name>`: PNG files of the app,
   * packaged with the origin function (never served as sources), each with its
   * placement: `{ logo: { file: 'brand/logo.png', position: 'bottom-right', size: 0.2, opacity: 0.8 } }`.
   * A changed file or placement gets a new version in every canonical URI on
   * the next deploy, so no variant keeps the old one.
   * @default - no watermarks
   */
  readonly watermarks?: { [name: string]: WatermarkProps };

  /**
   * Key prefixes served only with a watermark, to its name: `{ 'users/': 'logo' }`.
   * Under a prefix, a URL without `wm=<name>` is a 403 that says what to add.
   * (Presets with `presetsOnly` or `signing` are the other way to make every URL carry one.)
   * @default - none
   */
  readonly requireWatermark?: { [prefix: string]: string };

  /**
   * A PNG or JPEG of the app (at most 1 MiB and 4 megapixels, 8 bits per
   * sample), packaged with the origin function and answered in place of the
   * error for a source that is missing (404), of a type not read (415) or
   * damaged (422): made at the size and format the URL asks (at most
   * `sqrt(maxInlineBytes / 4.1)` px a side, 1047 px by default), with the
   * error's status and the error's short lifetime, and never stored. Bad URLs,
   * refusals and `format=json` keep their JSON errors.
   * @default - none: those errors answer JSON
   */
  readonly fallbackImage?: string;

  /**
   * Key prefixes served from web sites instead of the source bucket:
   * `{ 'shop/': { url: 'https://shop.example.com/images/' } }` serves
   * `/shop/a/b.jpg?w=640` from `https://shop.example.com/images/a/b.jpg`. The
   * origin fetches from that host alone (redirects included), only at public
   * addresses, within maxSourceBytes and the time budget, and reads the type
   * from the bytes ([web sources](docs/hostile-input.md#web-sources)). Each
   * prefix gets its own cache behavior, whose origin is the Lambda: it serves
   * the variant it stored for `revalidateAfter`, then asks the site whether
   * the image changed (ETag, Last-Modified) and makes it again if it did.
   * @default - none
   */
  readonly webOrigins?: { [prefix: string]: WebOriginProps };

  /**
   * Let `format=auto` choose AVIF for browsers that accept it. AVIF files are
   * smaller but take seconds to encode on the first request of each variant;
   * without it `format=auto` picks WebP. An explicit `format=avif` works either way.
   * @default true
   */
  readonly avif?: boolean;

  /**
   * What a URL without `hdr` does with a source's HDR gain map (Ultra HDR
   * JPEG): `keep` it in a JPEG output, where `format=auto` then stays JPEG,
   * or `drop` it for the SDR image in the format the browser takes best. The
   * edge writes the choice into the canonical URI, so changing it makes new
   * cache keys (docs/url-contract.md#hdr-gain-maps has the bytes and browsers
   * behind the default).
   * @default 'keep'
   */
  readonly hdr?: HdrMode;

  /**
   * Other image services' URL grammars served beside ours, so that a team can
   * move here without changing its URLs (docs/migrating.md): `dit` (AWS's
   * Dynamic Image Transformation: its base64 JSON requests under a behavior of
   * their own, `/eyJ*`, and its Thumbor paths everywhere else), `imgix`,
   * `cloudflare`. Each is translated at the edge into the canonical URI of the
   * native URL for the same image. `dit` and `imgix` both read every path: not both.
   * With `signing`, URLs are signed the dialect's way.
   * @default - none
   */
  readonly dialects?: DialectName[];

  /**
   * Require signed URLs (`sig`, see the URL contract), verified with secrets in
   * the viewer-request function's KeyValueStore
   * ({@link ImageTransformer.keyValueStore}). The construct never sees a secret: after
   * deploying, the operator puts the active secrets (comma- or
   * newline-separated; several at once for rotation) under the key
   * `signing-secrets`:
   * `aws cloudfront-keyvaluestore put-key --kvs-arn <arn> --key signing-secrets --value <secrets> --if-match <etag>`
   * (the ETag from `describe-key-value-store`). Until then every request is
   * refused with 403.
   * @default false
   */
  readonly signing?: boolean;

  /**
   * Presets made as soon as a source image is created (by the invalidation
   * Lambda), so that the first viewer gets a cache hit. Each must be a preset.
   * @default - none
   */
  readonly eagerPresets?: string[];

  /**
   * With `signing` and `eagerPresets`: the secret the warming requests are
   * signed with, one of those in the KeyValueStore. Prefer a reference, e.g.
   * `SecretValue.secretsManager('image-signing-secret')`: CloudFormation resolves
   * it at deploy time, so it is not in the template (it is in the invalidation
   * Lambda's environment).
   * @default - none; required when signing is on and eagerPresets is not empty
   */
  readonly eagerSigningSecret?: SecretValue;

  // ------------------------------------------------------------------ origin Lambda

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

  // ------------------------------------------------------------------ CloudFront

  /**
   * Custom domain names (CNAMEs) of the distribution. Needs `certificate`.
   * @default - only the distribution's *.cloudfront.net domain
   */
  readonly domainNames?: string[];

  /**
   * ACM certificate for `domainNames`; must be in us-east-1.
   * @default - none (the default CloudFront certificate)
   */
  readonly certificate?: acm.ICertificate;

  /**
   * Which edge locations serve the images (cost against latency).
   * @default cloudfront.PriceClass.PRICE_CLASS_ALL
   */
  readonly priceClass?: cloudfront.PriceClass;

  /**
   * Region of CloudFront Origin Shield, an extra caching layer in front of
   * both origins (best: the region of the buckets). Reduces origin load and
   * duplicate transforms, at a per-request cost.
   * @default - no Origin Shield
   */
  readonly originShieldRegion?: string;

  /**
   * Access logs: CloudFront standard logs and S3 server access logs of the
   * buckets created here, into a log bucket this construct creates.
   * @default true
   */
  readonly accessLogging?: boolean;

  /**
   * Days the access logs are kept. Only with accessLogging.
   * @default Duration.days(90)
   */
  readonly accessLogExpiration?: Duration;

  /**
   * CORS response headers; `false` for none.
   * @default { allowOrigins: ['*'] } - GET and HEAD from any origin
   */
  readonly cors?: ImageTransformerCors | false;

  /**
   * How long CloudFront caches a 4xx answer (bad parameter, missing source...).
   * 5xx answers are never cached.
   * @default Duration.seconds(10)
   */
  readonly clientErrorCachingTtl?: Duration;

  /**
   * ARN of an AWS WAF web ACL (scope CLOUDFRONT, in us-east-1), e.g. with a
   * rate-based rule against floods of distinct variants.
   * @default - no web ACL
   */
  readonly webAclId?: string;

  /**
   * Countries allowed or denied.
   * @default - served worldwide
   */
  readonly geoRestriction?: cloudfront.GeoRestriction;

  /**
   * Comment on the distribution (shown in the console).
   * @default 'edge-image-transformer'
   */
  readonly comment?: string;

  // ------------------------------------------------------------------ operations

  /**
   * Per-request metrics from the origin Lambda, in CloudWatch Embedded Metric
   * Format on its log lines (no API call, no agent): Requests, Errors,
   * ServerErrors, FetchTime, TransformTime, StoreTime, SourceBytes,
   * OutputBytes and MemoryRss, by OutputFormat and ErrorCode. The dashboard
   * and the origin alarms are built on them. false: the log lines keep the
   * same fields but publish no metric.
   * @default true
   */
  readonly metrics?: boolean;

  /**
   * CloudWatch namespace of the origin's metrics. Two deployments in one
   * account and region need two namespaces, or their metrics add up.
   * @default 'EdgeImageTransformer/<stack name>'
   */
  readonly metricsNamespace?: string;

  /**
   * A CloudWatch dashboard of the service: CloudFront requests, cache hit
   * rate and error rates, origin requests by format, transform time
   * percentiles, errors by code, Lambda duration, concurrency, throttles and
   * memory, and the alarms' states.
   * @default true
   */
  readonly dashboard?: boolean;

  /**
   * CloudWatch alarms, with the thresholds of ALARM_THRESHOLDS (see the
   * runbook in docs/operations.md): origin error rate (5xx and crashes), p99
   * transform time near the time budget, origin throttles, failed
   * invalidations and, in a stack deployed to us-east-1, CloudFront's 5xx
   * error rate.
   * @default true
   */
  readonly alarms?: boolean;

  /**
   * An SNS topic the alarms notify, on ALARM and on OK.
   * @default - none (or a topic of this construct's own, with alarmEmail)
   */
  readonly alarmTopic?: sns.ITopic;

  /**
   * An email address the alarms notify: subscribed to alarmTopic, or to a
   * topic this construct creates. AWS emails it a confirmation link first.
   * @default - none
   */
  readonly alarmEmail?: string;

  /**
   * Turn on CloudFront's additional metrics for the distribution
   * (AWS::CloudFront::MonitoringSubscription): the edge cache hit rate, origin
   * latency and error rates by status code, graphed on the dashboard. They are
   * billed per distribution like CloudWatch custom metrics (a few dollars a
   * month at list prices). false: the dashboard graphs viewer requests against
   * origin invocations instead of the hit rate.
   * @default true
   */
  readonly cloudFrontAdditionalMetrics?: boolean;

  /**
   * Deploy new origin code with CodeDeploy: the live alias shifts traffic to
   * the new version by deploymentConfig, and CodeDeploy rolls back on its own
   * when a deployment alarm (origin error rate, p99 transform time, CloudFront
   * 5xx) fires or the deployment fails. false: the alias moves at once.
   * @default true
   */
  readonly canaryDeployments?: boolean;

  /**
   * How a canary deployment shifts traffic.
   * @default codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES - 10% for 5 minutes, then all
   */
  readonly deploymentConfig?: codedeploy.ILambdaDeploymentConfig;

  // ------------------------------------------------------------------ overrides

  /**
   * Props of the origin Lambda this construct does not model (e.g.
   * `ephemeralStorageSize`, `tracing`, `vpc`), passed through as the
   * aws-solutions-constructs pass theirs: each one given replaces the
   * construct's own value of that prop, as it is. Prefer the construct's
   * settings where there is one (memorySize, timeout, ...): what is given
   * here is not checked, nor seen by the local emulator.
   * @default - none
   */
  readonly originFunctionProps?: Partial<nodejs.NodejsFunctionProps>;

  /**
   * Props of the CloudFront distribution this construct does not model
   * (e.g. `httpVersion`, `defaultRootObject`, `publishAdditionalMetrics`),
   * passed through: each one given replaces the construct's own value of
   * that prop, as it is (a `defaultBehavior` given replaces the whole
   * behavior). What is given here is not checked, nor seen by the local emulator.
   * @default - none
   */
  readonly distributionProps?: Partial<cloudfront.DistributionProps>;
}

/**
 * A serverless image transformer: CloudFront with a viewer-request
 * CloudFront Function, an S3 cache bucket of variants and a sharp Lambda
 * behind a Function URL that makes missing variants.
 */
export class ImageTransformer extends Construct {
  /** The CloudFront distribution viewers request images from. */
  public readonly distribution: cloudfront.Distribution;
  /** The bucket of original images (created or imported). */
  public readonly sourceBucket: s3.IBucket;
  /** The buckets of originals mapped to key prefixes (props.sourceBuckets). */
  public readonly sourceBuckets: { [prefix: string]: s3.IBucket };
  /** The bucket of generated variants, keyed by canonical URI. */
  public readonly cacheBucket: s3.Bucket;
  /** The sharp Lambda that makes variants (the fallback origin). */
  public readonly originFunction: nodejs.NodejsFunction;
  /** The published version of the origin Lambda that this deployment made. */
  public readonly originVersion: lambda.IVersion;
  /** The origin Lambda's `live` alias: what the Function URL invokes and canary deployments shift. */
  public readonly originAlias: lambda.Alias;
  /** The live alias's Function URL (AuthType AWS_IAM, reached only through CloudFront OAC). */
  public readonly originFunctionUrl: lambda.FunctionUrl;
  /** The Lambda that purges and invalidates a source's variants when the source changes. */
  public readonly invalidationFunction: nodejs.NodejsFunction;
  /**
   * Where a source-change event goes when the invalidation Lambda still fails after
   * Lambda's two retries (Lambda's on-failure destination record: the S3 event and
   * the error). Kept 14 days; `npm run replay-invalidations` runs them again.
   */
  public readonly invalidationFailureQueue: sqs.Queue;
  /** The viewer-request CloudFront Function. */
  public readonly viewerRequestFunction: cloudfront.Function;
  /** The viewer-response CloudFront Function that gives viewers browserMaxAge. */
  public readonly viewerResponseFunction: cloudfront.Function;
  /** The viewer-request function's store: its data and presets, which each deploy writes, and with `signing` the URL signing secrets. */
  public readonly keyValueStore: cloudfront.KeyValueStore;
  /** The access log bucket; only when `accessLogging` is on. */
  public readonly logBucket?: s3.Bucket;
  /** CloudWatch namespace of the origin's metrics. */
  public readonly metricsNamespace: string;
  /** The CloudWatch dashboard; only when `dashboard` is on. */
  public readonly dashboard?: cloudwatch.Dashboard;
  /** The alarms; only when `alarms` is on. */
  public readonly alarms?: ImageTransformerAlarms;
  /** The topic the alarms notify: alarmTopic, or the one made for alarmEmail. */
  public readonly alarmTopic?: sns.ITopic;
  /**
   * The deploy-time concurrency cap of the origin; absent with an explicit
   * originReservedConcurrency. Its attribute `Message` says what it reserved.
   */
  public readonly originConcurrencyCap?: CustomResource;
  /** The CodeDeploy deployment group that shifts the live alias; only when `canaryDeployments` is on. */
  public readonly deploymentGroup?: codedeploy.LambdaDeploymentGroup;

  constructor(scope: Construct, id: string, props: ImageTransformerProps = {}) {
    super(scope, id);
    // Every part builds its resources in this construct's own scope, as before the split:
    // logical IDs come from construct paths, and a changed one replaces the resource.
    const settings = resolveSettings(this, props);
    const plan = deploymentPlan(settings);
    this.metricsNamespace = settings.metricsNamespace;

    const buckets = buildBuckets(this, settings);
    this.sourceBucket = buckets.sourceBucket;
    this.sourceBuckets = settings.sourceBuckets;
    this.cacheBucket = buckets.cacheBucket;
    this.logBucket = buckets.logBucket;

    const origin = buildOriginFunction(this, { ...settings, plan, sourceBucket: this.sourceBucket, cacheBucket: this.cacheBucket });
    this.originFunction = origin.function;
    this.originVersion = origin.version;
    this.originAlias = origin.alias;
    this.originFunctionUrl = origin.functionUrl;
    this.originConcurrencyCap = origin.concurrencyCap;

    const edgeFunctions = buildEdgeFunctions(this, { ...settings, plan, sourceBucket: this.sourceBucket });
    this.viewerRequestFunction = edgeFunctions.viewerRequest;
    this.viewerResponseFunction = edgeFunctions.viewerResponse;
    this.keyValueStore = edgeFunctions.keyValueStore;

    this.distribution = buildDelivery(this, {
      ...settings,
      cacheBucket: this.cacheBucket,
      originFunctionUrl: this.originFunctionUrl,
      originAlias: this.originAlias,
      edgeFunctions,
      logBucket: this.logBucket,
      plan,
    });

    const invalidation = buildInvalidation(this, {
      ...settings,
      sourceBucket: this.sourceBucket,
      cacheBucket: this.cacheBucket,
      distribution: this.distribution,
      plan,
    });
    this.invalidationFunction = invalidation.function;
    this.invalidationFailureQueue = invalidation.failureQueue;

    const operations = buildOperations(this, {
      ...settings,
      distribution: this.distribution,
      originFunction: this.originFunction,
      originAlias: this.originAlias,
      invalidationFunction: this.invalidationFunction,
      invalidationFailureQueue: this.invalidationFailureQueue,
    });
    this.alarmTopic = operations.alarmTopic;
    this.dashboard = operations.monitoring.dashboard;
    this.alarms = operations.monitoring.alarms;
    this.deploymentGroup = operations.deploymentGroup;
  }
}
