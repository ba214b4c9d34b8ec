// The ImageTransformer's props resolved once: every default applied, every
// setting checked, and every value derived from others (the time budget, the
// timeouts that wait for the origin, the invalidation Lambda's timeout)
// computed here, each with its reason. The parts (lib/parts/) read only these.

import { Duration, RemovalPolicy, type SecretValue, Stack, Token } from 'aws-cdk-lib';
import type * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { IConstruct } from 'constructs';
import { mustBe } from '../lambda/common/checks';
import { DIALECTS, type DialectName } from '../lambda/edge/dialects/dialect';
import { DEFAULT_GRAMMAR_OPTIONS, type GrammarOptions } from '../lambda/grammar';
import type { SourceKindSettings } from '../lambda/origin/config';
import { bySourceSetting, routesRefusal } from '../lambda/origin/sources';
import type { ImageTransformerCors, ImageTransformerProps } from './props';
import { bucketNames } from './parts/buckets';
import { resolveTable, type TableSettings } from './settings-table';
import { ImageTransformerConfigError, checkEagerPresets, checkGrammar, checkInteger, checkSourceBuckets } from './settings';
import { checkRequireWatermark, packageWatermarks, type PackagedWatermark } from './watermarks';
import { checkTemplates, templateVersions } from './templates';
import { packageFonts, type PackagedFont } from './own-fonts';
import type { TemplateDefinition } from '../lambda/origin/templates';

/**
 * The origin's default concurrency cap. At 2048 MB, 50 misses at once cost at
 * most about $4.80 an hour of arm64 Lambda (50 x 2 GB x 3600 s at list
 * price) when a flood of distinct URLs hits it, while still making 25 to 50
 * new variants a second at a miss's usual 1 to 2 s: far more than a site's
 * steady miss rate, since every variant is made once.
 */
export const DEFAULT_ORIGIN_CONCURRENCY_CAP = 50;

/**
 * Every setting of one ImageTransformer, defaults applied and checked (see
 * ImageTransformerProps for each): the rows of lib/settings-table.ts, and
 * those resolved here, together with others or from them.
 */
export interface ResolvedSettings extends Readonly<SourceKindSettings>, TableSettings {
  // URL grammar: what the edge enforces and the origin and warming requests follow.
  readonly grammar: GrammarOptions;
  /** The watermarks, checked and versioned (their versions are also in `grammar.watermarks`). */
  readonly watermarks: PackagedWatermark[];
  readonly requireWatermark: { [prefix: string]: string };
  /** The card templates, checked and versioned (their versions are also in `grammar.templates`). */
  readonly templates: { [name: string]: TemplateDefinition };
  /** The deployment's own fonts, checked (their faces are also in `grammar.fonts`). */
  readonly fonts: PackagedFont[];
  /** The dialects switched on, each once (lib/plan.ts turns them into behaviors and functions). */
  readonly dialects: DialectName[];
  readonly eagerPresets: string[];
  readonly eagerSigningSecret?: SecretValue;

  // Storage.
  readonly sourceBucket?: s3.IBucket;
  /** Buckets of originals by key prefix, checked. */
  readonly sourceBuckets: { [prefix: string]: s3.IBucket };
  readonly accessLogDays: number;
  /** What happens to the buckets and log groups created here when the stack is deleted. */
  readonly removalPolicy: RemovalPolicy;
  readonly logRetention: logs.RetentionDays;

  // Origin Lambda.
  readonly timeout: Duration;
  /** The origin's own deadline (TIME_BUDGET_MS), below its timeout. */
  readonly timeBudgetMs: number;
  /** How long CloudFront waits for the origin's answer. */
  readonly originReadTimeoutSeconds: number;
  readonly reservedConcurrency?: number;
  readonly provisionedConcurrency?: number;
  /** The deploy-time cap (0: remove any); undefined with a fixed reservedConcurrency. */
  readonly concurrencyCap?: number;

