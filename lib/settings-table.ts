// The construct's settings that stand on their own, one row each: the row's
// name is its CDK context key and its field in the resolved settings; the
// row says which prop it is given as, how the context's value is read, what
// it means (docs/configuration.md's table, test/docs/tables.test.ts), its
// default and check (against other props too), and which of the deployment's
// functions is given it.
// The context reading (lib/context.ts), the props' resolution
// (lib/resolved-settings.ts) and the plan (lib/plan.ts) derive from the rows:
// a new setting is its row, its prop (lib/props/) and the one
// place that uses it ("Adding a setting" in docs/development.md). Settings
// resolved from several props, or into several values (the grammar, the
// sources, the origin's timeout, concurrency, domain names and certificate),
// are resolved by hand in lib/resolved-settings.ts.

import { Duration, Token } from 'aws-cdk-lib';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as codedeploy from 'aws-cdk-lib/aws-codedeploy';
import { mustBe } from '../lambda/common/checks';
import { DEFAULT_CACHE_CONTROL, DEFAULT_FAILURE_TTL_SECONDS, DEFAULT_LIMITS, NUMBER_SETTINGS, SVG_POLICIES } from '../lambda/origin/config';
import {
  type ContextReader,
  days,
  deploymentConfig,
  flag,
  integer,
  list,
  oneOf,
  priceClass,
  seconds,
  text,
  type Lookup,
} from './context-readers';
import { prefixTemplateProblem } from '../lambda/manage/confine';
import { packageFallbackImage } from './fallback-image';
import type { ImageTransformerProps } from './props';
import { checkedInteger, checkRegion, ImageTransformerConfigError } from './settings';
import { DEFAULT_BROWSER_MAX_AGE_SECONDS } from './viewer-response-function';

type Props = ImageTransformerProps;

/**
 * The function a setting is given to, as the field of the row's name in its
 * settings: the origin Lambda's (OriginConfig, lambda/origin/config.ts), the
 * viewer-request or viewer-response function's (lib/edge-function.ts,
 * lib/viewer-response-function.ts) or the invalidation Lambda's
 * (lambda/invalidate/config.ts). None: a part in lib/parts/ reads it.
 */
export type Consumer = 'origin' | 'viewerRequest' | 'viewerResponse' | 'invalidation';

interface Setting<Prop extends keyof Props, Value, To extends Consumer | undefined> {
  /** The construct's prop it is given as. */
  readonly prop: Prop;
  /** How its context key's value becomes the prop. */
  readonly read: ContextReader<NonNullable<Props[Prop]>>;
  /** What the context key means, with its default. */
  readonly doc: string;
  /** The prop resolved: its default applied, checked (with the other props, where it needs them), in the unit its users take. */
  readonly resolve: (value: Props[Prop], props: Props) => Value;
  readonly to?: To;
}

const setting = <Prop extends keyof Props, Value, To extends Consumer | undefined = undefined>(row: Setting<Prop, Value, To>) => row;

/** One of the origin's NUMBER_SETTINGS: its prop of the same name, checked from 1 to its largest value. */
const originNumber = <Name extends keyof typeof NUMBER_SETTINGS>(name: Name, doc: string) =>
  setting({
    prop: name,
    read: integer,
    doc,
    resolve: (value = NUMBER_SETTINGS[name].default as number) => checkedInteger(name, value, 1, NUMBER_SETTINGS[name].max),
    to: 'origin',
  });

