// What the models find in a source (faces, the salient subject), and which
// requests read each: light enough for the handler, which reads and keeps the
// records, to import without the models or sharp.

import { coverCrop, type Ops } from '../../grammar';
import type { FaceBox } from './faces';
import type { PackedSubject } from './subject-record';

/** What rounding a box's fractions to four decimals (roundedFace, subjectBox) may add to its far edge. */
const ROUNDING = 1e-4;

/** A fraction of the image: 0 to 1. */
export const isFraction = (value: unknown): value is number => typeof value === 'number' && value >= 0 && value <= 1;

/** Whether a remembered box, in fractions, lies in the image: each of its numbers a fraction, its far edges within the image (rounding allowed). */
export function liesInImage(box: unknown): boolean {
  const { x, y, width, height } = (box ?? {}) as Record<string, unknown>;
  if (![x, y, width, height].every(isFraction)) return false;
  return (x as number) + (width as number) <= 1 + ROUNDING && (y as number) + (height as number) <= 1 + ROUNDING;
}

/** What was found in a source: its faces and its subject (packed), each when searched for. */
export interface Findings {
  faces?: FaceBox[];
  subject?: PackedSubject;
}

const isAuto = (ops: Ops) => ops.position === 'auto' && coverCrop(ops);

/** A cut-out: its alpha is the subject's mask. */
export const isCutOut = (ops: Ops) => ops.segment === 'foreground';

/** Whether the transform of `ops` reads faces: format=json's, and the crops that put faces first. */
export const wantsFaces = (ops: Ops) => ops.format === 'json' || (ops.position === 'face' && coverCrop(ops)) || isAuto(ops);

/** Whether it reads the subject: format=json's, `position=auto`'s crop, and a cut-out. */
export const wantsSubject = (ops: Ops) => ops.format === 'json' || isAuto(ops) || isCutOut(ops);