  // CloudFront.
  readonly domainNames: string[];
  readonly certificate?: acm.ICertificate;
  readonly cors: ImageTransformerCors | false;
  readonly clientErrorTtl: Duration;
  readonly geoRestriction?: cloudfront.GeoRestriction;
  readonly comment: string;

  // Invalidation Lambda.
  /** How long after the first purge the second one runs: once a miss that read the old source is over. */
  readonly settleSeconds: number;
  /** How long one warming request waits for the origin. */
  readonly warmTimeoutSeconds: number;
  readonly invalidationTimeoutSeconds: number;

  // Operations.
  readonly originMetrics: boolean;
  readonly metricsNamespace: string;
  readonly alarmTopic?: sns.ITopic;

  // Overrides of what the construct does not model, passed through as given.
  readonly originFunctionProps: Partial<nodejs.NodejsFunctionProps>;
  readonly distributionProps: Partial<cloudfront.DistributionProps>;
}

/** Applies the defaults to `props`, checks them, and derives the values the parts share. */
export function resolveSettings(scope: IConstruct, props: ImageTransformerProps): ResolvedSettings {
  const table = resolveTable(props);
  const urls = resolveUrls(props, table);
  const originTimes = resolveOriginTimes(props);
  return {
    ...table,
    ...urls,
    ...resolveSources(props),
    ...originTimes,
    ...resolveOriginConcurrency(props),
    ...resolveOperations(scope, props),
    ...resolveStorage(props),
    ...resolveCloudFront(props),
    ...invalidationTimes(originTimes, urls.eagerPresets),
    originFunctionProps: props.originFunctionProps ?? {},
    distributionProps: props.distributionProps ?? {},
  };
}

/** The URL grammar, the watermarks it names, and signing: what the edge enforces and warming requests follow. */
function resolveUrls(
  props: ImageTransformerProps,
  { signing }: Pick<TableSettings, 'signing'>,
): Pick<
  ResolvedSettings,
  'grammar' | 'watermarks' | 'requireWatermark' | 'templates' | 'fonts' | 'dialects' | 'eagerPresets' | 'eagerSigningSecret'
> {
  const watermarks = packageWatermarks(props.watermarks);
  const fonts = packageFonts(props.fonts);
  const templates = checkTemplates(props.templates, fonts);
  const requireWatermark = checkRequireWatermark(props.requireWatermark, watermarks);
  const grammar: GrammarOptions = checkGrammar({
    maxDimension: props.maxDimension ?? DEFAULT_GRAMMAR_OPTIONS.maxDimension,
    sizes: props.sizes,
    presets: props.presets,
    presetsOnly: props.presetsOnly,
    watermarks: Object.fromEntries(watermarks.map(({ name, definition }) => [name, definition.version])),
    templates: templateVersions(templates),
    fonts: Object.fromEntries(fonts.map(({ name, face }) => [name, face])),
    hdr: props.hdr,
  });
  const eagerPresets = props.eagerPresets ?? [];
  checkEagerPresets(eagerPresets, grammar);
  if (signing && eagerPresets.length > 0 && !props.eagerSigningSecret) {
    throw new ImageTransformerConfigError(
      'eagerPresets with signing need eagerSigningSecret (the secret, also in the KeyValueStore, that warming requests are signed with).',
    );
  }
  if (props.eagerSigningSecret && !signing) {
    throw new ImageTransformerConfigError('eagerSigningSecret is only used with signing: true.');
  }
  return {
    grammar,
    watermarks,
    requireWatermark,
    templates,
    fonts,
    dialects: checkDialects(props.dialects ?? []),
    eagerPresets,
    eagerSigningSecret: props.eagerSigningSecret,
  };
}

/** The dialects, each a name this code knows, once. */
function checkDialects(dialects: string[]): DialectName[] {
  const unknown = dialects.filter((name) => !(DIALECTS as readonly string[]).includes(name));
  if (unknown.length > 0)
    throw new ImageTransformerConfigError(`dialects: no dialect "${unknown[0]}"; the dialects are ${DIALECTS.join(', ')}.`);
  return [...new Set(dialects)] as DialectName[];
}

