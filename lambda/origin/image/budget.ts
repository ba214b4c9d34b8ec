// The price of a planned transform, predicted from the source's header before
// any pixel is decoded: its peak memory and its CPU time. The transform picks
// its path and its encoder with these, or refuses with a precise 413, so that
// no request starts work that cannot finish inside the function's memory and
// time. The decode is priced here, and each step of the pipeline declares its
// own price beside what it does (steps/). The coefficients are worst cases
// measured on noise, which no encoder can compress; the deadline kill
// (transform-process.ts) remains the backstop for what a model cannot see.

import type { Ops } from '../../grammar';
import { HttpError } from '../errors';
import type { SourceInfo } from './input';
import type { EncodedFormat } from './output';
import { FACE_DETECTION_COST, FACE_MODEL_LOAD_COST, FACE_SEARCH_SIDE } from './faces';
import { SUBJECT_FINDING_COST, SUBJECT_MODEL_LOAD_COST } from './subject';
import { borderWidth, cropRegion, decodesWhole, roomFor, scaledSize, stepPrices, turnedSize } from './steps';

export interface Budget {
  /** Memory the child's work may use, in bytes: what is left of the allowance once both processes' own footprint is counted. */
  memoryBytes: number;
  /** CPU seconds the transform may take on this function's share of a core. */
  seconds: number;
}

/** Lambda gives a function one vCPU per 1769 MB of memory; less memory, a slower transform. */
const MB_PER_VCPU = 1769;

/** Of the function's memory, the share a request may peak at (both processes together). */
export const MEMORY_SHARE = 0.75;

/**
 * Resident memory of the two processes before any work, in MB: the handler
 * with the AWS SDK, and the child with Node and libvips, measured with `npm run bounds`.
 */
const BASE_RSS_MB = { handler: 90, child: 80 };

/** Of the time budget, the share the predicted transform may take: the rest is the fetch and the model's error. */
const TIME_SHARE = 0.75;

/** Predictions are multiplied by this before they are compared with a budget. */
const SAFETY = 1.25;

/**
 * The budget for a function of `memoryMb` with `timeBudgetMs` per request, for
 * a source of `sourceBytes`, beside what the handler holds between requests
 * (`handlerBytes`: the fallbacks it keeps).
 */
export function budgetFor(memoryMb: number, timeBudgetMs: number, sourceBytes: number, handlerBytes = 0): Budget {
  const allowance = memoryMb * MEMORY_SHARE - BASE_RSS_MB.handler - BASE_RSS_MB.child;
  // The source is held once by each process: its bytes cross a socket into a buffer of their size (transform-process.ts).
  return {
    memoryBytes: allowance * 1024 * 1024 - 2 * sourceBytes - handlerBytes,
    seconds: (timeBudgetMs / 1000) * TIME_SHARE * Math.min(1, memoryMb / MB_PER_VCPU),
  };
}

/** Bytes of one sample for libvips' band formats. */
const SAMPLE_BYTES: Record<string, number> = {
  uchar: 1,
  char: 1,
  ushort: 2,
  short: 2,
  uint: 4,
  int: 4,
  float: 4,
  complex: 8,
  double: 8,
  dpcomplex: 16,
};

const sampleBytes = (depth: string | undefined) => SAMPLE_BYTES[depth ?? 'uchar'] ?? 8;

/** Decode and resize, CPU seconds per source megapixel as decoded (worst case: noise, one thread). */
const DECODE_SECONDS_PER_MP: Record<SourceInfo['format'], number> = {
  jpeg: 0.06,
  png: 0.07,
  gif: 0.05,
  webp: 0.12,
  avif: 0.2,
  heic: 0.27,
  tiff: 0.1,
  svg: 0.2,
};

/**
 * HEIC's decoder, libheif in WebAssembly, beyond the decoded pixels it hands
 * over: its module, the source copied into its memory, its planes and buffers
 * per pixel it decodes (every tile of a grid, each at its coded size, and the
 * alpha plane; worst case: noise); and the module's compilation, which every
 * HEIC pays, since a child that has decoded one is replaced (heif.ts).
 */
const HEIF_DECODER = { moduleBytes: 16 * 1024 * 1024, bytesPerPixel: 14, loadSeconds: 1 };

/**
 * AVIF's decoder (libheif and dav1d in sharp's libvips), beyond the decoded
 * pixels it hands over: its frame buffers and planes, bytes per pixel of the
 * image, whatever the output's size (it has no shrink-on-load).
 */
