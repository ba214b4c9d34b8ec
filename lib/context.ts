// CDK context -> ImageTransformer props, for bin/app.ts. Context values come
// as strings from the command line (`cdk deploy -c sizes=320,640`) and as JSON
// values from cdk.json / cdk.context.json; both are accepted. Every key is
// listed in CONTEXT_KEYS with what it means; an unknown value is an error that
// names the key, never silently ignored.

import { Duration, SecretValue } from 'aws-cdk-lib';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as codedeploy from 'aws-cdk-lib/aws-codedeploy';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { isObject, mustBe } from '../lambda/common/checks';
import type { Preset } from '../lambda/grammar';
import { NUMBER_SETTINGS, SVG_POLICIES, type NumberSettings, type SourceKindSettings, type SvgPolicy } from '../lambda/origin/config';
import { bySourceSetting, SOURCE_SETTINGS } from '../lambda/origin/sources';
import type { ImageTransformerProps } from './image-transformer';
import { ImageTransformerConfigError } from './settings';

/** The app's own context keys, with their meaning (docs/configuration.md lists them all; test/docs/tables.test.ts keeps it complete). */
const OWN_KEYS = {
  stackName: 'CloudFormation stack name (default EdgeImageTransformer).',
  sourceBucket: 'Name of an existing bucket of originals to serve (default: create one).',
  sourceBuckets: 'More existing buckets of originals by key prefix, as JSON, e.g. {"archive/":"my-archive-bucket"} (default: none).',
  maxDimension: 'Largest width/height, integer (default 8192).',
  sizes: 'Allowed widths/heights, comma-separated, e.g. 320,640,1280 (default: any).',
  presets: 'Presets as JSON, e.g. {"thumb":{"width":"200","height":"200","fit":"cover"}} (default: none).',
  presetsOnly: 'true: only ?preset= is accepted (default false).',
  watermarks: 'Watermarks as JSON, e.g. {"logo":{"file":"brand/logo.png","opacity":0.8}} (default: none).',
  requireWatermark: 'Key prefixes served only with a watermark, as JSON, e.g. {"users/":"logo"} (default: none).',
  fallbackImage:
    'PNG or JPEG file answered, at the size asked, in place of the error for a missing (404), unsupported (415) or damaged (422) source (default: none).',
  avif: 'false: format=auto never picks AVIF (default true).',
  signing: 'true: URLs must be signed; creates the KeyValueStore for the secrets (default false).',
  dialects: "Other services' URL grammars served beside ours, comma-separated: dit, imgix, cloudflare (default: none).",
  eagerPresets: 'Presets made when a source is uploaded, comma-separated (default: none).',
  eagerSigningSecretName: 'Secrets Manager secret the warming URLs are signed with (needed for signing + eagerPresets).',
  memorySize: 'Origin Lambda memory in MB (default 2048).',
  timeoutSeconds: 'Origin Lambda timeout in seconds, 5-110 (default 30).',
  maxSourceBytes: 'Largest source object in bytes (default 33554432).',
  maxInputPixels: 'Largest source in pixels (default 100000000).',
  maxFrames: 'Animation frames kept (default 200).',
  maxInlineBytes:
    'Largest variant answered inline, in bytes, at most 4718592; a larger one is redirected to the cache bucket (default 4500000).',
  svgPolicy: 'SVG sources: refuse (415, default) or rasterize.',
  cacheControl:
    'Cache-Control of the variants at the origin, for CloudFront and the cache bucket (default "public, max-age=31536000, immutable").',
  browserMaxAgeSeconds:
    'How long browsers and proxies keep a variant before revalidating it, in seconds; 0: always revalidate (default 3600).',
  originReservedConcurrency:
    'Fixed reserved concurrency of the origin Lambda; deploy fails if the account cannot spare it (default: originConcurrencyCap).',
  originConcurrencyCap:
    'Cap on simultaneous origin invocations, reserved at deploy time as far as the account can spare; "false" for none (default 50).',
  variantExpirationDays: 'Days a variant stays in the cache bucket (default 90).',
  failureTtlSeconds: 'Seconds a transform that ran out of time or crashed is answered from memory, not tried again (default 300).',
  autoDeleteObjects: 'true: delete the created buckets and their objects with the stack (default false).',
  domainNames: 'Custom domain names, comma-separated (needs certificateArn).',
  certificateArn: 'ACM certificate in us-east-1 for domainNames.',
  priceClass: 'CloudFront price class: 100, 200 or All (default All).',
  originShieldRegion: 'Origin Shield region, e.g. eu-west-1 (default: off).',
  accessLogging: 'false: no access logs / log bucket (default true).',
  corsOrigins: 'Allowed CORS origins, comma-separated, "*" for any, "none" for no CORS headers (default *).',
  webAclId: 'ARN of a WAF web ACL (CLOUDFRONT scope) to attach (default: none).',
  originProvisionedConcurrency: 'Provisioned concurrency on the origin live alias, billed hourly (default: none).',
  metrics: 'false: the origin publishes no EMF metrics (default true).',
  metricsNamespace: 'CloudWatch namespace of the origin metrics (default EdgeImageTransformer/<stack name>).',
  dashboard: 'false: no CloudWatch dashboard (default true).',
  alarms: 'false: no CloudWatch alarms (default true).',
  alarmEmail: 'Email address the alarms notify, through an SNS topic the stack creates (default: none).',
  cloudFrontAdditionalMetrics: "false: leave CloudFront's paid additional metrics (cache hit rate) off (default true).",
  canaryDeployments: 'false: new origin code takes all traffic at once, no CodeDeploy (default true).',
  deploymentConfig: 'CodeDeploy traffic shifting, e.g. LINEAR_10PERCENT_EVERY_1MINUTE or ALL_AT_ONCE (default CANARY_10PERCENT_5MINUTES).',
  nag: 'false: skip the cdk-nag AwsSolutions checks at synth (default true).',
} as const;