/** Where the originals are read from: each source kind's setting, and the buckets by key prefix. */
function resolveSources(props: ImageTransformerProps): SourceKindSettings & Pick<ResolvedSettings, 'sourceBucket' | 'sourceBuckets'> {
  // Each source kind's own setting, checked by its kind (lambda/origin/sources/).
  const sources = bySourceSetting((setting) =>
    setting.check(
      (props[setting.name] ?? {}) as Record<string, unknown>,
      setting.name,
      (message) => new ImageTransformerConfigError(message),
    ),
  );
  const sourceBuckets = checkSourceBuckets(props.sourceBuckets ?? {}, props.sourceBucket);
  // A key is read from one place: no bucket's prefix may hold a site's, or the other way round.
  const overlap = routesRefusal('sourceBuckets and webOrigins', { sourceBuckets: bucketNames(sourceBuckets), ...sources });
  if (overlap) throw new ImageTransformerConfigError(overlap);
  return { ...sources, sourceBucket: props.sourceBucket, sourceBuckets };
}

/** The origin Lambda's size and timeout, its own deadline below it, and how long CloudFront waits for it. */
function resolveOriginTimes(props: ImageTransformerProps): Pick<ResolvedSettings, 'timeout' | 'timeBudgetMs' | 'originReadTimeoutSeconds'> {
  // A large source's first AVIF encode takes seconds; a stuck miss is cut off well before CloudFront's 120 s.
  const timeout = props.timeout ?? Duration.seconds(30);
  const timeoutSeconds = timeout.toSeconds();
  checkInteger('timeout (seconds)', timeoutSeconds, 5, 110);
  const timeoutMs = timeoutSeconds * 1000;
  // Leave time to log and answer 504 before Lambda kills the invocation.
  const timeBudgetMs = timeoutMs - Math.max(2000, Math.round(timeoutMs / 10));
  // A cold start's init phase (loading sharp) comes on top of the Lambda timeout;
  // 120 s is CloudFront's default quota for an origin's response timeout.
  const originReadTimeoutSeconds = Math.min(120, timeoutSeconds + 10);
  return { timeout, timeBudgetMs, originReadTimeoutSeconds };
}

/** The origin's concurrency: a fixed reservation, or the deploy-time cap; and what is kept warm. */
function resolveOriginConcurrency(
  props: ImageTransformerProps,
): Pick<ResolvedSettings, 'reservedConcurrency' | 'provisionedConcurrency' | 'concurrencyCap'> {
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
  // A fixed reservation needs no cap; `false` is a cap of 0, which removes any reservation the cap made.
  const cap = props.originConcurrencyCap ?? DEFAULT_ORIGIN_CONCURRENCY_CAP;
  const concurrencyCap = props.originReservedConcurrency !== undefined ? undefined : cap === false ? 0 : cap;
  return {
    reservedConcurrency: props.originReservedConcurrency,
    provisionedConcurrency: props.originProvisionedConcurrency,
    concurrencyCap,
  };
}