const AVIF_DECODER_BYTES_PER_PIXEL = 16;

/**
 * A HEIF's pixels in another colour space than sRGB (an iPhone's Display P3):
 * their copy in a file that carries the profile and libvips' copy of it, per
 * channel of a pixel; and the conversion to sRGB at full size, per megapixel.
 */
const HEIF_PROFILE = { copiesPerChannel: 2, secondsPerMP: 0.04 };

/**
 * The variant's bytes in the handler, per output pixel: it receives them once
 * from the child, then answers and stores that copy. The most each encoder
 * writes with the settings of encoders.ts, at quality 100, on uniform noise.
 */
const VARIANT_BYTES_PER_PIXEL: Record<EncodedFormat, number> = {
  jpeg: 1.5,
  png: 4.1,
  webp: 2.2,
  avif: 3.3,
  gif: 1.5,
};

/** The most bytes a variant of any format takes per output pixel. */
export const MOST_VARIANT_BYTES_PER_PIXEL = Math.max(...Object.values(VARIANT_BYTES_PER_PIXEL));

/**
 * Copies of the whole file held while a JPEG that carries a gain map is read,
 * kept or not: what libvips and libultrahdr copy of it to find the map, and
 * sharp's copy of the map (measured on the largest noise file, with a map
 * as large as a source may be and with one a quarter of its sides:
 * docs/url-contract.md#hdr-gain-maps).
 */
const GAIN_MAP_FILE_COPIES = 3;

/** The transform as the model sees it: sizes in pixels, and what the decoder holds; each step prices itself from these (steps/). */
export interface Work {
  ops: Ops;
  info: SourceInfo;
  /** Pixels of one frame as libvips decodes it, after shrink-on-load, and the bytes of one of them. */
  decodedPixels: number;
  decodedPixelBytes: number;
  /** Pixels a HEIF's decoder makes to produce them (every tile of a grid, the alpha plane); the same as decodedPixels for other formats. */
  decoderPixels: number;
  /** Frames decoded and encoded. */
  frames: number;
  /** What the decoder holds beyond its pixels, in bytes: a progressive JPEG's coefficients, libheif, a colour profile's copies. */
  heldBytes: number;
  /** Output pixels of one frame, border included. */
  outputPixels: number;
}

/** Sources whose decoder produces the whole image (or every frame) at once, not line by line. */
const WHOLE_IMAGE_DECODERS: SourceInfo['format'][] = ['avif', 'webp', 'gif', 'heic'];

/**
 * The output size of one frame before its border. A trim's result is not
 * known from the header: each side is bounded as for any part of the image
 * (the side asked for, or the source's side, or anything with enlargement).
 */
function imageSize(ops: Ops, width: number, height: number, room: number): [number, number] {
  if (ops.trim !== undefined) {
    const asked = ops.fit !== 'outside';
    const side = (request: number | undefined, source: number) => (asked && request !== undefined ? request : ops.enlarge ? room : source);
    return [side(ops.width, width), side(ops.height, height)];
  }
  const size = scaledSize(ops, width, height);
  if (size) return size;
  const box: [number, number] = [ops.width as number, ops.height as number];
  // Without enlargement, cover and fill stop at the source's size; contain pads to the box.
  return ops.enlarge || ops.fit === 'contain' ? box : [Math.min(box[0], width), Math.min(box[1], height)];
}

/** Output size of one frame, as large as the ops allow, border included: the image shrinks to leave the border room within maxDimension. */
function outputSize(ops: Ops, width: number, height: number, maxDimension: number): [number, number] {
  const room = roomFor(ops, maxDimension);
  const size = imageSize(ops, width, height, room);
  const fit = Math.min(1, room / Math.max(...size));
  const border = 2 * borderWidth(ops);
  return [Math.max(1, Math.round(size[0] * fit)) + border, Math.max(1, Math.round(size[1] * fit)) + border];
}

