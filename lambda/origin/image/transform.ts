// Source bytes + canonical ops -> variant bytes. One decode of the source,
// and no decode at all before the plan has been priced against the budget.

import type { Sharp } from 'sharp';
import { coverCrop, type Ops } from '../../grammar';
import type { Limits } from '../config';
import type { Variant } from '../storage';
import { anyFits, chooseFormat, describeWork, predictBytes, predictSeconds, previewsFit, type Budget } from './budget';
import { describe, PREVIEW_SIZE } from './describe';
import { framesToLoad, undecodableBy, openFrames, openSource, type OpenedSource, type SourceInfo } from './input';
import type { Findings } from './findings';
import { heldBudget, searchSource } from './search';
import { CONTENT_TYPES, planOutput } from './output';
import { iptcAfterEncode, keptMetadata, withIptc } from './metadata';
import { applySteps, stepsCarryGainMap, type EncodedVariant } from './steps';
import { asksGainMap, gainMapDecodes, withoutGainMap, withSourceHeld } from './gain-map';
import type { WatermarkImage } from '../watermarks';
import type { CardJob } from './card';
import type { DeploymentFonts } from './text/fonts';
import { HttpError } from '../errors';
import type { FaceBox } from './faces';
import { isCutOut } from './findings';
import type { Subject } from './subject';

export interface TransformedVariant extends Variant {
  width: number;
  height: number;
  /** Made as WebP although AVIF was negotiated and affordable: the AVIF is to follow the response. */
  avifDeferred?: boolean;
  /** Encodes made to fit max_bytes, for the bench. */
  encodes?: number;
  /** What the model predicted for the chosen format (budget.ts), for the log and the bounds report. */
  predicted?: { bytes: number; seconds: number };
  /** What this transform searched the source for (none remembered): the handler remembers it. */
  searched?: Findings;
}

/**
 * Encode seconds AVIF may add over WebP to a first view before that view gets
 * WebP and the AVIF follows the response (see docs/performance.md).
 */
export const AVIF_WAIT_SECONDS = 0.1;

export interface TransformOptions {
  /** A negotiated AVIF that would keep the viewer waiting is made as WebP, marked avifDeferred. */
  deferAvif?: boolean;
  /** The images the overlay slots' watermarks name, by op (`watermark`, `watermark2`...), read by the handler. */
  watermarks?: { [op: string]: WatermarkImage };
  /** What an earlier search of the source found (the handler reads the records): no search for it then. */
  remembered?: Findings;
  /** A card to draw rather than a transform (card.ts): the source's bytes are its images'. */
  card?: CardJob;
  /** The deployment's own fonts, which a text may name. */
  fonts?: DeploymentFonts;
}

/**
 * What a search must leave of the budget, so that it never starves what
 * follows it: format=json's previews (unless they do not fit `whole` anyway),
 * or the cover crop placed by attention, which it is without a face (and
 * which carries no gain map).
 */
function roomAfterSearch(source: SourceInfo, ops: Ops, limits: Limits, whole: Budget): (rest: Budget) => boolean {
  const info = withoutGainMap(source);
  if (ops.format === 'json') {
    const previews = (budget: Budget) => previewsFit(info, PREVIEW_SIZE, budget, limits.maxDimension);
    return (rest) => previews(rest) || !previews(whole);
  }
  const placed = { ...ops, position: 'attention' as const };
  const { candidates, animated } = planOutput(placed, info);
  const work = describeWork(info, placed, animated ? framesToLoad(info, limits) : 1, limits.maxDimension);
  return (rest) => anyFits(work, info, candidates, rest);
}

/**
 * The source as this transform treats it: with its HDR gain map only when
 * the output keeps it (the URL asks for it, every step can carry it, keeping
 * it fits the budget, and the map's data decodes); else without, so that the
 * SDR image is made.
 */
async function withKeptGainMap({ info, gainMapJpeg }: OpenedSource, ops: Ops, limits: Limits, budget: Budget): Promise<SourceInfo> {
  if (!info.gainMap) return info;
  const sdr = withoutGainMap(info);
  if (!asksGainMap(ops) || !stepsCarryGainMap(ops)) return sdr;
  if (!anyFits(describeWork(info, ops, 1, limits.maxDimension), info, ['jpeg'], budget)) return sdr;
  return gainMapJpeg && (await gainMapDecodes(gainMapJpeg)) ? info : sdr;
}

