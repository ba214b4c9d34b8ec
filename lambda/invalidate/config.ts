// The invalidation Lambda's settings, read once from its environment, and the
// environment the construct writes for them: readConfig and
// invalidationEnvironment are each other's inverse (test/invalidate/config.test.ts).
// Every mistake is reported by name at the first invocation, so a bad
// deployment fails loudly instead of silently leaving stale variants behind.

import { mustBe } from '../common/checks';
import { envReaders, type Env } from '../common/env';
import { readSourceBuckets, sourceBucketsEnvironment, type PrefixBuckets } from '../common/sources';
import { presetRefusal, DEFAULT_GRAMMAR_OPTIONS, type GrammarOptions, type Preset } from '../grammar';

export interface InvalidateConfig {
  /** Bucket holding the variants, `<source key>/<ops>` (CACHE_BUCKET). */
  cacheBucket: string;
  /**
   * Key prefixes served from other buckets than the default source bucket
   * (SOURCE_BUCKETS, as the origin has it): an object of one of those buckets
   * changes the URL key prefix + object key.
   */
  sourceBuckets: PrefixBuckets;
  /** The distribution whose edge caches are invalidated (DISTRIBUTION_ID). */
  distributionId: string;
  /**
   * Where warming requests go: `https://<DISTRIBUTION_DOMAIN>`, or the value
   * itself when it names its scheme (e.g. `http://localhost:3000` for the emulator).
   */
  distributionOrigin: string;
  /** Presets made as soon as a source is created (EAGER_PRESETS, comma-separated names). */
  eagerPresets: string[];
  /**
   * One warming request per preset and Accept header, so that each format
   * `format=auto` can negotiate is made (EAGER_ACCEPTS, a JSON array of
   * Accept headers; default AVIF-capable, WebP-only and plain).
   */
  eagerAccepts: string[];
  /** The secret warming URLs are signed with, when the edge checks signatures (SIGNING_SECRET). */
  signingSecret?: string;
  /**
   * The deployment's grammar options, as the edge has them (MAX_DIMENSION,
   * SIZES, PRESETS, the names of TEXT_FONTS). Needed to compute what a signature covers.
   */
  grammar: GrammarOptions;
  /**
   * Whether the edge's `format=auto` may pick AVIF (AVIF, `true` or `false`,
   * default true), so Accept headers that lead to one variant are warmed once.
   */
  avif: boolean;
  /** Time allowed for one warming request (WARM_TIMEOUT_MS, default 30000). */
  warmTimeoutMs: number;
  /**
   * How long after the first purge and invalidation to do both again
   * (SETTLE_MS): the longest a miss that read the old source can still store
   * its variant or be cached by CloudFront, i.e. the origin Lambda's timeout.
   * 0 (SETTLE_MS unset): one pass.
   */
  settleMs: number;
}

/** What Chromium, Safari 16+ and Firefox 93+ send, what an older WebP-only browser sends, and what a plain client sends. */
export const DEFAULT_EAGER_ACCEPTS = ['image/avif,image/webp,*/*', 'image/webp,*/*', '*/*'];
export const DEFAULT_WARM_TIMEOUT_MS = 30_000;

function configError(message: string): Error {
  return new Error(`Invalid invalidation Lambda configuration: ${message}`);
}

const { required, positiveInteger, positiveIntegers, flag } = envReaders(configError);

function json(env: Env, name: string): unknown {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw configError(mustBe(name, `JSON (${(error as Error).message})`, raw));
  }
}

/** DISTRIBUTION_DOMAIN names no scheme when it is https (CloudFront's domain name, as the construct has it). */
const DEFAULT_SCHEME = 'https://';

function distributionOrigin(env: Env): string {
  const raw = required(env, 'DISTRIBUTION_DOMAIN');
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : DEFAULT_SCHEME + raw;
  const notAHost = () => configError(mustBe('DISTRIBUTION_DOMAIN', 'a host name such as d111111abcdef8.cloudfront.net', raw));
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw notAHost();
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.pathname !== '/' || url.search || url.hash || url.username) {
    throw notAHost();
  }
  return url.origin;
}

