// What is drawn with the image: the background under its transparent
// pixels, a watermark over it, a border around it.

import sharp from 'sharp';
import type { Ops } from '../../../grammar';
import { MAX_WATERMARK_PIXELS } from '../../watermarks';
import { along, background, FREE, perMegapixel, pipelineOf, pixels, rgba, type Step } from './context';

/** CPU seconds per megapixel: of the decoded image for flatten, of the output for the rest (context.ts). */
const RATES = { flatten: 0.01, composite: 0.1, watermarkDecode: 0.1, border: 0.01 };

/** The border's width in pixels (0 without one). */
export const borderWidth = (ops: Ops) => (ops.border ? parseInt(ops.border, 10) : 0);

/** The output's largest side without its border: the border and the image together stay within maxDimension. */
export const roomFor = (ops: Ops, maxDimension: number) => maxDimension - 2 * borderWidth(ops);

export const flattenStep: Step = {
  name: 'flatten',
  price: ({ ops, info, format, decodedPixels, frames }) =>
    info.hasAlpha && (format === 'jpeg' || ops.background)
      ? { seconds: perMegapixel(RATES.flatten, decodedPixels, frames), bytes: 0 }
      : FREE,
  apply(image, context) {
    const colour = background(context);
    // JPEG has no alpha; elsewhere only an opaque background asked for fills transparent pixels.
    if (context.info.hasAlpha && colour.alpha === 1 && (context.plan.format === 'jpeg' || context.ops.background)) {
      image.flatten({ background: colour });
    }
  },
};

export const watermarkStep: Step = {
  name: 'watermark',
  price: ({ ops, outputPixels }) =>
    // The image it is drawn on as pixels (under a border, the result too), the mark decoded and scaled (a first frame only).
    ops.watermark === undefined
      ? FREE
      : {
          seconds: perMegapixel(RATES.composite, outputPixels) + perMegapixel(RATES.watermarkDecode, MAX_WATERMARK_PIXELS),
          bytes: 2 * outputPixels * 4 + 2 * MAX_WATERMARK_PIXELS * 4,
        },
  carriesGainMap: (ops) => ops.watermark === undefined,
  firstFrameOnly: (ops) => ops.watermark !== undefined,
  async apply(image, context) {
    const { watermark: mark, limits } = context;
    if (!mark) return undefined;
    // Drawn on the image as it stands, blurred and turned grey or not, and inside the border that follows.
    const canvas = await pixels(image, limits);
    const { width, height } = canvas.info;
    const { position, margin: marginShare, size, opacity } = mark.placement;
    const margin = Math.round(marginShare * Math.min(width, height));
    const room = (side: number) => Math.max(1, side - 2 * margin);
    const overlay = await sharp(mark.bytes, { limitInputPixels: MAX_WATERMARK_PIXELS })
      .resize({ width: Math.min(room(width), Math.max(1, Math.round(size * width))), height: room(height), fit: 'inside' })
      .toColourspace('srgb')
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    const { channels } = overlay.info;
    for (let alpha = channels - 1; alpha < overlay.data.length; alpha += channels) {
      overlay.data[alpha] = Math.round((overlay.data[alpha] as number) * opacity);
    }
    const placed = {
      input: overlay.data,
      raw: { width: overlay.info.width, height: overlay.info.height, channels },
      left: margin + along(position, 'left', 'right', room(width) - overlay.info.width),
      top: margin + along(position, 'top', 'bottom', room(height) - overlay.info.height),
    };
    const composited = pipelineOf(canvas).composite([placed]);
    // Under a border, in memory again: sharp would composite after the border's extend.
    return context.ops.border ? pipelineOf(await pixels(composited, limits)) : composited;
  },
};

export const borderStep: Step = {
  name: 'border',
  price: ({ ops, outputPixels, frames }) => (ops.border ? { seconds: perMegapixel(RATES.border, outputPixels, frames), bytes: 0 } : FREE),
  apply(image, { ops }) {
    // sharp extends before it blurs and sharpens, so those soften the border's inner edge; grayscale leaves its colour.
    if (!ops.border) return;
    const width = borderWidth(ops);
    image.extend({
      top: width,
      bottom: width,
      left: width,
      right: width,
      background: rgba(ops.border.slice(ops.border.indexOf(',') + 1)),
    });
  },
};
