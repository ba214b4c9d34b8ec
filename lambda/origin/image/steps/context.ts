// What every step of the pipeline shares: the record a step is, the context
// it reads and moves along, its price, and the few helpers several families
// use (pixels in memory, the background colour, a position's offset).

import sharp, { type OutputInfo, type Sharp } from 'sharp';
import type { Ops, Position } from '../../../grammar';
import type { Limits } from '../../config';
import type { WatermarkImage } from '../../watermarks';
import type { DeploymentFonts } from '../text/fonts';
import { decodeError, type SourceInfo } from '../input';
import type { KeptMetadata } from '../metadata';
import type { EncodedFormat, FrameTiming, OutputPlan } from '../output';
import type { FaceBox } from '../faces';
import type { Subject } from '../subject';

export interface StepInput {
  ops: Ops;
  info: SourceInfo;
  plan: OutputPlan;
  limits: Limits;
  /** The overlay slots' watermark images, by op (`watermark`, `watermark2`...). */
  watermarks?: { [op: string]: WatermarkImage };
  /** The deployment's own fonts, which `text-font` may name beside the packaged ones. */
  fonts?: DeploymentFonts;
  /** What of the source's metadata the output carries (metadata.ts). */
  metadata?: KeptMetadata;
  /** With `position=face`, the faces found, in fractions of the source as displayed (none found: the crop is `attention`'s). */
  faces?: FaceBox[];
  /** With `position=auto` or `segment=foreground`, the salient subject of the source as displayed (subject.ts); absent when unknown. */
  subject?: Subject;
}

/** A point of an image in pixels, from its top-left corner (not rounded: a pixel's centre is at .5). */
export type Point = [number, number];

/** A face's opposite corners and the point between its eyes. */
export type FacePoints = [corner: Point, opposite: Point, eyes: Point];

/** The subject's box by opposite corners, and its anchor (subject-crop.ts: what a window shorter than the subject keeps). */
export type SubjectPoints = [corner: Point, opposite: Point, anchor: Point];

