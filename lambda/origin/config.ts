// The origin's settings, read once from the Lambda environment, and the
// environment the construct writes for them: readConfig and originEnvironment
// are each other's inverse (test/origin/config.test.ts). Every limit has a
// default chosen for a 2 GB arm64 Lambda; see docs/configuration.md.

import { resolve } from 'node:path';
import { envReaders, type Env } from '../common/env';
import { readSourceBuckets, sourceBucketsEnvironment, type PrefixBuckets } from '../common/sources';
import { DEFAULT_GRAMMAR_OPTIONS } from '../grammar';
import type { MetricsOptions } from './metrics';
import type { WatermarkDefinition } from './watermarks';
import type { TemplateDefinition } from './templates';
import { DEPLOYMENT_FONTS_FOLDER, type DeploymentFonts, type FontFace } from './image/text/fonts';
import { bySourceSetting, SOURCE_SETTINGS } from './sources';
import type { WebOrigin } from './web/origins';

/** Lambda streams the first 6 MB of a response at full speed, then 2 MB/s: larger variants are better served from S3. */
export const DEFAULT_MAX_INLINE_BYTES = 4_500_000;

/**
 * The origin's whole-number settings that a deployment gives as they are:
 * each is the construct's prop and context key of the same name and unit
 * (checked at synth from 1 to `max`), and this environment variable. A row
 * here is all the origin, the construct and the emulator need of a new one
 * ("Adding a setting" in docs/development.md).
 */
export const NUMBER_SETTINGS = {
  /** Largest source object read, in bytes. */
  maxSourceBytes: { env: 'MAX_SOURCE_BYTES', default: 32 * 1024 * 1024, max: 5 * 1024 ** 3 },
  /** Largest source in pixels, all frames together. */
  maxInputPixels: { env: 'MAX_INPUT_PIXELS', default: 100_000_000, max: Number.MAX_SAFE_INTEGER },
  /** Frames kept from an animation; later ones are dropped. */
  maxFrames: { env: 'MAX_FRAMES', default: 200, max: 100_000 },
  /** Largest body returned inline; larger variants are redirected to the cache bucket. 4.5 MiB keeps a whole response, headers included, in the 6 MB Lambda streams at full speed. */
  maxInlineBytes: { env: 'MAX_INLINE_BYTES', default: DEFAULT_MAX_INLINE_BYTES, max: 4_718_592 },
} as const satisfies Record<string, { env: string; default: number; max: number }>;

export type NumberSettings = { [Name in keyof typeof NUMBER_SETTINGS]: number };

/** Each NUMBER_SETTINGS' default. */
const NUMBER_DEFAULTS = Object.fromEntries(
  Object.entries(NUMBER_SETTINGS).map(([name, setting]) => [name, setting.default]),
) as NumberSettings;

export interface Limits extends NumberSettings {
  /** Largest output width or height, and largest width/height parameter (MAX_DIMENSION, default 8192). */
  maxDimension: number;
  /** Time allowed for fetch + transform before answering 504 (TIME_BUDGET_MS, default 25000). */
  timeBudgetMs: number;
  /**
   * The function's memory size in MB (Lambda's AWS_LAMBDA_FUNCTION_MEMORY_SIZE, default 2048):
   * a request's memory and CPU budgets derive from it (image/budget.ts).
   */
  memorySizeMb: number;
  /** What an SVG source gets (SVG_POLICY): refused with 415 (`refuse`, the default), or rendered to a raster (`rasterize`). */
  svgPolicy: SvgPolicy;
}

/**
 * `refuse`: an SVG source is a 415, like any type the service does not read.
 * `rasterize`: it is rendered (librsvg) to pixels and served in a raster format,
 * never as SVG; nothing it references outside itself is loaded and no script runs.
 */
export const SVG_POLICIES = ['refuse', 'rasterize'] as const;
export type SvgPolicy = (typeof SVG_POLICIES)[number];

export interface OriginConfig extends Limits, SourceKindSettings {
  /** The bucket of every source key outside `sourceBuckets`' prefixes (SOURCE_BUCKET). */
  sourceBucket: string;
  /** Key prefixes read from other buckets, without the prefix (SOURCE_BUCKETS, JSON; lambda/common/sources.ts). */
  sourceBuckets: PrefixBuckets;
  cacheBucket: string;
  /** Cache-Control of variants (CACHE_CONTROL, default one year, immutable). */
  cacheControl: string;
  /** How long a transform that ran out of time or crashed is answered from memory, without trying again (FAILURE_TTL_SECONDS). */
  failureTtlSeconds: number;
  /** The watermarks by name (WATERMARKS, JSON; files relative to the function's package). */
  watermarkDefinitions: Record<string, WatermarkDefinition>;
  /** Key prefixes served only with a watermark, to the watermark's name (REQUIRE_WATERMARK, JSON). */
  requireWatermark: Record<string, string>;
  /** The card templates by name, checked (TEMPLATES, JSON; lambda/origin/templates.ts). */
  templateDefinitions: Record<string, TemplateDefinition>;
  /**
   * The deployment's own fonts by name (TEXT_FONTS, JSON of each one's family,
   * weight and slant; its file is its name in the package's text-fonts/).
   */
  fonts: DeploymentFonts;
  /** The image answered in place of a missing, unsupported or damaged source's error (FALLBACK_IMAGE, relative to the function's package); absent: none. */
  fallbackImage?: string;
}

