// The two S3 calls of a miss: read the source (bounded), write the variant
// (only if absent). S3 failures become contract errors here and nowhere else.

import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { HttpError } from './errors';

export interface Source {
  bytes: Buffer;
  /** The source object's ETag, kept with each variant so staleness can be checked. */
  etag: string;
}

interface S3Failure {
  name?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

function storageUnavailable(error: unknown): HttpError {
  const failure = error as S3Failure;
  return new HttpError(
    'storage_unavailable',
    'The image storage is unavailable; try again shortly.',
    `${failure.name}: ${failure.message}`,
  );
}

function tooLarge(limit: number): HttpError {
  return new HttpError('source_too_large', `The source image is larger than the ${limit}-byte limit.`);
}

export async function fetchSource(s3: S3Client, bucket: string, key: string, maxBytes: number): Promise<Source> {
  let response;
  try {
    response = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  } catch (error) {
    const failure = error as S3Failure;
    // Without s3:ListBucket, S3 answers 403 for a missing key: to a viewer both mean "no such image".
    if (failure.name === 'NoSuchKey' || failure.name === 'NotFound' || failure.name === 'AccessDenied') {
      throw new HttpError('not_found', 'No source image has this key.', failure.name);
    }
    throw storageUnavailable(error);
  }
  const body = response.Body as Readable;
  if ((response.ContentLength ?? 0) > maxBytes) {
    body.destroy();
    throw tooLarge(maxBytes);
  }
  // Count while reading too: Content-Length is S3's word, the bytes are the truth.
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of body) {
      length += (chunk as Buffer).length;
      if (length > maxBytes) {
        body.destroy();
        throw tooLarge(maxBytes);
      }
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    throw error instanceof HttpError ? error : storageUnavailable(error);
  }
  return { bytes: Buffer.concat(chunks, length), etag: response.ETag ?? '' };
}

export interface Variant {
  body: Buffer;
  contentType: string;
}

/** `created`, or `exists` when a concurrent miss stored the same variant first. */
export type StoreOutcome = 'created' | 'exists';

export async function storeVariant(
  s3: S3Client,
  bucket: string,
  key: string,
  variant: Variant,
  cacheControl: string,
  sourceEtag: string,
): Promise<StoreOutcome> {
  try {
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        Body: variant.body,
        ContentType: variant.contentType,
        CacheControl: cacheControl,
        Metadata: { 'source-etag': sourceEtag },
        IfNoneMatch: '*',
      }),
    );
    return 'created';
  } catch (error) {
    const failure = error as S3Failure;
    // 412: the key exists; 409: a concurrent conditional write is in flight. Either way one copy is stored.
    const status = failure.$metadata?.httpStatusCode;
    if (status === 412 || status === 409) return 'exists';
    throw storageUnavailable(error);
  }
}