export type ContextKey = keyof typeof OWN_KEYS | keyof SourceKindSettings;

/** The context keys bin/app.ts reads, with their meaning: the app's own, and each source kind's setting (lambda/origin/sources/). */
export const CONTEXT_KEYS = {
  ...OWN_KEYS,
  ...Object.fromEntries(SOURCE_SETTINGS.map((setting) => [setting.name, setting.description])),
} as Record<ContextKey, string>;
type Lookup = (key: ContextKey) => unknown;

const bad = (key: string, expected: string, value: unknown): never => {
  throw new ImageTransformerConfigError(mustBe(`context ${key}`, expected, value));
};

function text(get: Lookup, key: ContextKey): string | undefined {
  const value = get(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') bad(key, 'a string', value);
  return (value as string).trim();
}

export function contextBoolean(get: Lookup, key: ContextKey): boolean | undefined {
  const value = get(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true';
  return bad(key, 'true or false', value);
}

function integer(get: Lookup, key: ContextKey): number | undefined {
  const value = get(key);
  if (value === undefined || value === null || value === '') return undefined;
  const number = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(number)) bad(key, 'a whole number', value);
  return number;
}

/** A whole number, or `false` for "off" (false, "false" or "none"). */
function integerOrOff(get: Lookup, key: ContextKey): number | false | undefined {
  const value = get(key);
  if (value === false || (typeof value === 'string' && /^\s*(false|none)\s*$/i.test(value))) return false;
  return integer(get, key);
}

function list(get: Lookup, key: ContextKey): string[] | undefined {
  const value = get(key);
  if (value === undefined || value === null || value === '') return undefined;
  const items = Array.isArray(value)
    ? value.map(String)
    : typeof value === 'string'
      ? value.split(',')
      : bad(key, 'a comma-separated list', value);
  return items.map((item) => item.trim()).filter((item) => item !== '');
}

function integers(get: Lookup, key: ContextKey): number[] | undefined {
  const items = list(get, key);
  if (!items) return undefined;
  return items.map((item) => (/^\d+$/.test(item) ? Number(item) : bad(key, 'comma-separated whole numbers', get(key))));
}

/** A JSON object given as text (`-c key='{...}'`) or as an object (cdk.json); `example` words what it holds. */
function jsonObject(get: Lookup, key: ContextKey, example: string): Record<string, unknown> | undefined {
  const raw = get(key);
  if (raw === undefined || raw === null || raw === '') return undefined;
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch (error) {
      bad(key, `JSON (${(error as Error).message})`, raw);
    }
  }
  return isObject(value) ? value : bad(key, `a JSON object of ${example}`, raw);
}