/** The work of a transform, from the source's header and the ops. */
export function describeWork(info: SourceInfo, ops: Ops, frames: number, maxDimension: number): Work {
  const [turnedWidth, turnedHeight] = turnedSize(ops, info);
  // A crop region's size is known from the header (of a trimmed image, it is bounded by the same fractions of the source).
  const region = ops.crop ? cropRegion(ops.crop, turnedWidth, turnedHeight) : undefined;
  const [width, height] = region ? [region.width, region.height] : [turnedWidth, turnedHeight];
  const [outWidth, outHeight] = outputSize(ops, width, height, maxDimension);
  const reduction = Math.min(width / outWidth, height / outHeight);
  // sharp decodes the whole primary when it keeps a gain map.
  const shrink = info.gainMap ? 1 : shrinkOnLoad(info.format, reduction, ops);
  const decodedPixels = Math.ceil(info.width / shrink) * Math.ceil(info.height / shrink);
  let heldBytes = 0;
  // A progressive JPEG's decoder keeps every DCT coefficient, at full size whatever the shrink.
  if (info.format === 'jpeg' && info.progressive) heldBytes += info.width * info.height * info.channels * 2;
  const decoderPixels = info.decoderPixels ?? decodedPixels;
  if (info.format === 'avif') heldBytes += decodedPixels * AVIF_DECODER_BYTES_PER_PIXEL;
  if (info.format === 'heic') heldBytes += HEIF_DECODER.moduleBytes + info.bytes + decoderPixels * HEIF_DECODER.bytesPerPixel;
  if (info.colourProfile) heldBytes += decodedPixels * info.channels * HEIF_PROFILE.copiesPerChannel;
  if (info.gainMapBytes) heldBytes += info.bytes * GAIN_MAP_FILE_COPIES;
  const decodedPixelBytes = info.channels * sampleBytes(info.depth);
  return { ops, info, decodedPixels, decodedPixelBytes, decoderPixels, frames, heldBytes, outputPixels: outWidth * outHeight };
}

const megapixels = (pixels: number, frames: number) => (pixels * frames) / 1e6;

/** Each step's price for this work in `format` (steps/index.ts). */
const pricesOf = (work: Work, format: EncodedFormat) => stepPrices({ ...work, format }).map(({ price }) => price);

export function predictSeconds(work: Work, info: Pick<SourceInfo, 'format' | 'colourProfile'>, format: EncodedFormat): number {
  const decoded = megapixels(work.decodedPixels, work.frames);
  const load = (info.format === 'heic' ? HEIF_DECODER.loadSeconds : 0) + (info.colourProfile ? decoded * HEIF_PROFILE.secondsPerMP : 0);
  const steps = pricesOf(work, format).reduce((sum, price) => sum + price.seconds, 0);
  return load + megapixels(work.decoderPixels, work.frames) * DECODE_SECONDS_PER_MP[info.format] + steps;
}

export function predictBytes(work: Work, format: EncodedFormat): number {
  const prices = pricesOf(work, format);
  const { info } = work;
  // Whole-image decoders, and turns and vertical flips (which read the image out of order), hold every decoded frame at once.
  const whole =
    WHOLE_IMAGE_DECODERS.includes(info.format) || (info.format === 'png' && info.progressive) || prices.some((price) => price.holdsDecoded);
  const decoded = whole ? work.decodedPixels * work.frames * work.decodedPixelBytes : 0;
  return work.heldBytes + decoded + prices.reduce((sum, price) => sum + price.bytes, 0);
}

const megabytes = (bytes: number) => Math.ceil(bytes / 1024 / 1024);

/** What both processes hold beyond their base: the child's work (predictBytes) and the variant's copy in the handler. */
const bothProcessesBytes = (work: Work, format: EncodedFormat) =>
  predictBytes(work, format) + work.outputPixels * work.frames * VARIANT_BYTES_PER_PIXEL[format];

const fits = (work: Work, info: SourceInfo, format: EncodedFormat, budget: Budget) =>
  predictSeconds(work, info, format) * SAFETY <= budget.seconds && bothProcessesBytes(work, format) * SAFETY <= budget.memoryBytes;

/**
 * Whether `format=json`'s previews fit the budget: the first frame decoded
 * (shrunk on load where the format can) to a copy at most `side` pixels on
 * each side, and a tiny WebP of it. The rest of its answer is the header's.
 */
export function previewsFit(info: SourceInfo, side: number, budget: Budget, maxDimension: number): boolean {
  return fits(describeWork(info, { width: side, height: side, fit: 'inside' }, 1, maxDimension), info, 'webp', budget);
}

/** Whether one of `candidates` fits the budget: chooseFormat would not refuse the work. */
export const anyFits = (work: Work, info: SourceInfo, candidates: EncodedFormat[], budget: Budget) =>
  candidates.some((format) => fits(work, info, format, budget));

