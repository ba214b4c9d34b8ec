// The transformation as an ordered list of small steps, each doing one thing
// to the sharp pipeline. sharp runs them in one pass over the decoded pixels,
// in its own fixed order (turns, trim, extract, resize, extend, blur, sharpen,
// composite); a step that needs the pixels of the steps before it (trim's
// result size, a blurred fill) ends the pass and starts the next from the
// pixels held in memory.

import sharp, { type OutputInfo, type Sharp } from 'sharp';
import { coverCrop, DEFAULT_QUALITY, type Ops, type Position } from '../../grammar';
import type { Limits } from '../config';
import { decodeError, framesToLoad, type SourceInfo } from './input';
import { autoQuality, AVIF_AUTO_QUALITY, choosesQuality, PROXY_PIXELS } from './auto-quality';
import { encode } from './encoders';
import type { EncodedFormat, FrameTiming, OutputPlan } from './output';
import { MAX_WATERMARK_PIXELS, type WatermarkImage } from '../watermarks';
import { iptcAfterEncode, iptcSegmentBytes, MAX_METADATA_BYTES, withMetadata, type KeptMetadata } from './metadata';
import { HttpError } from '../errors';
import { centredOn, faceFocus, type FaceRegion } from './face-crop';
import type { FaceBox } from './faces';

export interface StepInput {
  ops: Ops;
  info: SourceInfo;
  plan: OutputPlan;
  limits: Limits;
  watermark?: WatermarkImage;
  /** What of the source's metadata the output carries (metadata.ts). */
  metadata?: KeptMetadata;
  /** With `position=face`, the faces found, in fractions of the source as displayed (none found: the crop is `attention`'s). */
  faces?: FaceBox[];
}

/** sharp 0.35's keepGainMap, which its type declarations leave out. */
type KeepsGainMap = Sharp & { keepGainMap(): Sharp };

/** A point of an image in pixels, from its top-left corner (not rounded: a pixel's centre is at .5). */
type Point = [number, number];

/** A face's opposite corners and the point between its eyes. */
type FacePoints = [corner: Point, opposite: Point, eyes: Point];

interface Region {
  left: number;
  top: number;
  width: number;
  height: number;
}