/**
 * The crop strategy that places the cover crop with what was found: without
 * a face, `position=face` is `attention`; `position=auto` is the faces' crop
 * when there are faces, the subject's when it has one, else `attention`
 * (steps/resize.ts), and priced as it.
 */
function placedBy(ops: Ops, faces: FaceBox[] | undefined, subject: Subject | undefined): Ops {
  if (ops.position === 'face' && coverCrop(ops) && !faces?.length) return { ...ops, position: 'attention' };
  if (ops.position === 'auto' && coverCrop(ops) && !faces?.length && !subject?.box) return { ...ops, position: 'attention' };
  return ops;
}

/** A cut-out whose subject could not be found within the budget: refused, never served whole. */
function cutOutTooCostly(): HttpError {
  return new HttpError(
    'too_costly',
    'Finding the subject for segment=foreground in this source would exceed the budget; ask for a smaller source or no cut-out.',
  );
}

/** The variant a pipeline encodes, and its size (one frame). */
async function variantOf(pipeline: Sharp): Promise<EncodedVariant> {
  const { data, info } = await pipeline.toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.pageHeight ?? info.height };
}

/** `budget` is what this request may spend (budget.ts): the plan is priced against it before any decode. */
export async function transform(
  bytes: Buffer,
  ops: Ops,
  limits: Limits,
  granted: Budget,
  options: TransformOptions = {},
): Promise<TransformedVariant> {
  const opened = await openSource(bytes, limits);
  const undecodable = undecodableBy(limits);
  // A child that holds a model has that much less for any job; one about to load it, too.
  const held = heldBudget(ops, granted);
  const leaves = roomAfterSearch(opened.info, ops, limits, held);
  const found = await searchSource(opened, ops, limits, held, options.remembered ?? {}, leaves);
  const { budget, source, faces, subject } = found;
  const searched = Object.keys(found.searched).length > 0 ? { searched: found.searched } : {};
  if (ops.format === 'json') {
    const affordable = previewsFit(source.info, PREVIEW_SIZE, budget, limits.maxDimension);
    const description = await describe(source, affordable, faces ?? null, subject?.box ?? null).catch(undecodable);
    const body = Buffer.from(JSON.stringify(description));
    return { body, contentType: CONTENT_TYPES.json, width: description.width, height: description.height, ...searched };
  }
  if (isCutOut(ops) && !subject) throw cutOutTooCostly();
  ops = placedBy(ops, faces, subject);
  const info = await withKeptGainMap(source, ops, limits, budget);
  const candidates = planOutput(ops, info);
  const frames = candidates.animated ? framesToLoad(info, limits) : 1;
  const work = describeWork(info, ops, frames, limits.maxDimension);
  const affordable = chooseFormat(work, info, candidates.candidates, budget);
  // Deferring costs the invocation a second decode and the WebP's encode, after the answer.
  const avifDeferred =
    options.deferAvif === true &&
    affordable === 'avif' &&
    candidates.candidates.includes('webp') &&
    predictSeconds(work, info, 'avif') - predictSeconds(work, info, 'webp') > AVIF_WAIT_SECONDS;
  const plan = { ...candidates, format: avifDeferred ? ('webp' as const) : affordable };
  const image = plan.animated ? openFrames(bytes, frames, limits) : await source.firstFrame(info.gainMap !== undefined).catch(undecodable);
  const metadata = keptMetadata(source.metadata, ops.metadata);
  const { pipeline, encoded } = await applySteps(image, {
    ops,
    info,
    plan,
    limits,
    watermarks: options.watermarks,
    fonts: options.fonts,
    metadata,
    faces,
    subject,
  });
  try {
    const made = encoded ?? (await (info.gainMap ? withSourceHeld(() => variantOf(pipeline)) : variantOf(pipeline)));
    const iptc = iptcAfterEncode(metadata, plan.format, info.gainMap !== undefined);
    const data = iptc ? withIptc(made.data, iptc) : made.data;
    const predicted = { bytes: predictBytes(work, plan.format), seconds: predictSeconds(work, info, plan.format) };
    return {
      body: data,
      contentType: CONTENT_TYPES[plan.format],
      width: made.width,
      height: made.height,
      predicted,
      ...(avifDeferred ? { avifDeferred } : {}),
      ...(made.encodes ? { encodes: made.encodes } : {}),
      ...searched,
    };
  } catch (error) {
    return undecodable(error);
  }
}