function presets(get: Lookup): { [name: string]: Preset } | undefined {
  const value = jsonObject(get, 'presets', 'presets, e.g. {"thumb":{"width":"200"}}');
  if (!value) return undefined;
  // Numbers and booleans are accepted for convenience (`"width": 200`) and made strings.
  const result: { [name: string]: Preset } = {};
  for (const [name, preset] of Object.entries(value)) {
    if (!isObject(preset)) bad(`presets.${name}`, 'an object of parameters, e.g. {"width":"200"}', preset);
    result[name] = Object.fromEntries(Object.entries(preset as Record<string, unknown>).map(([param, v]) => [param, String(v)]));
  }
  return result;
}

/** Imported by name, each in its own construct named after its prefix (a construct id may not hold "/"). */
function sourceBuckets(scope: Construct, get: Lookup): { [prefix: string]: s3.IBucket } | undefined {
  const value = jsonObject(get, 'sourceBuckets', 'key prefixes to bucket names, e.g. {"archive/":"my-archive-bucket"}');
  if (!value) return undefined;
  return Object.fromEntries(
    Object.entries(value).map(([prefix, name]) => {
      if (typeof name !== 'string' || name.trim() === '') bad(`sourceBuckets.${prefix}`, 'a bucket name', name);
      return [prefix, s3.Bucket.fromBucketName(scope, `ImportedSourceBucket-${encodeURIComponent(prefix)}`, (name as string).trim())];
    }),
  );
}

function svgPolicy(get: Lookup): SvgPolicy | undefined {
  const value = text(get, 'svgPolicy');
  if (value === undefined) return undefined;
  return (SVG_POLICIES as readonly string[]).includes(value) ? (value as SvgPolicy) : bad('svgPolicy', SVG_POLICIES.join(' or '), value);
}

function priceClass(get: Lookup): cloudfront.PriceClass | undefined {
  const value = text(get, 'priceClass');
  if (value === undefined) return undefined;
  const classes: Record<string, cloudfront.PriceClass> = {
    '100': cloudfront.PriceClass.PRICE_CLASS_100,
    '200': cloudfront.PriceClass.PRICE_CLASS_200,
    all: cloudfront.PriceClass.PRICE_CLASS_ALL,
  };
  const key = value.toLowerCase().replace(/^priceclass_?/, '');
  return classes[key] ?? bad('priceClass', '100, 200 or All', value);
}

/** The names `-c deploymentConfig=` takes: aws-cdk-lib's predefined Lambda deployment configurations. */
const DEPLOYMENT_CONFIGS: Record<string, codedeploy.ILambdaDeploymentConfig> = {
  ALL_AT_ONCE: codedeploy.LambdaDeploymentConfig.ALL_AT_ONCE,
  CANARY_10PERCENT_5MINUTES: codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES,
  CANARY_10PERCENT_10MINUTES: codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_10MINUTES,
  CANARY_10PERCENT_15MINUTES: codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_15MINUTES,
  CANARY_10PERCENT_30MINUTES: codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_30MINUTES,
  LINEAR_10PERCENT_EVERY_1MINUTE: codedeploy.LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_1MINUTE,
  LINEAR_10PERCENT_EVERY_2MINUTES: codedeploy.LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_2MINUTES,
  LINEAR_10PERCENT_EVERY_3MINUTES: codedeploy.LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_3MINUTES,
  LINEAR_10PERCENT_EVERY_10MINUTES: codedeploy.LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_10MINUTES,
};

function deploymentConfig(get: Lookup): codedeploy.ILambdaDeploymentConfig | undefined {
  const value = text(get, 'deploymentConfig');
  if (value === undefined) return undefined;
  return DEPLOYMENT_CONFIGS[value.toUpperCase()] ?? bad('deploymentConfig', `one of ${Object.keys(DEPLOYMENT_CONFIGS).join(', ')}`, value);
}

/** What the app itself reads: the stack name, and whether cdk-nag runs. */
export function appSettingsFromContext(get: Lookup): { stackName: string; nag: boolean } {
  return {
    stackName: text(get, 'stackName') ?? 'EdgeImageTransformer',
    nag: contextBoolean(get, 'nag') ?? true,
  };
}