interface StepContext extends StepInput {
  /** The image's size as the next step sees it: displayed and turned, then trimmed (the crop region is a part of it). */
  size: [number, number];
  /** The part of the image kept, as displayed: recorded by crop, cut by resize (sharp takes one extract before its resize). */
  region?: Region;
  /** The mirrors sharp makes after its extract rather than before (none with a turn): the extracted region is mirrored to match. */
  mirrorsAfterExtract: { flip: boolean; flop: boolean };
  /** The focal point (`fp`) in the image of `size`, followed through turns, mirrors and trim: the cover crop is centred on it. */
  focus?: Point;
  /** With `position=face`, each face's corners and eyes in the image of `size`, followed like `focus`. */
  facePoints?: FacePoints[];
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
interface Step {
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

type Rgba = { r: number; g: number; b: number; alpha: number };

function rgba(hex: string): Rgba {
  const channel = (i: number) => parseInt(hex.slice(i, i + 2), 16);
  return { r: channel(0), g: channel(2), b: channel(4), alpha: hex.length === 8 ? channel(6) / 255 : 1 };
}

const WHITE: Rgba = { r: 255, g: 255, b: 255, alpha: 1 };
const TRANSPARENT: Rgba = { r: 0, g: 0, b: 0, alpha: 0 };

/** Contain's padding and the colour under transparent pixels: white for JPEG, transparent otherwise. */
function background({ ops, plan }: StepContext): Rgba {
  if (ops.background) return rgba(ops.background);
  return plan.format === 'jpeg' ? WHITE : TRANSPARENT;
}

const SHARP_POSITIONS: Record<Position, string> = {
  center: 'centre',
  top: 'top',
  right: 'right',
  bottom: 'bottom',
  left: 'left',
  'top-left': 'left top',
  'top-right': 'right top',
  'bottom-left': 'left bottom',
  'bottom-right': 'right bottom',
  entropy: 'entropy',
  attention: 'attention',
  face: 'attention', // without a face found (transform.ts); with faces, the crop is centred on them
};

/** The source's displayed size after the `rotate` op. */
export function turnedSize(ops: Ops, info: Pick<SourceInfo, 'width' | 'height'>): [number, number] {
  return ops.rotate === 90 || ops.rotate === 270 ? [info.height, info.width] : [info.width, info.height];
}

/** `point` of an image of `size` turned clockwise by `angle`. */
function turnPoint([x, y]: Point, [width, height]: [number, number], angle: number): Point {
  if (angle === 90) return [height - y, x];
  if (angle === 180) return [width - x, height - y];
  if (angle === 270) return [y, width - x];
  return [x, y];
}

/** `point` of an image of `size` mirrored top-bottom (`flip`) and left-right (`flop`). */
const mirrorPoint = ([x, y]: Point, [width, height]: [number, number], { flip, flop }: StepContext['mirrorsAfterExtract']): Point => [
  flop ? width - x : x,
  flip ? height - y : y,
];

/** The border's width in pixels (0 without one). */
export const borderWidth = (ops: Ops) => (ops.border ? parseInt(ops.border, 10) : 0);

/** The output's largest side without its border: the border and the image together stay within maxDimension. */
export const roomFor = (ops: Ops, maxDimension: number) => maxDimension - 2 * borderWidth(ops);

/** `crop`'s fractions as pixels of an image of `width` x `height`: at least one pixel, inside the image. */
export function cropRegion(crop: string, width: number, height: number): Region {
  const [x, y, w, h] = crop.split(',').map(Number) as [number, number, number, number];
  const left = Math.min(width - 1, Math.round(x * width));
  const top = Math.min(height - 1, Math.round(y * height));
  return {
    left,
    top,
    width: Math.max(1, Math.round((x + w) * width) - left),
    height: Math.max(1, Math.round((y + h) * height) - top),
  };
}

/** The requested box, scaled down when a border would take the output past maxDimension; a side not asked for stays undefined. */
function requestedBox(ops: Ops, room: number): [number | undefined, number | undefined] {
  const shrink = room / Math.max(ops.width ?? 0, ops.height ?? 0);
  if (!(shrink < 1)) return [ops.width, ops.height];
  const side = (asked: number | undefined) => (asked === undefined ? undefined : Math.max(1, Math.round(asked * shrink)));
  return [side(ops.width), side(ops.height)];
}

/** Where a side of `room` spare pixels puts its offset for `position`: 0 at `low`, all of it at `high`, else half. */
function along(position: Position, low: string, high: string, room: number): number {
  return position.includes(low) ? 0 : position.includes(high) ? room : Math.floor(room / 2);
}

/** The size sharp would produce, for the fits that scale rather than fill a box. */
export function scaledSize(ops: Ops, width: number, height: number): [number, number] | undefined {
  const scales: number[] = [];
  if (ops.width !== undefined) scales.push(ops.width / width);
  if (ops.height !== undefined) scales.push(ops.height / height);
  const boxed = scales.length === 2;
  if (boxed && ops.fit !== 'inside' && ops.fit !== 'outside') return undefined; // cover, contain, fill: the box
  let scale = scales.length === 0 ? 1 : ops.fit === 'outside' ? Math.max(...scales) : Math.min(...scales);
  if (!ops.enlarge) scale = Math.min(scale, 1);
  return [width * scale, height * scale];
}

/** libvips' largest image side: scaling up past it fails, however small the output. */
const MAX_COORDINATE = 10_000_000;

/**
 * For an enlarging cover crop of an extreme aspect ratio (a 10000x1 source
 * to 8192x8192), the region of the source to crop before scaling, because
 * sharp would first scale the whole source past libvips' limit. It is cut at
 * the focal point or the requested position; entropy and attention fall back to the centre.
 */
function preCrop(ops: Ops, width: number, height: number, focus: Point | undefined) {
  if (ops.width === undefined || ops.height === undefined || (ops.fit ?? 'cover') !== 'cover' || !ops.enlarge) return undefined;
  const scale = Math.max(ops.width / width, ops.height / height);
  if (Math.max(width, height) * scale <= MAX_COORDINATE) return undefined;
  const cropWidth = Math.min(width, Math.max(1, Math.round(ops.width / scale)));
  const cropHeight = Math.min(height, Math.max(1, Math.round(ops.height / scale)));
  const position = ops.position ?? 'center';
  return {
    left: focus ? centredOn(focus[0], cropWidth, width) : along(position, 'left', 'right', width - cropWidth),
    top: focus ? centredOn(focus[1], cropHeight, height) : along(position, 'top', 'bottom', height - cropHeight),
    width: cropWidth,
    height: cropHeight,
  };
}

/**
 * A cover crop centred on `focus` (a point of the `width` x `height` image):
 * the whole image scaled as cover scales it, then the box cut from it around
 * the point. sharp's own cover does the same, at a named position; this keeps
 * its shrink-on-load, which a cut before scaling would lose.
 */
function focusedCover(
  image: Sharp,
  [width, height]: [number, number],
  [boxWidth, boxHeight]: [number, number],
  focus: Point,
  enlarge: boolean,
): void {
  const scale = Math.min(Math.max(boxWidth / width, boxHeight / height), enlarge ? Infinity : 1);
  const scaledWidth = Math.max(1, Math.round(width * scale));
  const scaledHeight = Math.max(1, Math.round(height * scale));
  // Without enlargement a small source keeps its size and the box shrinks to it, as in sharp's cover.
  const cropWidth = Math.min(boxWidth, scaledWidth);
  const cropHeight = Math.min(boxHeight, scaledHeight);
  image.resize({ width: scaledWidth, height: scaledHeight, fit: 'fill' }).extract({
    left: centredOn(focus[0] * scale, cropWidth, scaledWidth),
    top: centredOn(focus[1] * scale, cropHeight, scaledHeight),
    width: cropWidth,
    height: cropHeight,
  });
}

/** The part of a `width` x `height` image a cover crop to `box` keeps, in the image's pixels (as focusedCover cuts it). */
function coverWindow([width, height]: [number, number], [boxWidth, boxHeight]: [number, number], enlarge: boolean): [number, number] {
  const scale = Math.min(Math.max(boxWidth / width, boxHeight / height), enlarge ? Infinity : 1);
  return [Math.min(width, boxWidth / scale), Math.min(height, boxHeight / scale)];
}

/** Faces given by their points, as regions of the part `cropped` of the image (all of it without one), clipped to it; those left outside dropped. */
function facesIn(faces: FacePoints[], cropped: Region | undefined, [width, height]: [number, number]): FaceRegion[] {
  const [left, top] = cropped ? [cropped.left, cropped.top] : [0, 0];
  return faces
    .map(([a, b, eyes]) => ({
      left: Math.max(0, Math.min(a[0], b[0]) - left),
      top: Math.max(0, Math.min(a[1], b[1]) - top),
      right: Math.min(width, Math.max(a[0], b[0]) - left),
      bottom: Math.min(height, Math.max(a[1], b[1]) - top),
      eyes: [eyes[0] - left, eyes[1] - top] as Point,
    }))
    .filter((face) => face.right > face.left && face.bottom > face.top);
}

/**
 * The point a cover crop is centred on, in the part of the image kept (the
 * crop region, or all of it) of `size`: the focal point, or the faces' (with
 * faces, a window of the box's shape is placed on them).
 */
function focusIn({ ops, facePoints, focus, region }: StepContext, size: [number, number], room: number): Point | undefined {
  if (facePoints && ops.width !== undefined && ops.height !== undefined) {
    const window = coverWindow(size, requestedBox(ops, room) as [number, number], Boolean(ops.enlarge));
    return faceFocus(facesIn(facePoints, region, size), size, window);
  }
  return focus && region ? [focus[0] - region.left, focus[1] - region.top] : focus;
}

/** `inner`, a region of `outer` (or of the whole image without one), in the whole image's coordinates. */
function within(outer: Region | undefined, inner: Region | undefined): Region | undefined {
  if (!outer || !inner) return outer ?? inner;
  return { left: outer.left + inner.left, top: outer.top + inner.top, width: inner.width, height: inner.height };
}

/** `region` of the image as displayed, in the coordinates sharp extracts from (before the mirrors it makes after). */
function unmirrored(region: Region, { size, mirrorsAfterExtract }: StepContext): Region {
  const [width, height] = size;
  return {
    left: mirrorsAfterExtract.flop ? width - region.left - region.width : region.left,
    top: mirrorsAfterExtract.flip ? height - region.top - region.height : region.top,
    width: region.width,
    height: region.height,
  };
}

const NO_MIRRORS = { flip: false, flop: false };

/** Pixels in memory, decoded as 8-bit sRGB bands by the pipeline so far. */
type Pixels = { data: Buffer; info: OutputInfo };

/** Runs the pipeline so far into memory; a decode failure there is the source's, as at the end. */
async function pixels(image: Sharp, limits: Limits): Promise<Pixels> {
  return image
    .raw()
    .toBuffer({ resolveWithObject: true })
    .catch((error: unknown) => {
      throw decodeError(error, limits);
    });
}

/** The pipeline so far in memory, keeping an animation's timing (which pixels do not carry) for the encode. */
async function inMemory(image: Sharp, context: StepContext): Promise<Pixels> {
  const source = context.plan.animated && !context.timing ? await image.metadata() : undefined;
  const made = await pixels(image, context.limits);
  // The source's timing, for the frames loaded.
  if (source) context.timing = { delay: source.delay?.slice(0, made.info.pages), loop: source.loop };
  return made;
}

const pipelineOf = ({ data, info }: Pixels) =>
  sharp(data, {
    raw: { width: info.width, height: info.height, channels: info.channels, ...(info.pageHeight ? { pageHeight: info.pageHeight } : {}) },
  });

/** Longest side of the copy of the image that a blurred fill is made from, and its blur. */
const BACKDROP_SIDE = 48;
const BACKDROP_SIGMA = 2;

const FREE: Price = { seconds: 0, bytes: 0 };

/** CPU seconds at `rate` seconds per megapixel, for `pixels` in each of `frames`. */
const perMegapixel = (rate: number, pixels: number, frames = 1) => (rate * pixels * frames) / 1e6;

/**
 * CPU seconds per megapixel of what the steps add, on one libvips thread, at
 * the worst case of noise and of each op's largest value (measured with
 * `npx tsx scripts/bench/op-prices.ts`): of the decoded image for what runs
 * before the resize, of the output for what runs after it. Blur's is per
 * band, and grows with sigma (its mask's width); sharpen's fixed part is its
 * conversion to LAB and back, and `reblur` the blur's own price again, per
 * unit and per sigma of sharpen, when they share a pipeline.
 */
const RATES = {
  turn: 0.04,
  mirror: 0.02,
  trim: 0.5,
  flatten: 0.01,
  resize: 0.04,
  fill: 0.12,
  blur: { perBand: 0.004, perBandSigma: 0.0005 },
  sharpen: { fixed: 0.08, perSigma: 0.015, reblur: 0.8, reblurPerSigma: 0.5 },
  cmyk: 0.1,
  grayscale: 0.02,
  composite: 0.1,
  adjust: { modulate: 0.1, gamma: 0.03 },
  watermarkDecode: 0.1,
  border: 0.01,
  gainMapDecode: 0.06, // a JPEG's (budget.ts)
};

type LossyFormat = keyof typeof DEFAULT_QUALITY;

/** Whether `max_bytes` lowers the quality of this output: only lossy formats have one. */
const capsBytes = (ops: Ops, format: EncodedFormat) => ops.max_bytes !== undefined && format in DEFAULT_QUALITY;

/** Most encodes a `max_bytes` search makes: the quality asked (or chosen), the lowest, and two between. */
export const MAX_BYTES_ENCODES = 4;

/**
 * The encode at the highest quality tried that fits in `room` bytes: the
 * quality asked first, then 1, then halfway between, then between the
 * highest that fits and the lowest that does not where the bytes would reach
 * `room` if their logarithm grew in a straight line with the quality. When even quality 1
 * does not fit, a 422 that says how small it came.
 */
async function encodedWithin(
  room: number,
  start: number,
  encodeAt: (quality: number) => Promise<Buffer>,
): Promise<{ made: Buffer; encodes: number }> {
  const first = await encodeAt(start);
  if (first.length <= room) return { made: first, encodes: 1 };
  const lowest = start === 1 ? first : await encodeAt(1);
  if (lowest.length > room) {
    throw new HttpError(
      'max_bytes_unreachable',
      `This output is ${lowest.length} bytes at quality 1, over the ${room} max_bytes allows; ask for a smaller size or more bytes.`,
    );
  }
  let fits = { quality: 1, made: lowest };
  let over = { quality: start, made: first };
  let tried = 2;
  for (; tried < MAX_BYTES_ENCODES && over.quality - fits.quality > 1; tried++) {
    // Halving first (quality 1 is far from the line of the others), then along the line.
    const share = tried === 2 ? 0.5 : Math.log(room / fits.made.length) / Math.log(over.made.length / fits.made.length);
    const quality = Math.min(
      over.quality - 1,
      Math.max(fits.quality + 1, Math.floor(fits.quality + share * (over.quality - fits.quality))),
    );
    const made = await encodeAt(quality);
    if (made.length <= room) fits = { quality, made };
    else over = { quality, made };
  }
  return { made: fits.made, encodes: tried };
}

/**
 * Keeping metadata, CPU seconds: reading and writing its blocks (capped, so a
 * constant), and per output megapixel what the encode costs more when the
 * output carries them, as measured by the op-price test with the suite running.
 */
const METADATA_SECONDS = 0.01;
const METADATA_SECONDS_PER_MP = 0.02;

/**
 * Encode, CPU seconds per output megapixel, with the settings of encoders.ts on
 * one thread: the worst case (noise) for every format but GIF. GIF's palette
 * search costs 20 to 50 times more on noise than on photos or drawings, so a
 * worst case would refuse ordinary animations: its rate is that of smooth
 * photographic frames, and the deadline kill bounds the rest.
 */
const ENCODE_SECONDS_PER_MP: Record<EncodedFormat, number> = {
  jpeg: 0.09,
  png: 0.1,
  webp: 0.32,
  avif: 1.25,
  gif: 1.7,
};

/**
 * How much more an encode costs above the format's default quality (the
 * rates are at the default): AVIF's by half above 60 and 1.6 times from 80
 * (it falls again near lossless), WebP's 1.3 times above 90; quality=auto
 * reaches AVIF_AUTO_QUALITY.max.
 */
function qualityFactor(format: EncodedFormat, asked: Ops['quality']): number {
  const quality = asked === 'auto' ? AVIF_AUTO_QUALITY.max : asked;
  if (quality === undefined) return 1;
  if (format === 'avif') return quality >= 80 ? 1.6 : quality > 60 ? 1.5 : 1;
  return format === 'webp' && quality > 90 ? 1.3 : 1;
}

/** What an encoder holds beyond the pipeline, bytes per output pixel (its buffers and the encoded output). */
const ENCODER_BYTES_PER_PIXEL: Record<EncodedFormat, number> = {
  jpeg: 7.5,
  png: 4,
  webp: 19,
  avif: 24,
  gif: 33,
};

/** Bands of the output's pixels: alpha is kept but in JPEG. */
const outputBands = ({ info, format }: PricedWork) => (info.hasAlpha && format !== 'jpeg' ? 4 : 3);

const blurSeconds = (work: PricedWork) =>
  perMegapixel((RATES.blur.perBand + RATES.blur.perBandSigma * (work.ops.blur ?? 0)) * outputBands(work), work.outputPixels, work.frames);

/**
 * Whether the blurred image is made in memory before it is sharpened: sharpen's
 * mask would otherwise ask for the blur again over every overlap, at a cost of
 * their product. Frames stay in one pipeline, which keeps their timing.
 */
const blurredIntoMemory = (ops: Ops, frames: number) => ops.blur !== undefined && ops.sharpen !== undefined && frames === 1;

/**
 * Whether sharp would trim the image as stored, turning and mirroring it
 * after: it turns first only for a `rotate` (trim starts a first-frame pass).
 */
const trimsStored = (ops: Ops, info: SourceInfo) =>
  ops.rotate === undefined && (info.orientation !== 1 || ops.flip === true || ops.flop === true);

/** A border follows with no watermark between, which would hold the image in memory before it. */
const bordered = (ops: Ops) => ops.border !== undefined && ops.watermark === undefined;

const adjusts = (ops: Ops) =>
  ops.brightness !== undefined || ops.contrast !== undefined || ops.saturation !== undefined || ops.gamma !== undefined;

/**
 * brightness, contrast and saturation as one sharp modulate, in CIE LCh:
 * lightness times brightness, then spread around mid-grey (L* 50) by
 * contrast; chroma times saturation. Undefined when none is asked for.
 */
function modulation(ops: Ops): { brightness: number; saturation: number; lightness: number } | undefined {
  if (ops.brightness === undefined && ops.contrast === undefined && ops.saturation === undefined) return undefined;
  const contrast = ops.contrast ?? 1;
  return { brightness: (ops.brightness ?? 1) * contrast, saturation: ops.saturation ?? 1, lightness: 50 * (1 - contrast) };
}

/** The pipeline, in order. Orientation first, so every later step sees the image as displayed. */
const STEPS: Step[] = [
  {
    name: 'orient',
    price: ({ info, decodedPixels, frames }) =>
      info.orientation === 1
        ? FREE
        : { seconds: perMegapixel(RATES.turn, decodedPixels, frames), bytes: 0, holdsDecoded: info.orientation >= 3 },
    apply(image) {
      image.autoOrient();
    },
  },

  {
    name: 'rotate',
    price: ({ ops, decodedPixels, frames }) =>
      ops.rotate === undefined ? FREE : { seconds: perMegapixel(RATES.turn, decodedPixels, frames), bytes: 0, holdsDecoded: true },
    firstFrameOnly: (ops) => ops.rotate === 90 || ops.rotate === 270,
    apply(image, { ops, plan }) {
      // Frames can only be turned by halves: a half turn is a flip plus a flop (see mirror).
      if (ops.rotate && !plan.animated) image.rotate(ops.rotate);
    },
  },

  {
    name: 'mirror',
    price: ({ ops, decodedPixels, frames }) =>
      ops.flip || ops.flop
        ? { seconds: perMegapixel(RATES.mirror, decodedPixels, frames), bytes: 0, holdsDecoded: ops.flip === true }
        : FREE,
    apply(image, context) {
      const { ops, plan } = context;
      const halfTurn = plan.animated && ops.rotate === 180;
      const flip = Boolean(ops.flip) !== halfTurn;
      const flop = Boolean(ops.flop) !== halfTurn;
      if (flip) image.flip();
      if (flop) image.flop();
      // With a turn sharp makes its mirrors before extracting; without, after.
      const turned = ops.rotate !== undefined && !plan.animated;
      context.mirrorsAfterExtract = turned ? NO_MIRRORS : { flip, flop };
      // sharp mirrors before it turns.
      const displayed: [number, number] = [context.info.width, context.info.height];
      follow(context, (point) => turnPoint(mirrorPoint(point, displayed, { flip, flop }), displayed, turned ? ops.rotate! : 0));
    },
  },

  {
    name: 'trim',
    price: ({ ops, info, decodedPixels, decodedPixelBytes }) => {
      if (ops.trim === undefined) return FREE;
      // It holds the decoded image to find its edges and its result as 8-bit pixels (a first frame only), and before them the image as displayed when sharp would trim the stored one.
      const copies = trimsStored(ops, info) ? 2 : 1;
      return { seconds: perMegapixel(RATES.trim, decodedPixels), bytes: decodedPixels * (decodedPixelBytes + copies * info.channels) };
    },
    carriesGainMap: (ops) => ops.trim === undefined,
    firstFrameOnly: (ops) => ops.trim !== undefined,
    decodesWhole: (ops) => ops.trim !== undefined,
    async apply(image, context) {
      const { ops, info, limits } = context;
      if (ops.trim === undefined) return undefined;
      // The corner trimmed by is the displayed one: an image sharp would trim as stored is turned and mirrored in memory first.
      const displayed = trimsStored(ops, info) ? pipelineOf(await pixels(image, limits)) : image;
      // The later steps need the trimmed size, known only from the pixels. A uniform image is kept whole.
      const trimmed = await pixels(displayed.trim({ threshold: ops.trim }), limits);
      const { width, height, trimOffsetLeft = 0, trimOffsetTop = 0 } = trimmed.info;
      // sharp's offsets are negative: where the kept part starts, as seen from it.
      follow(context, (point) => [point[0] + trimOffsetLeft, point[1] + trimOffsetTop]);
      context.size = [width, height];
      context.mirrorsAfterExtract = NO_MIRRORS;
      return pipelineOf(trimmed);
    },
  },

  {
    name: 'crop',
    price: () => FREE, // cut by resize's extract; the shrink-on-load it defeats is counted in the decode (budget.ts)
    decodesWhole: (ops) => ops.crop !== undefined,
    apply(_image, context) {
      // Recorded here, cut by resize: sharp takes one extract before its resize, which resize may need for itself.
      if (context.ops.crop !== undefined) context.region = cropRegion(context.ops.crop, ...context.size);
    },
  },

  {
    name: 'flatten',
    price: ({ ops, info, format, decodedPixels, frames }) =>
      info.hasAlpha && (format === 'jpeg' || ops.background)
        ? { seconds: perMegapixel(RATES.flatten, decodedPixels, frames), bytes: 0 }
        : FREE,
    apply(image, context) {
      const colour = background(context);
      // JPEG has no alpha; elsewhere only an opaque background asked for fills transparent pixels.
      if (context.info.hasAlpha && colour.alpha === 1 && (context.plan.format === 'jpeg' || context.ops.background)) {
        image.flatten({ background: colour });
      }
    },
  },

  {
    name: 'resize',
    price: ({ ops, outputPixels, frames }) =>
      // Shrinking is counted in the decode's rate; scaling up runs per output pixel.
      ops.width === undefined && ops.height === undefined ? FREE : { seconds: perMegapixel(RATES.resize, outputPixels, frames), bytes: 0 },
    // sharp cannot cut the gain map where entropy or attention crop (a face found is a focal point).
    carriesGainMap: (ops) => !(coverCrop(ops) && !ops.fp && (ops.position === 'entropy' || ops.position === 'attention')),
    // Entropy and attention score the whole image.
    decodesWhole: (ops) => ops.position === 'entropy' || ops.position === 'attention',
    apply(image, context) {
      const { ops, limits } = context;
      const { region: cropped } = context;
      const [width, height] = cropped ? [cropped.width, cropped.height] : context.size;
      const room = roomFor(ops, limits.maxDimension);
      const focus = focusIn(context, [width, height], room);
      const crop = preCrop(ops, width, height, focus);
      const region = within(cropped, crop);
      if (region) image.extract(unmirrored(region, context));
      const scaled = scaledSize(ops, width, height);
      // Keep the output within maxDimension even when the request leaves a side to the aspect ratio.
      if (scaled && Math.max(...scaled) > room) {
        const shrink = room / Math.max(...scaled);
        image.resize({
          width: Math.max(1, Math.round(scaled[0] * shrink)),
          height: Math.max(1, Math.round(scaled[1] * shrink)),
          fit: 'fill',
        });
        return;
      }
      if (ops.width === undefined && ops.height === undefined) return;
      const [boxWidth, boxHeight] = requestedBox(ops, room);
      if (crop) {
        image.resize({ width: boxWidth, height: boxHeight, fit: 'fill' });
        return;
      }
      // A focal point comes only with a cover crop (the grammar drops it elsewhere).
      if (focus) {
        focusedCover(image, [width, height], [boxWidth!, boxHeight!], focus, Boolean(ops.enlarge));
        return;
      }
      image.resize({
        width: boxWidth,
        height: boxHeight,
        // A blurred fill is drawn under the image by the next step.
        fit: ops.fill === 'blur' ? 'inside' : (ops.fit ?? 'cover'),
        position: SHARP_POSITIONS[ops.position ?? 'center'],
        withoutEnlargement: !ops.enlarge,
        background: background(context),
      });
    },
  },

  {
    name: 'fill',
    price: ({ ops, outputPixels }) =>
      // The canvas and the image on it, as 8-bit pixels with alpha at most (a first frame only).
      ops.fill === 'blur' ? { seconds: perMegapixel(RATES.fill, outputPixels), bytes: 2 * outputPixels * 4 } : FREE,
    carriesGainMap: (ops) => ops.fill !== 'blur',
    firstFrameOnly: (ops) => ops.fill === 'blur',
    async apply(image, context) {
      const { ops, limits } = context;
      if (ops.fill !== 'blur') return undefined;
      const [width, height] = requestedBox(ops, roomFor(ops, limits.maxDimension)) as [number, number];
      const inner = await pixels(image, limits);
      // Blurring a small copy and scaling it up to the box costs the same at any size, and the scaling smooths it further.
      const scale = BACKDROP_SIDE / Math.max(width, height);
      const small = await pixels(
        pipelineOf(inner)
          .resize(Math.max(1, Math.round(width * scale)), Math.max(1, Math.round(height * scale)), { fit: 'cover' })
          .blur(BACKDROP_SIGMA),
        limits,
      );
      const position = ops.position ?? 'center';
      const raw = { width: inner.info.width, height: inner.info.height, channels: inner.info.channels };
      const placed = {
        input: inner.data,
        raw,
        left: along(position, 'left', 'right', width - raw.width),
        top: along(position, 'top', 'bottom', height - raw.height),
      };
      // The whole canvas in memory, so that blur, sharpen and grayscale apply to it all (sharp composites after them).
      const canvas = await pixels(pipelineOf(small).resize(width, height, { fit: 'fill' }).composite([placed]), limits);
      context.size = [width, height];
      return pipelineOf(canvas);
    },
  },

  {
    name: 'blur',
    price: (work) =>
      // libvips keeps a copy of its input for the mask's reach; a still that is sharpened after is blurred into memory.
      work.ops.blur === undefined
        ? FREE
        : {
            seconds: blurSeconds(work),
            bytes:
              work.outputPixels * work.frames * outputBands(work) + (blurredIntoMemory(work.ops, work.frames) ? work.outputPixels * 4 : 0),
          },
    carriesGainMap: (ops) => !blurredIntoMemory(ops, 1),
    async apply(image, { ops, info, plan, limits }) {
      if (ops.blur === undefined) return undefined;
      image.blur(ops.blur);
      const frames = plan.animated ? framesToLoad(info, limits) : 1;
      return blurredIntoMemory(ops, frames) ? pipelineOf(await pixels(image, limits)) : undefined;
    },
  },

  {
    name: 'sharpen',
    price: (work) => {
      const { ops, outputPixels, frames } = work;
      if (ops.sharpen === undefined) return FREE;
      const own = perMegapixel(RATES.sharpen.fixed + RATES.sharpen.perSigma * ops.sharpen, outputPixels, frames);
      // On a blur still in the pipeline, its mask asks for the blur again over every overlap.
      const recomputed =
        ops.blur !== undefined && !blurredIntoMemory(ops, frames)
          ? blurSeconds(work) * (RATES.sharpen.reblur + RATES.sharpen.reblurPerSigma * ops.sharpen)
          : 0;
      return { seconds: own + recomputed, bytes: 0 };
    },
    apply(image, { ops }) {
      if (ops.sharpen !== undefined) image.sharpen({ sigma: ops.sharpen });
    },
  },

  {
    name: 'colour',
    price: ({ ops, info, decodedPixels, outputPixels, frames }) => {
      // CMYK is converted to sRGB through its profile as decoded; grayscale runs on the output.
      const cmyk = info.channels - (info.hasAlpha ? 1 : 0) === 4;
      const seconds =
        (cmyk ? perMegapixel(RATES.cmyk, decodedPixels, frames) : 0) +
        (ops.grayscale ? perMegapixel(RATES.grayscale, outputPixels, frames) : 0);
      return seconds ? { seconds, bytes: 0 } : FREE;
    },
    apply(image, { ops }) {
      // 8-bit sRGB for every source (CMYK, 16-bit, wide gamut); grayscale is its own colourspace.
      if (ops.grayscale) image.grayscale();
      else image.toColourspace('srgb');
    },
  },

  {
    name: 'adjust',
    price: (work) => {
      const { ops, outputPixels, frames } = work;
      if (!adjusts(ops)) return FREE;
      const rate = (modulation(ops) ? RATES.adjust.modulate : 0) + (ops.gamma !== undefined ? RATES.adjust.gamma : 0);
      const passes = ops.gamma === undefined ? (bordered(ops) ? 1 : 0) : bordered(ops) ? 2 : 1;
      return { seconds: perMegapixel(rate, outputPixels, frames), bytes: passes * outputPixels * frames * outputBands(work) };
    },
    // A brighter or greyer SDR image would need another gain map, which no step makes.
    carriesGainMap: (ops) => !adjusts(ops),
    async apply(image, context) {
      const { ops, limits } = context;
      const modulated = modulation(ops);
      // In this pass: sharp modulates after the resize and blur, before it sharpens.
      if (modulated) image.modulate(modulated);
      // sharp adds a border before it modulates, and darkens by a gamma only before its resize: those take a pass of their own.
      if (ops.gamma === undefined && !(modulated && bordered(ops))) return undefined;
      const adjusted = pipelineOf(await inMemory(image, context));
      if (ops.gamma === undefined) return adjusted;
      // sharp darkens by its first exponent before the other steps and lightens by the second after them.
      adjusted.gamma(ops.gamma < 1 ? 1 / ops.gamma : 1, Math.max(1, ops.gamma));
      return bordered(ops) ? pipelineOf(await pixels(adjusted, limits)) : adjusted;
    },
  },

  {
    name: 'watermark',
    price: ({ ops, outputPixels }) =>
      // The image it is drawn on as pixels (under a border, the result too), the mark decoded and scaled (a first frame only).
      ops.watermark === undefined
        ? FREE
        : {
            seconds: perMegapixel(RATES.composite, outputPixels) + perMegapixel(RATES.watermarkDecode, MAX_WATERMARK_PIXELS),
            bytes: 2 * outputPixels * 4 + 2 * MAX_WATERMARK_PIXELS * 4,
          },
    carriesGainMap: (ops) => ops.watermark === undefined,
    firstFrameOnly: (ops) => ops.watermark !== undefined,
    async apply(image, context) {
      const { watermark: mark, limits } = context;
      if (!mark) return undefined;
      // Drawn on the image as it stands, blurred and turned grey or not, and inside the border that follows.
      const canvas = await pixels(image, limits);
      const { width, height } = canvas.info;
      const { position, margin: marginShare, size, opacity } = mark.placement;
      const margin = Math.round(marginShare * Math.min(width, height));
      const room = (side: number) => Math.max(1, side - 2 * margin);
      const overlay = await sharp(mark.bytes, { limitInputPixels: MAX_WATERMARK_PIXELS })
        .resize({ width: Math.min(room(width), Math.max(1, Math.round(size * width))), height: room(height), fit: 'inside' })
        .toColourspace('srgb')
        .ensureAlpha()
        .raw()
        .toBuffer({ resolveWithObject: true });
      const { channels } = overlay.info;
      for (let alpha = channels - 1; alpha < overlay.data.length; alpha += channels) {
        overlay.data[alpha] = Math.round((overlay.data[alpha] as number) * opacity);
      }
      const placed = {
        input: overlay.data,
        raw: { width: overlay.info.width, height: overlay.info.height, channels },
        left: margin + along(position, 'left', 'right', room(width) - overlay.info.width),
        top: margin + along(position, 'top', 'bottom', room(height) - overlay.info.height),
      };
      const composited = pipelineOf(canvas).composite([placed]);
      // Under a border, in memory again: sharp would composite after the border's extend.
      return context.ops.border ? pipelineOf(await pixels(composited, limits)) : composited;
    },
  },

  {
    name: 'border',
    price: ({ ops, outputPixels, frames }) => (ops.border ? { seconds: perMegapixel(RATES.border, outputPixels, frames), bytes: 0 } : FREE),
    apply(image, { ops }) {
      // sharp extends before it blurs and sharpens, so those soften the border's inner edge; grayscale leaves its colour.
      if (!ops.border) return;
      const width = borderWidth(ops);
      image.extend({
        top: width,
        bottom: width,
        left: width,
        right: width,
        background: rgba(ops.border.slice(ops.border.indexOf(',') + 1)),
      });
    },
  },

  {
    name: 'gain map',
    price: ({ info, outputPixels }) => {
      const map = info.gainMap;
      if (!map) return FREE;
      const mapPixels = map.width * map.height;
      const mapOutput = outputPixels / map.scale ** 2;
      return {
        // Decoded twice: checked (gain-map.ts), then by libultrahdr; and encoded.
        seconds: 2 * perMegapixel(RATES.gainMapDecode, mapPixels) + perMegapixel(ENCODE_SECONDS_PER_MP.jpeg, mapOutput),
        // The map decoded (three bands at most) and encoded; the output held whole, four bytes a pixel, for libultrahdr's encoder.
        bytes: mapPixels * 3 + mapOutput * ENCODER_BYTES_PER_PIXEL.jpeg + outputPixels * 4,
      };
    },
    apply(image, { info }) {
      // Kept only where every step carries it (transform.ts); sharp then turns, cuts, scales and writes it with the image.
      if (info.gainMap) (image as KeepsGainMap).keepGainMap();
    },
  },

  {
    name: 'output',
    price: (work) => {
      const { format, outputPixels, frames, ops } = work;
      // quality=auto holds the output as pixels (alpha at most) and a proxy of them, and encodes the proxy first.
      const proxy = choosesQuality(ops.quality, format, frames > 1) ? Math.min(PROXY_PIXELS, outputPixels) : 0;
      // max_bytes holds the output as pixels and the smallest encode that fits, and encodes up to MAX_BYTES_ENCODES times.
      const capped = capsBytes(ops, format);
      const encodes = capped ? MAX_BYTES_ENCODES : 1;
      const held = (proxy ? (outputPixels + proxy) * 4 : 0) + (capped ? outputPixels * frames * (4 + 3) : 0);
      // The source's metadata blocks read and written anew, at their caps: a copy of each on either side.
      const metadata =
        ops.metadata === undefined
          ? FREE
          : {
              seconds: METADATA_SECONDS + perMegapixel(METADATA_SECONDS_PER_MP, outputPixels * frames),
              bytes: 2 * (MAX_METADATA_BYTES.exif + MAX_METADATA_BYTES.xmp + MAX_METADATA_BYTES.iptc),
            };
      return {
        seconds:
          perMegapixel(ENCODE_SECONDS_PER_MP[format] * qualityFactor(format, ops.quality), encodes * outputPixels * frames + proxy) +
          metadata.seconds,
        bytes: outputPixels * frames * ENCODER_BYTES_PER_PIXEL[format] + held + metadata.bytes,
      };
    },
    // A search for max_bytes encodes the pixels in memory.
    carriesGainMap: (ops) => !capsBytes(ops, 'jpeg'),
    async apply(image, context) {
      const { ops, plan, limits, metadata } = context;
      // The timing as it stands at each encode: set once the frames are in memory.
      const encodeAt = (pipeline: Sharp, quality?: number) =>
        withMetadata(encode(pipeline, { ...plan, timing: context.timing }, quality), metadata);
      const auto = choosesQuality(ops.quality, plan.format, plan.animated);
      const asked = ops.quality === 'auto' ? undefined : ops.quality;
      if (!auto && !capsBytes(ops, plan.format)) {
        encodeAt(image, asked);
        return undefined;
      }
      // The image in memory once: a proxy of it is encoded to choose the quality, or the whole at each quality tried.
      const made = await inMemory(image, context);
      const quality = auto
        ? await autoQuality(made, (proxy, trial) => encode(proxy, plan, trial))
        : (asked ?? DEFAULT_QUALITY[plan.format as LossyFormat]);
      if (!capsBytes(ops, plan.format)) return encodeAt(pipelineOf(made), quality);
      // The IPTC block is added after the encode (transform.ts).
      const iptc = iptcAfterEncode(metadata, plan.format, context.info.gainMap !== undefined);
      const room = ops.max_bytes! - (iptc ? iptcSegmentBytes(iptc) : 0);
      const { made: data, encodes } = await encodedWithin(room, quality, (trial) =>
        encodeAt(pipelineOf(made), trial)
          .toBuffer()
          .catch((error: unknown) => {
            throw decodeError(error, limits);
          }),
      );
      context.encoded = { data, width: made.info.width, height: made.info.pageHeight ?? made.info.height, encodes };
      return undefined;
    },
  },
];

/** Moves the focal point and the faces' points as a step moves the image's pixels. */
function follow(context: StepContext, move: (point: Point) => Point): void {
  if (context.focus) context.focus = move(context.focus);
  if (context.facePoints) context.facePoints = context.facePoints.map(([a, b, eyes]) => [move(a), move(b), move(eyes)]);
}

/** The faces' corners and eyes in the image as displayed; none found: the crop falls back to `attention` (transform.ts). */
function pointsOf(input: StepInput): FacePoints[] | undefined {
  if (!input.faces?.length) return undefined;
  const { width, height } = input.info;
  return input.faces.map((face) => [
    [face.x * width, face.y * height],
    [(face.x + face.width) * width, (face.y + face.height) * height],
    [face.eyes.x * width, face.eyes.y * height],
  ]);
}

/** The focal point of `fp` in the image as displayed. */
function focusOf(ops: Ops, info: SourceInfo): Point | undefined {
  if (ops.fp === undefined) return undefined;
  const [x, y] = ops.fp.split(',').map(Number) as [number, number];
  return [x * info.width, y * info.height];
}

/** Whether every step can carry a source's gain map through for `ops` (a JPEG output keeps it then: gain-map.ts). */
export const stepsCarryGainMap = (ops: Ops) => STEPS.every((step) => !step.carriesGainMap || step.carriesGainMap(ops));

/** Whether a step cannot apply `ops` frame by frame, so that an animation gives its first frame (output.ts). */
export const firstFrameOnly = (ops: Ops) => STEPS.some((step) => step.firstFrameOnly?.(ops));

/** Whether a step reads the image at its whole decoded size for `ops`, so that it is decoded without shrink-on-load (budget.ts). */
export const decodesWhole = (ops: Ops) => STEPS.some((step) => step.decodesWhole?.(ops));

/** Each step's price for `work`, in the pipeline's order. */
export const stepPrices = (work: PricedWork) => STEPS.map(({ name, price }) => ({ name, price: price(work) }));

/** Applies every step to `image`; returns the pipeline to run, which a step may have replaced, or the variant a step encoded. */
export async function applySteps(image: Sharp, input: StepInput): Promise<{ pipeline: Sharp; encoded?: EncodedVariant }> {
  const context: StepContext = {
    ...input,
    size: turnedSize(input.ops, input.info),
    mirrorsAfterExtract: NO_MIRRORS,
    focus: focusOf(input.ops, input.info),
    facePoints: pointsOf(input),
  };
  let current = image;
  for (const step of STEPS) current = (await step.apply(current, context)) ?? current;
  return { pipeline: current, encoded: context.encoded };
}
