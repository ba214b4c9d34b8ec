// Where `position=auto` centres a cover crop when the image has no face: on
// the salient subject (subject.ts). Along each side, a window at least as long
// as the subject's box holds all of it, centred on the box; a shorter one is
// centred on the subject's anchor, kept within the box so that none of the
// window is spent beside the subject while some of it is cut. The anchor
// (subjectAnchor) is the mask's centroid across and the box's top down: a
// window shorter than the subject keeps its top, as portrait croppers keep
// heads. The window is then held within the image (centredOn).

import type { Subject, SubjectBox } from './subject';

/** The subject as a region of the image the crop is cut from, in its pixels, with its anchor (subjectAnchor). */
export interface SubjectRegion {
  left: number;
  top: number;
  right: number;
  bottom: number;
  anchor: [number, number];
}

/**
 * The centroid of the mask's values over `box`, in fractions of the image
 * (as the box is): each mask pixel whose centre lies in the box weighs its
 * value. The box's centre when the mask holds nothing there.
 */
export function weightedCentre({ mask }: Subject, box: SubjectBox): [number, number] {
  const { data, width, height } = mask;
  // The mask pixels whose centres lie in the box: column c's centre is at (c + 0.5) / width.
  const first = (start: number, side: number) => Math.max(0, Math.ceil(start * side - 0.5));
  const last = (end: number, side: number) => Math.min(side - 1, Math.floor(end * side - 0.5));
  let [sum, sumX, sumY] = [0, 0, 0];
  for (let row = first(box.y, height); row <= last(box.y + box.height, height); row++) {
    for (let column = first(box.x, width); column <= last(box.x + box.width, width); column++) {
      const weight = data[row * width + column]!;
      sum += weight;
      sumX += weight * (column + 0.5);
      sumY += weight * (row + 0.5);
    }
  }
  if (sum === 0) return [box.x + box.width / 2, box.y + box.height / 2];
  return [sumX / sum / width, sumY / sum / height];
}

/**
 * The point a window shorter than the subject keeps, in fractions of the
 * image as displayed: across, the mask's centroid over the box; down, the
 * box's top. Things stand on what is below them (a cup on its saucer, an
 * animal on its legs, a bottle on a table), and the map spreads down onto
 * that support and its shadows while the top is where the subject ends
 * against the background. It is followed through turns and mirrors like the
 * box, so the subject's own top is kept whichever way the output shows it.
 */
export function subjectAnchor(subject: Subject, box: SubjectBox): [number, number] {
  return [weightedCentre(subject, box)[0], box.y];
}

/** Where a window of `window` pixels centres along a side on which the subject spans `low` to `high`, its anchor at `anchor`. */
function along(low: number, high: number, anchor: number, window: number): number {
  if (high - low <= window) return (low + high) / 2;
  return Math.min(high - window / 2, Math.max(low + window / 2, anchor));
}

/** The point to centre a window of `window` (width, height) on so that it keeps the subject: all of it along a side where it fits. */
export function subjectFocus(subject: SubjectRegion, window: [number, number]): [number, number] {
  return [
    along(subject.left, subject.right, subject.anchor[0], window[0]),
    along(subject.top, subject.bottom, subject.anchor[1], window[1]),
  ];
}
