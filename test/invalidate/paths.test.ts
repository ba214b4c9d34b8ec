// Invalidation paths, checked against CloudFront's path matching (support.ts's
// `invalidates`, written apart from paths.ts) under each way CloudFront may
// compare spellings: a source's paths reach every cache key of its variants,
// and no cache key of its neighbours, whatever characters the key holds.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalUri, type Ops } from '../../lambda/grammar';
import { facesKey, variantKey } from '../../lambda/origin/cache-keys';
import {
  coveringPaths,
  foldedWildcards,
  invalidationPaths,
  MAX_EXACT_PATHS,
  MAX_EXACT_VARIANTS_PER_SOURCE,
  MAX_WILDCARD_PATHS,
  overLimit,
  sourceWildcards,
  variantPaths,
} from '../../lambda/invalidate/paths';
import { expectExactly, guideSpelling, invalidates, READINGS, unreachable, type Reading } from './support';

const OPS: Ops[] = [{}, { width: 100 }, { width: 640, height: 480, fit: 'contain', format: 'avif' }, { format: 'json' }];
const RESERVED = [...`~!$&'()*+,:;=@`];

/** The cache keys CloudFront may hold of a source: its variants' canonical URIs. */
const cacheKeys = (key: string) => OPS.map((ops) => canonicalUri(key, ops));

/** The paths a purge sends for one source whose variants it found (all of OPS), or could not list. */
const exactFor = (key: string) => invalidationPaths([{ key, variants: OPS.map((ops) => variantKey(key, ops)) }]);
const wildcardFor = (key: string) => invalidationPaths([{ key }]);

/** Keys an invalidation of `key` must leave alone: same folder, same prefix, the character dropped or spelled otherwise. */
function neighbours(key: string, character: string): string[] {
  const at = key.indexOf(character);
  const folder = key.slice(0, key.lastIndexOf('/') + 1);
  const escape = '%' + character.charCodeAt(0).toString(16).toUpperCase();
  return [
    key + '.bak',
    key.slice(0, -1),
    key.slice(0, at) + key.slice(at + 1),
    key.slice(0, at) + escape + key.slice(at + 1),
    key.slice(0, at) + ' ' + key.slice(at + 1),
    key.slice(0, at) + 'other.jpg',
    key.slice(0, at) || 'top.jpg',
    folder + 'other.jpg',
    folder + 'x/deeper.jpg',
    'elsewhere/' + key,
    key.toUpperCase(),
  ].filter((neighbour) => neighbour !== key && neighbour !== '' && !neighbour.endsWith('/') && !neighbour.includes('//'));
}

/** Keys with `character` first at the top, first in a file name, inside a name, and in a folder name. */
const keysWith = (character: string) => [
  `${character}x.jpg`,
  `users/7/${character}y.jpg`,
  `users/7/x${character}y z.jpg`,
  `users/${character}7/é.jpg`,
];

describe('each reserved character, in each place of a key', () => {
  const cases = RESERVED.flatMap((character) => keysWith(character).map((key) => [character, key] as const));

  /** The cache keys of `key`'s variants, reached; its neighbours', not. */
  const expectOwnVariants = (paths: string[], character: string, key: string) =>
    expectExactly(
      paths,
      cacheKeys(key).map((uri) => [key, uri]),
      neighbours(key, character).flatMap(cacheKeys),
    );

  it.each(cases)('%s: %s is invalidated exactly, by exact paths', (character, key) => {
    const paths = exactFor(key);
    expect(paths.some((path) => path.includes('*'))).toBe(false);
    expectOwnVariants(paths, character, key);
  });

  it.each(cases)('%s: %s, its variants unknown, is invalidated by its own wildcards', (character, key) => {
    const paths = wildcardFor(key);
    expect(paths.every((path) => path.endsWith('/*'))).toBe(true);
    expectOwnVariants(paths, character, key);
    // The sources below the key (a folder named like it) are all a wildcard also reaches.
    expect(invalidates(paths, canonicalUri(key + '/below.jpg', {}))).toBe(!key.includes('~'));
  });

  it('never widens a path for a key at the top: no /*', () => {
    for (const character of RESERVED) {
      expect(exactFor(`${character}.jpg`)).not.toContain('/*');
      expect(wildcardFor(`${character}.jpg`)).not.toContain('/*');
    }
  });
});

