// The origin's environment, as the construct writes it: read with the same
// readers as the invalidation Lambda's (lambda/common/env.ts), so a deploy
// with a bad value fails at startup, naming the variable, in the same words.

import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_LIMITS,
  originConfig,
  originEnvironment,
  readConfig,
  readMetricsOptions,
  type OriginConfig,
} from '../../lambda/origin/config';

const BASE = { SOURCE_BUCKET: 'sources', CACHE_BUCKET: 'variants' };

describe('the origin reads its environment', () => {
  it('takes the defaults for what is unset or blank, and trims what is set', () => {
    const config = readConfig({ ...BASE, MAX_FRAMES: ' ', TIME_BUDGET_MS: ' 5000 ', MAX_DIMENSION: ' 4096 ' });
    expect(config.maxFrames).toBe(DEFAULT_LIMITS.maxFrames);
    expect(config.timeBudgetMs).toBe(5000);
    expect(config.maxDimension).toBe(4096);
  });

  it.each<[string, Record<string, string>, string]>([
    ['a missing bucket', { SOURCE_BUCKET: '' }, 'the environment variable SOURCE_BUCKET is required.'],
    ['a limit in exponent notation', { MAX_SOURCE_BYTES: '1e6' }, 'MAX_SOURCE_BYTES must be a positive integer, not "1e6".'],
    ['a zero limit', { MAX_FRAMES: '0' }, 'MAX_FRAMES must be a positive integer, not "0".'],
    ['a dimension that is not a number', { MAX_DIMENSION: 'wide' }, 'MAX_DIMENSION must be a positive integer, not "wide".'],
    [
      'a web origin with credentials',
      { WEB_ORIGINS: '{"shop/":{"url":"https://me:pw@shop.example.com/"}}' },
      'WEB_ORIGINS["shop/"].url must be a URL without credentials, not "https://me:pw@shop.example.com/".',
    ],
    [
      'a web origin inside another',
      { WEB_ORIGINS: '{"shop/":{"url":"https://a.example/"},"shop/x/":{"url":"https://b.example/"}}' },
      'WEB_ORIGINS prefixes "shop/" and "shop/x/" overlap: a key under both could not say where it is read from.',
    ],
    [
      'buckets that are not a JSON object',
      { SOURCE_BUCKETS: '["archive/"]' },
      'SOURCE_BUCKETS must be a JSON object, not "[\\"archive/\\"]".',
    ],
    [
      'a prefixed bucket without a name',
      { SOURCE_BUCKETS: '{"archive/":""}' },
      'the SOURCE_BUCKETS bucket of "archive/" must be a bucket name, not "".',
    ],
    [
      'a bucket prefix without its slash',
      { SOURCE_BUCKETS: '{"archive":"old"}' },
      'a SOURCE_BUCKETS prefix must be a key prefix ending with "/" such as "archive/" (it does not end with "/"), not "archive".',
    ],
    [
      'overlapping bucket prefixes',
      { SOURCE_BUCKETS: '{"a/":"one","a/b/":"two"}' },
      'SOURCE_BUCKETS prefixes "a/" and "a/b/" overlap: a key under both could not say where it is read from.',
    ],
  ])('refuses %s, naming the variable', (_name, env, message) => {
    expect(() => readConfig({ ...BASE, ...env })).toThrow(`Invalid origin Lambda configuration: ${message}`);
  });
});

describe('the environment the construct writes for the origin', () => {
  // Lambda sets the memory size from the function's settings; the construct never writes it.
  const asLambdaRunsIt = (env: Record<string, string>, config: OriginConfig) => ({
    ...env,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(config.memorySizeMb),
  });

  const defaults = originConfig({ sourceBucket: 'sources', cacheBucket: 'variants' });
  const everySet = originConfig(
    { sourceBucket: 'sources', cacheBucket: 'variants' },
    {
      sourceBuckets: { 'archive/': 'old-photos', 'press/kit/': 'press' },
      maxSourceBytes: 10_000_000,
      maxInputPixels: 50_000_000,
      maxDimension: 4096,
      maxFrames: 50,
      timeBudgetMs: 54_000,
      memorySizeMb: 3008,
      svgPolicy: 'rasterize',
      maxInlineBytes: 1_000_000,
      cacheControl: 'public, max-age=86400',
      failureTtlSeconds: 60,
      fallbackImage: '/var/task/fallback/fallback.png',
      // Named by its name in the package, which is the working directory where LAMBDA_TASK_ROOT is unset.
      fonts: { brand: { family: 'Brand Sans', weight: 'Bold', style: 'Italic', file: resolve('text-fonts', 'brand') } },
      webOrigins: { 'shop/': { url: 'https://shop.example.com/images/', revalidateSeconds: 3600 } },
    },
  );

  it.each([
    ['the defaults', defaults, { namespace: undefined, enabled: true }],
    ['every setting changed', everySet, { namespace: 'Photos/Images', enabled: false }],
  ])('reads back as what was written: %s', (_name, config, metrics) => {
    const env = asLambdaRunsIt(originEnvironment(config, metrics), config);
    expect(readConfig(env)).toEqual(config);
    expect(readMetricsOptions(env)).toEqual(metrics);
  });

  it('has the same defaults as the builder the emulator, the bench and the tests use', () => {
    expect(readConfig(BASE)).toEqual(defaults);
    expect(readMetricsOptions({})).toEqual({ enabled: true });
  });

  it("leaves out what is the default or Lambda's to set", () => {
    const env = originEnvironment(defaults, { enabled: true });
    expect(
      ['SOURCE_BUCKETS', 'SVG_POLICY', 'SIZES', 'FALLBACK_IMAGE', 'METRICS', 'METRICS_NAMESPACE', 'AWS_LAMBDA_FUNCTION_MEMORY_SIZE'].filter(
        (name) => name in env,
      ),
    ).toEqual([]);
  });

  it('refuses a METRICS that is not true or false, naming it', () => {
    expect(() => readMetricsOptions({ METRICS: 'off' })).toThrow(
      'Invalid origin Lambda configuration: METRICS must be true or false, not "off".',
    );
  });
});
