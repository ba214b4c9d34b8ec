// CDK context -> ImageTransformer props, for bin/app.ts and `npm start`. Every
// key is listed in CONTEXT_KEYS with what it means; the settings table's keys
// are read by their rows (lib/settings-table.ts), the others here, all with
// the readers of lib/context-readers.ts.

import { Duration, SecretValue } from 'aws-cdk-lib';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { isObject } from '../lambda/common/checks';
import type { Preset } from '../lambda/grammar';
import type { SourceKindSettings } from '../lambda/origin/config';
import { bySourceSetting, SOURCE_SETTINGS } from '../lambda/origin/sources';
import { bad, flag, integer, integerOrOff, integers, jsonObject, list, text, type Lookup as ReaderLookup } from './context-readers';
import type { ImageTransformerProps } from './props';
import { TABLE_CONTEXT_KEYS, tableProps, type TableKey } from './settings-table';

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
  fonts: 'Your own fonts as JSON, e.g. {"brand":{"file":"brand/Brand.ttf"}} (docs/text.md; default: the packaged ones alone).',
  templates: 'Card templates as JSON, e.g. {"og":{"width":1200,"height":630,"slots":{...}}} (docs/templates.md; default: none).',
  hdr: "What a URL without hdr does with a source's HDR gain map: keep (default) or drop.",
  dialects: "Other services' URL grammars served beside ours, comma-separated: dit, imgix, cloudflare (default: none).",
  eagerPresets: 'Presets made when a source is uploaded, comma-separated (default: none).',
  eagerSigningSecretName: 'Secrets Manager secret the warming URLs are signed with (needed for signing + eagerPresets).',
  timeoutSeconds: 'Origin Lambda timeout in seconds, 5-110 (default 30).',
  originReservedConcurrency:
    'Fixed reserved concurrency of the origin Lambda; deploy fails if the account cannot spare it (default: originConcurrencyCap).',
  originConcurrencyCap:
    'Cap on simultaneous origin invocations, reserved at deploy time as far as the account can spare; "false" for none (default 50).',
  domainNames: 'Custom domain names, comma-separated (needs certificateArn).',
  certificateArn: 'ACM certificate in us-east-1 for domainNames.',
  corsOrigins: 'Allowed CORS origins, comma-separated, "*" for any, "none" for no CORS headers (default *).',
  originProvisionedConcurrency: 'Provisioned concurrency on the origin live alias, billed hourly (default: none).',
  metrics: 'false: the origin publishes no EMF metrics (default true).',
  metricsNamespace: 'CloudWatch namespace of the origin metrics (default EdgeImageTransformer/<stack name>).',
  nag: 'false: skip the cdk-nag AwsSolutions checks at synth (default true).',
} as const;

export type ContextKey = keyof typeof OWN_KEYS | TableKey | keyof SourceKindSettings;

/**
 * The context keys bin/app.ts reads, with their meaning: the app's own, the
 * settings table's (lib/settings-table.ts), and each source kind's setting (lambda/origin/sources/).
 */
export const CONTEXT_KEYS = {
  ...OWN_KEYS,
  ...TABLE_CONTEXT_KEYS,
  ...Object.fromEntries(SOURCE_SETTINGS.map((setting) => [setting.name, setting.description])),
} as Record<ContextKey, string>;
type Lookup = ReaderLookup<ContextKey>;

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

/** What the app itself reads: the stack name, and whether cdk-nag runs. */
export function appSettingsFromContext(get: Lookup): { stackName: string; nag: boolean } {
  return {
    stackName: text(get, 'stackName') ?? 'EdgeImageTransformer',
    nag: flag(get, 'nag') ?? true,
  };
}

/** The construct's props from context. Imported resources (bucket, certificate) are made in `scope`. */
export function propsFromContext(scope: Construct, get: Lookup): ImageTransformerProps {
  const sourceBucketName = text(get, 'sourceBucket');
  const certificateArn = text(get, 'certificateArn');
  const corsOrigins = list(get, 'corsOrigins');
  const timeoutSeconds = integer(get, 'timeoutSeconds');
  const eagerSigningSecretName = text(get, 'eagerSigningSecretName');

  return {
    ...tableProps(get),
    sourceBucket: sourceBucketName ? s3.Bucket.fromBucketName(scope, 'ImportedSourceBucket', sourceBucketName) : undefined,
    sourceBuckets: sourceBuckets(scope, get),
    maxDimension: integer(get, 'maxDimension'),
    sizes: integers(get, 'sizes'),
    presets: presets(get),
    presetsOnly: flag(get, 'presetsOnly'),
    // Their fields are checked where the props are (lib/watermarks.ts).
    watermarks: jsonObject(get, 'watermarks', 'watermarks, e.g. {"logo":{"file":"brand/logo.png"}}') as ImageTransformerProps['watermarks'],
    // Their fields are checked where the props are (lib/own-fonts.ts).
    fonts: jsonObject(get, 'fonts', 'fonts, e.g. {"brand":{"file":"brand/Brand.ttf"}}') as ImageTransformerProps['fonts'],
    // Their fields are checked where the props are (lib/templates.ts).
    templates: jsonObject(
      get,
      'templates',
      'templates, e.g. {"og":{"width":1200,"height":630,"slots":{}}}',
    ) as ImageTransformerProps['templates'],
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
    // Checked where the prop is (checkGrammar).
    hdr: text(get, 'hdr') as ImageTransformerProps['hdr'],
    // Checked where the props are (lib/resolved-settings.ts).
    dialects: list(get, 'dialects') as ImageTransformerProps['dialects'],
    eagerPresets: list(get, 'eagerPresets'),
    eagerSigningSecret: eagerSigningSecretName ? SecretValue.secretsManager(eagerSigningSecretName) : undefined,
    timeout: timeoutSeconds === undefined ? undefined : Duration.seconds(timeoutSeconds),
    originReservedConcurrency: integer(get, 'originReservedConcurrency'),
    originConcurrencyCap: integerOrOff(get, 'originConcurrencyCap'),
    domainNames: list(get, 'domainNames'),
    certificate: certificateArn ? acm.Certificate.fromCertificateArn(scope, 'Certificate', certificateArn) : undefined,
    cors:
      corsOrigins === undefined ? undefined : corsOrigins.length === 1 && corsOrigins[0] === 'none' ? false : { allowOrigins: corsOrigins },
    originProvisionedConcurrency: integer(get, 'originProvisionedConcurrency'),
    metrics: flag(get, 'metrics'),
    metricsNamespace: text(get, 'metricsNamespace'),
  };
}
