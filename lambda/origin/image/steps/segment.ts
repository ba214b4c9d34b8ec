// The cut-out (`segment=foreground`): the output's alpha becomes the salient
// subject's mask (subject.ts), mapped through what the geometry did to the
// image (turns, mirrors, trim, crop, resize, cover crop) and refined against
// the output's own edges (matte.ts), so a 320 px mask gives crisp edges at
// any size. It runs on the resized image in memory, before contain's padding
// (drawn here in the background colour, or by a blurred fill after), blur,
// colour, watermark and border, which draw on the cut-out as they stand.
// JPEG, or a `background`, puts the cut-out on that colour (white for JPEG).

import sharp, { type OutputInfo } from 'sharp';
import { coverCrop, type Ops } from '../../../grammar';
import { applyMatte, greyOf, MATTE_SIDE, type AlphaPixels, type Plane } from '../matte';
import type { SubjectMask } from '../subject';
import { along, background, FREE, perMegapixel, pipelineOf, pixels, type Point, type Step, type StepContext } from './context';
import { containBox } from './resize';

/**
 * CPU seconds per megapixel on one thread, measured on noise with
 * `npx tsx scripts/bench/segment-price.ts` (fresh processes, so V8's first
 * compilation included): of the output, for the pass that applies the matte
 * and the canvas it may be drawn on; of the filter's copy (at most MATTE_SIDE
 * a side), for the guided filter.
 */
const RATES = { output: 0.06, filter: 0.35 };

/**
 * What it holds: float planes of the filter's copy at once (matte.ts),
 * output-sized copies of 8-bit RGBA (the pixels, a canvas), and the heap V8
 * grows for the filter whatever the size (measured as above: 23 MB at
 * 512x512, 57 MB at 1024x1024, 147 MB at 4096x4096 with a background).
 */
const FILTER_PLANES = 12;
const OUTPUT_COPIES = 2;
const HEAP_BYTES = 16 * 2 ** 20;

/** The filter's radius in the mask's pixels as they land on the filter's copy: an edge is looked for within this of the mask's. */
const RADIUS_CELLS = 2;

/** A subject's mask was asked for and the transform has none: the caller decides what that answers (never the image uncut). */
export class SubjectUnknownError extends Error {
  constructor() {
    super('segment=foreground needs the subject of the source, which this transform was not given.');
    this.name = 'SubjectUnknownError';
  }
}

/** x' = m[0] x + m[1] y + m[2], y' = m[3] x + m[4] y + m[5]. */
type Affine = [number, number, number, number, number, number];

/** `outer` after `inner`. */
const compose = (outer: Affine, inner: Affine): Affine => [
  outer[0] * inner[0] + outer[1] * inner[3],
  outer[0] * inner[1] + outer[1] * inner[4],
  outer[0] * inner[2] + outer[1] * inner[5] + outer[2],
  outer[3] * inner[0] + outer[4] * inner[3],
  outer[3] * inner[1] + outer[4] * inner[4],
  outer[3] * inner[2] + outer[4] * inner[5] + outer[5],
];

/** Where sharp's cover crop at a named position cuts from `room` spare pixels (its centre rounds up a half). */
const gravityOffset = (position: string, low: string, high: string, room: number) =>
  position.includes(low) ? 0 : position.includes(high) ? room : Math.floor((room + 1) / 2);

/**
 * The output's pixels (before padding) as points of the image of `size`: the
 * part kept scaled to the output, or for a cover crop scaled to cover it and
 * cut at the offset resize chose, sharp reported (attention, entropy) or
 * sharp's rule places (a named position).
 */
function outputToImage(
  { ops, size, region, coverOffset }: StepContext,
  { width, height, cropOffsetLeft, cropOffsetTop }: OutputInfo,
): Affine {
  const kept = region ?? { left: 0, top: 0, width: size[0], height: size[1] };
  if (!coverCrop(ops)) return [kept.width / width, 0, kept.left, 0, kept.height / height, kept.top];
  const scale = Math.max(width / kept.width, height / kept.height);
  const room = [Math.round(kept.width * scale) - width, Math.round(kept.height * scale) - height] as const;
  const position = ops.position ?? 'center';
  const offset: Point =
    coverOffset ??
    (cropOffsetLeft !== undefined
      ? [-cropOffsetLeft, -(cropOffsetTop ?? 0)]
      : [gravityOffset(position, 'left', 'right', room[0]), gravityOffset(position, 'top', 'bottom', room[1])]);
  return [1 / scale, 0, kept.left + offset[0] / scale, 0, 1 / scale, kept.top + offset[1] / scale];
}

/** Points of the image of `size` as fractions of the image as displayed: the inverse of where its corners went (`frame`). */
function imageToDisplayed([origin, right, down]: [Point, Point, Point]): Affine {
  const [a, b, c, d] = [right[0] - origin[0], down[0] - origin[0], right[1] - origin[1], down[1] - origin[1]];
  const det = a * d - b * c;
  return [d / det, -b / det, (b * origin[1] - d * origin[0]) / det, -c / det, a / det, (c * origin[0] - a * origin[1]) / det];
}

