// The ImageTransformer construct: everything `cdk deploy` creates.
//
//   viewer ─▶ CloudFront (viewer-request CloudFront Function: validate,
//             canonicalise, verify signatures) ─▶ edge cache (key = canonical URI)
//          ─▶ origin group: 1. cache bucket (S3, OAC)
//                           2. on 403/404: the origin Lambda's `live` alias, through
//                              its Function URL (OAC, AWS_IAM)
//   source bucket ─ created/removed events ─▶ invalidation Lambda
//             (purge the source's variants, invalidate CloudFront, eager presets)
//             ─ an event still failing after Lambda's retries ─▶ failure queue (SQS),
//               alarmed, replayed with `npm run replay-invalidations`
//
// Operating it (lib/monitoring.ts): the origin's metrics in Embedded Metric
// Format, a dashboard, alarms (optionally to SNS), and CodeDeploy canaries
// that move the `live` alias and roll back when a deployment alarm fires.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CustomResource, Duration, RemovalPolicy, type SecretValue, Stack, Token, Validations } from 'aws-cdk-lib';
import type * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as codedeploy from 'aws-cdk-lib/aws-codedeploy';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3n from 'aws-cdk-lib/aws-s3-notifications';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct, type IConstruct } from 'constructs';
import { DEFAULT_GRAMMAR_OPTIONS, type GrammarOptions, type Preset } from '../lambda/grammar';
import { DEFAULT_CACHE_CONTROL, DEFAULT_FAILURE_TTL_SECONDS, DEFAULT_LIMITS, DEFAULT_MAX_INLINE_BYTES, type SvgPolicy } from '../lambda/origin/config';
import { FAILURES_PREFIX } from '../lambda/origin/failures';
import { viewerRequestFunctionCode } from './edge-function';
import { browserCacheControl, DEFAULT_BROWSER_MAX_AGE_SECONDS, viewerResponseFunctionCode } from './viewer-response-function';
import { ImageTransformerMonitoring, type ImageTransformerAlarms } from './monitoring';
import {
  ImageTransformerConfigError,
  checkEagerPresets,
  checkGrammar,
  checkInteger,
  checkRegion,
} from './settings';

export { ImageTransformerConfigError } from './settings';
export { ALARM_THRESHOLDS, type ImageTransformerAlarms } from './monitoring';

/** The name of the origin Lambda's alias that the Function URL (and so CloudFront) invokes. */
export const ORIGIN_ALIAS_NAME = 'live';

/** Cross-origin (CORS) response headers for the images. */
export interface ImageTransformerCors {
  /** Origins allowed to read the images from script (`Access-Control-Allow-Origin`), e.g. `['https://example.com']`; `['*']` for any. */
  readonly allowOrigins: string[];
  /** How long a browser may cache a preflight answer. @default - no Access-Control-Max-Age header */
  readonly maxAge?: Duration;
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
   * Let `format=auto` choose AVIF for browsers that accept it. AVIF files are
   * smaller but take seconds to encode on the first request of each variant;
   * without it `format=auto` picks WebP. An explicit `format=avif` works either way.
   * @default true
   */
  readonly avif?: boolean;

  /**
   * Require signed URLs (`sig`, see the URL contract). Creates a CloudFront
   * KeyValueStore ({@link ImageTransformer.keyValueStore}) associated with the
   * viewer-request function. The construct never sees a secret: after
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
}

/** Where the project lives: entries, lock file and package.json are found from here. */
const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
const ORIGIN_ENTRY = join(PROJECT_ROOT, 'lambda', 'origin', 'index.ts');
const INVALIDATE_ENTRY = join(PROJECT_ROOT, 'lambda', 'invalidate', 'index.ts');
const CONCURRENCY_CAP_ENTRY = join(PROJECT_ROOT, 'lambda', 'concurrency', 'index.ts');

/**
 * The origin's default concurrency cap. At 2048 MB, 50 misses at once cost at
 * most about $4.80 an hour of arm64 Lambda (50 x 2 GB x 3600 s at list
 * price) when a flood of distinct URLs hits it, while still making 25 to 50
 * new variants a second at a miss's usual 1 to 2 s: far more than a site's
 * steady miss rate, since every variant is made once.
 */
export const DEFAULT_ORIGIN_CONCURRENCY_CAP = 50;
const LOCK_FILE = join(PROJECT_ROOT, 'package-lock.json');

/** The newest Node.js Lambda runtime in aws-cdk-lib 2.276 (nodejs24.x). */
const RUNTIME = lambda.Runtime.NODEJS_24_X;

/** What every Lambda of the project shares: bundled from this checkout, on arm64. */
const PROJECT_FUNCTION = {
  handler: 'handler',
  projectRoot: PROJECT_ROOT,
  depsLockFilePath: LOCK_FILE,
  runtime: RUNTIME,
  architecture: lambda.Architecture.ARM_64,
};

/** How the small Lambdas (invalidation, concurrency cap) are bundled: the SDK with them, as tested. */
const SMALL_BUNDLING = { minify: true, sourceMap: true, sourcesContent: false, bundleAwsSDK: true };

/** The id CDK gives its one-per-stack S3 notifications custom resource Lambda. */
const BUCKET_NOTIFICATIONS_HANDLER_ID = 'BucketNotificationsHandler050a0587b7544547bf325f094a3db834';

/** CloudFront custom error responses may name only these statuses. */
const CLIENT_ERROR_STATUSES = [400, 403, 404, 405, 414, 416];
const SERVER_ERROR_STATUSES = [500, 501, 502, 503, 504];

/** The sharp version in package.json: the one the arm64 reinstall must fetch. */
function sharpVersion(): string {
  const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
  };
  const version = pkg.dependencies?.sharp;
  if (!version) throw new ImageTransformerConfigError('package.json must list sharp in "dependencies".');
  return version;
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
  /** The store of URL signing secrets; only when `signing` is on. */
  public readonly keyValueStore?: cloudfront.KeyValueStore;
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

