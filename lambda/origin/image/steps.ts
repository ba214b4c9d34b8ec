// The transformation as an ordered list of small steps, each doing one thing
// to the sharp pipeline. sharp runs them in one pass over the decoded pixels,
// in its own fixed order (turns, trim, extract, resize, extend, blur, sharpen,
// composite); a step that needs the pixels of the steps before it (trim's
// result size, a blurred fill) ends the pass and starts the next from the
// pixels held in memory.

import sharp, { type OutputInfo, type Sharp } from 'sharp';
import type { Ops, Position } from '../../grammar';
import type { Limits } from '../config';
import { decodeError, framesToLoad, type SourceInfo } from './input';
import { autoQuality, AVIF_AUTO_QUALITY, choosesQuality, PROXY_PIXELS } from './auto-quality';
import { encode, type EncodedFormat, type OutputPlan } from './output';
import { MAX_WATERMARK_PIXELS, type WatermarkImage } from '../watermarks';
import { centredOn, faceFocus, type FaceRegion } from './face-crop';
import type { FaceBox } from './faces';

export interface StepInput {
  ops: Ops;
  info: SourceInfo;
  plan: OutputPlan;
  limits: Limits;
  watermark?: WatermarkImage;
  /** With `position=face`, the faces found, in fractions of the source as displayed (none found: the crop is `attention`'s). */
  faces?: FaceBox[];
}

/** A point of an image in pixels, from its top-left corner (not rounded: a pixel's centre is at .5). */
type Point = [number, number];

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
  /** With `position=face`, each face's opposite corners in the image of `size`, followed like `focus`. */
  faceCorners?: [Point, Point][];
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

/** How EXIF orientations 1 to 8 turn (clockwise) and then mirror left-right the stored image, as sharp applies them. */
const ORIENTATIONS: [number, boolean][] = [[0, false], [0, true], [180, false], [180, true], [90, true], [90, false], [270, true], [270, false]];

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
function focusedCover(image: Sharp, [width, height]: [number, number], [boxWidth, boxHeight]: [number, number], focus: Point, enlarge: boolean): void {
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

/** Faces given by two corners, as regions of the part `cropped` of the image (all of it without one), clipped to it; those left outside dropped. */
function facesIn(faces: [Point, Point][], cropped: Region | undefined, [width, height]: [number, number]): FaceRegion[] {
  const [left, top] = cropped ? [cropped.left, cropped.top] : [0, 0];
  return faces
    .map(([a, b]) => ({
      left: Math.max(0, Math.min(a[0], b[0]) - left),
      top: Math.max(0, Math.min(a[1], b[1]) - top),
      right: Math.min(width, Math.max(a[0], b[0]) - left),
      bottom: Math.min(height, Math.max(a[1], b[1]) - top),
    }))
    .filter((face) => face.right > face.left && face.bottom > face.top);
}

/**
 * The point a cover crop is centred on, in the part of the image kept (the
 * crop region, or all of it) of `size`: the focal point, or the faces' (with
 * faces, a window of the box's shape is placed on them).
 */
function focusIn({ ops, faceCorners, focus, region }: StepContext, size: [number, number], room: number): Point | undefined {
  if (faceCorners && ops.width !== undefined && ops.height !== undefined) {
    const window = coverWindow(size, requestedBox(ops, room) as [number, number], Boolean(ops.enlarge));
    return faceFocus(facesIn(faceCorners, region, size), size, window);
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

const pipelineOf = ({ data, info }: Pixels) => sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } });

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
  watermarkDecode: 0.1,
  border: 0.01,
};

/**
 * Encode, CPU seconds per output megapixel, with the settings of output.ts on
 * one thread: the worst case (noise) for every format but GIF. GIF's palette
 * search costs 20 to 50 times more on noise than on photos or drawings, so a
 * worst case would refuse ordinary animations: its rate is that of smooth
 * photographic frames, and the deadline kill bounds the rest.
 */