describe('variantPaths', () => {
  it('is the canonical URI, in the guide spelling too where the key holds a character they spell differently', () => {
    const ops: Ops = { width: 640, height: 480, fit: 'contain', format: 'avif' };
    expect(variantPaths('photos/my cat.jpg', variantKey('photos/my cat.jpg', ops))).toEqual([canonicalUri('photos/my cat.jpg', ops)]);
    expect(variantPaths('été/a.png', 'été/a.png/original')).toEqual(['/%C3%A9t%C3%A9/a.png/original']);
    expect(variantPaths('photos/a+b (1).jpg', 'photos/a+b (1).jpg/width=1')).toEqual([
      '/photos/a%2Bb%20%281%29.jpg/width=1',
      '/photos/a+b%20(1).jpg/width=1',
    ]);
    expect(variantPaths('x~y*.jpg', 'x~y*.jpg/original')).toEqual(['/x%7Ey%2A.jpg/original']);
  });

  it('is undefined for a key that is not a variant of the source', () => {
    expect(variantPaths('photos/a.jpg', 'photos/b.jpg/original')).toBeUndefined();
    expect(variantPaths('photos/a.jpg', 'photos/a.jpg/x*')).toBeUndefined();
    expect(variantPaths('photos/a.jpg', 'photos/a.jpg/b.jpg/original')).toBeUndefined();
  });
});

const KEY_CHARACTERS = fc.oneof(
  fc.constantFrom(' ', '%', '#', '?', '"', '<', '>', '[', ']', '{', '}', '|', '\\', '^', '`', '.', '-', '_', ...RESERVED),
  fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
);
const segment = fc
  .string({ unit: KEY_CHARACTERS, minLength: 1, maxLength: 8 })
  .map((text) => text.replace(/[\u0000-\u001f\u007f-\u009f/]/g, '_'))
  .filter((text) => text !== '.' && text !== '..');
const key = fc
  .array(segment, { minLength: 1, maxLength: 3 })
  .map((segments) => segments.join('/'))
  .filter((k) => Buffer.byteLength(k) <= 1024);