    // ---------------------------------------------------------------- settings
    const grammar: GrammarOptions = checkGrammar({
      maxDimension: props.maxDimension ?? DEFAULT_GRAMMAR_OPTIONS.maxDimension,
      sizes: props.sizes,
      presets: props.presets,
      presetsOnly: props.presetsOnly,
    });
    const avif = props.avif ?? true;
    const eagerPresets = props.eagerPresets ?? [];
    checkEagerPresets(eagerPresets, grammar);
    if (props.signing && eagerPresets.length > 0 && !props.eagerSigningSecret) {
      throw new ImageTransformerConfigError(
        'eagerPresets with signing need eagerSigningSecret (the secret, also in the KeyValueStore, that warming requests are signed with).',
      );
    }
    if (props.eagerSigningSecret && !props.signing) {
      throw new ImageTransformerConfigError('eagerSigningSecret is only used with signing: true.');
    }

    const memorySize = props.memorySize ?? 2048;
    checkInteger('memorySize', memorySize, 128, 10240);
    const timeout = props.timeout ?? Duration.seconds(30);
    const timeoutSeconds = timeout.toSeconds();
    checkInteger('timeout (seconds)', timeoutSeconds, 5, 110);
    const timeoutMs = timeoutSeconds * 1000;
    // Leave time to log and answer 504 before Lambda kills the invocation.
    const timeBudgetMs = timeoutMs - Math.max(2000, Math.round(timeoutMs / 10));

    const limits = {
      maxSourceBytes: props.maxSourceBytes ?? DEFAULT_LIMITS.maxSourceBytes,
      maxInputPixels: props.maxInputPixels ?? DEFAULT_LIMITS.maxInputPixels,
      maxFrames: props.maxFrames ?? DEFAULT_LIMITS.maxFrames,
      maxInlineBytes: props.maxInlineBytes ?? DEFAULT_MAX_INLINE_BYTES,
    };
    checkInteger('maxSourceBytes', limits.maxSourceBytes, 1, 5 * 1024 ** 3);
    checkInteger('maxInputPixels', limits.maxInputPixels, 1, Number.MAX_SAFE_INTEGER);
    checkInteger('maxFrames', limits.maxFrames, 1, 100_000);
    // 4.5 MiB keeps a whole response, headers included, in the 6 MB Lambda streams at full speed.
    checkInteger('maxInlineBytes', limits.maxInlineBytes, 1, 4_718_592);
    const cacheControl = props.cacheControl ?? DEFAULT_CACHE_CONTROL;
    if (!Token.isUnresolved(cacheControl) && (!cacheControl.trim() || /[\r\n]/.test(cacheControl))) {
      throw new ImageTransformerConfigError(`cacheControl must be a one-line header value, not ${JSON.stringify(cacheControl)}.`);
    }
    const browserMaxAgeSeconds = (props.browserMaxAge ?? Duration.seconds(DEFAULT_BROWSER_MAX_AGE_SECONDS)).toSeconds();
    checkInteger('browserMaxAge (seconds)', browserMaxAgeSeconds, 0, 31_536_000);
    checkInteger('originReservedConcurrency', props.originReservedConcurrency, 1, 100_000);
    checkInteger('originProvisionedConcurrency', props.originProvisionedConcurrency, 1, 100_000);
    if (props.originConcurrencyCap !== undefined && props.originReservedConcurrency !== undefined) {
      throw new ImageTransformerConfigError('originConcurrencyCap is only used without originReservedConcurrency (a fixed reservation).');
    }
    if (props.originConcurrencyCap !== false) checkInteger('originConcurrencyCap', props.originConcurrencyCap, 1, 100_000);
    if (
      props.originProvisionedConcurrency !== undefined &&
      props.originReservedConcurrency !== undefined &&
      !Token.isUnresolved(props.originProvisionedConcurrency) &&
      !Token.isUnresolved(props.originReservedConcurrency) &&
      props.originProvisionedConcurrency > props.originReservedConcurrency
    ) {
      throw new ImageTransformerConfigError(
        `originProvisionedConcurrency (${props.originProvisionedConcurrency}) cannot exceed originReservedConcurrency (${props.originReservedConcurrency}).`,
      );
    }