export const SETTINGS = {
  avif: setting({
    prop: 'avif',
    read: flag,
    doc: 'false: format=auto never picks AVIF (default true).',
    // Smaller files; the slow AVIF encode is paid once per variant.
    resolve: (avif = true) => avif,
    to: 'viewerRequest',
  }),
  signing: setting({
    prop: 'signing',
    read: flag,
    doc: 'true: URLs must be signed; creates the KeyValueStore for the secrets (default false).',
    resolve: (signing = false) => signing,
    to: 'viewerRequest',
  }),
  // Just over one vCPU (1769 MB is one): a transform is CPU-bound.
  memorySize: setting({
    prop: 'memorySize',
    read: integer,
    doc: 'Origin Lambda memory in MB (default 2048).',
    resolve: (memorySize = 2048) => checkedInteger('memorySize', memorySize, 128, 10240),
  }),
  maxSourceBytes: originNumber('maxSourceBytes', 'Largest source object in bytes (default 33554432).'),
  maxInputPixels: originNumber('maxInputPixels', 'Largest source in pixels (default 100000000).'),
  maxFrames: originNumber('maxFrames', 'Animation frames kept (default 200).'),
  maxInlineBytes: originNumber(
    'maxInlineBytes',
    'Largest variant answered inline, in bytes, at most 4718592; a larger one is redirected to the cache bucket (default 4500000).',
  ),
  fallbackImage: setting({
    prop: 'fallbackImage',
    read: text,
    doc: 'PNG or JPEG file answered, at the size asked, in place of the error for a missing (404), unsupported (415) or damaged (422) source (default: none).',
    // Checked and named as the origin's package holds it; the plan gives the origin its path.
    resolve: (file) => packageFallbackImage(file),
  }),
  svgPolicy: setting({
    prop: 'svgPolicy',
    read: oneOf(SVG_POLICIES),
    doc: 'SVG sources: refuse (415, default) or rasterize.',
    resolve: (policy = DEFAULT_LIMITS.svgPolicy) => policy,
    to: 'origin',
  }),
  cacheControl: setting({
    prop: 'cacheControl',
    read: text,
    doc: 'Cache-Control of the variants at the origin, for CloudFront and the cache bucket (default "public, max-age=31536000, immutable").',
    resolve: (cacheControl = DEFAULT_CACHE_CONTROL) => {
      if (!Token.isUnresolved(cacheControl) && (!cacheControl.trim() || /[\r\n]/.test(cacheControl))) {
        throw new ImageTransformerConfigError(mustBe('cacheControl', 'a one-line header value', cacheControl));
      }
      return cacheControl;
    },
    to: 'origin',
  }),
  browserMaxAgeSeconds: setting({
    prop: 'browserMaxAge',
    read: seconds,
    doc: 'How long browsers and proxies keep a variant before revalidating it, in seconds; 0: always revalidate (default 3600).',
    resolve: (maxAge = Duration.seconds(DEFAULT_BROWSER_MAX_AGE_SECONDS)) =>
      checkedInteger('browserMaxAge (seconds)', maxAge.toSeconds(), 0, 31_536_000),
    to: 'viewerResponse',
  }),
  failureTtlSeconds: setting({
    prop: 'failureTtl',
    read: seconds,
    doc: 'Seconds a transform that ran out of time or crashed is answered from memory, not tried again (default 300).',
    resolve: (ttl = Duration.seconds(DEFAULT_FAILURE_TTL_SECONDS)) => ttl.toSeconds(),
    to: 'origin',
  }),
  // Variants nobody asks for again stop costing storage; one still asked for is made again.
  variantExpirationDays: setting({
    prop: 'variantExpiration',
    read: days,
    doc: 'Days a variant stays in the cache bucket (default 90).',
    resolve: (expiration = Duration.days(90)) => checkedInteger('variantExpiration (days)', expiration.toDays(), 1, 36_500),
  }),
  // Originals are read again only when a variant is made: most go cold, and Intelligent-Tiering moves them down.
  sourceTiering: setting({
    prop: 'sourceTiering',
    read: flag,
    doc: "false: the created source bucket's objects over 128 KB stay in S3 Standard, not moved to Intelligent-Tiering (default true).",
    resolve: (tiering = true) => tiering,
  }),
  manageApi: setting({
    prop: 'manageApi',
    read: flag,
    doc: 'false: no management API (uploads validated on arrival, status, listing, bulk delete) and no validator (default true).',
    resolve: (manageApi = true) => manageApi,
  }),
  manageCorsOrigins: setting({
    prop: 'manageCorsOrigins',
    read: list,
    doc: 'Web origins allowed to upload from a browser with the management API, comma-separated, "*" for any (default: none).',
    resolve: (origins = [], props) => checkManageCorsOrigins(origins, props),
  }),
  manageJwtIssuer: setting({
    prop: 'manageJwtIssuer',
    read: text,
    doc: "Issuer (https:// URL) of the JWTs browsers call the management API's /user routes with, each confined to manageJwtPrefix (default: none, IAM only).",
    resolve: (issuer, props) => checkJwtIssuer(issuer, props),
  }),
  manageJwtAudience: setting({
    prop: 'manageJwtAudience',
    read: list,
    doc: 'Audiences a JWT must name one of, comma-separated; required with manageJwtIssuer.',
    resolve: (audience = [], props) => {
      if (props.manageJwtIssuer === undefined && audience.length > 0) throw jwtOnly('manageJwtAudience');
      if (props.manageJwtIssuer !== undefined && audience.length === 0) {
        throw new ImageTransformerConfigError('manageJwtAudience is required with manageJwtIssuer: a token must be meant for this API.');
      }
      return audience;
    },
  }),
  manageJwtPrefix: setting({
    prop: 'manageJwtPrefix',
    read: text,
    doc: 'Key prefix a JWT caller is confined to, naming one claim, ending with / (default users/{sub}/ with manageJwtIssuer).',
    resolve: (template, props) => {
      if (props.manageJwtIssuer === undefined) {
        if (template !== undefined) throw jwtOnly('manageJwtPrefix');
        return undefined;
      }
      const prefix = template ?? DEFAULT_JWT_PREFIX;
      const problem = prefixTemplateProblem(prefix);
      if (problem) throw new ImageTransformerConfigError(mustBe('manageJwtPrefix', problem, prefix));
      return prefix;
    },
  }),
  manageStripLocation: setting({
    prop: 'manageStripLocation',
    read: flag,
    doc: 'true: the upload validator stores each original with its location removed, its pixels untouched (default false).',
    resolve: (strip = false, props) => {
      if (strip && props.manageApi === false)
        throw new ImageTransformerConfigError('manageStripLocation is only used with manageApi: true.');
      return strip;
    },
  }),
  accessLogging: setting({
    prop: 'accessLogging',
    read: flag,
    doc: 'false: no access logs / log bucket (default true).',
    resolve: (accessLogging = true) => accessLogging,
  }),
  autoDeleteObjects: setting({
    prop: 'autoDeleteObjects',
    read: flag,
    doc: 'true: delete the created buckets and their objects with the stack (default false).',
    resolve: (autoDelete = false) => autoDelete,
  }),
  priceClass: setting({
    prop: 'priceClass',
    read: priceClass,
    doc: 'CloudFront price class: 100, 200 or All (default All).',
    resolve: (price = cloudfront.PriceClass.PRICE_CLASS_ALL) => price,
  }),
  originShieldRegion: setting({
    prop: 'originShieldRegion',
    read: text,
    doc: 'Origin Shield region, e.g. eu-west-1 (default: off).',
    resolve: (region) => {
      checkRegion('originShieldRegion', region);
      return region;
    },
  }),
  webAclId: setting({
    prop: 'webAclId',
    read: text,
    doc: 'ARN of a WAF web ACL (CLOUDFRONT scope) to attach (default: none).',
    resolve: (webAclId) => webAclId,
  }),
  alarms: setting({
    prop: 'alarms',
    read: flag,
    doc: 'false: no CloudWatch alarms (default true).',
    resolve: (alarms = true, props) => {
      if (!alarms && (props.alarmTopic || props.alarmEmail)) {
        throw new ImageTransformerConfigError('alarmTopic and alarmEmail need alarms (alarms: false turns them off).');
      }
      return alarms;
    },
  }),
  alarmEmail: setting({
    prop: 'alarmEmail',
    read: text,
    doc: 'Email address the alarms notify, through an SNS topic the stack creates (default: none).',
    resolve: (email) => {
      if (email !== undefined && !Token.isUnresolved(email) && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) {
        throw new ImageTransformerConfigError(mustBe('alarmEmail', 'an email address', email));
      }
      return email;
    },
  }),
  canaryDeployments: setting({
    prop: 'canaryDeployments',
    read: flag,
    doc: 'false: new origin code takes all traffic at once, no CodeDeploy (default true).',
    resolve: (canary = true) => canary,
  }),
  deploymentConfig: setting({
    prop: 'deploymentConfig',
    read: deploymentConfig,
    doc: 'CodeDeploy traffic shifting, e.g. LINEAR_10PERCENT_EVERY_1MINUTE or ALL_AT_ONCE (default CANARY_10PERCENT_5MINUTES).',
    // A bad version meets a tenth of the misses for five minutes, alarms watching, before all of them.
    resolve: (config, props) => {
      if (config && props.canaryDeployments === false) {
        throw new ImageTransformerConfigError('deploymentConfig is only used with canaryDeployments: true.');
      }
      return config ?? codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES;
    },
  }),
  dashboard: setting({
    prop: 'dashboard',
    read: flag,
    doc: 'false: no CloudWatch dashboard (default true).',
    resolve: (dashboard = true) => dashboard,
  }),
  cloudFrontAdditionalMetrics: setting({
    prop: 'cloudFrontAdditionalMetrics',
    read: flag,
    doc: "false: leave CloudFront's paid additional metrics (cache hit rate) off (default true).",
    resolve: (additional = true) => additional,
  }),
};

