// CloudFront invalidation paths for changed sources, exactly as wide as the change.
//
// What the CloudFront Developer Guide says ("What you need to know when
// invalidating paths"):
// - a path starts with '/', is at most 4000 characters, and is case-sensitive;
// - '*' matches zero or more characters and may only be the LAST character;
//   a path without it names one cache key;
// - non-ASCII characters and characters RFC 1738 calls unsafe must be
//   URL-encoded, and no other character may be, "or CloudFront will not
//   invalidate the old version";
// - at most 3,000 exact paths and 15 wildcard paths may be in progress at once
//   (beyond that, CreateInvalidation fails with TooManyInvalidationsInProgress).
//
// Every variant is cached under its canonical URI, which the edge spells with
// the grammar's encodeKeyPath (RFC 3986: all but A-Z a-z 0-9 - _ . ~
// escaped). The guide's spelling differs on ! $ & ' ( ) * + , : ; = @
// (escaped by encodeKeyPath, literal for the guide) and on '~' (literal in
// the URI, unsafe for the guide; CreateInvalidation is reported to refuse it
// literal, which would fail the whole request). Whether CloudFront compares a
// path with the cache key byte for byte or after normalising both is not
// documented, so each variant is invalidated by its exact path in both
// spellings, one path where they agree:
//
//   photos/my cat.jpg    -> /photos/my%20cat.jpg/width=100
//   photos/a+b (1).jpg   -> /photos/a%2Bb%20%281%29.jpg/width=100
//                           /photos/a+b%20(1).jpg/width=100
//
// Two characters cannot be written both ways: '*' stays %2A (a literal one
// would be the wildcard) and '~' is always %7E, which reaches the canonical
// URI's literal '~' only if CloudFront normalises it (a report says it does
// not; the purge logs a warning for such a key). No character of a key ever
// cuts a path short, so no key can widen its invalidation.
//
// Exact paths are the plentiful resource (3,000 in progress), wildcards the
// scarce one (15). A source whose variants are unknown (listing failed) or
// more than 100 takes the wildcard of its own variants, /<key>/* (in both
// spellings), which also reaches the variants of sources below it
// (/<key>/<name>/...) and nothing else. Folding is bounded, and happens only
// when CloudFront's limits force it:
// - past 3,000 exact paths, the sources with the most paths take their
//   wildcards instead, until the rest fit;
// - past 15 wildcards, the sources that share a folder are folded into that
//   folder's wildcard /<folder>/*, the groups that save most first, until
//   they fit. A fold never goes above a source's own folder, and never to /*.
// Paths that still do not fit are not sent (overLimit says why), and nothing
// is deleted, so a retry finds the same variants. /* is only ever sent when a
// person asks for it (`npm run purge -- --everything`).

import { encodeKeyPath } from '../grammar';
import { isFindingsKey } from '../origin/cache-keys';

/** CloudFront's limit on wildcard paths in progress at once. */
export const MAX_WILDCARD_PATHS = 15;

/** CloudFront's limit on exact paths in progress at once (so also in one request). */
export const MAX_EXACT_PATHS = 3000;

/**
 * Past this many variants a source takes its wildcard paths instead: a
 * handful of such sources must not use up the 3,000 exact paths in progress.
 */
export const MAX_EXACT_VARIANTS_PER_SOURCE = 100;

/** The one path that invalidates the whole distribution, sent only when a person asks for it. */
export const EVERYTHING = '/*';

/** An ops segment as the grammar writes it: literal in the canonical URI, and in an invalidation path. */
const OPS_SEGMENT = /^[A-Za-z0-9=,._-]+$/;

/** encodeKeyPath's escapes of the characters the guide wants literal ('*' left out: literal, it is the wildcard). */
const RESERVED_ESCAPE = /%(21|24|26|27|28|29|2B|2C|3A|3B|3D|40)/g;