    const originMetrics = props.metrics ?? true;
    this.metricsNamespace = props.metricsNamespace ?? `EdgeImageTransformer/${Stack.of(this).stackName}`;
    if (!Token.isUnresolved(this.metricsNamespace) && (!/^[0-9A-Za-z.\-_/#: ]{1,255}$/.test(this.metricsNamespace) || this.metricsNamespace.startsWith('AWS/'))) {
      throw new ImageTransformerConfigError(
        `metricsNamespace ${JSON.stringify(this.metricsNamespace)} is not a CloudWatch namespace (1-255 of A-Z a-z 0-9 . - _ / # : and space, not starting with AWS/).`,
      );
    }
    const alarmsOn = props.alarms ?? true;
    if (!alarmsOn && (props.alarmTopic || props.alarmEmail)) {
      throw new ImageTransformerConfigError('alarmTopic and alarmEmail need alarms (alarms: false turns them off).');
    }
    if (props.alarmEmail !== undefined && !Token.isUnresolved(props.alarmEmail) && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(props.alarmEmail)) {
      throw new ImageTransformerConfigError(`alarmEmail ${JSON.stringify(props.alarmEmail)} is not an email address.`);
    }
    const canaryDeployments = props.canaryDeployments ?? true;
    if (props.deploymentConfig && !canaryDeployments) {
      throw new ImageTransformerConfigError('deploymentConfig is only used with canaryDeployments: true.');
    }

    const variantExpirationDays = (props.variantExpiration ?? Duration.days(90)).toDays();
    checkInteger('variantExpiration (days)', variantExpirationDays, 1, 36_500);
    const accessLogging = props.accessLogging ?? true;
    const accessLogDays = (props.accessLogExpiration ?? Duration.days(90)).toDays();
    checkInteger('accessLogExpiration (days)', accessLogDays, 1, 36_500);
    const clientErrorTtl = props.clientErrorCachingTtl ?? Duration.seconds(10);
    checkInteger('clientErrorCachingTtl (seconds)', clientErrorTtl.toSeconds(), 0, 31_536_000);
    checkRegion('originShieldRegion', props.originShieldRegion);

    const domainNames = props.domainNames ?? [];
    if (domainNames.length > 0 && !props.certificate) {
      throw new ImageTransformerConfigError('domainNames need a certificate (an ACM certificate in us-east-1 covering them).');
    }
    if (props.certificate && domainNames.length === 0) {
      throw new ImageTransformerConfigError('a certificate is only used with domainNames; give the domain names it covers.');
    }
    const certificateArn = props.certificate?.certificateArn;
    if (certificateArn && !Token.isUnresolved(certificateArn) && !certificateArn.includes(':us-east-1:')) {
      throw new ImageTransformerConfigError(`CloudFront needs a certificate in us-east-1, not ${certificateArn}.`);
    }
    const cors = props.cors === undefined ? { allowOrigins: ['*'] } : props.cors;
    if (cors && cors.allowOrigins.length === 0) {
      throw new ImageTransformerConfigError('cors.allowOrigins is empty; give origins, ["*"], or set cors: false.');
    }

    const removalPolicy = props.autoDeleteObjects ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN;
    const autoDeleteObjects = props.autoDeleteObjects ?? false;

    // ---------------------------------------------------------------- buckets
    const privateBucket = {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      removalPolicy,
      autoDeleteObjects,
    };

    if (accessLogging) {
      this.logBucket = new s3.Bucket(this, 'LogBucket', {
        ...privateBucket,
        // CloudFront standard logs are delivered with an ACL grant, which needs ACLs
        // enabled; S3 server access logs use the bucket policy either way.
        objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
        lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(accessLogDays) }],
      });
      Validations.of(this.logBucket).acknowledge({
        id: 'AwsSolutions-S1',
        reason:
          'This is the access-log bucket itself; logging it into itself would log its own log writes in a loop, and S3 advises against it.',
      });
    }
    const serverAccessLogs = (prefix: string) =>
      this.logBucket ? { serverAccessLogsBucket: this.logBucket, serverAccessLogsPrefix: prefix } : {};

    this.sourceBucket =
      props.sourceBucket ??
      new s3.Bucket(this, 'SourceBucket', {
        ...privateBucket,
        objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
        ...serverAccessLogs('s3/source/'),
      });

