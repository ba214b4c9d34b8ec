// The deployment plan: everything one deployment runs, derived once from its
// resolved settings. The construct's parts (lib/parts/) write it into
// CloudFormation, with the buckets' and the distribution's names as tokens;
// the local emulator (local/emulator/) runs it, with its own buckets' names.
// Neither derives a setting again: a value the edge, the origin or the
// invalidation Lambda is given comes from here.

import type { PrefixBuckets } from '../lambda/common/sources';
import { bucketsEntry, deploymentEntries } from '../lambda/edge/store';
import type { EdgeGrammar } from '../lambda/edge/dialects/dialect';
import { DIALECT_GRAMMARS, dialectModule } from '../lambda/edge/dialects/index';
import type { GrammarOptions } from '../lambda/grammar';
import type { InvalidateConfig } from '../lambda/invalidate/config';
import { invalidateConfig } from '../lambda/invalidate/config';
import type { OriginConfig } from '../lambda/origin/config';
import type { MetricsOptions } from '../lambda/origin/metrics';
import { behaviorPathPattern, ownBehaviorPrefixes, sourceKindSettings, sourceRoutes, type SourceRoute } from '../lambda/origin/sources';
import type { EdgeFunctionSettings } from './edge-function';
import type { ResolvedSettings } from './resolved-settings';
import { settingsFor } from './settings-table';
import { originFonts } from './own-fonts';
import { ImageTransformerConfigError } from './settings';
import { FORMAT_VARY, type ViewerResponseSettings } from './viewer-response-function';

/** Where a deployment keeps its images: bucket names (CDK tokens at synth, the emulator's own locally). */
export interface PlanBuckets {
  sourceBucket: string;
  cacheBucket: string;
  /** The buckets mapped to key prefixes, by prefix. */
  sourceBuckets: PrefixBuckets;
}

/** The distribution the invalidation Lambda invalidates and warms. */
export interface PlanDistribution {
  distributionId: string;
  /** `https://<domain name>`. */
  distributionOrigin: string;
}

/** Where CloudFront sends a request: the cache bucket first, then the origin Lambda; or the Lambda alone. */
export type PlanOrigin = 'cache-bucket' | 'lambda';

/**
 * A cache behavior: its path pattern (`*` for the default), its origins, tried
 * in order after a 403 or 404, and the URL grammar of its viewer-request function.
 */
export interface PlanBehavior {
  pathPattern: string;
  origins: PlanOrigin[];
  grammar: EdgeGrammar;
}

/** Where the origin reads its watermarks', fonts' and fallback image's files: from the function's package (deployed), or where they are (locally). */
export type WatermarkFiles = 'packaged' | 'source';

export interface DeploymentPlan {
  /** The viewer-request function's settings, but for the store's id. */
  readonly viewerRequest: Omit<EdgeFunctionSettings, 'keyValueStoreId'>;
  /**
   * What every deploy writes into the viewer-request function's store: the
   * grammar's data with the sizes and watermarks, and the presets
   * (deploymentEntries).
   */
  readonly storeEntries: Record<string, string>;
  /** The viewer-response function's settings. */
  readonly viewerResponse: ViewerResponseSettings;
  /** The response headers policy's Vary, set where the answer has none. */
  readonly vary: string;
  /**
   * The cache behaviors in CloudFront's order: the dialects' own paths, the
   * prefixes answered by the Lambda alone, then the default.
   */
  readonly behaviors: PlanBehavior[];
  /**
   * What a deploy writes into the store beside storeEntries: the buckets a
   * dialect's request may name (bucketsEntry), when a dialect names buckets.
   */
  bucketEntries(buckets: Pick<PlanBuckets, 'sourceBucket' | 'sourceBuckets'>): Record<string, string>;
  /** The origin's metrics settings. */
  readonly originMetrics: Pick<MetricsOptions, 'namespace' | 'enabled'>;
  /** The key prefixes and the sources that serve them, over these buckets. */
  routes(buckets: PlanBuckets): SourceRoute[];
  /** The origin Lambda's configuration over these buckets. */
  origin(buckets: PlanBuckets, watermarkFiles?: WatermarkFiles): OriginConfig;
  /** The invalidation Lambda's configuration for this cache bucket and distribution. */
  invalidation(buckets: Pick<PlanBuckets, 'cacheBucket' | 'sourceBuckets'>, distribution: PlanDistribution): InvalidateConfig;
}

/** Where the default behavior sends a request: variants already made from the cache bucket, a missing one from the Lambda. */
const CACHE_THEN_LAMBDA: PlanOrigin[] = ['cache-bucket', 'lambda'];

/**
 * The edge grammars of `dialects`: those with a path pattern of their own, and
 * the one that reads every other path (the native grammar without such a
 * dialect). Two dialects that both read every path are refused.
 */
