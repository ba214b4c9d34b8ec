// The fallback image: the deployment's placeholder (a PNG or JPEG packaged
// with this function, FALLBACK_IMAGE), answered in place of the error when
// the source is missing (404), of a type the service does not read (415) or
// damaged (422), so that a page's <img> shows it at the size its layout asked
// for, while the status still tells monitors and crawlers the error. It is
// the answer phase after serve (handler.ts): made by the transform the
// request's ops describe, priced and bounded like any, answered inline and
// never stored. format=json, bad URLs and refusals keep their JSON errors.

import type { Limits } from './config';
import { HttpError, type ErrorCode } from './errors';
import { readOnce } from './packaged-file';
import { MOST_VARIANT_BYTES_PER_PIXEL } from './image/budget';
import type { TransformedVariant } from './image/transform';
import { transformerOf } from './phases';
import { answerOf, failureDetail, timed, type RequestContext } from './request';
import { fallbackResponse, type FunctionUrlResponse } from './responses';

/** The errors a fallback stands in for: no image to show at this key. */
const FALLBACK_CODES: readonly ErrorCode[] = ['not_found', 'unsupported_media_type', 'undecodable_image'];

/**
 * The largest side of a fallback answer: a square of this side, in the
 * format that takes the most bytes per pixel (PNG, on noise), stays within
 * `maxInlineBytes`, so a fallback asked at any size is answered inline (it is
 * never stored, so it cannot be redirected to). Larger requests get the
 * requested box scaled down to it, as maxDimension scales any box.
 */
export const fallbackSide = (maxInlineBytes: number) => Math.max(1, Math.floor(Math.sqrt(maxInlineBytes / MOST_VARIANT_BYTES_PER_PIXEL)));

/** The fallback file's reader, read once per environment; none without a fallback. */
export const fallbackFile = (file: string | undefined): (() => Promise<Buffer>) | undefined =>
  file === undefined ? undefined : readOnce(file);

/** The fallback made as the request's ops ask, within the fallback's side; the source's metadata it stands for is not its own. */
async function makeFallback(ctx: RequestContext, read: () => Promise<Buffer>) {
  const { config } = ctx.services;
  const limits: Limits = { ...config, maxDimension: Math.min(config.maxDimension, fallbackSide(config.maxInlineBytes)) };
  const ops = { ...ctx.request.ops, metadata: undefined };
  // Not stopped by a remembered failure: that failure is what it answers.
  const transform = await transformerOf(ctx, await read(), ops, limits);
  // A negotiated AVIF that would keep the viewer waiting is answered as the WebP, as a first view is.
  return timed(ctx, 'transform', () => transform({ deferAvif: ops.accept === 'avif' }));
}

/**
 * The answer phase for a request that `serve` failed with `error`: the
 * fallback image with the error's status, when the deployment has one and the
 * error is a FALLBACK_CODES one of an image request. Throws `error` otherwise,
 * and when the fallback cannot be made in time or within the inline limit
 * (logged): the JSON error is then the answer.
 */
export async function answerFallback(ctx: RequestContext, error: unknown): Promise<FunctionUrlResponse> {
  const read = ctx.services.fallbackImage;
  if (!read || !(error instanceof HttpError) || !FALLBACK_CODES.includes(error.code) || ctx.request.ops.format === 'json') throw error;
  let made: TransformedVariant;
  try {
    made = (await makeFallback(ctx, read)).variant;
  } catch (failure) {
    ctx.note('error', 'fallback_failed', { code: error.code, detail: failureDetail(failure) });
    throw error;
  }
  if (made.body.length > ctx.services.config.maxInlineBytes) {
    ctx.note('error', 'fallback_failed', { code: error.code, detail: `${made.body.length} bytes, over the inline limit` });
    throw error;
  }
  const response = ctx.respond(fallbackResponse(error, made, answerOf(ctx)));
  const { code, status, detail } = error;
  const fallback = { bytes: made.body.length, width: made.width, height: made.height };
  ctx.note('warn', 'error', { code, status, detail, fallback, ...ctx.measured.done(status, code) });
  return response;
}