/** A key (or folder) as invalidation paths spell it: encodeKeyPath's spelling and the guide's, one when they agree. */
function keySpellings(key: string): string[] {
  const escaped = encodeKeyPath(key).replace(/~/g, '%7E');
  const literal = escaped.replace(RESERVED_ESCAPE, (_escape, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return literal === escaped ? [escaped] : [escaped, literal];
}

/** The wildcard paths of every variant of `sourceKey` (and of the sources below it, `<key>/<name>`). */
export function sourceWildcards(sourceKey: string): string[] {
  return keySpellings(sourceKey).map((spelling) => spelling + '/*');
}

/**
 * The exact invalidation paths of a variant (its canonical URI, in both
 * spellings), from its key in the cache bucket; undefined when the key is
 * not `<source key>/<ops segment>`.
 */
export function variantPaths(sourceKey: string, variantKey: string): string[] | undefined {
  const ops = variantKey.slice(sourceKey.length + 1);
  if (!variantKey.startsWith(sourceKey + '/') || !OPS_SEGMENT.test(ops)) return undefined;
  return keySpellings(sourceKey).map((spelling) => `${spelling}/${ops}`);
}

/** What a purge found of one source's variants: their keys, or undefined when listing them failed. */
export interface FoundVariants {
  key: string;
  variants?: string[];
}

/** A source's exact paths, or undefined when it needs its wildcards (variants unknown, too many, or not variant keys). */
function exactPaths({ key, variants }: FoundVariants): string[] | undefined {
  // A second pass lists what the first found again: each variant counts once.
  const distinct = new Set(variants);
  if (!variants || distinct.size > MAX_EXACT_VARIANTS_PER_SOURCE) return undefined;
  // A source's remembered faces are no URI: CloudFront holds nothing of them.
  const paths = [...distinct].filter((variant) => !isFindingsKey(variant)).map((variant) => variantPaths(key, variant));
  return paths.every((path) => path !== undefined) ? (paths as string[][]).flat() : undefined;
}

/**
 * The paths that invalidate what CloudFront may hold of these sources:
 * exact paths where the variants are known (none for a source without
 * variants), the source's wildcards otherwise, folded only as far as
 * CloudFront's limits require (see above).
 */
export function invalidationPaths(sources: FoundVariants[]): string[] {
  const planned = sources.map((source) => ({ key: source.key, exact: exactPaths(source) }));
  let exactCount = planned.reduce((total, { exact }) => total + (exact?.length ?? 0), 0);
  const largestFirst = [...planned].sort((a, b) => (b.exact?.length ?? 0) - (a.exact?.length ?? 0));
  for (const source of largestFirst) {
    if (exactCount <= MAX_EXACT_PATHS) break;
    exactCount -= source.exact?.length ?? 0;
    source.exact = undefined;
  }
  const wildcards = foldedWildcards(planned.filter(({ exact }) => exact === undefined).map(({ key }) => key));
  const exact = [...new Set(planned.flatMap(({ exact }) => exact ?? []))].sort();
  return [...wildcards, ...exact.filter((path) => !wildcards.some((wildcard) => covers(wildcard, path)))];
}

/** Whether CloudFront's invalidation `path` reaches the cache key `uri`: exact, or a prefix before a final '*'. */
export function covers(path: string, uri: string): boolean {
  return path.endsWith('*') ? uri.startsWith(path.slice(0, -1)) : uri === path;
}

/** The folder a key is in, with its trailing '/' ('' at the top). */
function folderOf(key: string): string {
  return key.slice(0, key.lastIndexOf('/') + 1);
}

/**
 * The wildcard paths of these sources, each `/<key>/*`, folded into their
 * folders' `/<folder>/*` only while more than `max` remain: the folders whose
 * fold saves most paths first, never the top folder (that would be /*), and
 * not at all when every allowed fold together could not bring them under
 * `max` (widening them would not get them accepted).
 */
export function foldedWildcards(sourceKeys: string[], max = MAX_WILDCARD_PATHS): string[] {
  const byFolder = new Map<string, string[]>();
  for (const key of new Set(sourceKeys)) {
    const folder = folderOf(key);
    byFolder.set(folder, [...(byFolder.get(folder) ?? []), ...sourceWildcards(key)]);
  }
  const unfolded = coveringPaths([...byFolder.values()].flat());
  if (unfolded.length <= max) return unfolded;

  const folds = [...byFolder]
    .filter(([folder]) => folder !== '')
    .map(([folder, paths]) => {
      const folded = sourceWildcards(folder.slice(0, -1));
      return { folder, folded, saved: coveringPaths(paths).length - folded.length };
    })
    .filter((fold) => fold.saved > 0)
    .sort((a, b) => b.saved - a.saved || b.folder.length - a.folder.length);
  if (unfolded.length - folds.reduce((total, fold) => total + fold.saved, 0) > max) return unfolded;

  let paths = unfolded;
  for (const { folder, folded } of folds) {
    byFolder.set(folder, folded);
    paths = coveringPaths([...byFolder.values()].flat());
    if (paths.length <= max) break;
  }
  return paths;
}

/** The fewest wildcard paths that cover these wildcard paths: duplicates and paths a shorter one covers dropped, sorted. */
export function coveringPaths(wildcards: string[]): string[] {
  const prefixes = [...new Set(wildcards.map((path) => path.slice(0, -1)))].sort();
  const kept: string[] = [];
  for (const prefix of prefixes) {
    // Sorted without their '*', so a covering prefix comes right before what it covers.
    const last = kept[kept.length - 1];
    if (last === undefined || !prefix.startsWith(last)) kept.push(prefix);
  }
  return kept.map((prefix) => prefix + '*');
}

/** Why CloudFront would refuse these paths in one request whatever else is in progress; undefined when it would not. */
export function overLimit(paths: string[]): string | undefined {
  const wildcards = paths.filter((path) => path.endsWith('*')).length;
  if (wildcards > MAX_WILDCARD_PATHS) {
    return (
      `${wildcards} wildcard paths, more than the ${MAX_WILDCARD_PATHS} CloudFront allows in progress, ` +
      "and folding them into the sources' own folders would not bring them under it"
    );
  }
  const exact = paths.length - wildcards;
  return exact > MAX_EXACT_PATHS ? `${exact} exact paths, more than the ${MAX_EXACT_PATHS} CloudFront allows in progress` : undefined;
}
