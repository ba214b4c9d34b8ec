// The subject set: real photos of things, each cut at test time so that its
// subject sits off the centre (a crop of a real photo is a real photo), with
// a box around the subject drawn by hand. Fetched from PyPI wheels by
// test/support/wheel-files.ts, never committed:
// - scikit-image 0.26.0: rocket.jpg (SpaceX, public domain), coffee.png
//   (Rachel Michetti, CC0), astronaut.png (NASA, public domain), chelsea.png
//   (Stefan van der Walt, CC0), clock_motion.png (Stefan van der Walt, public
//   domain), as its skimage/data docstrings state;
// - scikit-learn 1.9.1: flower.jpg (vultilion on Flickr, CC BY 2.0, as
//   sklearn/datasets/images/README.txt states);
// - matplotlib 3.11.2: grace_hopper.jpg (US Navy, public domain).
//
// How the boxes were drawn: each cut photo was rendered with a 10% grid, the
// subject's extremes read off in pixels of the photo, the box drawn over the
// cut photo and looked at, and nudged until its sides touched the subject
// (docs/subjects.md, "The subject set and how it is scored"). The outlines
// likewise: the photo enlarged with a 5 or 10 px grid, the subject's edge read
// off at its corners and turns, the polygon drawn over the photo and looked at.

import sharp from 'sharp';
import { canonicalOps, DEFAULT_GRAMMAR_OPTIONS, isGrammarError, parseViewerParams, splitQuery, type Ops } from '../../lambda/grammar';
import { DEFAULT_LIMITS, originConfig } from '../../lambda/origin/config';
import { budgetFor } from '../../lambda/origin/image/budget';
import { transform } from '../../lambda/origin/image/transform';
import { shownPart, type Box } from './face-photos';
import { wheelFiles, type Wheel, type WheelFiles } from './wheel-files';

const WHEELS: Wheel[] = [
  {
    requirement: 'scikit-image==0.26.0',
    files: {
      'skimage/data/rocket.jpg': 'rocket.jpg',
      'skimage/data/coffee.png': 'coffee.png',
      'skimage/data/astronaut.png': 'astronaut.png',
      'skimage/data/chelsea.png': 'chelsea.png',
      'skimage/data/clock_motion.png': 'clock_motion.png',
    },
  },
  { requirement: 'scikit-learn==1.9.1', files: { 'sklearn/datasets/images/flower.jpg': 'flower.jpg' } },
  { requirement: 'matplotlib==3.11.2', files: { 'matplotlib/mpl-data/sample_data/grace_hopper.jpg': 'grace_hopper.jpg' } },
];

type SubjectPhotoName =
  'rocket.jpg' | 'coffee.png' | 'astronaut.png' | 'chelsea.png' | 'clock_motion.png' | 'flower.jpg' | 'grace_hopper.jpg';

export type SubjectPhotos = WheelFiles<SubjectPhotoName>;

/** The photos, or undefined (with a message) when they cannot be had outside CI. */
export function subjectPhotos(): SubjectPhotos | undefined {
  return wheelFiles<SubjectPhotoName>(WHEELS, 'subject test photos');
}

/** One photo of the set, as the tests and the bench see it. */
export interface SubjectCase {
  name: string;
  /** The photo as cut, PNG. */
  image: Buffer;
  width: number;
  height: number;
  /** The hand-drawn box of the subject, in fractions of the cut photo. */
  subject: Box;
  /**
   * The hand-drawn outline of the whole subject (a polygon, in fractions of
   * the cut photo), where it lies clear of the photo's edges, so that a
   * cut-out should leave the border transparent; none where the box is a face
   * or a head, which a crop must keep, but whose body below is subject too.
   */
  outline?: Point[];
}

type Point = [x: number, y: number];

interface CaseSpec {
  name: string;
  photo: SubjectPhotoName;
  /** The part of the photo kept, in its pixels. */
  cut: { left: number; top: number; width: number; height: number };
  /** The subject, in pixels of the photo as fetched (its extremes, read off by eye). */
  box: [left: number, top: number, right: number, bottom: number];
  /** The whole subject's outline, x and y after x and y, in pixels of the photo as fetched (read off by eye), when it is clear of the edges. */
  outline?: number[];
}

/**
 * The photos and their cuts. Each subject fits the portrait (3:4) and the
 * wide (2:1) window of its cut, so some cover crop keeps it; where it sits
 * off the centre of an axis, the centred window of that axis loses it.
 */
