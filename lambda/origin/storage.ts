// The two S3 calls of a miss: read the source (bounded), write the variant
// (only if absent). S3 failures become contract errors here and nowhere else.

import { GetObjectCommand, PutObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { HttpError, sourceTooLarge } from './errors';

/** Attempts per S3 call: the SDK's standard retries (500/502/503/504, SlowDown, timeouts, resets, refusals) with jittered backoff. */
export const S3_MAX_ATTEMPTS = 3;

/**
 * Bounds on each attempt, in ms: to connect; to the response headers (a PUT's
 * upload included: S3 answers a small GET or PUT in tens of ms, and AWS's
 * guidance is to retry one after 2 s); and of silence on the socket, which is
 * what ends a source body that stops halfway (the SDK retries a call, not a
 * body it has started to stream: that is a 503 at once). The SDK sets none of
 * them by default, and in the @smithy/node-http-handler it uses,
 * `requestTimeout` alone only logs a warning: `throwOnRequestTimeout` makes
 * it end the attempt.
 */
export const S3_TIMEOUTS = { connectionTimeout: 1_000, requestTimeout: 3_000, socketTimeout: 3_000 } as const;

/**
 * The origin's S3 client. A storage that never answers costs at most
 * 3 attempts x 3 s (+ backoff) before the call fails and the viewer gets a
 * 503, far inside the Lambda timeout. `connection` only says where S3 is
 * (LocalStack, a test's proxy); the bounds are the same everywhere.
 */
export function originS3Client(connection: Pick<S3ClientConfig, 'endpoint' | 'region' | 'credentials' | 'forcePathStyle'> = {}): S3Client {
  return new S3Client({
    ...connection,
    maxAttempts: S3_MAX_ATTEMPTS,
    retryMode: 'standard',
    requestHandler: { ...S3_TIMEOUTS, throwOnRequestTimeout: true },
  });
}

export interface Source {
  bytes: Buffer;
  /** The source object's ETag, kept with each variant so staleness can be checked. */
  etag: string;
  /** Its S3 user metadata (`x-amz-meta-<name>`), names lower-case. */
  metadata: Record<string, string>;
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

/**
 * A source's body read to its end, a 413 past `maxBytes`: refused on its
 * declared length first, and counted while read, since the length is the
 * sender's word and the bytes are the truth. `peek`, when given, sees the
 * first `bytes` (or the whole body if shorter) as soon as they have arrived,
 * and may refuse them by throwing. The body is closed on any refusal.
 */
export async function readBounded(
  body: Readable,
  declaredLength: number | undefined,
  maxBytes: number,
  peek?: { bytes: number; check(head: Buffer): void },
): Promise<Buffer> {
  if ((declaredLength ?? 0) > maxBytes) {
    body.destroy();
    throw sourceTooLarge(maxBytes);
  }
  const chunks: Buffer[] = [];
  let length = 0;
  let peeked = !peek;
  // Leaving the loop by a throw destroys the stream.
  for await (const chunk of body) {
    length += (chunk as Buffer).length;
    if (length > maxBytes) throw sourceTooLarge(maxBytes);
    chunks.push(chunk as Buffer);
    if (!peeked && length >= peek!.bytes) {
      peeked = true;
      peek!.check(Buffer.concat(chunks, length));
    }
  }
  const bytes = Buffer.concat(chunks, length);
  if (!peeked) peek!.check(bytes);
  return bytes;
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
  const declaredLength = response.ContentLength;
  let bytes: Buffer;
  try {
    // A failure while the body streams is the storage's; one before it (a bug) is not.
    bytes = await readBounded(response.Body as Readable, declaredLength, maxBytes);
  } catch (error) {
    throw error instanceof HttpError ? error : storageUnavailable(error);
  }
  return { bytes, etag: response.ETag ?? '', metadata: response.Metadata ?? {} };
}

export interface Variant {
  body: Buffer;
  contentType: string;
}

/**
 * Whether a write with `IfNoneMatch: '*'` lost to another: 412, the key exists;
 * 409, a concurrent conditional write to it is in flight.
 */
export function lostConditionalWrite(error: unknown): boolean {
  const status = (error as S3Failure).$metadata?.httpStatusCode;
  return status === 412 || status === 409;
}

/**
 * `created`, or `exists` when a concurrent miss stored the same variant first;
 * `replaced` for a web source's variant, which is rewritten when its source changes.
 */
export type StoreOutcome = 'created' | 'exists' | 'replaced';

/** How a variant is written: its Cache-Control and user metadata, and whether it may replace a stored copy. */
export interface StoreOptions {
  cacheControl: string;
  metadata: Record<string, string>;
  /** Only a web source's variant is rewritten; a bucket's is written once (If-None-Match). */
  replace?: boolean;
}

export async function storeVariant(
  s3: S3Client,
  bucket: string,
  key: string,
  variant: Variant,
  { cacheControl, metadata, replace = false }: StoreOptions,
  /** Ends the write, attempts and backoff included (e.g. when the invocation is about to end). */
  abortSignal?: AbortSignal,
): Promise<StoreOutcome> {
  try {
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        Body: variant.body,
        ContentType: variant.contentType,
        CacheControl: cacheControl,
        Metadata: metadata,
        ...(replace ? {} : { IfNoneMatch: '*' }),
      }),
      { abortSignal },
    );
    return replace ? 'replaced' : 'created';
  } catch (error) {
    // Either way one copy is stored.
    if (lostConditionalWrite(error)) return 'exists';
    throw storageUnavailable(error);
  }
}
