// The image's frame: turned upright and as asked, mirrored, trimmed, and the
// crop region recorded (resize cuts it). The focal point, the faces' and the
// subject's points are followed through each of these, so the cover crop finds them.

import type { Ops } from '../../../grammar';
import type { SourceInfo } from '../input';
import { subjectAnchor } from '../subject-crop';
import {
  FREE,
  NO_MIRRORS,
  perMegapixel,
  pipelineOf,
  pixels,
  type FacePoints,
  type Mirrors,
  type Point,
  type Region,
  type Step,
  type SubjectPoints,
  type StepContext,
  type StepInput,
} from './context';

/** CPU seconds per megapixel of the decoded image (context.ts). */
const RATES = { turn: 0.04, mirror: 0.02, trim: 0.5 };

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
const mirrorPoint = ([x, y]: Point, [width, height]: [number, number], { flip, flop }: Mirrors): Point => [
  flop ? width - x : x,
  flip ? height - y : y,
];

/** Moves the focal point, the faces' and the subject's points, and the displayed image's corners, as a step moves the image's pixels. */
function follow(context: StepContext, move: (point: Point) => Point): void {
  if (context.focus) context.focus = move(context.focus);
  if (context.frame) context.frame = context.frame.map(move) as [Point, Point, Point];
  if (context.facePoints) context.facePoints = context.facePoints.map(([a, b, eyes]) => [move(a), move(b), move(eyes)]);
  if (context.subjectPoints) context.subjectPoints = context.subjectPoints.map(move) as SubjectPoints;
}

/** The faces' corners and eyes in the image as displayed; none found: the crop falls back to `attention` (transform.ts). */
export function pointsOf(input: StepInput): FacePoints[] | undefined {
  if (!input.faces?.length) return undefined;
  const { width, height } = input.info;
  return input.faces.map((face) => [
    [face.x * width, face.y * height],
    [(face.x + face.width) * width, (face.y + face.height) * height],
    [face.eyes.x * width, face.eyes.y * height],
  ]);
}

/** With a cut-out, the corners of the image as displayed (see StepContext.frame). */
export function frameOf({ ops, info }: StepInput): [Point, Point, Point] | undefined {
  return ops.segment === undefined
    ? undefined
    : [
        [0, 0],
        [info.width, 0],
        [0, info.height],
      ];
}

/** With `position=auto`, the subject's box and anchor in the image as displayed; none without a subject found (the crop is then `attention`'s). */
export function subjectPointsOf({ ops, subject, info }: StepInput): SubjectPoints | undefined {
  if (ops.position !== 'auto' || !subject?.box) return undefined;
  const { x, y, width, height } = subject.box;
  const [anchorX, anchorY] = subjectAnchor(subject, subject.box);
  return [
    [x * info.width, y * info.height],
    [(x + width) * info.width, (y + height) * info.height],
    [anchorX * info.width, anchorY * info.height],
  ];
}

/** The focal point of `fp` in the image as displayed. */
export function focusOf(ops: Ops, info: SourceInfo): Point | undefined {
  if (ops.fp === undefined) return undefined;
  const [x, y] = ops.fp.split(',').map(Number) as [number, number];
  return [x * info.width, y * info.height];
}

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

/**
 * Whether sharp would trim the image as stored, turning and mirroring it
 * after: it turns first only for a `rotate` (trim starts a first-frame pass).
 */
const trimsStored = (ops: Ops, info: SourceInfo) =>
  ops.rotate === undefined && (info.orientation !== 1 || ops.flip === true || ops.flop === true);

export const orientStep: Step = {
  name: 'orient',
  price: ({ info, decodedPixels, frames }) =>
    info.orientation === 1
      ? FREE
      : { seconds: perMegapixel(RATES.turn, decodedPixels, frames), bytes: 0, holdsDecoded: info.orientation >= 3 },
  apply(image) {
    image.autoOrient();
  },
};

export const rotateStep: Step = {
  name: 'rotate',
  price: ({ ops, decodedPixels, frames }) =>
    ops.rotate === undefined ? FREE : { seconds: perMegapixel(RATES.turn, decodedPixels, frames), bytes: 0, holdsDecoded: true },
  firstFrameOnly: (ops) => ops.rotate === 90 || ops.rotate === 270,
  apply(image, { ops, plan }) {
    // Frames can only be turned by halves: a half turn is a flip plus a flop (see mirror).
    if (ops.rotate && !plan.animated) image.rotate(ops.rotate);
  },
};

export const mirrorStep: Step = {
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
};

export const trimStep: Step = {
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
};

export const cropStep: Step = {
  name: 'crop',
  price: () => FREE, // cut by resize's extract; the shrink-on-load it defeats is counted in the decode (budget.ts)
  decodesWhole: (ops) => ops.crop !== undefined,
  apply(_image, context) {
    // Recorded here, cut by resize: sharp takes one extract before its resize, which resize may need for itself.
    if (context.ops.crop !== undefined) context.region = cropRegion(context.ops.crop, ...context.size);
  },
};