/** The source bucket's CORS origins for uploads: each `*` or a web origin, only with the API, on a bucket made here. */
function checkManageCorsOrigins(origins: string[], props: Props): string[] {
  if (origins.length === 0) return origins;
  if (props.manageApi === false) throw new ImageTransformerConfigError('manageCorsOrigins is only used with manageApi: true.');
  if (props.sourceBucket) {
    throw new ImageTransformerConfigError(
      "manageCorsOrigins sets the CORS of a source bucket this construct creates; an existing sourceBucket's CORS is its owner's to set.",
    );
  }
  for (const origin of origins) {
    if (origin === '*' || Token.isUnresolved(origin)) continue;
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.origin !== origin) {
      throw new ImageTransformerConfigError(
        mustBe('manageCorsOrigins', 'web origins such as https://app.example.com (no path), or *', origin),
      );
    }
  }
  return origins;
}

/** The JWT callers' prefix when manageJwtPrefix is not given. */
export const DEFAULT_JWT_PREFIX = 'users/{sub}/';

const jwtOnly = (name: string) => new ImageTransformerConfigError(`${name} is only used with manageJwtIssuer.`);

/** The JWT issuer: an https:// URL, only with the API. */
function checkJwtIssuer(issuer: string | undefined, props: Props): string | undefined {
  if (issuer === undefined) return undefined;
  if (props.manageApi === false) throw new ImageTransformerConfigError('manageJwtIssuer is only used with manageApi: true.');
  if (!Token.isUnresolved(issuer) && !/^https:\/\/[^\s/?#]+[^\s?#]*$/.test(issuer)) {
    throw new ImageTransformerConfigError(mustBe('manageJwtIssuer', "an https:// URL, the tokens' iss", issuer));
  }
  return issuer;
}

type Rows = typeof SETTINGS;
export type TableKey = keyof Rows;

/** Each row's setting, resolved. */
export type TableSettings = { readonly [Name in TableKey]: ReturnType<Rows[Name]['resolve']> };

/** The rows given to `consumer`. */
type RowsFor<To extends Consumer> = { [Name in TableKey]: To extends Rows[Name]['to'] ? Name : never }[TableKey];

/** What each context key of the rows means. */
export const TABLE_CONTEXT_KEYS = Object.fromEntries(Object.entries(SETTINGS).map(([name, row]) => [name, row.doc])) as Record<
  TableKey,
  string
>;

/** The props the rows' context keys give (undefined where a key is unset). */
export function tableProps(get: Lookup<TableKey>): Partial<Props> {
  return Object.fromEntries(
    Object.entries(SETTINGS).map(([name, row]) => [row.prop, (row.read as ContextReader<unknown>)(get, name as TableKey)]),
  );
}

/** Every row's prop resolved: its default applied, checked. */
export function resolveTable(props: Props): TableSettings {
  return Object.fromEntries(
    Object.entries(SETTINGS).map(([name, row]) => [name, (row.resolve as (value: unknown, all: Props) => unknown)(props[row.prop], props)]),
  ) as TableSettings;
}

/** The settings `consumer` is given, each as the field of its row's name. */
export function settingsFor<To extends Consumer>(settings: TableSettings, consumer: To): Pick<TableSettings, RowsFor<To>> {
  return Object.fromEntries(
    Object.entries(SETTINGS)
      .filter(([, row]) => row.to === consumer)
      .map(([name]) => [name, settings[name as TableKey]]),
  ) as Pick<TableSettings, RowsFor<To>>;
}