/**
 * The settings of the source kinds other than the buckets, by name: a kind's
 * prop, context key and this field (lambda/origin/sources/, "Adding a source kind").
 */
export interface SourceKindSettings {
  /** Key prefixes served from web sites instead of the bucket (WEB_ORIGINS, JSON). */
  webOrigins: Record<string, WebOrigin>;
}

export const DEFAULT_LIMITS: Limits = {
  ...NUMBER_DEFAULTS,
  maxDimension: DEFAULT_GRAMMAR_OPTIONS.maxDimension,
  timeBudgetMs: 25_000,
  memorySizeMb: 2048,
  svgPolicy: 'refuse',
};

export const DEFAULT_CACHE_CONTROL = 'public, max-age=31536000, immutable';
export const DEFAULT_FAILURE_TTL_SECONDS = 300;

const configError = (message: string) => new Error(`Invalid origin Lambda configuration: ${message}`);
const { required, positiveInteger, oneOf, flag, jsonObject } = envReaders(configError);

/**
 * The limits as originEnvironment writes them, the memory size being the
 * function's own (Lambda's AWS_LAMBDA_FUNCTION_MEMORY_SIZE). The management
 * API's validator reads them too, with the origin's memory size.
 */
export function readLimits(env: Env): Limits {
  return {
    ...(Object.fromEntries(
      Object.entries(NUMBER_SETTINGS).map(([name, setting]) => [name, positiveInteger(env, setting.env, setting.default)]),
    ) as NumberSettings),
    maxDimension: positiveInteger(env, 'MAX_DIMENSION', DEFAULT_LIMITS.maxDimension),
    timeBudgetMs: positiveInteger(env, 'TIME_BUDGET_MS', DEFAULT_LIMITS.timeBudgetMs),
    memorySizeMb: positiveInteger(env, 'AWS_LAMBDA_FUNCTION_MEMORY_SIZE', DEFAULT_LIMITS.memorySizeMb),
    svgPolicy: oneOf(env, 'SVG_POLICY', SVG_POLICIES, DEFAULT_LIMITS.svgPolicy),
  };
}

/** Where the keys are read from: the default bucket, the buckets mapped to prefixes and the other source kinds' settings. */
export function readSources(env: Env): Pick<OriginConfig, 'sourceBucket' | 'sourceBuckets' | keyof SourceKindSettings> {
  return {
    sourceBucket: required(env, 'SOURCE_BUCKET'),
    sourceBuckets: readSourceBuckets(env, configError),
    ...bySourceSetting((setting) => setting.check(jsonObject(env, setting.env), setting.env, configError)),
  };
}

export function readConfig(env: Env): OriginConfig {
  return {
    ...readSources(env),
    cacheBucket: required(env, 'CACHE_BUCKET'),
    ...readLimits(env),
    cacheControl: env.CACHE_CONTROL || DEFAULT_CACHE_CONTROL,
    failureTtlSeconds: positiveInteger(env, 'FAILURE_TTL_SECONDS', DEFAULT_FAILURE_TTL_SECONDS),
    watermarkDefinitions: packagedWatermarks(jsonObject(env, 'WATERMARKS') as Record<string, WatermarkDefinition>, env.LAMBDA_TASK_ROOT),
    requireWatermark: jsonObject(env, 'REQUIRE_WATERMARK') as Record<string, string>,
    templateDefinitions: jsonObject(env, 'TEMPLATES') as Record<string, TemplateDefinition>,
    fonts: packagedFonts(jsonObject(env, 'TEXT_FONTS') as Record<string, FontFace>, env.LAMBDA_TASK_ROOT),
    fallbackImage: env.FALLBACK_IMAGE ? resolve(env.LAMBDA_TASK_ROOT ?? '.', env.FALLBACK_IMAGE) : undefined,
  };
}

