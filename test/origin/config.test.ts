// The origin's environment, as the construct writes it: read with the same
// readers as the invalidation Lambda's (lambda/common/env.ts), so a deploy
// with a bad value fails at startup, naming the variable, in the same words.

import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, readConfig } from '../../lambda/origin/config';

const BASE = { SOURCE_BUCKET: 'sources', CACHE_BUCKET: 'variants' };

describe('the origin reads its environment', () => {
  it('takes the defaults for what is unset or blank, and trims what is set', () => {
    const config = readConfig({ ...BASE, MAX_FRAMES: ' ', TIME_BUDGET_MS: ' 5000 ', SIZES: '640, 320 ,1280' });
    expect(config.maxFrames).toBe(DEFAULT_LIMITS.maxFrames);
    expect(config.timeBudgetMs).toBe(5000);
    expect(config.sizes).toEqual([320, 640, 1280]);
  });

  it.each<[string, Record<string, string>, string]>([
    ['a missing bucket', { SOURCE_BUCKET: '' }, 'the environment variable SOURCE_BUCKET is required.'],
    ['a limit in exponent notation', { MAX_SOURCE_BYTES: '1e6' }, 'MAX_SOURCE_BYTES must be a positive integer, not "1e6".'],
    ['a zero limit', { MAX_FRAMES: '0' }, 'MAX_FRAMES must be a positive integer, not "0".'],
    ['a size that is not a number', { SIZES: '320,wide' }, 'SIZES must be a positive integer, not "wide".'],
  ])('refuses %s, naming the variable', (_name, env, message) => {
    expect(() => readConfig({ ...BASE, ...env })).toThrow(`Invalid origin Lambda configuration: ${message}`);
  });
});
