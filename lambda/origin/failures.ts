// Expensive failures, remembered briefly. A transform that ran out of time or
// killed its process cost a whole invocation, and CloudFront does not cache
// 5xx answers, so a replayed URL would cost that again every time. Its answer
// is kept in the cache bucket for FAILURE_TTL_SECONDS under a key the canonical
// grammar can never produce: `.failures/<sha256 of the URI>` has no ops
// segment, so no viewer request maps to it, and it is never a variant (the
// cache bucket is the first origin: whatever is stored under a variant's key
// is served as a 200).

import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { failureKey } from './cache-keys';
import { HttpError, type ErrorCode } from './errors';
import type { OriginServices, RequestContext } from './request';
import { errorResponse } from './responses';

/**
 * Whether a transform's failure cost a full invocation and is worth remembering: its
 * process died, or it was killed at the deadline after using at least half the budget
 * itself (not a slow read that left it no time).
 */
export function worthRemembering(error: HttpError, transformMs: number, timeBudgetMs: number): boolean {
  return error.code === 'internal_error' || (error.code === 'timeout' && transformMs >= timeBudgetMs / 2);
}

interface StoredFailure {
  code: ErrorCode;
  message: string;
}

/**
 * The failure remembered for `uri` within the last `ttlSeconds`, as the error
 * to answer again, or undefined. Any trouble reading it means "none": the
 * request is then simply served.
 */
export async function rememberedFailure(s3: S3Client, bucket: string, uri: string, ttlSeconds: number): Promise<HttpError | undefined> {
  try {
    const response = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: failureKey(uri) }));
    const age = (Date.now() - (response.LastModified?.getTime() ?? 0)) / 1000;
    const stored = JSON.parse((await response.Body?.transformToString()) ?? '') as StoredFailure;
    if (age > ttlSeconds) return undefined;
    return new HttpError(stored.code, stored.message, `remembered failure, ${Math.round(age)} s old`);
  } catch {
    return undefined;
  }
}

export async function rememberFailure(
  s3: S3Client,
  bucket: string,
  uri: string,
  error: HttpError,
  abortSignal?: AbortSignal,
): Promise<void> {
  const stored: StoredFailure = { code: error.code, message: error.message };
  await s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: failureKey(uri),
      Body: JSON.stringify(stored),
      ContentType: 'application/json',
      CacheControl: 'no-store',
    }),
    { abortSignal },
  );
}

/** A remembered failure's lookup, started beside the request's work. */
export interface FailureLookUp {
  /** Aborted, with the error to answer, once a failure is found. */
  failed: AbortSignal;
  /** Settles when the lookup has ended: its S3 call must not outlive the request. */
  settled: Promise<unknown>;
}

/**
 * Looks up a failure remembered for `uri`. It runs beside the source's read and
 * the transform, so a miss never waits for it: a remembered failure stops the
 * transform (and its process) as soon as it is known.
 */
export function lookUpFailure({ s3, config }: OriginServices, uri: string): FailureLookUp {
  const failed = new AbortController();
  const found = rememberedFailure(s3, config.cacheBucket, uri, config.failureTtlSeconds);
  const settled = found.then((failure) => failure && failed.abort(failure));
  return { failed: failed.signal, settled };
}

/**
 * Answers `error` at once and remembers it when it cost a whole invocation
 * (and was not itself a remembered one); a failure to remember is logged.
 */
export async function rememberIfCostly(ctx: RequestContext, error: unknown): Promise<void> {
  const { s3, config } = ctx.services;
  if (!(error instanceof HttpError) || error === ctx.failed.reason) return;
  if (!worthRemembering(error, ctx.measured.timings.transform ?? 0, config.timeBudgetMs)) return;
  ctx.respond(errorResponse(error));
  await rememberFailure(s3, config.cacheBucket, ctx.request.uri, error, ctx.deadline.endSignal()).catch((failure: unknown) =>
    ctx.note('error', 'remember_failed', { detail: String(failure) }),
  );
}