const CASES: CaseSpec[] = [
  // The rocket from its nose to its mount, low in the frame: the wide crop's centre cuts its base. Its box is
  // mostly sky beside the mount's open truss; its outline is the rocket itself, nose cone and body with the
  // service tower's straps, down to the mount's deck.
  {
    name: 'rocket, low',
    photo: 'rocket.jpg',
    cut: { left: 0, top: 0, width: 640, height: 427 },
    box: [288, 124, 358, 414],
    outline: [
      322, 126, 328, 130, 332, 137, 334, 145, 334, 178, 333, 181, 333, 407, 311, 407, 311, 181, 310, 178, 310, 145, 312, 137, 316, 130,
    ],
  },
  // The dahlia's petals, left of centre once the photo's left 100 px are cut: the portrait's centre cuts its left side.
  {
    name: 'dahlia, left',
    photo: 'flower.jpg',
    cut: { left: 100, top: 0, width: 540, height: 427 },
    box: [170, 83, 448, 357],
    outline: [315, 85, 390, 105, 435, 160, 446, 225, 430, 290, 385, 340, 315, 360, 240, 340, 185, 290, 170, 215, 190, 150, 240, 105],
  },
  // The cup from its rim to its handle, with the spoon; the saucer around it is left out, so the cut-out is not scored.
  { name: 'espresso cup', photo: 'coffee.png', cut: { left: 0, top: 0, width: 600, height: 400 }, box: [174, 16, 420, 324] },
  // Her head from the hair's top to the chin, in the top-left corner once the photo is cut to the right and the top.
  {
    name: 'astronaut, head top left',
    photo: 'astronaut.png',
    cut: { left: 100, top: 0, width: 412, height: 300 },
    box: [154, 10, 307, 174],
  },
  // Her face from the brows to the chin, between the ears: above the wide crop's centre.
  {
    name: 'Grace Hopper, face',
    photo: 'grace_hopper.jpg',
    cut: { left: 0, top: 0, width: 512, height: 600 },
    box: [169, 132, 379, 330],
  },
  // The cat's face from the brows to the chin and between the cheeks, right of centre once the left 60 px are cut.
  {
    name: 'cat, face right',
    photo: 'chelsea.png',
    cut: { left: 60, top: 0, width: 391, height: 300 },
    box: [126, 75, 352, 270],
  },
  // The wall clock, blurred by the camera's move: a muted subject on a plain wall, low left once cut.
  {
    name: 'blurred clock, low left',
    photo: 'clock_motion.png',
    cut: { left: 120, top: 0, width: 280, height: 250 },
    box: [140, 94, 282, 216],
    // The clock's rim, blur and all: an ellipse read off at its extremes and diagonals.
    outline: [211, 95, 246, 103, 272, 125, 282, 155, 272, 185, 246, 207, 211, 215, 176, 207, 150, 185, 140, 155, 150, 125, 176, 103],
  },
];

const pairs = (values: number[]): Point[] => Array.from({ length: values.length / 2 }, (_, i) => [values[2 * i]!, values[2 * i + 1]!]);

/** The set, cut from the fetched photos. */
export async function subjectCases(photos: SubjectPhotos): Promise<SubjectCase[]> {
  return Promise.all(
    CASES.map(async ({ name, photo, cut, box: [left, top, right, bottom], outline }) => ({
      name,
      image: await sharp(photos.read(photo)).extract(cut).toColourspace('srgb').png().toBuffer(),
      width: cut.width,
      height: cut.height,
      subject: {
        x: (left - cut.left) / cut.width,
        y: (top - cut.top) / cut.height,
        width: (right - left) / cut.width,
        height: (bottom - top) / cut.height,
      },
      outline: outline && pairs(outline).map(([x, y]): Point => [(x - cut.left) / cut.width, (y - cut.top) / cut.height]),
    })),
  );
}

/** The crops asked of each photo: its aspect, as a request that fits in the photo (no enlargement alters it). */
export const SUBJECT_CROPS = { portrait: 3 / 4, wide: 2 } as const;
export type SubjectCrop = keyof typeof SUBJECT_CROPS;

/** The width and height asked for `crop` of a photo of `width` x `height`: the largest of its aspect within the photo, at most 400 px a side. */
export function cropRequest(crop: SubjectCrop, width: number, height: number): [number, number] {
  const aspect = SUBJECT_CROPS[crop];
  const scale = Math.min(1, 400 / Math.max(width, height));
  const [w, h] = width / height > aspect ? [height * aspect, height] : [width, width / aspect];
  return [Math.round(w * scale), Math.round(h * scale)];
}

/** The share of `subject`'s area inside `window` (both in fractions of one image). */
export function shareInside(subject: Box, window: Box): number {
  const across = Math.max(0, Math.min(subject.x + subject.width, window.x + window.width) - Math.max(subject.x, window.x));
  const down = Math.max(0, Math.min(subject.y + subject.height, window.y + window.height) - Math.max(subject.y, window.y));
  return (across * down) / (subject.width * subject.height);
}

