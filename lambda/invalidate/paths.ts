// CloudFront invalidation paths for changed sources.
//
// What the CloudFront Developer Guide says ("Invalidating files", "What you
// need to know when invalidating paths"):
// - a path starts with '/', is at most 4000 characters, and is case-sensitive;
// - '*' matches zero or more characters and may only be the LAST character;
// - non-ASCII characters and characters RFC 1738 calls unsafe must be
//   URL-encoded, and no other character may be, "or CloudFront will not
//   invalidate the old version";
// - up to 15 wildcard paths may be in progress at once (beyond that,
//   CreateInvalidation fails with TooManyInvalidationsInProgress).
//
// The cache key of every variant is its canonical URI, which the edge spells
// with the grammar's encodeKeyPath (RFC 3986: every character but
// A-Z a-z 0-9 - _ . ~ escaped). For most keys the two spellings agree:
// letters, digits, '-', '_', '.', '/', and escapes of spaces, '%', '#', '?',
// quotes, brackets and non-ASCII bytes. They disagree on '~' (left literal
// by encodeKeyPath, unsafe per RFC 1738, and reported rejected by
// CreateInvalidation) and on ! $ & ' ( ) * + , : ; = @ (escaped by
// encodeKeyPath, to be left literal per the guide; '*' cannot be literal at
// all). Whether CloudFront compares such a path with the cache key byte for
// byte or after normalising it is not documented, so the path stops just
// before the first such character, where the wildcard goes:
//
//   photos/my cat.jpg     -> /photos/my%20cat.jpg*
//   photos/a+b (1).jpg    -> /photos/a*
//
// That matches the source's variants under either reading. It may also
// invalidate a neighbour that shares the prefix, which costs that neighbour
// one fetch from the cache bucket (not a new transform): the variants in the
// cache bucket are deleted exactly, by key, never by this wildcard.
//
// Wildcards are the scarce resource (15 in progress per distribution; a
// bulk upload of a thousand sources would exhaust them at once), exact paths
// the plentiful one (3,000). So a changed source is invalidated by the exact
// canonical URIs of the variants found in the cache bucket, which are the
// URIs CloudFront can have cached from it (the cache bucket is its first
// origin, and the origin stores every variant it answers with), and by its
// wildcard only when that list is unknown (listing failed), too long, or
// spelled ambiguously. A source with no variants needs no path at all.

import { encodeKeyPath } from '../grammar';

/** CloudFront's limit on wildcard paths in progress at once. */
export const MAX_WILDCARD_PATHS = 15;

/** CloudFront's limit on exact paths in progress at once (so also in one request). */
export const MAX_EXACT_PATHS = 3000;

/**
 * Past this many variants a source takes its one wildcard path instead: a
 * handful of such sources must not use up the 3,000 exact paths in progress.
 */
export const MAX_EXACT_PATHS_PER_SOURCE = 100;

/** An ops segment as the grammar writes it: literal in the canonical URI, and in an invalidation path. */
const OPS_SEGMENT = /^[A-Za-z0-9=,._-]+$/;

/** The first character where encodeKeyPath's spelling and the guide's may differ. */
const AMBIGUOUS = /~|%(?:21|24|26|27|28|29|2A|2B|2C|3A|3B|3D|40)/;

/** The wildcard invalidation path for every variant of `sourceKey` (and the viewer URIs that name it). */
export function invalidationPath(sourceKey: string): string {
  const encoded = encodeKeyPath(sourceKey);
  const cut = encoded.search(AMBIGUOUS);
  return (cut === -1 ? encoded : encoded.slice(0, cut)) + '*';
}

/**
 * The exact invalidation path of a variant (its canonical URI), from its key
 * in the cache bucket; undefined when the source key's spelling is ambiguous
 * (see above) or the key is not `<source key>/<ops segment>`.
 */
export function variantPath(sourceKey: string, variantKey: string): string | undefined {
  const ops = variantKey.slice(sourceKey.length + 1);
  if (!variantKey.startsWith(sourceKey + '/') || !OPS_SEGMENT.test(ops)) return undefined;
  const encoded = encodeKeyPath(sourceKey);
  return AMBIGUOUS.test(encoded) ? undefined : `${encoded}/${ops}`;
}

/** What a purge found of one source's variants: their keys, or undefined when listing them failed. */
export interface FoundVariants {
  key: string;
  variants?: string[];
}

/**
 * The paths that invalidate what CloudFront may hold of these sources:
 * exact paths where the variants are known (none for a source without
 * variants), the wildcard otherwise, within CloudFront's limits (more than
 * 3,000 exact paths become wildcards; more than 15 wildcards are folded).
 */
export function invalidationPaths(sources: FoundVariants[]): string[] {
  const exact: string[] = [];
  const wildcards: string[] = [];
  for (const { key, variants } of sources) {
    const paths = variants && variants.length <= MAX_EXACT_PATHS_PER_SOURCE ? variants.map((variant) => variantPath(key, variant)) : [undefined];
    if (paths.every((path) => path !== undefined)) exact.push(...(paths as string[]));
    else wildcards.push(invalidationPath(key));
  }
  if (exact.length > MAX_EXACT_PATHS) {
    const withVariants = sources.filter(({ variants }) => variants === undefined || variants.length > 0);
    return coveringPaths(withVariants.map(({ key }) => invalidationPath(key)));
  }
  return [...coveringPaths(wildcards), ...[...new Set(exact)].sort()];
}

/** Drops a trailing partial escape (`%` or `%X`), so a prefix never ends mid-character. */
function wholeEscapes(prefix: string): string {
  return prefix.replace(/%[0-9A-F]?$/, '');
}

function commonPrefix(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return a.slice(0, i);
}

/**
 * The fewest wildcard paths that cover `paths`: duplicates and paths covered
 * by a shorter one are dropped, and more than `max` are folded into their
 * common prefix, because a batch of more than 15 wildcard paths could never
 * be accepted.
 */
export function coveringPaths(paths: string[], max = MAX_WILDCARD_PATHS): string[] {
  const prefixes = [...new Set(paths.map((path) => path.replace(/\*$/, '')))].sort();
  const kept: string[] = [];
  for (const prefix of prefixes) {
    // Sorted, so a covering prefix comes right before what it covers.
    const last = kept[kept.length - 1];
    if (last === undefined || !prefix.startsWith(last)) kept.push(prefix);
  }
  if (kept.length <= max) return kept.map((prefix) => prefix + '*');
  const common = kept.reduce(commonPrefix);
  return [wholeEscapes(common) + '*'];
}
