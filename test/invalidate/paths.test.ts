// Invalidation paths: valid by the CloudFront Developer Guide's rules (a
// leading '/', '*' only at the end, at most 4000 characters, only non-ASCII
// and RFC 1738 unsafe characters escaped), and a prefix of the cache key of
// every variant of the source, however CloudFront reads the escapes.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalUri, encodeKeyPath, type Ops } from '../../lambda/grammar';
import {
  coveringPaths,
  invalidationPath,
  invalidationPaths,
  MAX_EXACT_PATHS_PER_SOURCE,
  MAX_WILDCARD_PATHS,
  variantPath,
} from '../../lambda/invalidate/paths';
import { variantKey } from '../../lambda/grammar';

const KEY_CHARACTERS = fc.oneof(
  fc.constantFrom(' ', '+', '%', '#', '?', '&', '=', ',', ';', ':', '@', '~', "'", '(', ')', '*', '!', '$', '.', '-', '_', '"', '<', '>', '[', ']', '{', '}', '|', '\\', '^', '`'),
  fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
);
const segment = fc
  .string({ unit: KEY_CHARACTERS, minLength: 1, maxLength: 12 })
  .map((text) => text.replace(/[\u0000-\u001f\u007f-\u009f/]/g, '_'))
  .filter((text) => text !== '.' && text !== '..');
const key = fc
  .array(segment, { minLength: 1, maxLength: 4 })
  .map((segments) => segments.join('/'))
  .filter((k) => Buffer.byteLength(k) <= 1024);

const SOME_OPS: Ops[] = [{}, { width: 100 }, { width: 640, height: 480, fit: 'contain', format: 'avif' }, { format: 'json' }];

/** Characters RFC 1738 lets stay literal, less '*' (the wildcard) and '?' (the query). */
const LITERAL_OR_UNSAFE_ESCAPE = /^\/(?:[A-Za-z0-9\-._/]|%(?!21|24|26|27|28|29|2A|2B|2C|3A|3B|3D|40)[0-9A-F]{2})*\*$/;