const ENCODE_SECONDS_PER_MP: Record<EncodedFormat, number> = {
  jpeg: 0.09, png: 0.1, webp: 0.32, avif: 1.25, gif: 1.7,
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
  jpeg: 7.5, png: 4, webp: 19, avif: 24, gif: 33,
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

/** The pipeline, in order. Orientation first, so every later step sees the image as displayed. */
const STEPS: Step[] = [
  {
    name: 'orient',
    price: ({ info, decodedPixels, frames }) =>
      info.orientation === 1 ? FREE : { seconds: perMegapixel(RATES.turn, decodedPixels, frames), bytes: 0, holdsDecoded: info.orientation >= 3 },
    apply(image) {
      image.autoOrient();
    },
  },

  {
    name: 'rotate',
    price: ({ ops, decodedPixels, frames }) =>
      ops.rotate === undefined ? FREE : { seconds: perMegapixel(RATES.turn, decodedPixels, frames), bytes: 0, holdsDecoded: true },
    apply(image, { ops, plan }) {
      // Frames can only be turned by halves: a half turn is a flip plus a flop (see mirror).
      if (ops.rotate && !plan.animated) image.rotate(ops.rotate);
    },
  },

  {
    name: 'mirror',
    price: ({ ops, decodedPixels, frames }) =>
      ops.flip || ops.flop ? { seconds: perMegapixel(RATES.mirror, decodedPixels, frames), bytes: 0, holdsDecoded: ops.flip === true } : FREE,
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
    price: ({ ops, info, decodedPixels, decodedPixelBytes }) =>
      // It holds the decoded image to find its edges, then its result as 8-bit pixels (a first frame only).
      ops.trim === undefined ? FREE : { seconds: perMegapixel(RATES.trim, decodedPixels), bytes: decodedPixels * (decodedPixelBytes + info.channels) },
    async apply(image, context) {
      if (context.ops.trim === undefined) return undefined;
      // The later steps need the trimmed size, known only from the pixels. A uniform image is kept whole.
      const trimmed = await pixels(image.trim({ threshold: context.ops.trim }), context.limits);
      const size: [number, number] = [trimmed.info.width, trimmed.info.height];
      follow(context, (point) => trimmedFocus(point, context, trimmed.info, size));
      context.size = size;
      context.mirrorsAfterExtract = NO_MIRRORS;
      return pipelineOf(trimmed);
    },
  },

  {
    name: 'crop',
    price: () => FREE, // cut by resize's extract; the shrink-on-load it defeats is counted in the decode (budget.ts)
    apply(_image, context) {
      // Recorded here, cut by resize: sharp takes one extract before its resize, which resize may need for itself.
      if (context.ops.crop !== undefined) context.region = cropRegion(context.ops.crop, ...context.size);
    },
  },

  {
    name: 'flatten',
    price: ({ ops, info, format, decodedPixels, frames }) =>
      info.hasAlpha && (format === 'jpeg' || ops.background) ? { seconds: perMegapixel(RATES.flatten, decodedPixels, frames), bytes: 0 } : FREE,
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
        fit: ops.fill === 'blur' ? 'inside' : ops.fit ?? 'cover',
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
        : { seconds: blurSeconds(work), bytes: work.outputPixels * work.frames * outputBands(work) + (blurredIntoMemory(work.ops, work.frames) ? work.outputPixels * 4 : 0) },
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
      const recomputed = ops.blur !== undefined && !blurredIntoMemory(ops, frames) ? blurSeconds(work) * (RATES.sharpen.reblur + RATES.sharpen.reblurPerSigma * ops.sharpen) : 0;
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
      const seconds = (cmyk ? perMegapixel(RATES.cmyk, decodedPixels, frames) : 0) + (ops.grayscale ? perMegapixel(RATES.grayscale, outputPixels, frames) : 0);
      return seconds ? { seconds, bytes: 0 } : FREE;
    },
    apply(image, { ops }) {
      // 8-bit sRGB for every source (CMYK, 16-bit, wide gamut); grayscale is its own colourspace.
      if (ops.grayscale) image.grayscale();
      else image.toColourspace('srgb');
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
      image.extend({ top: width, bottom: width, left: width, right: width, background: rgba(ops.border.slice(ops.border.indexOf(',') + 1)) });
    },
  },

  {
    name: 'output',
    price: (work) => {
      const { format, outputPixels, frames } = work;
      // quality=auto holds the output as pixels (alpha at most) and a proxy of them, and encodes the proxy first.
      const proxy = choosesQuality(work.ops.quality, format, frames > 1) ? Math.min(PROXY_PIXELS, outputPixels) : 0;
      return {
        seconds: perMegapixel(ENCODE_SECONDS_PER_MP[format] * qualityFactor(format, work.ops.quality), outputPixels * frames + proxy),
        bytes: outputPixels * frames * ENCODER_BYTES_PER_PIXEL[format] + (proxy ? (outputPixels + proxy) * 4 : 0),
      };
    },
    async apply(image, { ops, plan, limits }) {
      if (!choosesQuality(ops.quality, plan.format, plan.animated)) {
        encode(image, plan, ops.quality === 'auto' ? undefined : ops.quality);
        return;
      }
      // The image in memory once: a proxy of it is encoded to choose the quality, then the whole.
      const made = await pixels(image, limits);
      const quality = await autoQuality(made, (proxy, trial) => encode(proxy, plan, trial));
      return encode(pipelineOf(made), plan, quality);
    },
  },
];