function dialectGrammars(dialects: ResolvedSettings['dialects']): { own: Exclude<EdgeGrammar, 'native'>[]; whole: EdgeGrammar } {
  const grammars = dialects.flatMap((name) => DIALECT_GRAMMARS[name]);
  grammars.forEach(dialectModule);
  const whole = grammars.filter((grammar) => !dialectModule(grammar).pathPattern);
  if (whole.length > 1) {
    const names = dialects.filter((name) => DIALECT_GRAMMARS[name].some((grammar) => whole.includes(grammar)));
    throw new ImageTransformerConfigError(
      `dialects: ${names.join(' and ')} both read every URL path (the default cache behavior); switch on one of them.`,
    );
  }
  return { own: grammars.filter((grammar) => dialectModule(grammar).pathPattern), whole: whole[0] ?? 'native' };
}

/** The plan of the deployment `settings` describe. */
export function deploymentPlan(settings: ResolvedSettings): DeploymentPlan {
  const { grammar, watermarks } = settings;
  const routes = (buckets: PlanBuckets) => sourceRoutes({ ...buckets, ...sourceKindSettings(settings) });
  // Which prefixes have a behavior of their own does not depend on the buckets' names.
  const ownBehaviors = ownBehaviorPrefixes(routes({ sourceBucket: '', cacheBucket: '', sourceBuckets: {} }));
  const dialects = dialectGrammars(settings.dialects);
  const dialectData = [...dialects.own, dialects.whole].flatMap((edgeGrammar) =>
    edgeGrammar === 'native' ? [] : [dialectModule(edgeGrammar).data ?? {}],
  );
  return {
    viewerRequest: { grammar, ...settingsFor(settings, 'viewerRequest') },
    storeEntries: deploymentEntries(grammar, dialectData),
    bucketEntries: (buckets) => (settings.dialects.includes('dit') ? bucketsEntry(buckets.sourceBucket, buckets.sourceBuckets) : {}),
    viewerResponse: { variantCacheControl: settings.cacheControl, ...settingsFor(settings, 'viewerResponse') },
    vary: FORMAT_VARY,
    behaviors: [
      ...dialects.own.map((edgeGrammar): PlanBehavior => ({
        pathPattern: dialectModule(edgeGrammar).pathPattern as string,
        origins: CACHE_THEN_LAMBDA,
        grammar: edgeGrammar,
      })),
      ...ownBehaviors.map((prefix): PlanBehavior => ({
        pathPattern: behaviorPathPattern(prefix),
        origins: ['lambda'],
        grammar: dialects.whole,
      })),
      { pathPattern: '*', origins: CACHE_THEN_LAMBDA, grammar: dialects.whole },
    ],
    originMetrics: { namespace: settings.metricsNamespace, enabled: settings.originMetrics },
    routes,
    origin: (buckets, watermarkFiles = 'packaged') => ({
      ...buckets,
      ...settingsFor(settings, 'origin'),
      maxDimension: grammar.maxDimension,
      timeBudgetMs: settings.timeBudgetMs,
      memorySizeMb: settings.memorySize,
      watermarkDefinitions: Object.fromEntries(
        watermarks.map(({ name, source, definition }) => [
          name,
          watermarkFiles === 'packaged' ? definition : { ...definition, file: source },
        ]),
      ),
      requireWatermark: settings.requireWatermark,
      templateDefinitions: settings.templates,
      fonts: originFonts(settings.fonts, watermarkFiles),
      fallbackImage:
        settings.fallbackImage && (watermarkFiles === 'packaged' ? settings.fallbackImage.file : settings.fallbackImage.source),
      ...sourceKindSettings(settings),
    }),
    invalidation: ({ cacheBucket, sourceBuckets }, distribution) =>
      invalidateConfig(
        { cacheBucket, ...distribution },
        {
          sourceBuckets,
          eagerPresets: settings.eagerPresets,
          // The grammar as the edge has it: what a warming URL's signature covers, and
          // which formats format=auto can negotiate (one warming request per format);
          // the presets only when some are warmed, as a Lambda's environment holds 4 KB.
          grammar: invalidationGrammar(grammar, settings.eagerPresets),
          avif: settings.avif,
          signingSecret: settings.eagerSigningSecret?.unsafeUnwrap(),
          warmTimeoutMs: settings.warmTimeoutSeconds * 1000,
          settleMs: settings.settleSeconds * 1000,
          ...settingsFor(settings, 'invalidation'),
        },
      ),
  };
}

function invalidationGrammar(grammar: GrammarOptions, eagerPresets: string[]): GrammarOptions {
  const warmed = eagerPresets.length > 0;
  // A warmed preset may name the deployment's fonts (the environment holds their names, all the grammar reads).
  const fonts = warmed ? grammar.fonts : undefined;
  return {
    maxDimension: grammar.maxDimension,
    sizes: grammar.sizes,
    presets: warmed ? grammar.presets : undefined,
    ...(fonts ? { fonts } : {}),
  };
}