describe('any key (property)', () => {
  it("reaches its own variants, and never another key's, in every reading", () => {
    fc.assert(
      fc.property(key, key, fc.boolean(), (own, other, known) => {
        const paths = known ? exactFor(own) : wildcardFor(own);
        for (const reading of Object.keys(READINGS) as Reading[]) {
          const reach = READINGS[reading];
          for (const uri of cacheKeys(own)) expect(reach(paths, uri)).toBe(!unreachable(own, reading));
          // Another key is reached only if it is the same key in the reading's spelling, or (by a wildcard) below it.
          const same = guideSpelling(canonicalUri(other, {})) === guideSpelling(canonicalUri(own, {}));
          if (same || (!known && other.startsWith(own + '/'))) continue;
          for (const uri of cacheKeys(other)) expect(reach(paths, uri), `${reading} ${own} ${other}`).toBe(false);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('stays within 4000 characters for the longest keys', () => {
    const longest = 'é'.repeat(511) + '(';
    for (const path of [...exactFor(longest), ...wildcardFor(longest)]) expect(path.length).toBeLessThanOrEqual(4000);
  });
});

describe('invalidationPaths', () => {
  const variants = (k: string, n: number) => Array.from({ length: n }, (_, i) => `${k}/width=${i + 1}`);

  it('exact paths for known variants, none for a source without variants, the wildcards where unknown', () => {
    expect(
      invalidationPaths([
        { key: 'a.jpg', variants: ['a.jpg/original', 'a.jpg/width=10'] },
        { key: 'new.jpg', variants: [] },
        { key: 'unlisted.jpg' },
        { key: 'a+b.jpg', variants: ['a+b.jpg/original'] },
      ]),
    ).toEqual(['/unlisted.jpg/*', '/a%2Bb.jpg/original', '/a+b.jpg/original', '/a.jpg/original', '/a.jpg/width=10']);
    expect(invalidationPaths([{ key: 'new.jpg', variants: [] }])).toEqual([]);
  });

  it("no path for a source's remembered faces, which no URI names: only its variants'", () => {
    expect(invalidationPaths([{ key: 'a.jpg', variants: ['a.jpg/width=10', facesKey('a.jpg', false)] }])).toEqual(['/a.jpg/width=10']);
    expect(invalidationPaths([{ key: 'a.jpg', variants: [facesKey('a.jpg', false)] }])).toEqual([]);
  });

  it(`a source's wildcards past ${MAX_EXACT_VARIANTS_PER_SOURCE} variants, and exact paths a wildcard covers dropped`, () => {
    expect(invalidationPaths([{ key: 'b.jpg', variants: variants('b.jpg', MAX_EXACT_VARIANTS_PER_SOURCE) }])).toHaveLength(
      MAX_EXACT_VARIANTS_PER_SOURCE,
    );
    expect(invalidationPaths([{ key: 'b,c.jpg', variants: variants('b,c.jpg', MAX_EXACT_VARIANTS_PER_SOURCE + 1) }])).toEqual([
      '/b%2Cc.jpg/*',
      '/b,c.jpg/*',
    ]);
    expect(invalidationPaths([{ key: 'd.jpg' }, { key: 'd.jpg/e.jpg', variants: ['d.jpg/e.jpg/original'] }])).toEqual(['/d.jpg/*']);
    // The second pass's list, the first's variants with what it found since: each counted once.
    const twice = [...variants('f.jpg', 60), ...variants('f.jpg', 61)];
    expect(invalidationPaths([{ key: 'f.jpg', variants: twice }])).toHaveLength(61);
  });

  it(`past ${MAX_EXACT_PATHS} exact paths, only the largest sources take their wildcards`, () => {
    const many = Array.from({ length: 31 }, (_, i) => ({ key: `s/${i}.jpg`, variants: variants(`s/${i}.jpg`, i === 7 ? 100 : 99) }));
    const paths = invalidationPaths([...many, { key: 'empty.jpg', variants: [] }]);
    expect(paths.filter((path) => path.endsWith('*'))).toEqual(['/s/7.jpg/*']);
    expect(paths).toHaveLength(1 + 30 * 99);
    expect(overLimit(paths)).toBeUndefined();
  });

  it('sixteen sources in sixteen folders, each key holding a comma: exact paths, nothing folded', () => {
    const keys = Array.from({ length: 16 }, (_, i) => `users/${i}/x,y.jpg`);
    const paths = invalidationPaths(keys.map((k) => ({ key: k, variants: [`${k}/original`] })));
    expect(paths).toHaveLength(32);
    expect(paths.some((path) => path.includes('*'))).toBe(false);
    for (const uri of cacheKeys('users/1/x.jpg')) expect(invalidates(paths, uri)).toBe(false);
  });
});

describe(`folding past ${MAX_WILDCARD_PATHS} wildcards`, () => {
  const numbered = (n: number, name: (i: number) => string) => Array.from({ length: n }, (_, i) => name(i));

  it('folds the sources of one folder into that folder, and no further', () => {
    const photos = numbered(16, (i) => `photos/2026/${String(i).padStart(2, '0')}.jpg`);
    expect(foldedWildcards(photos.slice(0, 15))).toHaveLength(15);
    expect(foldedWildcards(photos)).toEqual(['/photos/2026/*']);
    // Three sources elsewhere stay as they are: folding photos/2026/ is enough.
    expect(foldedWildcards([...photos, 'a.jpg', 'docs/b.jpg', 'docs/c.jpg'])).toEqual([
      '/a.jpg/*',
      '/docs/b.jpg/*',
      '/docs/c.jpg/*',
      '/photos/2026/*',
    ]);
  });

  it('folds the folders that save most first, and stops once the paths fit', () => {
    const big = numbered(10, (i) => `big/${i}.jpg`);
    const small = numbered(4, (i) => `small/${i}.jpg`);
    const single = numbered(3, (i) => `single${i}/a.jpg`);
    expect(foldedWildcards([...big, ...small, ...single])).toEqual(['/big/*', ...[...single, ...small].map((k) => `/${k}/*`)]);
  });

  it("never folds above a source's own folder: sixteen users/<i>/x,y.jpg are not /users/*, and not sent", () => {
    const keys = numbered(16, (i) => `users/${i}/x,y.jpg`);
    const paths = foldedWildcards(keys);
    expect(paths).toEqual(keys.flatMap(sourceWildcards).sort());
    expect(overLimit(paths)).toMatch(/^32 wildcard paths, more than the 15 CloudFront allows in progress/);
  });

  it('never folds into /*: sixteen sources at the top are not sent', () => {
    const paths = foldedWildcards(numbered(16, (i) => `${i}.jpg`));
    expect(paths).not.toContain('/*');
    expect(overLimit(paths)).toMatch(/^16 wildcard paths/);
  });

  it('folds a folder whose name holds a reserved character in both its spellings', () => {
    expect(foldedWildcards(numbered(16, (i) => `a,b/${i}.jpg`))).toEqual(['/a%2Cb/*', '/a,b/*']);
  });
});

describe('coveringPaths', () => {
  it('drops duplicates and paths a shorter one covers, whatever sorts before the wildcard', () => {
    expect(coveringPaths(['/b.jpg/*', '/a.jpg/*', '/b.jpg/*'])).toEqual(['/a.jpg/*', '/b.jpg/*']);
    expect(coveringPaths(['/a/%20x/*', '/a/(1)/*', '/a/*', '/ab/*'])).toEqual(['/a/*', '/ab/*']);
    expect(coveringPaths([])).toEqual([]);
  });
});
