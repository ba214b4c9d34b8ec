// AVIF without the wait: a first viewer whose AVIF would take noticeably
// longer to encode than WebP gets WebP at once, and the AVIF is made after the
// response and stored under the request's key. Two first viewers at the same
// moment must not both make it, so the making is claimed with a conditional
// write of a marker in the cache bucket, under a key no canonical URI can name
// (it has no ops segment) and no viewer reaches.

import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { avifClaimKey } from './cache-keys';
import { errorStack } from '../common/log';
import type { RequestContext } from './request';
import { lostConditionalWrite } from './storage';
import type { TransformResult } from './transform-process';

const EMPTY = Buffer.alloc(0);

/**
 * Claims the making of `uri`'s AVIF: true for the first claimant within a
 * window of `windowMs`, false for the others. The window is part of the key,
 * so a claimant that died frees the next window without anyone deleting its
 * marker.
 */
export async function claimAvif(s3: S3Client, bucket: string, uri: string, windowMs: number, abortSignal?: AbortSignal): Promise<boolean> {
  const key = avifClaimKey(uri, Math.floor(Date.now() / windowMs));
  try {
    // An empty Buffer, not '': the SDK sets no Content-Length for an empty string and warns of a stream of unknown length.
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: EMPTY, IfNoneMatch: '*', CacheControl: 'no-store' }), {
      abortSignal,
    });
    return true;
  } catch (error) {
    if (lostConditionalWrite(error)) return false;
    throw error;
  }
}

/**
 * The AVIF made after the WebP answer, when this request claims its making;
 * undefined when another request makes it or the making failed (logged). Its
 * abort signal is the invocation's end: no AVIF outlives the invocation.
 */
export async function followWithAvif(ctx: RequestContext, makeAvif: () => Promise<TransformResult>): Promise<TransformResult | undefined> {
  const { s3, config } = ctx.services;
  const started = performance.now();
  try {
    if (!(await claimAvif(s3, config.cacheBucket, ctx.request.uri, config.timeBudgetMs, ctx.deadline.endSignal()))) {
      ctx.note('info', 'avif_claimed_elsewhere');
      return undefined;
    }
    const avif = await makeAvif();
    ctx.note('info', 'avif_followed', { ms: Math.round(performance.now() - started) });
    return avif;
  } catch (error) {
    ctx.note('error', 'avif_follow_failed', { detail: errorStack(error) });
    return undefined;
  }
}
