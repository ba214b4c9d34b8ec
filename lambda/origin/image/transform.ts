// Source bytes + canonical ops -> variant bytes. One decode of the source,
// and no decode at all before the plan has been priced against the budget.

import type { Sharp } from 'sharp';
import type { Ops } from '../../grammar';
import type { Limits } from '../config';
import type { Variant } from '../storage';
import { chooseFormat, describeWork, predictBytes, predictSeconds, previewsFit, type Budget } from './budget';
import { describe, PREVIEW_SIZE } from './describe';
import { decodeError, framesToLoad, openFrames, openSource } from './input';
import { CONTENT_TYPES, planOutput } from './output';
import { keptMetadata, withIptc } from './metadata';
import { applySteps, type EncodedVariant } from './steps';
import type { WatermarkImage } from '../watermarks';

export interface TransformedVariant extends Variant {
  width: number;
  height: number;
  /** Made as WebP although AVIF was negotiated and affordable: the AVIF is to follow the response. */
  avifDeferred?: boolean;
  /** Encodes made to fit max_bytes, for the bench. */
  encodes?: number;
  /** What the model predicted for the chosen format (budget.ts), for the log and the bounds report. */
  predicted?: { bytes: number; seconds: number };
}

/**
 * Encode seconds AVIF may add over WebP to a first view before that view gets
 * WebP and the AVIF follows the response (see docs/performance.md).
 */
export const AVIF_WAIT_SECONDS = 0.1;

export interface TransformOptions {
  /** A negotiated AVIF that would keep the viewer waiting is made as WebP, marked avifDeferred. */
  deferAvif?: boolean;
  /** The image `ops.watermark` names, read by the handler. */
  watermark?: WatermarkImage;
}

/** The variant a pipeline encodes, and its size (one frame). */
async function variantOf(pipeline: Sharp): Promise<EncodedVariant> {
  const { data, info } = await pipeline.toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.pageHeight ?? info.height };
}

/** `budget` is what this request may spend (budget.ts): the plan is priced against it before any decode. */
export async function transform(bytes: Buffer, ops: Ops, limits: Limits, budget: Budget, options: TransformOptions = {}): Promise<TransformedVariant> {
  const source = await openSource(bytes, limits);
  const undecodable = (error: unknown): never => {
    throw decodeError(error, limits);
  };
  if (ops.format === 'json') {
    const affordable = previewsFit(source.info, PREVIEW_SIZE, budget, limits.maxDimension);
    const description = await describe(source, affordable).catch(undecodable);
    const body = Buffer.from(JSON.stringify(description));
    return { body, contentType: CONTENT_TYPES.json, width: description.width, height: description.height };
  }
  const candidates = planOutput(ops, source.info);
  const frames = candidates.animated ? framesToLoad(source.info, limits) : 1;
  const work = describeWork(source.info, ops, frames, limits.maxDimension);
  const affordable = chooseFormat(work, source.info, candidates.candidates, budget);
  // Deferring costs the invocation a second decode and the WebP's encode, after the answer.
  const avifDeferred =
    options.deferAvif === true &&
    affordable === 'avif' &&
    candidates.candidates.includes('webp') &&
    predictSeconds(work, source.info, 'avif') - predictSeconds(work, source.info, 'webp') > AVIF_WAIT_SECONDS;
  const plan = { ...candidates, format: avifDeferred ? ('webp' as const) : affordable };
  const opened = plan.animated ? openFrames(bytes, frames, limits) : await source.firstFrame().catch(undecodable);
  const metadata = keptMetadata(source.metadata, ops.metadata);
  const { pipeline, encoded } = await applySteps(opened, { ops, info: source.info, plan, limits, watermark: options.watermark, metadata });
  try {
    const made = encoded ?? (await variantOf(pipeline));
    // libvips writes IPTC only as it read it: the block kept is added to the JPEG here.
    const data = metadata?.iptc && plan.format === 'jpeg' ? withIptc(made.data, metadata.iptc) : made.data;
    const predicted = { bytes: predictBytes(work, plan.format), seconds: predictSeconds(work, source.info, plan.format) };
    return {
      body: data,
      contentType: CONTENT_TYPES[plan.format],
      width: made.width,
      height: made.height,
      predicted,
      ...(avifDeferred ? { avifDeferred } : {}),
      ...(made.encodes ? { encodes: made.encodes } : {}),
    };
  } catch (error) {
    return undecodable(error);
  }
}
