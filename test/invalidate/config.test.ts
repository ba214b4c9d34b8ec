// The invalidation Lambda's environment: required values, defaults, and a
// clear message for each mistake.

import { describe, expect, it } from 'vitest';
import {
  DEFAULT_EAGER_ACCEPTS,
  invalidateConfig,
  invalidationEnvironment,
  readConfig,
  type InvalidateConfig,
} from '../../lambda/invalidate/config';

const BASE = { CACHE_BUCKET: 'cache', DISTRIBUTION_ID: 'E2QWRUHEXAMPLE', DISTRIBUTION_DOMAIN: 'd111111abcdef8.cloudfront.net' };
const PRESETS = JSON.stringify({ thumb: { width: '200', height: '200' }, hero: { width: '1600', format: 'webp' } });

describe('readConfig', () => {
  it('reads the required values and applies defaults', () => {
    expect(readConfig(BASE)).toEqual({
      cacheBucket: 'cache',
      sourceBuckets: {},
      distributionId: 'E2QWRUHEXAMPLE',
      distributionOrigin: 'https://d111111abcdef8.cloudfront.net',
      eagerPresets: [],
      eagerAccepts: DEFAULT_EAGER_ACCEPTS,
      signingSecret: undefined,
      grammar: { maxDimension: 8192, sizes: undefined, presets: undefined },
      avif: true,
      warmTimeoutMs: 30000,
      settleMs: 0,
    });
  });

  it('reads the optional values', () => {
    const config = readConfig({
      ...BASE,
      DISTRIBUTION_DOMAIN: 'http://localhost:3000/',
      EAGER_PRESETS: ' thumb, hero,,thumb ',
      EAGER_ACCEPTS: '["image/webp,*/*"]',
      SIGNING_SECRET: 's3cret',
      PRESETS,
      SIZES: '640, 320,1600, 200',
      MAX_DIMENSION: '4096',
      WARM_TIMEOUT_MS: '5000',
      SETTLE_MS: '35000',
      AVIF: 'False',
      SOURCE_BUCKETS: ' {"archive/":"old-photos","press/kit/":"press"} ',
      TEXT_FONTS: 'brand, brand-bold',
    });
    expect(config).toMatchObject({
      distributionOrigin: 'http://localhost:3000',
      sourceBuckets: { 'archive/': 'old-photos', 'press/kit/': 'press' },
      eagerPresets: ['thumb', 'hero'],
      eagerAccepts: ['image/webp,*/*'],
      signingSecret: 's3cret',
      grammar: { maxDimension: 4096, sizes: [200, 320, 640, 1600], presets: JSON.parse(PRESETS), fonts: { brand: 1, 'brand-bold': 1 } },
      avif: false,
      warmTimeoutMs: 5000,
      settleMs: 35000,
    });
  });

  it.each<[string, Record<string, string>, RegExp]>([
    ['CACHE_BUCKET missing', { CACHE_BUCKET: '' }, /the environment variable CACHE_BUCKET is required\.$/],
    ['DISTRIBUTION_ID missing', { DISTRIBUTION_ID: ' ' }, /DISTRIBUTION_ID is required/],
    ['DISTRIBUTION_DOMAIN missing', { DISTRIBUTION_DOMAIN: '' }, /DISTRIBUTION_DOMAIN is required/],
    ['DISTRIBUTION_DOMAIN with a path', { DISTRIBUTION_DOMAIN: 'd1.cloudfront.net/images' }, /DISTRIBUTION_DOMAIN must be a host name/],
    ['DISTRIBUTION_DOMAIN not http', { DISTRIBUTION_DOMAIN: 'ftp://d1.cloudfront.net' }, /DISTRIBUTION_DOMAIN must be a host name/],
    ['EAGER_ACCEPTS not JSON', { EAGER_ACCEPTS: 'image/webp,*/*' }, /EAGER_ACCEPTS must be JSON \(.+\), not "image\/webp,\*\/\*"\.$/],
    [
      'EAGER_ACCEPTS not a list of strings',
      { EAGER_ACCEPTS: '[1]' },
      /EAGER_ACCEPTS must be a JSON array of Accept headers, .*, not "\[1\]"\.$/,
    ],
    ['PRESETS not an object of string maps', { PRESETS: '{"thumb":{"width":200}}' }, /PRESETS must be a JSON object of presets/],
    ['SIZES not numbers', { SIZES: '320,wide' }, /SIZES must be a positive integer, not "wide"/],
    ['MAX_DIMENSION zero', { MAX_DIMENSION: '0' }, /MAX_DIMENSION must be a positive integer/],
    ['WARM_TIMEOUT_MS not a number', { WARM_TIMEOUT_MS: '5s' }, /WARM_TIMEOUT_MS must be a positive integer, not "5s"/],
    ['SETTLE_MS not a number', { SETTLE_MS: '35 s' }, /SETTLE_MS must be a positive integer, not "35 s"/],
    ['AVIF not a boolean', { AVIF: 'yes' }, /AVIF must be true or false, not "yes"/],
    ['signing without preset definitions', { EAGER_PRESETS: 'thumb', SIGNING_SECRET: 'x' }, /signing the warming URLs needs PRESETS/],
    [
      'an eager preset that is not defined',
      { EAGER_PRESETS: 'thumb,banner', PRESETS },
      /EAGER_PRESETS names "banner", which PRESETS rejects: Invalid preset "banner": expected one of thumb, hero\./,
    ],
    ['a preset with a bad value', { EAGER_PRESETS: 'bad', PRESETS: '{"bad":{"width":"0"}}' }, /Invalid width "0"/],
  ])('refuses %s', (_name, env, message) => {
    expect(() => readConfig({ ...BASE, ...env })).toThrow(message);
  });

  it('starts every message the same way, so a log search finds them', () => {
    expect(() => readConfig({})).toThrow(/^Invalid invalidation Lambda configuration: /);
  });
});