export interface Region {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** The mirrors sharp makes after its extract (see StepContext). */
export type Mirrors = { flip: boolean; flop: boolean };

export const NO_MIRRORS: Mirrors = { flip: false, flop: false };

export interface StepContext extends StepInput {
  /** The image's size as the next step sees it: displayed and turned, then trimmed (the crop region is a part of it). */
  size: [number, number];
  /** The part of the image kept, as displayed: recorded by crop, cut by resize (sharp takes one extract before its resize), with any cut of its own. */
  region?: Region;
  /** The mirrors sharp makes after its extract rather than before (none with a turn): the extracted region is mirrored to match. */
  mirrorsAfterExtract: Mirrors;
  /** The focal point (`fp`) in the image of `size`, followed through turns, mirrors and trim: the cover crop is centred on it. */
  focus?: Point;
  /** With `position=face`, each face's corners and eyes in the image of `size`, followed like `focus`. */
  facePoints?: FacePoints[];
  /**
   * With `segment=foreground`, where the corners of the image as displayed are
   * in the image of `size` (top-left, top-right, bottom-left), followed like
   * `focus`: the subject's mask is mapped through them.
   */
  frame?: [Point, Point, Point];
  /** Where a cover crop that resize placed itself (on a focal point, or faces) cut its box from the image scaled, in its pixels. */
  coverOffset?: Point;
  /** With `position=auto` and a subject found, its box and anchor in the image of `size`, followed like `focus`. */
  subjectPoints?: SubjectPoints;
  /** An animation's timing, once its frames are pixels in memory, which carry none. */
  timing?: FrameTiming;
  /** The variant, when the output step had to encode it to know its size (max_bytes). */
  encoded?: EncodedVariant;
}

/** A variant's bytes and its size (one frame); `encodes`, when its size was searched for (max_bytes). */
export interface EncodedVariant {
  data: Buffer;
  width: number;
  height: number;
  encodes?: number;
}

/** What a step costs beyond the decode: CPU seconds on one libvips thread, and the bytes it holds until the encode. */
export interface Price {
  seconds: number;
  bytes: number;
  /** It reads the decoded image out of order, so libvips holds that whole (once, however many steps do). */
  holdsDecoded?: boolean;
}

/** The transform as a price is reckoned, before any pixel is decoded: sizes from the source's header and the ops (budget.ts). */
export interface PricedWork {
  ops: Ops;
  info: SourceInfo;
  format: EncodedFormat;
  /** Pixels of one frame as decoded, after shrink-on-load, and the bytes of one of them. */
  decodedPixels: number;
  decodedPixelBytes: number;
  /** Pixels of one output frame, border included. */
  outputPixels: number;
  /** Frames decoded and encoded. */
  frames: number;
}

/**
 * A step of the pipeline: what it costs, next to what it does. `apply`
 * changes the pipeline it is given, or returns the pipeline that replaces it.
 */
export interface Step {
  name: string;
  price: (work: PricedWork) => Price;
  apply: (image: Sharp, context: StepContext) => void | Promise<Sharp | undefined>;
  /**
   * False when, for these ops, the step cannot carry a source's HDR gain map
   * (gain-map.ts): it works on the pixels in memory, which carry none, or
   * changes their values in a way sharp cannot follow in the map. Absent: it can.
   */
  carriesGainMap?: (ops: Ops) => boolean;
  /**
   * True when, for these ops, libvips cannot apply the step frame by frame:
   * an animation's output is then its first frame (output.ts). Absent: it can.
   */
  firstFrameOnly?: (ops: Ops) => boolean;
  /**
   * True when, for these ops, the step reads the image at its whole decoded
   * size, which defeats libvips' shrink-on-load (sharp's rule): the decode is
   * priced unshrunk then (budget.ts). Absent: it does not.
   */
  decodesWhole?: (ops: Ops) => boolean;
}

export const FREE: Price = { seconds: 0, bytes: 0 };

/**
 * CPU seconds at `rate` seconds per megapixel, for `pixels` in each of `frames`.
 * Each family's `RATES` are per megapixel of what its steps add, on one
 * libvips thread, at the worst case of noise and of each op's largest value
 * (measured with `npx tsx scripts/bench/op-prices.ts`): of the decoded image
 * for what runs before the resize, of the output for what runs after it.
 */
export const perMegapixel = (rate: number, pixels: number, frames = 1) => (rate * pixels * frames) / 1e6;

/** A colour and its opacity: channels 0..255, alpha 0..1. */
export type Rgba = { r: number; g: number; b: number; alpha: number };

export function rgba(hex: string): Rgba {
  const channel = (i: number) => parseInt(hex.slice(i, i + 2), 16);
  return { r: channel(0), g: channel(2), b: channel(4), alpha: hex.length === 8 ? channel(6) / 255 : 1 };
}

const WHITE: Rgba = { r: 255, g: 255, b: 255, alpha: 1 };
const TRANSPARENT: Rgba = { r: 0, g: 0, b: 0, alpha: 0 };

/** Contain's padding and the colour under transparent pixels: white for JPEG, transparent otherwise. */
export function background({ ops, plan }: StepContext): Rgba {
  if (ops.background) return rgba(ops.background);
  return plan.format === 'jpeg' ? WHITE : TRANSPARENT;
}

/** Where a side of `room` spare pixels puts its offset for `position`: 0 at `low`, all of it at `high`, else half. */
export function along(position: Position, low: string, high: string, room: number): number {
  return position.includes(low) ? 0 : position.includes(high) ? room : Math.floor(room / 2);
}

/** Pixels in memory, decoded as 8-bit sRGB bands by the pipeline so far. */
export type Pixels = { data: Buffer; info: OutputInfo };

/** Runs the pipeline so far into memory; a decode failure there is the source's, as at the end. */
export async function pixels(image: Sharp, limits: Limits): Promise<Pixels> {
  return image
    .raw()
    .toBuffer({ resolveWithObject: true })
    .catch((error: unknown) => {
      throw decodeError(error, limits);
    });
}

/** The pipeline so far in memory, keeping an animation's timing (which pixels do not carry) for the encode. */
export async function inMemory(image: Sharp, context: StepContext): Promise<Pixels> {
  const source = context.plan.animated && !context.timing ? await image.metadata() : undefined;
  const made = await pixels(image, context.limits);
  // The source's timing, for the frames loaded.
  if (source) context.timing = { delay: source.delay?.slice(0, made.info.pages), loop: source.loop };
  return made;
}

export const pipelineOf = ({ data, info }: Pixels) =>
  sharp(data, {
    raw: { width: info.width, height: info.height, channels: info.channels, ...(info.pageHeight ? { pageHeight: info.pageHeight } : {}) },
  });
