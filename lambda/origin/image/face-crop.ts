// Where `position=face` centres a cover crop: on all the faces when they fit
// in the crop's window, else on the group of faces that one window holds with
// the most face area (a lone largest face at least). The window is the part
// of the image the crop keeps, so its size follows from the image's and the
// box's aspect ratios; a window centred anywhere is held within the image.
// At most MAX_FACES faces: the choice compares each with each, a thousand checks.

/** A face as a region of the image the crop is cut from, in its pixels. */
export interface FaceRegion {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** The offset of a window of `window` pixels on a side of `side`, centred on `at` as nearly as the side allows. */
export const centredOn = (at: number, window: number, side: number) => Math.min(side - window, Math.max(0, Math.round(at - window / 2)));

const area = (face: FaceRegion) => (face.right - face.left) * (face.bottom - face.top);

function union(faces: FaceRegion[]): FaceRegion {
  return {
    left: Math.min(...faces.map((face) => face.left)),
    top: Math.min(...faces.map((face) => face.top)),
    right: Math.max(...faces.map((face) => face.right)),
    bottom: Math.max(...faces.map((face) => face.bottom)),
  };
}

const centreOf = (face: FaceRegion): [number, number] => [(face.left + face.right) / 2, (face.top + face.bottom) / 2];

/**
 * The point to centre a window of `window` (width, height) on, in an image of
 * `size`, so that it holds the faces it can: all of them when their union
 * fits, else the window's best group. Undefined without a face.
 */
export function faceFocus(faces: FaceRegion[], size: [number, number], window: [number, number]): [number, number] | undefined {
  if (faces.length === 0) return undefined;
  const all = union(faces);
  if (all.right - all.left <= window[0] && all.bottom - all.top <= window[1]) return centreOf(all);
  let best: FaceRegion[] = [];
  let bestArea = -1;
  // Largest first: between groups of equal area, the one around the larger face wins.
  for (const anchor of [...faces].sort((a, b) => area(b) - area(a))) {
    const [x, y] = centreOf(anchor);
    const left = centredOn(x, window[0], size[0]);
    const top = centredOn(y, window[1], size[1]);
    const held = faces.filter(
      (face) => face.left >= left && face.top >= top && face.right <= left + window[0] && face.bottom <= top + window[1],
    );
    const heldArea = held.reduce((sum, face) => sum + area(face), 0);
    if (heldArea > bestArea) [best, bestArea] = [held.length ? held : [anchor], heldArea];
  }
  return centreOf(union(best));
}