describe('the environment the construct writes for the invalidation Lambda', () => {
  const target = { cacheBucket: 'cache', distributionId: 'E2QWRUHEXAMPLE', distributionOrigin: 'https://d111111abcdef8.cloudfront.net' };
  const defaults = invalidateConfig(target);
  const everySet = invalidateConfig(
    { ...target, distributionOrigin: 'http://localhost:3000' },
    {
      sourceBuckets: { 'archive/': 'old-photos' },
      eagerPresets: ['thumb', 'hero'],
      eagerAccepts: ['image/webp,*/*', '*/*'],
      signingSecret: 's3cret',
      grammar: { maxDimension: 4096, sizes: [200, 320, 640, 1600], presets: JSON.parse(PRESETS), fonts: { brand: 1 } },
      avif: false,
      warmTimeoutMs: 5000,
      settleMs: 35000,
    },
  );

  it.each<[string, InvalidateConfig]>([
    ['the defaults', defaults],
    ['every setting changed', everySet],
  ])('reads back as what was written: %s', (_name, config) => {
    expect(readConfig(invalidationEnvironment(config))).toEqual(config);
  });

  it('has the same defaults as the builder the emulator, replay-invalidations and the tests use', () => {
    expect(readConfig(BASE)).toEqual(defaults);
  });

  it("writes CloudFront's domain name without its scheme, as the construct has it", () => {
    expect(invalidationEnvironment(defaults)).toMatchObject({ DISTRIBUTION_DOMAIN: 'd111111abcdef8.cloudfront.net' });
    expect(invalidationEnvironment(everySet)).toMatchObject({ DISTRIBUTION_DOMAIN: 'http://localhost:3000' });
  });

  it('leaves out what is unset or the default', () => {
    const env = invalidationEnvironment(defaults);
    expect(['SOURCE_BUCKETS', 'EAGER_ACCEPTS', 'SETTLE_MS', 'SIZES', 'PRESETS', 'SIGNING_SECRET'].filter((name) => name in env)).toEqual(
      [],
    );
  });
});