/** `mask` sampled bilinearly (edges held) at index coordinates `x`, `y`, as 0 to 1. */
function sample({ data, width, height }: SubjectMask, x: number, y: number): number {
  const cx = Math.min(width - 1, Math.max(0, x));
  const cy = Math.min(height - 1, Math.max(0, y));
  const [x0, y0] = [Math.floor(cx), Math.floor(cy)];
  const [x1, y1] = [Math.min(width - 1, x0 + 1), Math.min(height - 1, y0 + 1)];
  const [wx, wy] = [cx - x0, cy - y0];
  const upper = data[y0 * width + x0]! * (1 - wx) + data[y0 * width + x1]! * wx;
  const lower = data[y1 * width + x0]! * (1 - wx) + data[y1 * width + x1]! * wx;
  return (upper * (1 - wy) + lower * wy) / 255;
}

/**
 * The subject's mask on a `filter`-sized copy of the output (`info`), and
 * the filter's radius there: each pixel's centre taken back through the
 * geometry to the image as displayed, and read from the mask bilinearly.
 */
function maskOnOutput(context: StepContext, info: OutputInfo, [width, height]: [number, number]): { mask: Plane; radius: number } {
  const { mask } = context.subject!;
  const toOutput: Affine = [info.width / width, 0, 0, 0, info.height / height, 0];
  const toDisplayed = compose(imageToDisplayed(context.frame!), compose(outputToImage(context, info), toOutput));
  const toMask = compose([mask.width, 0, -0.5, 0, mask.height, -0.5], toDisplayed);
  const data = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const [cx, cy] = [x + 0.5, y + 0.5];
      data[y * width + x] = sample(mask, toMask[0] * cx + toMask[1] * cy + toMask[2], toMask[3] * cx + toMask[4] * cy + toMask[5]);
    }
  }
  // A mask pixel's span on the copy, along the copy's two sides, averaged.
  const span = (Math.hypot(toMask[0], toMask[3]) ** -1 + Math.hypot(toMask[1], toMask[4]) ** -1) / 2;
  const radius = Math.max(1, Math.min(Math.round(RADIUS_CELLS * span), Math.max(width, height) >> 2));
  return { mask: { data, width, height }, radius };
}

/** The output's grey at the filter's size: a copy scaled down by sharp, or its own. */
async function guideOf(cut: AlphaPixels, [width, height]: [number, number]): Promise<Plane> {
  if (width === cut.width && height === cut.height) return greyOf(cut);
  const raw = { width: cut.width, height: cut.height, channels: cut.channels as 2 | 4 };
  const small = await sharp(cut.data, { raw }).resize(width, height, { fit: 'fill' }).raw().toBuffer();
  return greyOf({ data: small, width, height, channels: cut.channels });
}

const contained = (ops: Ops) => ops.fit === 'contain' && ops.width !== undefined && ops.height !== undefined;

/**
 * The cut-out on its background, padded to contain's box where it has one
 * (a blurred fill draws its own after): JPEG puts it on an opaque colour,
 * white by default; `background` on its colour; else it stays as cut.
 */
async function onBackground(cut: AlphaPixels, info: OutputInfo, context: StepContext) {
  const { ops, plan, limits } = context;
  const padded = contained(ops) && ops.fill !== 'blur';
  const colour = background(context);
  const under = plan.format === 'jpeg' ? { ...colour, alpha: 1 } : colour;
  if (!padded && under.alpha === 0) return pipelineOf({ data: cut.data, info });
  const [width, height] = padded ? containBox(ops, limits.maxDimension) : [cut.width, cut.height];
  const position = ops.position ?? 'center';
  const placed = {
    input: cut.data,
    raw: { width: cut.width, height: cut.height, channels: cut.channels as 2 | 4 },
    left: along(position, 'left', 'right', width - cut.width),
    top: along(position, 'top', 'bottom', height - cut.height),
  };
  const canvas = sharp({ create: { width, height, channels: 4, background: under } }).composite([placed]);
  // In memory, so that blur and the rest apply to the whole canvas (sharp composites after them).
  return pipelineOf(await pixels(canvas, limits));
}

export const segmentStep: Step = {
  name: 'segment',
  price: ({ ops, outputPixels }) => {
    if (ops.segment === undefined) return FREE;
    const filtered = Math.min(outputPixels, MATTE_SIDE * MATTE_SIDE);
    return {
      seconds: perMegapixel(RATES.output, outputPixels) + perMegapixel(RATES.filter, filtered),
      bytes: OUTPUT_COPIES * 4 * outputPixels + FILTER_PLANES * 4 * filtered + HEAP_BYTES,
    };
  },
  carriesGainMap: (ops) => ops.segment === undefined,
  // One mask, of the first frame: the subject of the others is not known.
  firstFrameOnly: (ops) => ops.segment !== undefined,
  async apply(image, context) {
    if (context.ops.segment === undefined) return undefined;
    if (!context.subject) throw new SubjectUnknownError();
    const { data, info } = await pixels(image.ensureAlpha(), context.limits);
    const cut: AlphaPixels = { data, width: info.width, height: info.height, channels: info.channels };
    if (context.subject.box === null) {
      // Nothing salient: nothing is kept.
      for (let alpha = cut.channels - 1; alpha < data.length; alpha += cut.channels) data[alpha] = 0;
    } else {
      const scale = Math.min(1, MATTE_SIDE / Math.max(cut.width, cut.height));
      const size: [number, number] = [Math.max(1, Math.round(cut.width * scale)), Math.max(1, Math.round(cut.height * scale))];
      const { mask, radius } = maskOnOutput(context, info, size);
      applyMatte(cut, await guideOf(cut, size), mask, radius);
    }
    return onBackground(cut, info, context);
  },
};
