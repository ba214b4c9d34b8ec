// Each source is searched once: what the face detector and the subject model
// found in a source version is kept in the cache bucket, so every later size
// of the same image costs no inference. Each record sits among the source's
// variants, at `<source key>/.faces.<detector>` and `<source key>/.subject.<finder>`
// (cache-keys.ts composes them), so the purge that deletes the variants (a
// listing one level below `<source key>/`) deletes them too. No canonical URI
// names them: an ops segment is `original` or holds a `=`. A record holds the
// ETag of the source it was found in, and is used only for that ETag, so it is
// read beside the source rather than after it; a newer version's search
// overwrites it. The model's name is part of the key: a deploy that changes a
// model reads no record of the old one (docs/faces.md says why variants are not re-keyed).

import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { MAX_FACES, type FaceBox } from './image/faces';
import { isFraction, liesInImage, wantsFaces, wantsSubject, type Findings } from './image/findings';
import { isPackedSubject, type PackedSubject } from './image/subject-record';
import { failureDetail, type RequestContext } from './request';
import type { Fetched, Sourcing } from './sourcing';

/** What a record of each kind holds beside its ETag, and whether a request reads it. */
const KINDS = {
  faces: { wanted: wantsFaces, valid: isFaces },
  // Its mask is inflated where it is used (the transform child), and searched again when its bytes are not the mask.
  subject: { wanted: wantsSubject, valid: isPackedSubject },
} as const;

type Kind = keyof typeof KINDS;

/** A box the detector could have written: fractions of the image, its far edges and its eyes within it. */
function isBox(face: unknown): boolean {
  const { confidence, eyes } = (face ?? {}) as FaceBox;
  return liesInImage(face) && [confidence, eyes?.x, eyes?.y].every(isFraction);
}

/** Faces the detector could have written: at most MAX_FACES boxes, each inside the image (one out of bounds: searched again). */
function isFaces(value: unknown): boolean {
  return Array.isArray(value) && value.length <= MAX_FACES && value.every(isBox);
}

/**
 * What is remembered at `key` for the source version `etag` (awaited last, so
 * the read can start before the source's is done; it never rejects: '' for no
 * version), or undefined: none, of another version, not what the origin
 * writes, or any trouble reading (the source is then searched again).
 */
export async function remembered(
  s3: S3Client,
  bucket: string,
  kind: Kind,
  key: string,
  etag: Promise<string>,
  abortSignal?: AbortSignal,
): Promise<unknown> {
  let stored: Record<string, unknown>;
  try {
    const response = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }), { abortSignal });
    stored = JSON.parse((await response.Body?.transformToString()) ?? '') as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const version = await etag;
  const valid = typeof stored?.etag === 'string' && version && stored.etag === version && KINDS[kind].valid(stored[kind]);
  return valid ? stored[kind] : undefined;
}

/** Keeps what was found of `kind` in the source version `etag` at `key` (a version without an ETag is not remembered). */
export async function remember(
  s3: S3Client,
  bucket: string,
  kind: Kind,
  key: string,
  etag: string,
  found: unknown,
  abortSignal?: AbortSignal,
): Promise<void> {
  if (!etag) return;
  await s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: key,
      Body: JSON.stringify({ etag, [kind]: found }),
      ContentType: 'application/json',
      CacheControl: 'no-store',
    }),
    { abortSignal },
  );
}

const recordKey = (sourcing: Sourcing, kind: Kind) => (kind === 'faces' ? sourcing.facesKey : sourcing.subjectKey);

/** What is remembered of the request's source, read while `fetching` reads it (only the kinds the request uses). */
export async function recallFindings(ctx: RequestContext, sourcing: Sourcing, fetching: Promise<Fetched>): Promise<Findings> {
  const { ops } = ctx.request;
  // Handled here, whatever the records' reads do: a source that cannot be fetched must not leave a rejection unheard.
  const etag = fetching.then(
    (fetched) => ('source' in fetched ? fetched.source.etag : ''),
    () => '',
  );
  const { s3, config } = ctx.services;
  const read = (kind: Kind) =>
    KINDS[kind].wanted(ops)
      ? remembered(s3, config.cacheBucket, kind, recordKey(sourcing, kind), etag, ctx.deadline.endSignal())
      : undefined;
  const [faces, subject] = await Promise.all([read('faces'), read('subject')]);
  return { ...(faces ? { faces: faces as FaceBox[] } : {}), ...(subject ? { subject: subject as PackedSubject } : {}) };
}

/** Keeps what a transform found in the source version `etag`, while the answer goes out; a failure is logged. */
export function keepFindings(ctx: RequestContext, sourcing: Sourcing, etag: string, found: Findings): Promise<void> | undefined {
  const kinds = (Object.keys(KINDS) as Kind[]).filter((kind) => found[kind] !== undefined);
  if (kinds.length === 0) return undefined;
  const { s3, config } = ctx.services;
  const keeping = kinds.map((kind) =>
    remember(s3, config.cacheBucket, kind, recordKey(sourcing, kind), etag, found[kind], ctx.deadline.endSignal()).catch((error: unknown) =>
      ctx.note('error', `remember_${kind}_failed`, { detail: failureDetail(error) }),
    ),
  );
  return Promise.all(keeping).then(() => undefined);
}
