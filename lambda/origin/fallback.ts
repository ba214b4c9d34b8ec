// The fallback image: the deployment's placeholder (a PNG or JPEG packaged
// with this function, FALLBACK_IMAGE), answered in place of the error when
// the source is missing (404), of a type the service does not read (415) or
// damaged (422), so that a page's <img> shows it at the size its layout asked
// for, while the status still tells monitors and crawlers the error. It is
// the answer phase after serve (handler.ts): made by the transform the
// request's ops describe, priced and bounded like any, answered inline and
// never stored. Each shape of request (its ops) is made once per warm
// process and kept in its memory, so that a flood of distinct missing keys
// at one size costs what a JSON error does. format=json, bad URLs and
// refusals keep their JSON errors.

import { opsSegment, type Ops } from '../grammar';
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

/**
 * What this process keeps of the fallbacks it made: at most this many (a
 * page's sizes and formats), and this many bytes of them (at least three of
 * the largest, which fill the inline limit).
 */
const KEPT_FALLBACKS = { entries: 64, bytes: 16 * 1024 * 1024 };

/** What one shape of request made of the fallback: the image, or why it could not be (its error is then answered). */
type MadeFallback = { image: Pick<TransformedVariant, 'body' | 'contentType' | 'width' | 'height'> } | { refused: string };

const bytesOf = (made: MadeFallback) => ('image' in made ? made.image.body.length : 0);

/** Fallbacks made in this process by the shape of request that made them, the least recently answered dropped first. */
export class KeptFallbacks {
  private readonly kept = new Map<string, MadeFallback>();
  private bytes = 0;

  get(shape: string): MadeFallback | undefined {
    const made = this.kept.get(shape);
    if (made) {
      this.kept.delete(shape);
      this.kept.set(shape, made);
    }
    return made;
  }

  keep(shape: string, made: MadeFallback): void {
    this.kept.set(shape, made);
    this.bytes += bytesOf(made);
    for (const [oldest, dropped] of this.kept) {
      if (this.kept.size <= KEPT_FALLBACKS.entries && this.bytes <= KEPT_FALLBACKS.bytes) break;
      this.kept.delete(oldest);
      this.bytes -= bytesOf(dropped);
    }
  }
}

/** The deployment's fallback image in one process: its file, read once, and what it was made into. */
export interface FallbackImage {
  read: () => Promise<Buffer>;
  made: KeptFallbacks;
  /** The most bytes `made` holds in the handler's memory, which every transform's budget leaves it. */
  heldBytes: number;
}

/** The fallback image of a process; none without a file. */
export const fallbackImageOf = (file: string | undefined): FallbackImage | undefined =>
  file === undefined ? undefined : { read: readOnce(file), made: new KeptFallbacks(), heldBytes: KEPT_FALLBACKS.bytes };

/**
 * What shapes a fallback: the request's ops, all but `metadata` (the
 * fallback carries none). Nothing else of the request does: the file, the
 * limits and the watermarks are the process's.
 */
const shapeOf = (ops: Ops) => opsSegment({ ...ops, metadata: undefined });

/**
 * The fallback made as the request's ops ask, within the fallback's side; the
 * source's metadata it stands for is not its own. A refusal of the transform
 * (a 4xx: the same for the same ops) is returned as made, and so is an answer
 * over the inline limit; a failure to read the file, a timeout or a crash is
 * thrown, and tried again by the next request.
 */
async function makeFallback(ctx: RequestContext, read: () => Promise<Buffer>): Promise<MadeFallback> {
  const { config } = ctx.services;
  const limits: Limits = { ...config, maxDimension: Math.min(config.maxDimension, fallbackSide(config.maxInlineBytes)) };
  const ops = { ...ctx.request.ops, metadata: undefined };
  // Not stopped by a remembered failure: that failure is what it answers.
  const transform = await transformerOf(ctx, await read(), ops, limits);
  try {
    // A negotiated AVIF that would keep the viewer waiting is answered as the WebP, as a first view is.
    const made = await timed(ctx, 'transform', () => transform({ deferAvif: ops.accept === 'avif' }));
    const { body, contentType, width, height } = made.variant;
    if (body.length > config.maxInlineBytes) return { refused: `${body.length} bytes, over the inline limit` };
    return { image: { body, contentType, width, height } };
  } catch (failure) {
    if (failure instanceof HttpError && failure.status < 500) return { refused: failureDetail(failure) };
    throw failure;
  }
}

/**
 * The answer phase for a request that `serve` failed with `error`: the
 * fallback image with the error's status, when the deployment has one and the
 * error is a FALLBACK_CODES one of an image request. Throws `error` otherwise,
 * and when the fallback cannot be made (logged): the JSON error is then the
 * answer. The log says whether this request made it (`made`) or found it
 * made by an earlier one.
 */
export async function answerFallback(ctx: RequestContext, error: unknown): Promise<FunctionUrlResponse> {
  const fallback = ctx.services.fallbackImage;
  if (!fallback || !(error instanceof HttpError) || !FALLBACK_CODES.includes(error.code) || ctx.request.ops.format === 'json') throw error;
  const { code, status, detail } = error;
  const shape = shapeOf(ctx.request.ops);
  let made = fallback.made.get(shape);
  const kept = made !== undefined;
  if (!made) {
    try {
      made = await makeFallback(ctx, fallback.read);
    } catch (failure) {
      ctx.note('error', 'fallback_failed', { code, detail: failureDetail(failure) });
      throw error;
    }
    fallback.made.keep(shape, made);
  }
  if ('refused' in made) {
    ctx.note('error', 'fallback_failed', { code, detail: made.refused, made: !kept });
    throw error;
  }
  const { image } = made;
  const response = ctx.respond(fallbackResponse(error, image, answerOf(ctx)));
  const answered = { bytes: image.body.length, width: image.width, height: image.height, made: !kept };
  ctx.note('warn', 'error', { code, status, detail, fallback: answered, ...ctx.measured.done(status, code) });
  return response;
}
