// The cache bucket's key layout, composed here and nowhere else. A deployed
// bucket holds these keys, so none may change:
//
//   <source key>/<ops>             a bucket source's variant: the canonical URI as S3
//                                  decodes it, so the cache-bucket origin serves it as is
//   /<source key>/<ops>            a web source's variant: no source key begins with an
//                                  empty segment, so no viewer's URI reaches it (web/variants.ts)
//   .failures/<sha256 of URI>      a remembered failure (failures.ts)
//   .avif-claims/<sha256 of URI>-<window>   a claim on making an AVIF (avif-claims.ts)
//   <source key>/.faces.<detector> the faces found in a source version (findings-memory.ts),
//                                  and /<source key>/.faces.<detector> a web source's
//   <source key>/.subject.<finder> the subject found in a source version, likewise
//
// The failures and claims have no ops segment, which every canonical URI has,
// so no viewer's request maps to them; the construct expires both prefixes.
// A findings record's (faces or subject) last segment is neither `original` nor holds a `=`, as
// every ops segment does, so no canonical URI names it either; it is one level
// below its source key, as the variants are, so the purge deletes it with them.

import { createHash } from 'node:crypto';
import { opsSegment, type Ops } from '../grammar';

/** Where remembered failures live (the construct expires this prefix and lets the origin read it). */
export const FAILURES_PREFIX = '.failures/';

/** Where claims on making an AVIF live (the construct expires this prefix). */
export const AVIF_CLAIMS_PREFIX = '.avif-claims/';

/** What every web variant's key begins with: an empty first segment, which no source key has. */
const WEB_VARIANTS_PREFIX = '/';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** What the keys of every variant of the bucket source `key` begin with. */
export const variantPrefix = (key: string) => key + '/';

/** The key of the variant `ops` of the bucket source `key`: the canonical URI as S3 decodes it, without the leading slash. */
export function variantKey(key: string, ops: Ops): string {
  // Only a text is percent-encoded in an ops segment (a URI component); S3 decodes it.
  return variantPrefix(key) + decodeURIComponent(opsSegment(ops));
}

/** Where the variant `ops` of the web source `key` is kept. */
export function webVariantKey(key: string, ops: Ops): string {
  return webVariantPrefix(variantKey(key, ops));
}

/** What the keys of the web variants under `path` begin with: a web origin's prefix, or a source key's variants' prefix. */
export const webVariantPrefix = (path: string) => WEB_VARIANTS_PREFIX + path;

/** Where the failure remembered for the canonical URI `uri` is kept. */
export const failureKey = (uri: string) => FAILURES_PREFIX + sha256(uri);

/** The key claiming the making of `uri`'s AVIF within the time window numbered `window`. */
export const avifClaimKey = (uri: string, window: number) => `${AVIF_CLAIMS_PREFIX}${sha256(uri)}-${window}`;

/**
 * Names the face detector and its settings (image/faces.ts) in its records'
 * keys: a change of model, search, thresholds or of what a record holds (the
 * eyes since 2) must change it, so that a new detector never reads an old
 * one's faces. Here, not in faces.ts, so that the
 * Lambdas that only read this layout (the purge) never bundle the detector.
 */
export const FACE_DETECTOR = 'blazeface-back-2';

/** The last segment of every faces record's key begins with this (the origin may read back only such keys). */
export const FACES_SEGMENT = '/.faces.';

/** Where the faces found in the source `key` (a web source's when `web`) are remembered, by the detector that found them. */
export const facesKey = (key: string, web: boolean) => (web ? webVariantPrefix(key) : key) + FACES_SEGMENT + FACE_DETECTOR;

/** Names the subject model and what its records hold (image/subject.ts), as FACE_DETECTOR names the detector. */
export const SUBJECT_FINDER = 'u2netp-1';

/** The last segment of every subject record's key begins with this (the origin may read back only such keys). */
export const SUBJECT_SEGMENT = '/.subject.';

/** Where the subject found in the source `key` (a web source's when `web`) is remembered, by the model that found it. */
export const subjectKey = (key: string, web: boolean) => (web ? webVariantPrefix(key) : key) + SUBJECT_SEGMENT + SUBJECT_FINDER;

/** Whether a cache-bucket key is a findings record, faces or subject (its last segment is one), not a variant. */
export const isFindingsKey = (key: string) => {
  const last = key.slice(key.lastIndexOf('/'));
  return last.startsWith(FACES_SEGMENT) || last.startsWith(SUBJECT_SEGMENT);
};