function nameList(env: Env, name: string): string[] {
  const names = (env[name] ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  return [...new Set(names)];
}

function accepts(env: Env): string[] {
  const value = json(env, 'EAGER_ACCEPTS');
  if (value === undefined) return DEFAULT_EAGER_ACCEPTS;
  if (!Array.isArray(value) || value.length === 0 || !value.every((item) => typeof item === 'string')) {
    throw configError(
      mustBe('EAGER_ACCEPTS', 'a JSON array of Accept headers, e.g. ["image/avif,image/webp,*/*","*/*"]', env.EAGER_ACCEPTS),
    );
  }
  return [...new Set(value as string[])];
}

function presets(env: Env): { [name: string]: Preset } | undefined {
  const value = json(env, 'PRESETS');
  if (value === undefined) return undefined;
  const isObject = (item: unknown): item is Record<string, unknown> => typeof item === 'object' && item !== null && !Array.isArray(item);
  if (
    !isObject(value) ||
    !Object.values(value).every((preset) => isObject(preset) && Object.values(preset).every((v) => typeof v === 'string'))
  ) {
    throw configError(
      mustBe('PRESETS', 'a JSON object of presets with string values, e.g. {"thumb":{"width":"200","height":"200"}}', env.PRESETS),
    );
  }
  return value as { [name: string]: Preset };
}

export function readConfig(env: Env): InvalidateConfig {
  const grammar: GrammarOptions = {
    maxDimension: positiveInteger(env, 'MAX_DIMENSION', DEFAULT_GRAMMAR_OPTIONS.maxDimension),
    sizes: positiveIntegers(env, 'SIZES'),
    presets: presets(env),
  };
  // A warmed preset may name the deployment's own fonts (TEXT_FONTS: their names): all the grammar reads of them.
  const fonts = nameList(env, 'TEXT_FONTS');
  if (fonts.length > 0) grammar.fonts = Object.fromEntries(fonts.map((name) => [name, 1]));
  const config: InvalidateConfig = {
    cacheBucket: required(env, 'CACHE_BUCKET'),
    sourceBuckets: readSourceBuckets(env, configError),
    distributionId: required(env, 'DISTRIBUTION_ID'),
    distributionOrigin: distributionOrigin(env),
    eagerPresets: nameList(env, 'EAGER_PRESETS'),
    eagerAccepts: accepts(env),
    signingSecret: env.SIGNING_SECRET || undefined,
    grammar,
    avif: flag(env, 'AVIF', true),
    warmTimeoutMs: positiveInteger(env, 'WARM_TIMEOUT_MS', DEFAULT_WARM_TIMEOUT_MS),
    settleMs: positiveInteger(env, 'SETTLE_MS', 0),
  };

  if (config.signingSecret && config.eagerPresets.length > 0 && !grammar.presets) {
    throw configError(
      'signing the warming URLs needs PRESETS (the preset definitions, as JSON, the same as the edge has), ' +
        "because a signature covers the preset's expansion, not its name.",
    );
  }
  if (grammar.presets) {
    // Each eager preset must exist and expand to a valid request, as the edge would see it.
    for (const name of config.eagerPresets) {
      const refusal = presetRefusal(name, grammar);
      if (refusal) throw configError(`EAGER_PRESETS names "${name}", which PRESETS rejects: ${refusal}`);
    }
  }
  return config;
}

/**
 * The environment readConfig reads back as `config`. Values may be CDK tokens
 * (the distribution's id and domain name, a secret), which pass through as the
 * strings they are at synth. What is unset or the default (EAGER_ACCEPTS,
 * SETTLE_MS, SIZES, PRESETS, TEXT_FONTS, SIGNING_SECRET) is left out; the grammar's
 * presetsOnly is not the Lambda's concern (warming requests name presets).
 */
export function invalidationEnvironment(config: InvalidateConfig): Record<string, string> {
  const { distributionOrigin, eagerAccepts, grammar } = config;
  const defaultAccepts = JSON.stringify(eagerAccepts) === JSON.stringify(DEFAULT_EAGER_ACCEPTS);
  return {
    CACHE_BUCKET: config.cacheBucket,
    ...sourceBucketsEnvironment(config.sourceBuckets),
    DISTRIBUTION_ID: config.distributionId,
    DISTRIBUTION_DOMAIN: distributionOrigin.startsWith(DEFAULT_SCHEME)
      ? distributionOrigin.slice(DEFAULT_SCHEME.length)
      : distributionOrigin,
    EAGER_PRESETS: config.eagerPresets.join(','),
    ...(defaultAccepts ? {} : { EAGER_ACCEPTS: JSON.stringify(eagerAccepts) }),
    WARM_TIMEOUT_MS: String(config.warmTimeoutMs),
    ...(config.settleMs ? { SETTLE_MS: String(config.settleMs) } : {}),
    MAX_DIMENSION: String(grammar.maxDimension),
    AVIF: String(config.avif),
    ...(grammar.sizes ? { SIZES: grammar.sizes.join(',') } : {}),
    ...(grammar.presets ? { PRESETS: JSON.stringify(grammar.presets) } : {}),
    ...(grammar.fonts ? { TEXT_FONTS: Object.keys(grammar.fonts).join(',') } : {}),
    ...(config.signingSecret ? { SIGNING_SECRET: config.signingSecret } : {}),
  };
}

/**
 * The defaults for this cache bucket and distribution, with `overrides`: how
 * the construct, the local emulator, replay-invalidations and the tests
 * configure the invalidation Lambda.
 */
export function invalidateConfig(
  target: Pick<InvalidateConfig, 'cacheBucket' | 'distributionId' | 'distributionOrigin'>,
  overrides: Partial<InvalidateConfig> = {},
): InvalidateConfig {
  return {
    cacheBucket: target.cacheBucket,
    sourceBuckets: {},
    distributionId: target.distributionId,
    distributionOrigin: target.distributionOrigin,
    eagerPresets: [],
    eagerAccepts: DEFAULT_EAGER_ACCEPTS,
    grammar: DEFAULT_GRAMMAR_OPTIONS,
    avif: true,
    warmTimeoutMs: DEFAULT_WARM_TIMEOUT_MS,
    settleMs: 0,
    ...overrides,
  };
}
