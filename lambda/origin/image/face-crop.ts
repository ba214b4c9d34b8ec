// Where `position=face` centres a cover crop: on all the faces when they fit
// in the crop's window, else on the group of faces that one window holds with
// the most face area (a lone largest face at least). The window is the part
// of the image the crop keeps, so its size follows from the image's and the
// box's aspect ratios; a window centred anywhere is held within the image.
// A window shorter than the faces it holds cannot keep them whole: it is
// placed by the largest one's eyes instead, as portrait crops are (the
// detector's box begins at the brows, so its centre would keep the chin and
// collar and put the eyes at the window's top edge).
// At most MAX_FACES faces: the choice compares each with each, a thousand checks.

/** A face as a region of the image the crop is cut from, in its pixels, with the point between its eyes. */
export interface FaceRegion {
  left: number;
  top: number;
  right: number;
  bottom: number;
  eyes: [number, number];
}

/**
 * Where a window shorter than the face puts the eye line: this fraction of
 * the window's height below its top (the forehead kept before the chin).
 */
const EYE_LINE = 0.375;

/** The offset of a window of `window` pixels on a side of `side`, centred on `at` as nearly as the side allows. */
export const centredOn = (at: number, window: number, side: number) => Math.min(side - window, Math.max(0, Math.round(at - window / 2)));

type Box = Omit<FaceRegion, 'eyes'>;

const area = (face: Box) => (face.right - face.left) * (face.bottom - face.top);

function union(faces: Box[]): Box {
  return {
    left: Math.min(...faces.map((face) => face.left)),
    top: Math.min(...faces.map((face) => face.top)),
    right: Math.max(...faces.map((face) => face.right)),
    bottom: Math.max(...faces.map((face) => face.bottom)),
  };
}

const centreOf = (face: Box): [number, number] => [(face.left + face.right) / 2, (face.top + face.bottom) / 2];

/**
 * The point to centre a window of `windowHeight` on for `group`: the centre of
 * their union when it fits, else across that centre and down so that the
 * largest face's eyes lie on EYE_LINE, measured from the face's top (the
 * bottom of an upside-down face, whose eyes are below its centre).
 */
function groupFocus(group: FaceRegion[], windowHeight: number): [number, number] {
  const all = union(group);
  const [x, y] = centreOf(all);
  if (all.bottom - all.top <= windowHeight) return [x, y];
  const largest = group.reduce((a, b) => (area(b) > area(a) ? b : a));
  const eyeLine = largest.eyes[1];
  const upright = eyeLine <= centreOf(largest)[1];
  return [x, eyeLine + (upright ? 0.5 - EYE_LINE : EYE_LINE - 0.5) * windowHeight];
}

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
  return groupFocus(best, window[1]);
}