/** A crop keeps the subject when at least this share of the hand-drawn box's area lies in its window. */
export const KEPT_SHARE = 0.9;

/**
 * The ops a query asks for, read by the grammar as a viewer's request is; or
 * the grammar's refusal, while a position or parameter is not built yet.
 */
export function opsOf(query: string): Ops | string {
  try {
    const params = parseViewerParams(splitQuery(query), DEFAULT_GRAMMAR_OPTIONS);
    return canonicalOps(params, DEFAULT_GRAMMAR_OPTIONS) as Ops;
  } catch (error) {
    if (isGrammarError(error)) return error.message;
    throw error;
  }
}

const LIMITS = originConfig({ sourceBucket: 'subjects', cacheBucket: 'subjects' });

/** The real transform of `image` with `ops`, within the default Lambda's budget. */
export async function transformed(image: Buffer, ops: Ops): Promise<Buffer> {
  const budget = budgetFor(DEFAULT_LIMITS.memorySizeMb, DEFAULT_LIMITS.timeBudgetMs, image.length);
  return (await transform(image, ops, LIMITS, budget)).body;
}

/**
 * The share of the subject's box a cover crop of the photo keeps: its window
 * found by matching the output against the photo at the crop's scale.
 */
export async function keptShare(subjectCase: SubjectCase, ops: Ops): Promise<number> {
  const output = await transformed(subjectCase.image, ops);
  return shareInside(subjectCase.subject, await shownPart(subjectCase.image, output));
}

/** The query of `crop` of a photo with `position`. */
export function cropQuery({ width, height }: SubjectCase, crop: SubjectCrop, position: string): string {
  const [w, h] = cropRequest(crop, width, height);
  return `width=${w}&height=${h}&fit=cover&position=${position}&format=png`;
}

/** The ops of a cut-out of the whole photo; or why there is none yet (the grammar ignores a name it does not know). */
export function cutOutOps(): Ops | string {
  const ops = opsOf('segment=foreground&format=png');
  if (typeof ops !== 'string' && (ops as { segment?: unknown }).segment !== 'foreground') return 'the grammar has no segment parameter yet';
  return ops;
}

/** Mean alpha (0 to 1) of a cut-out over the subject's outline, over its box, and over the border frame away from the box. */
export interface CutOutMeans {
  outline: number;
  box: number;
  border: number;
}

/** The border frame's depth, and how far from the box a border pixel must be, in fractions of the short side. */
const FRAME = 0.1;

/** Whether the point (x, y) lies inside `polygon` (even-odd rule: a ray to the right crosses its edges an odd number of times). */
export function insidePolygon(x: number, y: number, polygon: Point[]): boolean {
  let inside = false;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const [[xi, yi], [xj, yj]] = [polygon[i]!, polygon[j]!];
    if (yi > y !== yj > y && x < xj + ((y - yj) / (yi - yj)) * (xi - xj)) inside = !inside;
  }
  return inside;
}

/** The means of a cut-out's alpha (an RGBA image the size of the photo) over the subject's outline (in fractions), its box and the frame. */
export async function cutOutMeans(cutOut: Buffer, subject: Box, outline: Point[]): Promise<CutOutMeans> {
  const { data, info } = await sharp(cutOut).ensureAlpha().extractChannel(3).raw().toBuffer({ resolveWithObject: true });
  const { width, height } = info;
  const depth = FRAME * Math.min(width, height);
  const [left, top] = [subject.x * width, subject.y * height];
  const [right, bottom] = [left + subject.width * width, top + subject.height * height];
  const polygon = outline.map(([x, y]): Point => [x * width, y * height]);
  const sums = { outline: [0, 0], box: [0, 0], border: [0, 0] };
  const add = (sum: number[], alpha: number) => {
    sum[0]! += alpha;
    sum[1]! += 1;
  };
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const alpha = data[y * width + x]! / 255;
      const inBox = x + 0.5 >= left && x + 0.5 <= right && y + 0.5 >= top && y + 0.5 <= bottom;
      const inFrame = Math.min(x, y, width - 1 - x, height - 1 - y) < depth;
      const awayFromBox = x < left - depth || x > right + depth || y < top - depth || y > bottom + depth;
      if (inBox) add(sums.box, alpha);
      if (insidePolygon(x + 0.5, y + 0.5, polygon)) add(sums.outline, alpha);
      if (inFrame && awayFromBox) add(sums.border, alpha);
    }
  }
  const mean = ([sum, count]: number[]) => sum! / Math.max(1, count!);
  return { outline: mean(sums.outline), box: mean(sums.box), border: mean(sums.border) };
}
