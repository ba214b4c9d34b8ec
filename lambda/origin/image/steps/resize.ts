// The image into the box asked for: the crop region cut, scaled by its fit,
// a cover crop placed at its position, on the focal point, on the faces or
// on the subject, and a blurred fill drawn under a contained image.

import type { Sharp } from 'sharp';
import { coverCrop, type Ops, type Position } from '../../../grammar';
import { centredOn, faceFocus, type FaceRegion } from '../face-crop';
import { subjectFocus, type SubjectRegion } from '../subject-crop';
import { roomFor } from './composition';
import {
  along,
  background,
  FREE,
  perMegapixel,
  pipelineOf,
  pixels,
  type FacePoints,
  type Point,
  type Region,
  type Step,
  type StepContext,
  type SubjectPoints,
} from './context';

/** CPU seconds per megapixel of the output (context.ts). */
const RATES = { resize: 0.04, fill: 0.12 };

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
  auto: 'attention', // without a face or a subject found; with either, the crop is centred on it
};

/** The requested box, scaled down when a border would take the output past maxDimension; a side not asked for stays undefined. */
function requestedBox(ops: Ops, room: number): [number | undefined, number | undefined] {
  const shrink = room / Math.max(ops.width ?? 0, ops.height ?? 0);
  if (!(shrink < 1)) return [ops.width, ops.height];
  const side = (asked: number | undefined) => (asked === undefined ? undefined : Math.max(1, Math.round(asked * shrink)));
  return [side(ops.width), side(ops.height)];
}

/** contain's box, the requested one within maxDimension (border included). */
export const containBox = (ops: Ops, maxDimension: number) => requestedBox(ops, roomFor(ops, maxDimension)) as [number, number];

/** Whether contain's padding is drawn after the image is in memory: a blurred fill's, or a cut-out's (steps/segment.ts). */
const padsLater = (ops: Ops) => ops.fill === 'blur' || (ops.segment !== undefined && ops.fit === 'contain');

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
): Point {
  const scale = Math.min(Math.max(boxWidth / width, boxHeight / height), enlarge ? Infinity : 1);
  const scaledWidth = Math.max(1, Math.round(width * scale));
  const scaledHeight = Math.max(1, Math.round(height * scale));
  // Without enlargement a small source keeps its size and the box shrinks to it, as in sharp's cover.
  const cropWidth = Math.min(boxWidth, scaledWidth);
  const cropHeight = Math.min(boxHeight, scaledHeight);
  const left = centredOn(focus[0] * scale, cropWidth, scaledWidth);
  const top = centredOn(focus[1] * scale, cropHeight, scaledHeight);
  image.resize({ width: scaledWidth, height: scaledHeight, fit: 'fill' }).extract({ left, top, width: cropWidth, height: cropHeight });
  return [left, top];
}

/** The part of a `width` x `height` image a cover crop to `box` keeps, in the image's pixels (as focusedCover cuts it). */
function coverWindow([width, height]: [number, number], [boxWidth, boxHeight]: [number, number], enlarge: boolean): [number, number] {
  const scale = Math.min(Math.max(boxWidth / width, boxHeight / height), enlarge ? Infinity : 1);
  return [Math.min(width, boxWidth / scale), Math.min(height, boxHeight / scale)];
}

/** The origin of the part `cropped` of the image (all of it without one). */
const originOf = (cropped: Region | undefined): Point => (cropped ? [cropped.left, cropped.top] : [0, 0]);

/** The box between corners `a` and `b` as a region of the part `cropped` of the image of `size`, clipped to it. */
function boxIn(a: Point, b: Point, cropped: Region | undefined, [width, height]: [number, number]) {
  const [left, top] = originOf(cropped);
  return {
    left: Math.max(0, Math.min(a[0], b[0]) - left),
    top: Math.max(0, Math.min(a[1], b[1]) - top),
    right: Math.min(width, Math.max(a[0], b[0]) - left),
    bottom: Math.min(height, Math.max(a[1], b[1]) - top),
  };
}

const hasArea = (box: { left: number; top: number; right: number; bottom: number }) => box.right > box.left && box.bottom > box.top;

/** Faces given by their points, as regions of the part `cropped` of the image (all of it without one), clipped to it; those left outside dropped. */
function facesIn(faces: FacePoints[], cropped: Region | undefined, size: [number, number]): FaceRegion[] {
  const [left, top] = originOf(cropped);
  return faces.map(([a, b, eyes]) => ({ ...boxIn(a, b, cropped, size), eyes: [eyes[0] - left, eyes[1] - top] as Point })).filter(hasArea);
}

/** The subject given by its points as a region of the part `cropped` of the image, clipped to it (its anchor within what is left); undefined when none is left. */
function subjectIn([a, b, anchor]: SubjectPoints, cropped: Region | undefined, size: [number, number]): SubjectRegion | undefined {
  const [left, top] = originOf(cropped);
  const box = boxIn(a, b, cropped, size);
  if (!hasArea(box)) return undefined;
  const within = (at: number, low: number, high: number) => Math.min(high, Math.max(low, at));
  return { ...box, anchor: [within(anchor[0] - left, box.left, box.right), within(anchor[1] - top, box.top, box.bottom)] };
}

/**
 * The point a cover crop is centred on, in the part of the image kept (the
 * crop region, or all of it) of `size`: the focal point, or the faces' (with
 * faces, a window of the box's shape is placed on them), else the subject's
 * (position=auto, placed alike). Undefined: sharp places the crop.
 */
function focusIn({ ops, facePoints, subjectPoints, focus, region }: StepContext, size: [number, number], room: number): Point | undefined {
  if ((facePoints || subjectPoints) && ops.width !== undefined && ops.height !== undefined) {
    const window = coverWindow(size, requestedBox(ops, room) as [number, number], Boolean(ops.enlarge));
    const faces = facePoints && faceFocus(facesIn(facePoints, region, size), size, window);
    const subject = !faces && subjectPoints && subjectIn(subjectPoints, region, size);
    return faces || (subject ? subjectFocus(subject, window) : undefined);
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

export const resizeStep: Step = {
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
    context.region = region;
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
      context.coverOffset = focusedCover(image, [width, height], [boxWidth!, boxHeight!], focus, Boolean(ops.enlarge));
      return;
    }
    image.resize({
      width: boxWidth,
      height: boxHeight,
      // A blurred fill, or a cut-out's padding, is drawn around the image by a later step.
      fit: padsLater(ops) ? 'inside' : (ops.fit ?? 'cover'),
      position: SHARP_POSITIONS[ops.position ?? 'center'],
      withoutEnlargement: !ops.enlarge,
      background: background(context),
    });
  },
};

/** Longest side of the copy of the image that a blurred fill is made from, and its blur. */
const BACKDROP_SIDE = 48;
const BACKDROP_SIGMA = 2;

export const fillStep: Step = {
  name: 'fill',
  price: ({ ops, outputPixels }) =>
    // The canvas and the image on it, as 8-bit pixels with alpha at most (a first frame only).
    ops.fill === 'blur' ? { seconds: perMegapixel(RATES.fill, outputPixels), bytes: 2 * outputPixels * 4 } : FREE,
  carriesGainMap: (ops) => ops.fill !== 'blur',
  firstFrameOnly: (ops) => ops.fill === 'blur',
  async apply(image, context) {
    const { ops, limits } = context;
    if (ops.fill !== 'blur') return undefined;
    const [width, height] = containBox(ops, limits.maxDimension);
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
};
