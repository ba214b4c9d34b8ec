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
// (docs/subjects.md, "The subject set and how it is scored").

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
   * Whether the box holds the whole subject, clear of the photo's edges, so
   * that a cut-out should leave the border transparent; a face or a head in a
   * portrait is what a crop must keep, but the body below it is subject too.
   */
  whole: boolean;
}

interface CaseSpec {
  name: string;
  photo: SubjectPhotoName;
  /** The part of the photo kept, in its pixels. */
  cut: { left: number; top: number; width: number; height: number };
  /** The subject, in pixels of the photo as fetched (its extremes, read off by eye). */
  box: [left: number, top: number, right: number, bottom: number];
  whole: boolean;
}

/**
 * The photos and their cuts. Each subject fits the portrait (3:4) and the
 * wide (2:1) window of its cut, so some cover crop keeps it; where it sits
 * off the centre of an axis, the centred window of that axis loses it.
 */
const CASES: CaseSpec[] = [
  // The rocket from its nose to its mount, low in the frame: the wide crop's centre cuts its base.
  { name: 'rocket, low', photo: 'rocket.jpg', cut: { left: 0, top: 0, width: 640, height: 427 }, box: [288, 124, 358, 414], whole: true },
  // The dahlia's petals, left of centre once the photo's left 100 px are cut: the portrait's centre cuts its left side.
  { name: 'dahlia, left', photo: 'flower.jpg', cut: { left: 100, top: 0, width: 540, height: 427 }, box: [170, 83, 448, 357], whole: true },
  // The cup from its rim to its handle, with the spoon; the saucer around it is left out, so the cut-out is not scored.
  { name: 'espresso cup', photo: 'coffee.png', cut: { left: 0, top: 0, width: 600, height: 400 }, box: [174, 16, 420, 324], whole: false },
  // Her head from the hair's top to the chin, in the top-left corner once the photo is cut to the right and the top.
  {
    name: 'astronaut, head top left',
    photo: 'astronaut.png',
    cut: { left: 100, top: 0, width: 412, height: 300 },
    box: [154, 10, 307, 174],
    whole: false,
  },
  // Her face from the brows to the chin, between the ears: above the wide crop's centre.
  {
    name: 'Grace Hopper, face',
    photo: 'grace_hopper.jpg',
    cut: { left: 0, top: 0, width: 512, height: 600 },
    box: [169, 132, 379, 330],
    whole: false,
  },
  // The cat's face from the brows to the chin and between the cheeks, right of centre once the left 60 px are cut.
  {
    name: 'cat, face right',
    photo: 'chelsea.png',
    cut: { left: 60, top: 0, width: 391, height: 300 },
    box: [126, 75, 352, 270],
    whole: false,
  },
  // The wall clock, blurred by the camera's move: a muted subject on a plain wall, low left once cut.
  {
    name: 'blurred clock, low left',
    photo: 'clock_motion.png',
    cut: { left: 120, top: 0, width: 280, height: 250 },
    box: [140, 94, 282, 216],
    whole: true,
  },
];

/** The set, cut from the fetched photos. */
export async function subjectCases(photos: SubjectPhotos): Promise<SubjectCase[]> {
  return Promise.all(
    CASES.map(async ({ name, photo, cut, box: [left, top, right, bottom], whole }) => ({
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
      whole,
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

/** Mean alpha (0 to 1) of a cut-out over the subject's box, and over the border frame away from it. */
export interface CutOutMeans {
  subject: number;
  border: number;
}

/** The border frame's depth, and how far from the box a border pixel must be, in fractions of the short side. */
const FRAME = 0.1;

/** The means of a cut-out's alpha (an RGBA image the size of the photo) over the subject's box and the frame. */
export async function cutOutMeans(cutOut: Buffer, subject: Box): Promise<CutOutMeans> {
  const { data, info } = await sharp(cutOut).ensureAlpha().extractChannel(3).raw().toBuffer({ resolveWithObject: true });
  const { width, height } = info;
  const depth = FRAME * Math.min(width, height);
  const [left, top] = [subject.x * width, subject.y * height];
  const [right, bottom] = [left + subject.width * width, top + subject.height * height];
  const sums = { subject: [0, 0], border: [0, 0] };
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const alpha = data[y * width + x]! / 255;
      const inBox = x + 0.5 >= left && x + 0.5 <= right && y + 0.5 >= top && y + 0.5 <= bottom;
      const inFrame = Math.min(x, y, width - 1 - x, height - 1 - y) < depth;
      const awayFromBox = x < left - depth || x > right + depth || y < top - depth || y > bottom + depth;
      const sum = inBox ? sums.subject : inFrame && awayFromBox ? sums.border : undefined;
      if (!sum) continue;
      sum[0]! += alpha;
      sum[1]! += 1;
    }
  }
  return { subject: sums.subject[0]! / sums.subject[1]!, border: sums.border[0]! / Math.max(1, sums.border[1]!) };
}