/** The construct's props from context. Imported resources (bucket, certificate) are made in `scope`. */
export function propsFromContext(scope: Construct, get: Lookup): ImageTransformerProps {
  const sourceBucketName = text(get, 'sourceBucket');
  const certificateArn = text(get, 'certificateArn');
  const corsOrigins = list(get, 'corsOrigins');
  const timeoutSeconds = integer(get, 'timeoutSeconds');
  const browserMaxAgeSeconds = integer(get, 'browserMaxAgeSeconds');
  const variantExpirationDays = integer(get, 'variantExpirationDays');
  const failureTtlSeconds = integer(get, 'failureTtlSeconds');
  const eagerSigningSecretName = text(get, 'eagerSigningSecretName');

  return {
    sourceBucket: sourceBucketName ? s3.Bucket.fromBucketName(scope, 'ImportedSourceBucket', sourceBucketName) : undefined,
    sourceBuckets: sourceBuckets(scope, get),
    maxDimension: integer(get, 'maxDimension'),
    sizes: integers(get, 'sizes'),
    presets: presets(get),
    presetsOnly: contextBoolean(get, 'presetsOnly'),
    // Their fields are checked where the props are (lib/watermarks.ts).
    watermarks: jsonObject(get, 'watermarks', 'watermarks, e.g. {"logo":{"file":"brand/logo.png"}}') as ImageTransformerProps['watermarks'],
    requireWatermark: jsonObject(
      get,
      'requireWatermark',
      'prefixes to watermark names, e.g. {"users/":"logo"}',
    ) as ImageTransformerProps['requireWatermark'],
    // Each source kind's setting as the context gives it (seconds, not Durations): its kind's check reads both.
    ...(bySourceSetting((setting) => jsonObject(get, setting.name, 'key prefixes to their sources')) as Pick<
      ImageTransformerProps,
      keyof SourceKindSettings
    >),
    fallbackImage: text(get, 'fallbackImage'),
    avif: contextBoolean(get, 'avif'),
    signing: contextBoolean(get, 'signing'),
    // Checked where the props are (lib/resolved-settings.ts).
    dialects: list(get, 'dialects') as ImageTransformerProps['dialects'],
    eagerPresets: list(get, 'eagerPresets'),
    eagerSigningSecret: eagerSigningSecretName ? SecretValue.secretsManager(eagerSigningSecretName) : undefined,
    memorySize: integer(get, 'memorySize'),
    timeout: timeoutSeconds === undefined ? undefined : Duration.seconds(timeoutSeconds),
    // The origin's whole-number settings, each under its own name (a key missing from CONTEXT_KEYS does not compile).
    ...Object.fromEntries(Object.keys(NUMBER_SETTINGS).map((name) => [name, integer(get, name as keyof NumberSettings)])),
    svgPolicy: svgPolicy(get),
    cacheControl: text(get, 'cacheControl'),
    browserMaxAge: browserMaxAgeSeconds === undefined ? undefined : Duration.seconds(browserMaxAgeSeconds),
    originReservedConcurrency: integer(get, 'originReservedConcurrency'),
    originConcurrencyCap: integerOrOff(get, 'originConcurrencyCap'),
    variantExpiration: variantExpirationDays === undefined ? undefined : Duration.days(variantExpirationDays),
    failureTtl: failureTtlSeconds === undefined ? undefined : Duration.seconds(failureTtlSeconds),
    autoDeleteObjects: contextBoolean(get, 'autoDeleteObjects'),
    domainNames: list(get, 'domainNames'),
    certificate: certificateArn ? acm.Certificate.fromCertificateArn(scope, 'Certificate', certificateArn) : undefined,
    priceClass: priceClass(get),
    originShieldRegion: text(get, 'originShieldRegion'),
    accessLogging: contextBoolean(get, 'accessLogging'),
    cors:
      corsOrigins === undefined ? undefined : corsOrigins.length === 1 && corsOrigins[0] === 'none' ? false : { allowOrigins: corsOrigins },
    webAclId: text(get, 'webAclId'),
    originProvisionedConcurrency: integer(get, 'originProvisionedConcurrency'),
    metrics: contextBoolean(get, 'metrics'),
    metricsNamespace: text(get, 'metricsNamespace'),
    dashboard: contextBoolean(get, 'dashboard'),
    alarms: contextBoolean(get, 'alarms'),
    alarmEmail: text(get, 'alarmEmail'),
    cloudFrontAdditionalMetrics: contextBoolean(get, 'cloudFrontAdditionalMetrics'),
    canaryDeployments: contextBoolean(get, 'canaryDeployments'),
    deploymentConfig: deploymentConfig(get),
  };
}