/**
 * The focal point after trim, in the trimmed image of `size`. sharp reports
 * where the kept part starts in the image it trimmed: the image as displayed
 * when it turned first (with a turn), else the stored one, which it orients
 * and mirrors after trimming.
 */
function trimmedFocus(focus: Point, { ops, plan, info, size: before, mirrorsAfterExtract }: StepContext, offsets: OutputInfo, size: [number, number]): Point {
  const shift = (point: Point): Point => [point[0] + (offsets.trimOffsetLeft ?? 0), point[1] + (offsets.trimOffsetTop ?? 0)];
  if (ops.rotate !== undefined && !plan.animated) return shift(focus);
  const [angle, flop] = ORIENTATIONS[info.orientation - 1] ?? [0, false];
  const mirrors = { flip: mirrorsAfterExtract.flip, flop: mirrorsAfterExtract.flop !== flop };
  const stored = (displayed: [number, number]): [number, number] => (angle % 180 ? [displayed[1], displayed[0]] : displayed);
  const inStored = turnPoint(mirrorPoint(focus, before, mirrors), before, (360 - angle) % 360);
  return mirrorPoint(turnPoint(shift(inStored), stored(size), angle), size, mirrors);
}

/** Moves the focal point and the faces' corners as a step moves the image's pixels. */
function follow(context: StepContext, move: (point: Point) => Point): void {
  if (context.focus) context.focus = move(context.focus);
  if (context.faceCorners) context.faceCorners = context.faceCorners.map(([a, b]) => [move(a), move(b)]);
}

/** The faces' corners in the image as displayed; none found: the crop falls back to `attention` (transform.ts). */
function cornersOf(input: StepInput): [Point, Point][] | undefined {
  if (!input.faces?.length) return undefined;
  const { width, height } = input.info;
  return input.faces.map((face) => [
    [face.x * width, face.y * height],
    [(face.x + face.width) * width, (face.y + face.height) * height],
  ]);
}

/** The focal point of `fp` in the image as displayed. */
function focusOf(ops: Ops, info: SourceInfo): Point | undefined {
  if (ops.fp === undefined) return undefined;
  const [x, y] = ops.fp.split(',').map(Number) as [number, number];
  return [x * info.width, y * info.height];
}

/** Each step's price for `work`, in the pipeline's order. */
export const stepPrices = (work: PricedWork) => STEPS.map(({ name, price }) => ({ name, price: price(work) }));

/** Applies every step to `image`; returns the pipeline to run, which a step may have replaced. */
export async function applySteps(image: Sharp, input: StepInput): Promise<Sharp> {
  const context: StepContext = {
    ...input,
    size: turnedSize(input.ops, input.info),
    mirrorsAfterExtract: NO_MIRRORS,
    focus: focusOf(input.ops, input.info),
    faceCorners: cornersOf(input),
  };
  let current = image;
  for (const step of STEPS) current = (await step.apply(current, context)) ?? current;
  return current;
}
