// The transformation as an ordered list of small steps, each doing one thing
// to the sharp pipeline. sharp runs them in one pass over the decoded pixels,
// in its own fixed order (turns, trim, extract, resize, extend, blur, sharpen,
// composite); a step that needs the pixels of the steps before it (trim's
// result size, a blurred fill) ends the pass and starts the next from the
// pixels held in memory. Each step's record lives in its family's file, with
// its price and helpers; this file orders them and asks them.

import type { Sharp } from 'sharp';
import { OVERLAY_SLOTS, type Ops } from '../../../grammar';
import { borderStep, flattenStep, watermarkStep } from './composition';
import { NO_MIRRORS, type EncodedVariant, type PricedWork, type Step, type StepContext, type StepInput } from './context';
import { outputStep } from './encode';
import {
  cropStep,
  focusOf,
  frameOf,
  mirrorStep,
  orientStep,
  pointsOf,
  rotateStep,
  subjectPointsOf,
  trimStep,
  turnedSize,
} from './geometry';
import { gainMapStep } from './hdr';
import { fillStep, resizeStep } from './resize';
import { segmentStep } from './segment';
import { textStep } from './text';
import { adjustStep, blurStep, colourStep, sharpenStep } from './tone-colour';

export { borderWidth, roomFor } from './composition';
export type { EncodedVariant } from './context';
export { MAX_BYTES_ENCODES } from './encode';
export { cropRegion, turnedSize } from './geometry';
export { scaledSize } from './resize';
export { SubjectUnknownError } from './segment';

/** The pipeline, in order. Orientation first, so every later step sees the image as displayed. */
const STEPS: Step[] = [
  orientStep,
  rotateStep,
  mirrorStep,
  trimStep,
  cropStep,
  flattenStep,
  resizeStep,
  segmentStep,
  fillStep,
  blurStep,
  sharpenStep,
  colourStep,
  adjustStep,
  // Each overlay slot's watermark, then its text, slot by slot.
  ...OVERLAY_SLOTS.flatMap((slot) => [watermarkStep(slot), textStep(slot)]),
  borderStep,
  gainMapStep,
  outputStep,
];

/** Whether every step can carry a source's gain map through for `ops` (a JPEG output keeps it then: gain-map.ts). */
export const stepsCarryGainMap = (ops: Ops) => STEPS.every((step) => !step.carriesGainMap || step.carriesGainMap(ops));

/** Whether a step cannot apply `ops` frame by frame, so that an animation gives its first frame (output.ts). */
export const firstFrameOnly = (ops: Ops) => STEPS.some((step) => step.firstFrameOnly?.(ops));

/** Whether a step reads the image at its whole decoded size for `ops`, so that it is decoded without shrink-on-load (budget.ts). */
export const decodesWhole = (ops: Ops) => STEPS.some((step) => step.decodesWhole?.(ops));

/** Each step's price for `work`, in the pipeline's order. */
export const stepPrices = (work: PricedWork) => STEPS.map(({ name, price }) => ({ name, price: price(work) }));

/** Applies every step to `image`; returns the pipeline to run, which a step may have replaced, or the variant a step encoded. */
export async function applySteps(image: Sharp, input: StepInput): Promise<{ pipeline: Sharp; encoded?: EncodedVariant }> {
  const context: StepContext = {
    ...input,
    size: turnedSize(input.ops, input.info),
    mirrorsAfterExtract: NO_MIRRORS,
    focus: focusOf(input.ops, input.info),
    facePoints: pointsOf(input),
    frame: frameOf(input),
    subjectPoints: subjectPointsOf(input),
  };
  let current = image;
  for (const step of STEPS) current = (await step.apply(current, context)) ?? current;
  return { pipeline: current, encoded: context.encoded };
}