/** The metrics' namespace and the alarms' topic (metrics, the dashboard, alarms and canary deployments, on by default, are rows of the table). */
function resolveOperations(
  scope: IConstruct,
  props: ImageTransformerProps,
): Pick<ResolvedSettings, 'originMetrics' | 'metricsNamespace' | 'alarmTopic'> {
  // Two deployments in one account and region need two namespaces: the stack name tells them apart.
  const metricsNamespace = props.metricsNamespace ?? `EdgeImageTransformer/${Stack.of(scope).stackName}`;
  if (
    !Token.isUnresolved(metricsNamespace) &&
    (!/^[0-9A-Za-z.\-_/#: ]{1,255}$/.test(metricsNamespace) || metricsNamespace.startsWith('AWS/'))
  ) {
    throw new ImageTransformerConfigError(
      mustBe(
        'metricsNamespace',
        'a CloudWatch namespace (1-255 of A-Z a-z 0-9 . - _ / # : and space, not starting with AWS/)',
        metricsNamespace,
      ),
    );
  }
  return {
    originMetrics: props.metrics ?? true,
    metricsNamespace,
    alarmTopic: props.alarmTopic,
  };
}

/** How long variants, access logs and log groups are kept, and what deleting the stack deletes. */
function resolveStorage(props: ImageTransformerProps): Pick<ResolvedSettings, 'accessLogDays' | 'removalPolicy' | 'logRetention'> {
  const accessLogDays = (props.accessLogExpiration ?? Duration.days(90)).toDays();
  checkInteger('accessLogExpiration (days)', accessLogDays, 1, 36_500);
  return {
    accessLogDays,
    // Deleting a stack must not delete anyone's images or logs unless asked to.
    removalPolicy: props.autoDeleteObjects ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    // Long enough to investigate an incident; CloudWatch's own default keeps logs forever.
    logRetention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
  };
}

/** The distribution's settings: its domain and certificate, CORS, how long it caches a refusal, and what guards it. */
function resolveCloudFront(
  props: ImageTransformerProps,
): Pick<ResolvedSettings, 'domainNames' | 'certificate' | 'cors' | 'clientErrorTtl' | 'geoRestriction' | 'comment'> {
  // Long enough to absorb a flood of one bad URL, short enough that a source being uploaded soon shows.
  const clientErrorTtl = props.clientErrorCachingTtl ?? Duration.seconds(10);
  checkInteger('clientErrorCachingTtl (seconds)', clientErrorTtl.toSeconds(), 0, 31_536_000);

  const domainNames = props.domainNames ?? [];
  if (domainNames.length > 0 && !props.certificate) {
    throw new ImageTransformerConfigError('domainNames need a certificate (an ACM certificate in us-east-1 covering them).');
  }
  if (props.certificate && domainNames.length === 0) {
    throw new ImageTransformerConfigError('a certificate is only used with domainNames; give the domain names it covers.');
  }
  const certificateArn = props.certificate?.certificateArn;
  if (certificateArn && !Token.isUnresolved(certificateArn) && !certificateArn.includes(':us-east-1:')) {
    throw new ImageTransformerConfigError(
      mustBe('certificate', 'in us-east-1 (the only region CloudFront takes certificates from)', certificateArn),
    );
  }
  // The images are public: any page may read them from script (e.g. draw them on a canvas).
  const cors = props.cors === undefined ? { allowOrigins: ['*'] } : props.cors;
  if (cors && cors.allowOrigins.length === 0) {
    throw new ImageTransformerConfigError(
      mustBe('cors.allowOrigins', 'at least one origin, or ["*"] (for none, set cors: false)', cors.allowOrigins),
    );
  }
  return {
    domainNames,
    certificate: props.certificate,
    cors,
    clientErrorTtl,
    geoRestriction: props.geoRestriction,
    comment: props.comment ?? 'edge-image-transformer',
  };
}

/**
 * The invalidation Lambda's waits. Purging and invalidating take seconds, twice: the
 * second time once a miss that read the old source must be over (the origin's timeout,
 * and a margin for its answer to reach CloudFront). Warming eager presets waits for the
 * origin: one request per preset and negotiable format (3 Accept headers), 4 at a time
 * (lambda/invalidate/warm.ts), each up to the origin's read timeout.
 */
function invalidationTimes(
  origin: Pick<ResolvedSettings, 'timeout' | 'originReadTimeoutSeconds'>,
  eagerPresets: string[],
): Pick<ResolvedSettings, 'settleSeconds' | 'warmTimeoutSeconds' | 'invalidationTimeoutSeconds'> {
  const settleSeconds = origin.timeout.toSeconds() + 5;
  const warmTimeoutSeconds = origin.originReadTimeoutSeconds + 5;
  const warmRounds = Math.ceil((eagerPresets.length * 3) / 4);
  // 900 s is Lambda's longest timeout.
  const invalidationTimeoutSeconds = Math.min(900, 60 + settleSeconds + warmRounds * warmTimeoutSeconds);
  return { settleSeconds, warmTimeoutSeconds, invalidationTimeoutSeconds };
}
