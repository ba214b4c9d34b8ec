// Each source is searched for faces once: what the detector found in a
// source version is kept in the cache bucket, so every later size of the same
// image costs no detection. The record sits among the source's variants, at
// `<source key>/.faces.<detector>` (cache-keys.ts composes it), so the purge that deletes them (a listing
// one level below `<source key>/`) deletes it too. No canonical URI names it:
// an ops segment is `original` or holds a `=`. A record holds the ETag of the
// source it was found in, and is used only for that ETag, so it is read beside
// the source rather than after it; a newer version's search overwrites it.
// The detector's name is part of the key: a deploy that changes the detector
// reads no record of the old one (docs/faces.md says why variants are not re-keyed).

import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { MAX_FACES, type FaceBox } from './image/faces';
import { failureDetail, type RequestContext } from './request';
import type { Fetched } from './sourcing';

interface StoredFaces {
  etag: string;
  faces: FaceBox[];
}

/** What roundedFace's four decimals may add to a box's far edge. */
const ROUNDING = 1e-4;

const isFraction = (value: unknown): value is number => typeof value === 'number' && value >= 0 && value <= 1;

/** A box the detector could have written: fractions of the image, its far edges and its eyes within it. */
function isBox(face: unknown): boolean {
  const { x, y, width, height, confidence, eyes } = (face ?? {}) as FaceBox;
  const fractions = [x, y, width, height, confidence, eyes?.x, eyes?.y];
  return fractions.every(isFraction) && x + width <= 1 + ROUNDING && y + height <= 1 + ROUNDING;
}

/**
 * Whether `value` is what rememberFaces writes, within what the detector
 * writes (at most MAX_FACES boxes, each inside the image): a record is the
 * origin's own, but anyone who can write to the cache bucket can plant one,
 * and one out of bounds is ignored (the source is searched again).
 */
function isStoredFaces(value: unknown): value is StoredFaces {
  const record = value as StoredFaces;
  return typeof record?.etag === 'string' && Array.isArray(record.faces) && record.faces.length <= MAX_FACES && record.faces.every(isBox);
}

/**
 * The faces remembered at `key` for the source version `etag` (awaited last,
 * so the read can start before the source's is done; it never rejects: '' for
 * no version), or undefined: none, of
 * another version, or any trouble reading (the source is then searched again).
 */
export async function rememberedFaces(
  s3: S3Client,
  bucket: string,
  key: string,
  etag: Promise<string>,
  abortSignal?: AbortSignal,
): Promise<FaceBox[] | undefined> {
  let stored: unknown;
  try {
    const response = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }), { abortSignal });
    stored = JSON.parse((await response.Body?.transformToString()) ?? '');
  } catch {
    return undefined;
  }
  const version = await etag;
  return isStoredFaces(stored) && version && stored.etag === version ? stored.faces : undefined;
}

/** Keeps the faces found in the source version `etag` at `key` (a version without an ETag is not remembered). */
export async function rememberFaces(
  s3: S3Client,
  bucket: string,
  key: string,
  etag: string,
  faces: FaceBox[],
  abortSignal?: AbortSignal,
): Promise<void> {
  if (!etag) return;
  const record: StoredFaces = { etag, faces };
  await s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: key,
      Body: JSON.stringify(record),
      ContentType: 'application/json',
      CacheControl: 'no-store',
    }),
    { abortSignal },
  );
}

/** The faces remembered at `key` for the request's source, read while `fetching` reads the source (only a request that uses faces reads them). */
export async function recallFaces(ctx: RequestContext, key: string, fetching: Promise<Fetched>): Promise<FaceBox[] | undefined> {
  const { ops } = ctx.request;
  if (ops.position !== 'face' && ops.format !== 'json') return undefined;
  // Handled here, whatever the record's read does: a source that cannot be fetched must not leave a rejection unheard.
  const etag = fetching.then(
    (fetched) => ('source' in fetched ? fetched.source.etag : ''),
    () => '',
  );
  const { s3, config } = ctx.services;
  return rememberedFaces(s3, config.cacheBucket, key, etag, ctx.deadline.endSignal());
}

/** Keeps the faces a transform found in the source version `etag` at `key`, while the answer goes out; a failure is logged. */
export function keepFaces(ctx: RequestContext, key: string, etag: string, faces: FaceBox[] | undefined): Promise<void> | undefined {
  if (!faces) return undefined;
  const { s3, config } = ctx.services;
  return rememberFaces(s3, config.cacheBucket, key, etag, faces, ctx.deadline.endSignal()).catch((error: unknown) =>
    ctx.note('error', 'remember_faces_failed', { detail: failureDetail(error) }),
  );
}