/**
 * The first of `candidates` (in the request's order of preference) that fits
 * the budget in time and memory. A negotiated format may fall back to a later
 * candidate; when none fits, the request is refused with what it would take.
 */
export function chooseFormat(work: Work, info: SourceInfo, candidates: EncodedFormat[], budget: Budget): EncodedFormat {
  const chosen = candidates.find((format) => fits(work, info, format, budget));
  if (chosen) return chosen;
  const last = candidates[candidates.length - 1] as EncodedFormat;
  const seconds = predictSeconds(work, info, last) * SAFETY;
  const need =
    seconds > budget.seconds
      ? `take about ${Math.ceil(seconds)} s, over the ${budget.seconds.toFixed(1)} s allowed`
      : `need about ${megabytes(bothProcessesBytes(work, last) * SAFETY)} MB, over the ${megabytes(budget.memoryBytes)} MB allowed`;
  const size = `${info.width}x${info.height}${work.frames > 1 ? ` x ${work.frames} frames` : ''}`;
  const instead = candidates.length === 1 ? 'a smaller size or another format' : 'a smaller size';
  throw new HttpError('too_costly', `Making this ${last.toUpperCase()} from a ${size} source would ${need}; ask for ${instead}.`);
}

/**
 * The shrink libvips applies while decoding (JPEG by 2, 4 or 8; WebP by any
 * factor) when the output is that much smaller, counted conservatively: it
 * keeps twice the target's resolution, as sharp does before its final resize.
 */
function shrinkOnLoad(format: SourceInfo['format'], reduction: number, ops: Ops): number {
  if (format !== 'jpeg' && format !== 'webp') return 1;
  // A step that reads the whole image at its decoded size defeats it (each says so in its record under steps/).
  if (decodesWhole(ops)) return 1;
  const shrink = Math.floor(reduction / 2);
  if (format === 'webp') return Math.max(1, shrink);
  return shrink >= 8 ? 8 : shrink >= 4 ? 4 : shrink >= 2 ? 2 : 1;
}

/** A model run on the search copy: one inference, and its load once per child. */
export interface ModelPrice {
  detection: { seconds: number; bytes: number };
  load: { seconds: number; bytes: number };
}

export const FACE_MODEL: ModelPrice = { detection: FACE_DETECTION_COST, load: FACE_MODEL_LOAD_COST };
export const SUBJECT_MODEL: ModelPrice = { detection: SUBJECT_FINDING_COST, load: SUBJECT_MODEL_LOAD_COST };

/**
 * The budget of a job in a child that holds `models` (loaded by an earlier
 * job, or about to be by this one): their resident bytes are the child's
 * from then on, beyond the base every budget counts.
 */
export const withModels = (budget: Budget, models: ModelPrice[]): Budget => ({
  ...budget,
  memoryBytes: budget.memoryBytes - models.reduce((sum, model) => sum + model.load.bytes, 0),
});

/** A model a search runs, and whether this child has loaded it already. */
export interface ModelRun {
  model: ModelPrice;
  loaded: boolean;
}

/**
 * What is left of `budget` (already withModels) once `runs` have searched the
 * image, or undefined when they do not fit: the first frame decoded to the
 * search copy once (shrunk on load where the format can, priced as a small
 * JPEG's work, a little above the raw copy's), each inference one after the
 * other, and each model's load in a child that has not loaded it. Their
 * memory is freed before the transform decodes; their CPU time is not given back.
 */
export function afterSearch(info: SourceInfo, budget: Budget, maxDimension: number, runs: ModelRun[]): Budget | undefined {
  const work = describeWork(info, { width: FACE_SEARCH_SIDE, height: FACE_SEARCH_SIDE, fit: 'inside' }, 1, maxDimension);
  const inference = runs.reduce((sum, { model, loaded }) => sum + model.detection.seconds + (loaded ? 0 : model.load.seconds), 0);
  const seconds = predictSeconds(work, info, 'jpeg') + inference;
  const bytes = predictBytes(work, 'jpeg') + Math.max(0, ...runs.map(({ model }) => model.detection.bytes));
  if (seconds * SAFETY > budget.seconds || bytes * SAFETY > budget.memoryBytes) return undefined;
  return { ...budget, seconds: budget.seconds - seconds * SAFETY };
}
