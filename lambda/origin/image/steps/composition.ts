// What is drawn with the image: the background under its transparent
// pixels, watermarks over it (one per overlay slot), a border around it.

import sharp, { type Sharp } from 'sharp';
import { inSlot, slotOps, type Ops, type OverlaySlot, type Position } from '../../../grammar';
import { MAX_WATERMARK_PIXELS, type WatermarkImage } from '../../watermarks';
import { along, background, FREE, perMegapixel, pipelineOf, pixels, rgba, type Step, type StepContext } from './context';

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

/** The watermark of overlay `slot` (`watermark`, `watermark2`...), drawn before the slot's text. */
export const watermarkStep = (slot: OverlaySlot): Step => {
  const op = inSlot('watermark', slot);
  const named = (ops: Ops) => slotOps(ops, slot).watermark !== undefined;
  return {
    name: op,
    price: ({ ops, outputPixels }) =>
      // The image it is drawn on as pixels (under a border, the result too), the mark decoded and scaled (a first frame only).
      named(ops)
        ? {
            seconds: perMegapixel(RATES.composite, outputPixels) + perMegapixel(RATES.watermarkDecode, MAX_WATERMARK_PIXELS),
            bytes: 2 * outputPixels * 4 + 2 * MAX_WATERMARK_PIXELS * 4,
          }
        : FREE,
    carriesGainMap: (ops) => !named(ops),
    firstFrameOnly: named,
    async apply(image, context) {
      const mark = context.watermarks?.[op];
      if (!mark) return undefined;
      return drawWatermark(image, context, mark);
    },
  };
};

/** Draws `mark` on the image as it stands, blurred and turned grey or not, and inside the border that follows. */
function drawWatermark(image: Sharp, context: StepContext, mark: WatermarkImage): Promise<Sharp> {
  const { position, margin, size, opacity } = mark.placement;
  return drawOver(
    image,
    context,
    position,
    (width, height) => Math.round(margin * Math.min(width, height)),
    async (room, width) => {
      const overlay = await sharp(mark.bytes, { limitInputPixels: MAX_WATERMARK_PIXELS })
        .resize({ width: Math.min(room[0], Math.max(1, Math.round(size * width))), height: room[1], fit: 'inside' })
        .toColourspace('srgb')
        .ensureAlpha()
        .raw()
        .toBuffer({ resolveWithObject: true });
      const { channels } = overlay.info;
      for (let alpha = channels - 1; alpha < overlay.data.length; alpha += channels) {
        overlay.data[alpha] = Math.round((overlay.data[alpha] as number) * opacity);
      }
      return { data: overlay.data, width: overlay.info.width, height: overlay.info.height, channels };
    },
  );
}

/** An image drawn over the output: raw 8-bit bands, the last its alpha (unpremultiplied). */
export interface Overlay {
  data: Buffer;
  width: number;
  height: number;
  channels: number;
}

/**
 * Draws an overlay (a watermark, a text) over the image as it stands, in
 * memory: `margin` pixels from its edges, at `position` within the room left,
 * made for that room by `make` (given the room and the image's width). An
 * overlay larger than the room is cut to it, keeping the part `position` names.
 */
export async function drawOver(
  image: Sharp,
  context: StepContext,
  position: Position,
  margin: (width: number, height: number) => number,
  make: (room: [number, number], width: number) => Promise<Overlay>,
): Promise<Sharp> {
  const canvas = await pixels(image, context.limits);
  const { width, height } = canvas.info;
  const edge = margin(width, height);
  const room: [number, number] = [Math.max(1, width - 2 * edge), Math.max(1, height - 2 * edge)];
  const overlay = await cutTo(await make(room, width), room, position);
  const composited = pipelineOf(canvas).composite([
    {
      input: overlay.data,
      raw: { width: overlay.width, height: overlay.height, channels: overlay.channels as 4 },
      left: edge + along(position, 'left', 'right', room[0] - overlay.width),
      top: edge + along(position, 'top', 'bottom', room[1] - overlay.height),
    },
  ]);
  // Under a border, in memory again: sharp would composite after the border's extend.
  return context.ops.border ? pipelineOf(await pixels(composited, context.limits)) : composited;
}

/** `overlay` within `room`: as it is when it fits, else the part of it that `position` keeps (its centre, a side, a corner). */
async function cutTo(overlay: Overlay, room: [number, number], position: Position): Promise<Overlay> {
  const [width, height] = [Math.min(overlay.width, room[0]), Math.min(overlay.height, room[1])];
  if (width === overlay.width && height === overlay.height) return overlay;
  const { data, info } = await sharp(overlay.data, {
    raw: { width: overlay.width, height: overlay.height, channels: overlay.channels as 4 },
  })
    .extract({
      left: along(position, 'left', 'right', overlay.width - width),
      top: along(position, 'top', 'bottom', overlay.height - height),
      width,
      height,
    })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

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