/** The watermarks with their files' paths resolved in the function's package (Lambda's LAMBDA_TASK_ROOT). */
function packagedWatermarks(watermarks: Record<string, WatermarkDefinition>, root = '.'): Record<string, WatermarkDefinition> {
  return Object.fromEntries(
    Object.entries(watermarks).map(([name, definition]) => [name, { ...definition, file: resolve(root, definition.file) }]),
  );
}

/** The deployment's fonts with their files' paths in the function's package: each named by its name. */
function packagedFonts(fonts: Record<string, FontFace>, root = '.'): DeploymentFonts {
  return Object.fromEntries(
    Object.entries(fonts).map(([name, face]) => [name, { ...face, file: resolve(root, DEPLOYMENT_FONTS_FOLDER, name) }]),
  );
}

/** The fonts as TEXT_FONTS holds them: each face without its file, which the font's name names (lib/fonts-setting.ts budgets its bytes). */
export const fontsJson = (fonts: DeploymentFonts): string =>
  JSON.stringify(Object.fromEntries(Object.entries(fonts).map(([name, { file: _file, ...face }]) => [name, face])));

/** The metrics settings beside the config (METRICS_NAMESPACE, METRICS), and the version Lambda sets. */
export function readMetricsOptions(env: Env): MetricsOptions {
  return {
    namespace: env.METRICS_NAMESPACE?.trim() || undefined,
    enabled: flag(env, 'METRICS', true),
    functionVersion: env.AWS_LAMBDA_FUNCTION_VERSION,
  };
}

/**
 * The environment that readConfig and readMetricsOptions read back as `config`
 * and `metrics`. Values may be CDK tokens (a bucket's name), which pass through
 * as the strings they are at synth. SVG_POLICY, SIZES and the metrics settings
 * are written only when they are not the default; the other limits always,
 * as deployed templates have them. Lambda itself sets the memory size
 * (AWS_LAMBDA_FUNCTION_MEMORY_SIZE, from the function's settings) and the version.
 */
export function originEnvironment(
  config: Omit<OriginConfig, 'memorySizeMb'>,
  metrics: Pick<MetricsOptions, 'namespace' | 'enabled'>,
): Record<string, string> {
  return {
    SOURCE_BUCKET: config.sourceBucket,
    ...sourceBucketsEnvironment(config.sourceBuckets),
    CACHE_BUCKET: config.cacheBucket,
    ...Object.fromEntries(
      Object.entries(NUMBER_SETTINGS).map(([name, setting]) => [setting.env, String(config[name as keyof NumberSettings])]),
    ),
    MAX_DIMENSION: String(config.maxDimension),
    TIME_BUDGET_MS: String(config.timeBudgetMs),
    CACHE_CONTROL: config.cacheControl,
    FAILURE_TTL_SECONDS: String(config.failureTtlSeconds),
    ...(config.svgPolicy !== DEFAULT_LIMITS.svgPolicy ? { SVG_POLICY: config.svgPolicy } : {}),
    ...(Object.keys(config.watermarkDefinitions).length ? { WATERMARKS: JSON.stringify(config.watermarkDefinitions) } : {}),
    ...(Object.keys(config.requireWatermark).length ? { REQUIRE_WATERMARK: JSON.stringify(config.requireWatermark) } : {}),
    ...(Object.keys(config.templateDefinitions).length ? { TEMPLATES: JSON.stringify(config.templateDefinitions) } : {}),
    ...(Object.keys(config.fonts).length ? { TEXT_FONTS: fontsJson(config.fonts) } : {}),
    ...(config.fallbackImage ? { FALLBACK_IMAGE: config.fallbackImage } : {}),
    ...Object.fromEntries(
      SOURCE_SETTINGS.filter((setting) => Object.keys(config[setting.name]).length > 0).map((setting) => [
        setting.env,
        JSON.stringify(config[setting.name]),
      ]),
    ),
    ...(metrics.namespace ? { METRICS_NAMESPACE: metrics.namespace } : {}),
    ...(metrics.enabled === false ? { METRICS: 'false' } : {}),
  };
}

/** The default settings on these buckets, with `overrides`: how the emulator, the bench and the tests configure an origin. */
export function originConfig(
  buckets: Pick<OriginConfig, 'sourceBucket' | 'cacheBucket'>,
  overrides: Partial<OriginConfig> = {},
): OriginConfig {
  return {
    ...DEFAULT_LIMITS,
    sourceBucket: buckets.sourceBucket,
    cacheBucket: buckets.cacheBucket,
    sourceBuckets: {},
    cacheControl: DEFAULT_CACHE_CONTROL,
    failureTtlSeconds: DEFAULT_FAILURE_TTL_SECONDS,
    watermarkDefinitions: {},
    requireWatermark: {},
    templateDefinitions: {},
    fonts: {},
    ...bySourceSetting(() => ({})),
    ...overrides,
  };
}
