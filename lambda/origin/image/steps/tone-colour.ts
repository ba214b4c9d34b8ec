// What the steps do to the pixels' values: blur, sharpen, the colourspace
// (grayscale or sRGB), and brightness, contrast, saturation and gamma.

import { OVERLAY_SLOTS, slotOps, type Ops } from '../../../grammar';
import { framesToLoad } from '../input';
import { FREE, inMemory, perMegapixel, pipelineOf, pixels, type PricedWork, type Step } from './context';

/**
 * CPU seconds per megapixel: of the decoded image for CMYK, of the output for
 * the rest (context.ts). Blur's is per band, and grows with sigma (its mask's
 * width); sharpen's fixed part is its conversion to LAB and back, and
 * `reblur` the blur's own price again, per unit and per sigma of sharpen,
 * when they share a pipeline.
 */
const RATES = {
  blur: { perBand: 0.004, perBandSigma: 0.0005 },
  sharpen: { fixed: 0.08, perSigma: 0.015, reblur: 0.8, reblurPerSigma: 0.5 },
  cmyk: 0.1,
  grayscale: 0.02,
  adjust: { modulate: 0.1, gamma: 0.03 },
};

/** Bands of the output's pixels: alpha is kept but in JPEG. */
const outputBands = ({ info, format }: PricedWork) => (info.hasAlpha && format !== 'jpeg' ? 4 : 3);

const blurSeconds = (work: PricedWork) =>
  perMegapixel((RATES.blur.perBand + RATES.blur.perBandSigma * (work.ops.blur ?? 0)) * outputBands(work), work.outputPixels, work.frames);

/**
 * Whether the blurred image is made in memory before it is sharpened: sharpen's
 * mask would otherwise ask for the blur again over every overlap, at a cost of
 * their product. Frames stay in one pipeline, which keeps their timing.
 */
const blurredIntoMemory = (ops: Ops, frames: number) => ops.blur !== undefined && ops.sharpen !== undefined && frames === 1;

/** A border follows with no watermark between, which would hold the image in memory before it. */
const bordered = (ops: Ops) => ops.border !== undefined && OVERLAY_SLOTS.every((slot) => slotOps(ops, slot).watermark === undefined);

const adjusts = (ops: Ops) =>
  ops.brightness !== undefined || ops.contrast !== undefined || ops.saturation !== undefined || ops.gamma !== undefined;

/**
 * brightness, contrast and saturation as one sharp modulate, in CIE LCh:
 * lightness times brightness, then spread around mid-grey (L* 50) by
 * contrast; chroma times saturation. Undefined when none is asked for.
 */
function modulation(ops: Ops): { brightness: number; saturation: number; lightness: number } | undefined {
  if (ops.brightness === undefined && ops.contrast === undefined && ops.saturation === undefined) return undefined;
  const contrast = ops.contrast ?? 1;
  return { brightness: (ops.brightness ?? 1) * contrast, saturation: ops.saturation ?? 1, lightness: 50 * (1 - contrast) };
}

export const blurStep: Step = {
  name: 'blur',
  price: (work) =>
    // libvips keeps a copy of its input for the mask's reach; a still that is sharpened after is blurred into memory.
    work.ops.blur === undefined
      ? FREE
      : {
          seconds: blurSeconds(work),
          bytes:
            work.outputPixels * work.frames * outputBands(work) + (blurredIntoMemory(work.ops, work.frames) ? work.outputPixels * 4 : 0),
        },
  carriesGainMap: (ops) => !blurredIntoMemory(ops, 1),
  async apply(image, { ops, info, plan, limits }) {
    if (ops.blur === undefined) return undefined;
    image.blur(ops.blur);
    const frames = plan.animated ? framesToLoad(info, limits) : 1;
    return blurredIntoMemory(ops, frames) ? pipelineOf(await pixels(image, limits)) : undefined;
  },
};

export const sharpenStep: Step = {
  name: 'sharpen',
  price: (work) => {
    const { ops, outputPixels, frames } = work;
    if (ops.sharpen === undefined) return FREE;
    const own = perMegapixel(RATES.sharpen.fixed + RATES.sharpen.perSigma * ops.sharpen, outputPixels, frames);
    // On a blur still in the pipeline, its mask asks for the blur again over every overlap.
    const recomputed =
      ops.blur !== undefined && !blurredIntoMemory(ops, frames)
        ? blurSeconds(work) * (RATES.sharpen.reblur + RATES.sharpen.reblurPerSigma * ops.sharpen)
        : 0;
    return { seconds: own + recomputed, bytes: 0 };
  },
  apply(image, { ops }) {
    if (ops.sharpen !== undefined) image.sharpen({ sigma: ops.sharpen });
  },
};

export const colourStep: Step = {
  name: 'colour',
  price: ({ ops, info, decodedPixels, outputPixels, frames }) => {
    // CMYK is converted to sRGB through its profile as decoded; grayscale runs on the output.
    const cmyk = info.channels - (info.hasAlpha ? 1 : 0) === 4;
    const seconds =
      (cmyk ? perMegapixel(RATES.cmyk, decodedPixels, frames) : 0) +
      (ops.grayscale ? perMegapixel(RATES.grayscale, outputPixels, frames) : 0);
    return seconds ? { seconds, bytes: 0 } : FREE;
  },
  apply(image, { ops }) {
    // 8-bit sRGB for every source (CMYK, 16-bit, wide gamut); grayscale is its own colourspace.
    if (ops.grayscale) image.grayscale();
    else image.toColourspace('srgb');
  },
};

export const adjustStep: Step = {
  name: 'adjust',
  price: (work) => {
    const { ops, outputPixels, frames } = work;
    if (!adjusts(ops)) return FREE;
    const rate = (modulation(ops) ? RATES.adjust.modulate : 0) + (ops.gamma !== undefined ? RATES.adjust.gamma : 0);
    const passes = ops.gamma === undefined ? (bordered(ops) ? 1 : 0) : bordered(ops) ? 2 : 1;
    return { seconds: perMegapixel(rate, outputPixels, frames), bytes: passes * outputPixels * frames * outputBands(work) };
  },
  // A brighter or greyer SDR image would need another gain map, which no step makes.
  carriesGainMap: (ops) => !adjusts(ops),
  async apply(image, context) {
    const { ops, limits } = context;
    const modulated = modulation(ops);
    // In this pass: sharp modulates after the resize and blur, before it sharpens.
    if (modulated) image.modulate(modulated);
    // sharp adds a border before it modulates, and darkens by a gamma only before its resize: those take a pass of their own.
    if (ops.gamma === undefined && !(modulated && bordered(ops))) return undefined;
    const adjusted = pipelineOf(await inMemory(image, context));
    if (ops.gamma === undefined) return adjusted;
    // sharp darkens by its first exponent before the other steps and lightens by the second after them.
    adjusted.gamma(ops.gamma < 1 ? 1 / ops.gamma : 1, Math.max(1, ops.gamma));
    return bordered(ops) ? pipelineOf(await pixels(adjusted, limits)) : adjusted;
  },
};