    this.cacheBucket = new s3.Bucket(this, 'CacheBucket', {
      ...privateBucket,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [
        { id: 'expire-variants', expiration: Duration.days(variantExpirationDays) },
        // Remembered failures are read only while FAILURE_TTL_SECONDS lasts; S3 removes them a day on.
        { id: 'expire-remembered-failures', prefix: FAILURES_PREFIX, expiration: Duration.days(1) },
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      ...serverAccessLogs('s3/cache/'),
    });

    // ---------------------------------------------------------------- origin Lambda
    const originLogs = new logs.LogGroup(this, 'OriginLogs', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy,
    });
    // Own roles, without AWSLambdaBasicExecutionRole: logs to its own log group only.
    const originRole = new iam.Role(this, 'OriginRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: 'edge-image-transformer origin: read sources, write variants, write its own logs',
    });
    originLogs.grantWrite(originRole);
    originRole.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ReadSources',
        actions: ['s3:GetObject'],
        resources: [this.sourceBucket.arnForObjects('*')],
      }),
    );
    originRole.addToPolicy(
      new iam.PolicyStatement({
        // Without it S3 answers 403, not 404, for a missing source key.
        sid: 'TellMissingSourcesApart',
        actions: ['s3:ListBucket'],
        resources: [this.sourceBucket.bucketArn],
      }),
    );
    originRole.addToPolicy(
      new iam.PolicyStatement({
        sid: 'WriteVariants',
        actions: ['s3:PutObject'],
        resources: [this.cacheBucket.arnForObjects('*')],
      }),
    );
    this.sourceBucket.encryptionKey?.grantDecrypt(originRole);

    const arm64SharpVersion = sharpVersion();
    this.originFunction = new nodejs.NodejsFunction(this, 'OriginFunction', {
      description: 'edge-image-transformer origin: makes a missing variant with sharp',
      entry: ORIGIN_ENTRY,
      ...PROJECT_FUNCTION,
      memorySize,
      timeout,
      role: originRole,
      logGroup: originLogs,
      reservedConcurrentExecutions: props.originReservedConcurrency,
      environment: {
        SOURCE_BUCKET: this.sourceBucket.bucketName,
        CACHE_BUCKET: this.cacheBucket.bucketName,
        MAX_SOURCE_BYTES: String(limits.maxSourceBytes),
        MAX_INPUT_PIXELS: String(limits.maxInputPixels),
        MAX_DIMENSION: String(grammar.maxDimension),
        MAX_FRAMES: String(limits.maxFrames),
        TIME_BUDGET_MS: String(timeBudgetMs),
        MAX_INLINE_BYTES: String(limits.maxInlineBytes),
        CACHE_CONTROL: cacheControl,
        FAILURE_TTL_SECONDS: String((props.failureTtl ?? Duration.seconds(DEFAULT_FAILURE_TTL_SECONDS)).toSeconds()),
        ...(props.svgPolicy ? { SVG_POLICY: props.svgPolicy } : {}),
        ...(grammar.sizes ? { SIZES: grammar.sizes.join(',') } : {}),
        METRICS_NAMESPACE: this.metricsNamespace,
        ...(originMetrics ? {} : { METRICS: 'false' }),
      },
      bundling: {
        minify: true,
        sourceMap: true,
        sourcesContent: false,
        // The AWS SDK is bundled rather than taken from the runtime: the code runs
        // with the versions in package-lock.json that the tests ran (conditional
        // PutObject included), not whichever SDK the runtime ships that month.
        bundleAwsSDK: true,
        // The SDK's ES module builds, which esbuild tree-shakes: a quarter less code
        // to load at a cold start (`npm run bench`, "Memory and cold start").
        mainFields: ['module', 'main'],
        // sharp is a native module: installed next to the bundle, not bundled...
        nodeModules: ['sharp'],
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          // ...and the install above is for the build machine's platform. Reinstall it
          // for the Lambda (linux arm64 glibc), then drop other platforms' binaries.
          afterBundling: (_inputDir: string, outputDir: string) => [
            // ONE command: local bundling runs each command in its own shell, from the
            // project root, so a separate `cd` would not hold and the install would
            // rewrite the project's own node_modules for arm64.
            [
              `cd ${shellQuote(outputDir)}`,
              'test -f package.json',
              `npm install --no-save --no-audit --no-fund --os=linux --cpu=arm64 --libc=glibc sharp@${arm64SharpVersion}`,
              'find node_modules/@img -mindepth 1 -maxdepth 1 -name "sharp-*" ! -name "*-linux-arm64" -exec rm -rf {} +',
              'test -d node_modules/@img/sharp-linux-arm64',
              'test -d node_modules/@img/sharp-libvips-linux-arm64',
            ].join(' && '),
          ],
        },
      },
    });

    // CloudFront reaches the origin through the live alias, never $LATEST: each deployment
    // publishes a version, and the alias moves to it (in a canary, CodeDeploy moves it).
    this.originVersion = this.originFunction.currentVersion;
    this.originAlias = new lambda.Alias(this, 'OriginLive', {
      aliasName: ORIGIN_ALIAS_NAME,
      version: this.originVersion,
      description: 'edge-image-transformer origin: the version CloudFront invokes',
      ...(props.originProvisionedConcurrency ? { provisionedConcurrentExecutions: props.originProvisionedConcurrency } : {}),
    });
    if (props.originReservedConcurrency === undefined) {
      const cap = props.originConcurrencyCap ?? DEFAULT_ORIGIN_CONCURRENCY_CAP;
      this.originConcurrencyCap = this.concurrencyCap(cap === false ? 0 : cap, props.originProvisionedConcurrency ?? 0, props.logRetention, removalPolicy);
    }
    this.originFunctionUrl = this.originAlias.addFunctionUrl({
      authType: lambda.FunctionUrlAuthType.AWS_IAM,
      // Streamed: the viewer gets the variant before the invocation stores it (lambda/origin/index.ts).
      invokeMode: lambda.InvokeMode.RESPONSE_STREAM,
    });

    // ---------------------------------------------------------------- viewer-request function
    if (props.signing) {
      this.keyValueStore = new cloudfront.KeyValueStore(this, 'SigningKeys', {
        comment: 'edge-image-transformer URL signing secrets (put them in after deploying)',
      });
    }
    this.viewerRequestFunction = new cloudfront.Function(this, 'ViewerRequest', {
      comment: 'edge-image-transformer: validate, canonicalise and sign-check image requests',
      runtime: cloudfront.FunctionRuntime.JS_2_0,
      code: cloudfront.FunctionCode.fromInline(
        viewerRequestFunctionCode({
          grammar,
          avif,
          ...(this.keyValueStore ? { signing: { keyValueStoreId: this.keyValueStore.keyValueStoreId } } : {}),
        }),
      ),
      keyValueStore: this.keyValueStore,
      autoPublish: true,
    });

    this.viewerResponseFunction = new cloudfront.Function(this, 'ViewerResponse', {
      comment: 'edge-image-transformer: browsers keep variants for browserMaxAge, CloudFront for cacheControl',
      runtime: cloudfront.FunctionRuntime.JS_2_0,
      code: cloudfront.FunctionCode.fromInline(
        viewerResponseFunctionCode({ variantCacheControl: cacheControl, browserCacheControl: browserCacheControl(browserMaxAgeSeconds) }),
      ),
      autoPublish: true,
    });

    // ---------------------------------------------------------------- distribution
    // A cold start's init phase (loading sharp) comes on top of the Lambda timeout;
    // 120 s is CloudFront's default quota for an origin's response timeout.
    const originReadTimeoutSeconds = Math.min(120, timeoutSeconds + 10);
    const shield = props.originShieldRegion ? { originShieldRegion: props.originShieldRegion } : {};
    const origin = new origins.OriginGroup({
      primaryOrigin: origins.S3BucketOrigin.withOriginAccessControl(this.cacheBucket, {
        originAccessLevels: [cloudfront.AccessLevel.READ],
        ...shield,
      }),
      fallbackOrigin: origins.FunctionUrlOrigin.withOriginAccessControl(this.originFunctionUrl, {
        readTimeout: Duration.seconds(originReadTimeoutSeconds),
        ...shield,
      }),
      // Failover is judged on the primary's answer only. S3 behind OAC says 403 (or 404
      // with list access) for a variant not made yet: that is the one reason to go to the
      // Lambda. An S3 5xx is not: the Lambda is the last origin, it needs S3 too, and
      // sending a storage hiccup to it would multiply the load and the cost.
      fallbackStatusCodes: [403, 404],
    });

    // The cache key is the canonical URI alone: the edge function has put everything
    // that matters (what Accept allows, as accept=avif|webp, included) into the path.
    const cachePolicy = new cloudfront.CachePolicy(this, 'CachePolicy', {
      comment: 'edge-image-transformer: canonical URI only',
      queryStringBehavior: cloudfront.CacheQueryStringBehavior.none(),
      headerBehavior: cloudfront.CacheHeaderBehavior.none(),
      cookieBehavior: cloudfront.CacheCookieBehavior.none(),
      enableAcceptEncodingGzip: false,
      enableAcceptEncodingBrotli: false,
      minTtl: Duration.seconds(0),
      defaultTtl: Duration.days(1),
      maxTtl: Duration.days(365),
    });

    // One origin request policy serves both origins of the group. The managed
    // ALL_VIEWER_EXCEPT_HOST_HEADER would also send every viewer header to S3, where
    // headers such as x-amz-server-side-encryption-customer-* turn a cached variant
    // into an error that CloudFront then caches for everyone under the same key.
    // Neither origin needs a viewer header (what Accept allows is in the URI), and
    // the Function URL needs the Host header NOT forwarded (OAC signs for its own host),
    // which sending no headers guarantees. Query strings are forwarded: the edge keeps
    // only the contract's parameters, and the origin uses them to redirect a variant
    // too large to return inline.
    const originRequestPolicy = new cloudfront.OriginRequestPolicy(this, 'OriginRequestPolicy', {
      comment: 'edge-image-transformer: no viewer headers or cookies; the edge-filtered query',
      headerBehavior: cloudfront.OriginRequestHeaderBehavior.none(),
      cookieBehavior: cloudfront.OriginRequestCookieBehavior.none(),
      queryStringBehavior: cloudfront.OriginRequestQueryStringBehavior.all(),
    });

    const responseHeadersPolicy = new cloudfront.ResponseHeadersPolicy(this, 'ResponseHeaders', {
      comment: 'edge-image-transformer: CORS, nosniff, Vary: Accept',
      ...(cors
        ? {
            corsBehavior: {
              accessControlAllowOrigins: cors.allowOrigins,
              accessControlAllowMethods: ['GET', 'HEAD'],
              accessControlAllowHeaders: ['*'],
              accessControlAllowCredentials: false,
              ...(cors.maxAge ? { accessControlMaxAge: cors.maxAge } : {}),
              originOverride: true,
            },
          }
        : {}),
      securityHeadersBehavior: { contentTypeOptions: { override: true } },
      // S3 cannot store a Vary header, yet one URL carries another format for another browser.
      customHeadersBehavior: { customHeaders: [{ header: 'Vary', value: 'Accept', override: true }] },
      // S3 details that are nobody's business.
      removeHeaders: ['x-amz-meta-source-etag', 'x-amz-server-side-encryption'],
    });

    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: props.comment ?? 'edge-image-transformer',
      defaultBehavior: {
        origin,
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
        cachedMethods: cloudfront.CachedMethods.CACHE_GET_HEAD,
        cachePolicy,
        originRequestPolicy,
        responseHeadersPolicy,
        // Images are already compressed; format=json answers are a few hundred bytes.
        compress: false,
        functionAssociations: [
          { function: this.viewerRequestFunction, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST },
          { function: this.viewerResponseFunction, eventType: cloudfront.FunctionEventType.VIEWER_RESPONSE },
        ],
      },
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      enableIpv6: true,
      priceClass: props.priceClass ?? cloudfront.PriceClass.PRICE_CLASS_ALL,
      ...(domainNames.length > 0
        ? {
            domainNames,
            certificate: props.certificate,
            minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
          }
        : {}),
      errorResponses: [
        ...CLIENT_ERROR_STATUSES.map((httpStatus) => ({ httpStatus, ttl: clientErrorTtl })),
        ...SERVER_ERROR_STATUSES.map((httpStatus) => ({ httpStatus, ttl: Duration.seconds(0) })),
      ],
      ...(this.logBucket ? { enableLogging: true, logBucket: this.logBucket, logFilePrefix: 'cloudfront/' } : {}),
      ...(props.webAclId ? { webAclId: props.webAclId } : {}),
      ...(props.geoRestriction ? { geoRestriction: props.geoRestriction } : {}),
    });

    // FunctionUrlOrigin.withOriginAccessControl grants CloudFront lambda:InvokeFunctionUrl and
    // lambda:InvokeFunction (InvokedViaFunctionUrl) on the URL's FunctionArn attribute. A URL
    // on an alias is invoked as the alias, so the grants must name the alias: say so plainly.
    for (const child of this.node.findAll()) {
      if (
        child instanceof lambda.CfnPermission &&
        child.principal === 'cloudfront.amazonaws.com' &&
        child.functionName === this.originFunctionUrl.functionArn
      ) {
        child.functionName = this.originAlias.functionArn;
      }
    }

    // ---------------------------------------------------------------- invalidation Lambda
    const invalidationLogs = new logs.LogGroup(this, 'InvalidationLogs', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy,
    });
    // Purging and invalidating take seconds, twice: the second time once a miss that read
    // the old source must be over (the origin's timeout, and a margin for its answer to
    // reach CloudFront). Warming eager presets waits for the origin: one request per
    // preset and negotiable format (3 Accept headers), 4 at a time
    // (lambda/invalidate/warm.ts), each up to the origin's read timeout.
    const settleSeconds = timeoutSeconds + 5;
    const warmTimeoutSeconds = originReadTimeoutSeconds + 5;
    const warmRounds = Math.ceil((eagerPresets.length * 3) / 4);
    const invalidationTimeoutSeconds = Math.min(900, 60 + settleSeconds + warmRounds * warmTimeoutSeconds);
    const invalidationRole = new iam.Role(this, 'InvalidationRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: 'edge-image-transformer invalidation: purge variants, invalidate CloudFront, write its own logs',
    });
    invalidationLogs.grantWrite(invalidationRole);
    invalidationRole.addToPolicy(
      new iam.PolicyStatement({
        sid: 'FindVariants',
        actions: ['s3:ListBucket'],
        resources: [this.cacheBucket.bucketArn],
      }),
    );
    invalidationRole.addToPolicy(
      new iam.PolicyStatement({
        sid: 'PurgeVariants',
        actions: ['s3:DeleteObject'],
        resources: [this.cacheBucket.arnForObjects('*')],
      }),
    );
    invalidationRole.addToPolicy(
      new iam.PolicyStatement({
        sid: 'InvalidateThisDistribution',
        actions: ['cloudfront:CreateInvalidation'],
        resources: [this.distribution.distributionArn],
      }),
    );

    this.invalidationFunction = new nodejs.NodejsFunction(this, 'InvalidationFunction', {
      description: 'edge-image-transformer: purge and invalidate the variants of a changed source',
      entry: INVALIDATE_ENTRY,
      ...PROJECT_FUNCTION,
      memorySize: 256,
      timeout: Duration.seconds(invalidationTimeoutSeconds),
      role: invalidationRole,
      logGroup: invalidationLogs,
      environment: {
        CACHE_BUCKET: this.cacheBucket.bucketName,
        DISTRIBUTION_ID: this.distribution.distributionId,
        DISTRIBUTION_DOMAIN: this.distribution.distributionDomainName,
        EAGER_PRESETS: eagerPresets.join(','),
        WARM_TIMEOUT_MS: String(warmTimeoutSeconds * 1000),
        SETTLE_MS: String(settleSeconds * 1000),
        // The grammar as the edge has it: what a warming URL's signature covers, and
        // which formats format=auto can negotiate (one warming request per format).
        MAX_DIMENSION: String(grammar.maxDimension),
        AVIF: String(avif),
        ...(grammar.sizes ? { SIZES: grammar.sizes.join(',') } : {}),
        ...(grammar.presets && eagerPresets.length > 0 ? { PRESETS: JSON.stringify(grammar.presets) } : {}),
        ...(props.eagerSigningSecret ? { SIGNING_SECRET: props.eagerSigningSecret.unsafeUnwrap() } : {}),
      },
      bundling: SMALL_BUNDLING,
    });

    // S3 invokes the Lambda asynchronously: Lambda retries a failed event twice (1 and
    // 2 minutes later), then hands it to this queue instead of dropping it.
    this.invalidationFailureQueue = new sqs.Queue(this, 'InvalidationFailures', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy,
    });
    this.invalidationFunction.configureAsyncInvoke({
      onFailure: new destinations.SqsDestination(this.invalidationFailureQueue),
      retryAttempts: 2,
    });

    const notify = new s3n.LambdaDestination(this.invalidationFunction);
    this.sourceBucket.addEventNotification(s3.EventType.OBJECT_CREATED, notify);
    this.sourceBucket.addEventNotification(s3.EventType.OBJECT_REMOVED, notify);

    // ---------------------------------------------------------------- operations
    if (props.cloudFrontAdditionalMetrics ?? true) {
      new cloudfront.CfnMonitoringSubscription(this, 'CloudFrontAdditionalMetrics', {
        distributionId: this.distribution.distributionId,
        monitoringSubscription: { realtimeMetricsSubscriptionConfig: { realtimeMetricsSubscriptionStatus: 'Enabled' } },
      });
    }
    this.alarmTopic = props.alarmTopic;
    if (props.alarmEmail) {
      this.alarmTopic ??= new sns.Topic(this, 'AlarmTopic', {
        displayName: 'edge-image-transformer alarms',
        enforceSSL: true,
      });
      this.alarmTopic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));
    }
    const monitoring = new ImageTransformerMonitoring(this, 'Monitoring', {
      distribution: this.distribution,
      originFunction: this.originFunction,
      originAlias: this.originAlias,
      invalidationFunction: this.invalidationFunction,
      invalidationFailureQueue: this.invalidationFailureQueue,
      namespace: this.metricsNamespace,
      originMetrics,
      cloudFrontAdditionalMetrics: props.cloudFrontAdditionalMetrics ?? true,
      timeout,
      timeBudgetMs,
      memorySize,
      reservedConcurrency: props.originReservedConcurrency,
      provisionedConcurrency: props.originProvisionedConcurrency,
      dashboard: props.dashboard ?? true,
      alarms: alarmsOn,
      topic: this.alarmTopic,
    });
    this.dashboard = monitoring.dashboard;
    this.alarms = monitoring.alarms;

    if (canaryDeployments) {
      const alarms = monitoring.deploymentAlarms;
      this.deploymentGroup = new codedeploy.LambdaDeploymentGroup(this, 'OriginDeployment', {
        alias: this.originAlias,
        deploymentConfig: props.deploymentConfig ?? codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES,
        alarms,
        autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: alarms.length > 0 },
      });
    }

    this.acknowledgeNagFindings({ accessLogging, customDomain: domainNames.length > 0, props });
  }

  /**
   * The custom resource that reserves min(cap, what the account can spare) of
   * concurrency on the origin at deploy time (lambda/concurrency). Reserved
   * concurrency is the function's, shared by all its versions: during a
   * canary, both versions behind the live alias draw from it.
   */
  private concurrencyCap(cap: number, floor: number, retention: logs.RetentionDays | undefined, removalPolicy: RemovalPolicy): CustomResource {
    const capLogs = new logs.LogGroup(this, 'ConcurrencyCapLogs', { retention: retention ?? logs.RetentionDays.ONE_MONTH, removalPolicy });
    const role = new iam.Role(this, 'ConcurrencyCapRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: "edge-image-transformer concurrency cap: read the account's concurrency, set the origin's reservation",
    });
    capLogs.grantWrite(role);
    role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ReadAccountConcurrency',
        actions: ['lambda:GetAccountSettings'],
        // An account-level read: it has no resource to name.
        resources: ['*'],
      }),
    );
    role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'SetOriginReservation',
        actions: ['lambda:GetFunctionConcurrency', 'lambda:PutFunctionConcurrency', 'lambda:DeleteFunctionConcurrency'],
        resources: [this.originFunction.functionArn],
      }),
    );
    const provider = new nodejs.NodejsFunction(this, 'ConcurrencyCapFunction', {
      description: "edge-image-transformer: caps the origin's concurrency at what the account can spare (deploy time)",
      entry: CONCURRENCY_CAP_ENTRY,
      ...PROJECT_FUNCTION,
      memorySize: 256,
      timeout: Duration.seconds(30),
      role,
      logGroup: capLogs,
      bundling: SMALL_BUNDLING,
    });
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'lambda:GetAccountSettings (the only action on "*") reads the account-wide concurrency quota and what is unreserved; ' +
        'it is account-level and takes no resource ARN.',
    });
    return new CustomResource(this, 'OriginConcurrencyCap', {
      serviceToken: provider.functionArn,
      resourceType: 'Custom::OriginConcurrencyCap',
      properties: {
        FunctionName: this.originFunction.functionName,
        Cap: cap,
        Floor: floor,
        // A new version means the function was updated: apply the cap again after it.
        Version: this.originVersion.version,
      },
    });
  }

  /**
   * cdk-nag (AwsSolutions) findings that are deliberate, each with its reason.
   * Acknowledgements are plain CDK metadata: no cdk-nag dependency at run time.
   */
  private acknowledgeNagFindings(options: { accessLogging: boolean; customDomain: boolean; props: ImageTransformerProps }): void {
    const ack = (scope: IConstruct, id: string, reason: string) => Validations.of(scope).acknowledge({ id, reason });
    const wildcard = (arn: string) => `AwsSolutions-IAM5[Resource::${flattenReference(Stack.of(this).resolve(arn))}]`;

    ack(
      this.originFunction.role ?? this,
      wildcard(this.sourceBucket.arnForObjects('*')),
      'The origin reads whichever source key a viewer names: s3:GetObject (a single action) on the source bucket objects, nothing else.',
    );
    ack(
      this.originFunction.role ?? this,
      wildcard(this.cacheBucket.arnForObjects('*')),
      'Variant keys are derived from any source key: s3:PutObject (a single action, conditional If-None-Match writes) on the cache bucket objects only.',
    );
    ack(
      this.invalidationFunction.role ?? this,
      wildcard(this.cacheBucket.arnForObjects('*')),
      "s3:DeleteObject (a single action) on cache bucket objects only: a changed source's variants live under <source-key>/, any key.",
    );

    // CDK's own custom resource that configures the source bucket's notifications.
    const notificationsHandler = Stack.of(this).node.tryFindChild(BUCKET_NOTIFICATIONS_HANDLER_ID);
    if (notificationsHandler) {
      ack(
        notificationsHandler,
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        "aws-cdk-lib's BucketNotificationsHandler (deploy-time only custom resource); its role and managed logging policy are fixed by aws-cdk-lib.",
      );
      ack(
        notificationsHandler,
        'AwsSolutions-IAM5[Resource::*]',
        "aws-cdk-lib's BucketNotificationsHandler needs s3:PutBucketNotification (its only action) on the notified bucket; aws-cdk-lib writes it with Resource *.",
      );
    }

    if (this.deploymentGroup) {
      ack(
        this.deploymentGroup.role,
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
        "CodeDeploy's own service role for Lambda canaries (aws-cdk-lib's default): the AWS-managed policy limited to what a " +
          'Lambda deployment does (get and update the alias, read provisioned concurrency, read the deployment alarms) and kept ' +
          'current by AWS as CodeDeploy changes.',
      );
    }

    ack(
      this.invalidationFailureQueue,
      'AwsSolutions-SQS3',
      "This queue is itself the end of the line for failed source-change events (the invalidation Lambda's on-failure " +
        'destination); a message that fails again is left in it, alarmed, and replayed by an operator, never moved on.',
    );

    const distribution = this.distribution;
    if (!options.accessLogging) {
      ack(distribution, 'AwsSolutions-CFR3', 'Access logging was turned off by the operator (accessLogging: false).');
      ack(this.cacheBucket, 'AwsSolutions-S1', 'Access logging was turned off by the operator (accessLogging: false).');
      if (!options.props.sourceBucket) {
        ack(this.sourceBucket, 'AwsSolutions-S1', 'Access logging was turned off by the operator (accessLogging: false).');
      }
    }
    if (!options.customDomain) {
      ack(
        distribution,
        'AwsSolutions-CFR4',
        'No custom domain: the default *.cloudfront.net certificate is used, whose minimum TLS version CloudFront fixes; ' +
          'give domainNames and a certificate to get TLSv1.2_2021.',
      );
    }
    if (!options.props.webAclId) {
      ack(
        distribution,
        'AwsSolutions-CFR2',
        'No web ACL was given (webAclId). The viewer-request function already rejects malformed and (with signing) unsigned ' +
          'requests before any origin; sizes/presetsOnly/signing bound the variants. Attach a WAF rate-based rule via webAclId for production.',
      );
    }
    if (!options.props.geoRestriction) {
      ack(distribution, 'AwsSolutions-CFR1', 'Public image delivery is meant to be worldwide; geoRestriction is available when a business needs it.');
    }
  }
}

/** A POSIX shell single-quoted string. */
function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The flat string cdk-nag uses for a resolved CloudFormation value (its flattenCfnReference). */
function flattenReference(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value.replace(/\$\{/g, '<').replace(/\}/g, '>');
  if (value && typeof value === 'object') {
    const node = value as Record<string, unknown>;
    if (node['Fn::Join']) {
      const [delimiter, items] = node['Fn::Join'] as [string, unknown[]];
      return items.map(flattenReference).join(delimiter);
    }
    if (node['Fn::Sub']) return flattenReference(node['Fn::Sub']);
    if (node['Fn::GetAtt']) {
      const [resource, attribute] = node['Fn::GetAtt'] as [unknown, unknown];
      return `<${flattenReference(resource)}.${flattenReference(attribute)}>`;
    }
    if (node['Fn::ImportValue']) return flattenReference(node['Fn::ImportValue']);
    if (node.Ref) return `<${flattenReference(node.Ref)}>`;
  }
  return JSON.stringify(value);
}