describe('invalidationPath', () => {
  it.each([
    ['photos/cat.jpg', '/photos/cat.jpg*'],
    ['photos/my cat.jpg', '/photos/my%20cat.jpg*'],
    ['100%/#1?.jpg', '/100%25/%231%3F.jpg*'],
    ['été/日本.png', '/%C3%A9t%C3%A9/%E6%97%A5%E6%9C%AC.png*'],
    ['photos/a+b (1).jpg', '/photos/a*'],
    ['photos/x~y.jpg', '/photos/x*'],
    ["photos/it's.jpg", '/photos/it*'],
    ['photos/a*.jpg', '/photos/a*'],
    ['(1).jpg', '/*'],
  ])('%s -> %s', (sourceKey, path) => {
    expect(invalidationPath(sourceKey)).toBe(path);
  });

  it('is a valid path that prefixes every variant of the key (property)', () => {
    fc.assert(
      fc.property(key, (k) => {
        const path = invalidationPath(k);
        expect(path).toMatch(LITERAL_OR_UNSAFE_ESCAPE);
        expect(path.length).toBeLessThanOrEqual(4000);
        const prefix = path.slice(0, -1);
        expect(encodeKeyPath(k).startsWith(prefix)).toBe(true);
        for (const ops of SOME_OPS) expect(canonicalUri(k, ops).startsWith(prefix)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('stays within 4000 characters for the longest keys', () => {
    expect(invalidationPath('é'.repeat(512)).length).toBe(1 + 512 * 6 + 1);
  });
});

describe('coveringPaths', () => {
  it('drops duplicates and paths a shorter one covers, sorted', () => {
    expect(coveringPaths(['/b.jpg*', '/a.jpg*', '/b.jpg*'])).toEqual(['/a.jpg*', '/b.jpg*']);
    expect(coveringPaths(['/photos/a.jpg*', '/photos/a*', '/photos/ab.png*', '/x*'])).toEqual(['/photos/a*', '/x*']);
    expect(coveringPaths([])).toEqual([]);
  });

  it(`folds more than ${MAX_WILDCARD_PATHS} paths into their common prefix, never mid-escape`, () => {
    const many = Array.from({ length: 16 }, (_, i) => `/photos/2026/%C3%A${i.toString(16).toUpperCase()}.jpg*`);
    expect(coveringPaths(many.slice(0, 15))).toHaveLength(15);
    expect(coveringPaths(many)).toEqual(['/photos/2026/%C3*']);
    expect(coveringPaths(Array.from({ length: 20 }, (_, i) => `/${i}.jpg*`))).toEqual(['/*']);
  });

  it('always covers every path it was given (property)', () => {
    fc.assert(
      fc.property(fc.array(key, { minLength: 1, maxLength: 30 }), (keys) => {
        const paths = keys.map(invalidationPath);
        const covering = coveringPaths(paths);
        expect(covering.length).toBeLessThanOrEqual(MAX_WILDCARD_PATHS);
        for (const path of covering) expect(path).toMatch(LITERAL_OR_UNSAFE_ESCAPE);
        for (const path of paths) {
          expect(covering.some((cover) => path.startsWith(cover.slice(0, -1))), path).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('variantPath', () => {
  it('is the canonical URI CloudFront caches the variant under', () => {
    const ops: Ops = { width: 640, height: 480, fit: 'contain', format: 'avif' };
    expect(variantPath('photos/my cat.jpg', variantKey('photos/my cat.jpg', ops))).toBe(canonicalUri('photos/my cat.jpg', ops));
    expect(variantPath('été/a.png', 'été/a.png/original')).toBe('/%C3%A9t%C3%A9/a.png/original');
  });

  it('is undefined where the spelling is ambiguous or the key is not a variant of the source', () => {
    expect(variantPath('photos/a+b.jpg', 'photos/a+b.jpg/original')).toBeUndefined();
    expect(variantPath('photos/x~y.jpg', 'photos/x~y.jpg/width=1')).toBeUndefined();
    expect(variantPath('photos/a.jpg', 'photos/b.jpg/original')).toBeUndefined();
    expect(variantPath('photos/a.jpg', 'photos/a.jpg/x*')).toBeUndefined();
  });

  it('matches canonicalUri for every unambiguous key (property)', () => {
    fc.assert(
      fc.property(key, fc.constantFrom(...SOME_OPS), (k, ops) => {
        const path = variantPath(k, variantKey(k, ops));
        if (path !== undefined) expect(path).toBe(canonicalUri(k, ops));
        else expect(invalidationPath(k)).not.toBe(encodeKeyPath(k) + '*');
      }),
      { numRuns: 500 },
    );
  });
});

describe('invalidationPaths', () => {
  const variants = (k: string, n: number) => Array.from({ length: n }, (_, i) => `${k}/width=${i + 1}`);

  it('exact paths for known variants, none for a source without variants, the wildcard where unknown or ambiguous', () => {
    expect(
      invalidationPaths([
        { key: 'a.jpg', variants: ['a.jpg/original', 'a.jpg/width=10'] },
        { key: 'new.jpg', variants: [] },
        { key: 'unlisted.jpg' },
        { key: 'a+b.jpg', variants: ['a+b.jpg/original'] },
      ]),
    ).toEqual(['/a*', '/unlisted.jpg*', '/a.jpg/original', '/a.jpg/width=10']);
    expect(invalidationPaths([{ key: 'new.jpg', variants: [] }])).toEqual([]);
  });

  it(`the wildcard for a source with more than ${MAX_EXACT_PATHS_PER_SOURCE} variants`, () => {
    expect(invalidationPaths([{ key: 'b.jpg', variants: variants('b.jpg', MAX_EXACT_PATHS_PER_SOURCE) }])).toHaveLength(MAX_EXACT_PATHS_PER_SOURCE);
    expect(invalidationPaths([{ key: 'b.jpg', variants: variants('b.jpg', MAX_EXACT_PATHS_PER_SOURCE + 1) }])).toEqual(['/b.jpg*']);
  });

  it('never more than 3,000 exact paths or 15 wildcards in one request', () => {
    const many = Array.from({ length: 31 }, (_, i) => ({ key: `s/${i}.jpg`, variants: variants(`s/${i}.jpg`, 100) }));
    expect(invalidationPaths(many.slice(0, 30))).toHaveLength(3000);
    expect(invalidationPaths([...many, { key: 'empty.jpg', variants: [] }])).toEqual(['/s/*']);
  });
});
