// The transformation as an ordered list of small steps, each doing one thing
// to the sharp pipeline. sharp runs them in one pass over the decoded pixels.

import type { Sharp } from 'sharp';
import type { Ops, Position } from '../../grammar';
import type { Limits } from '../config';
import type { SourceInfo } from './input';
import { encode, type OutputPlan } from './output';

export interface StepContext {
  ops: Ops;
  info: SourceInfo;
  plan: OutputPlan;
  limits: Limits;
}

type Step = (image: Sharp, context: StepContext) => void;

type Rgba = { r: number; g: number; b: number; alpha: number };

function rgba(hex: string): Rgba {
  const channel = (i: number) => parseInt(hex.slice(i, i + 2), 16);
  return { r: channel(0), g: channel(2), b: channel(4), alpha: hex.length === 8 ? channel(6) / 255 : 1 };
}

const WHITE: Rgba = { r: 255, g: 255, b: 255, alpha: 1 };
const TRANSPARENT: Rgba = { r: 0, g: 0, b: 0, alpha: 0 };

/** Contain's padding and the colour under transparent pixels: white for JPEG, transparent otherwise. */
function background({ ops, plan }: StepContext): Rgba {
  if (ops.background) return rgba(ops.background);
  return plan.format === 'jpeg' ? WHITE : TRANSPARENT;
}

const SHARP_POSITIONS: Record<Position, string> = {
  center: 'centre',
  top: 'top',
  right: 'right',
  bottom: 'bottom',
  left: 'left',
  'top-left': 'left top',
  'top-right': 'right top',
  'bottom-left': 'left bottom',
  'bottom-right': 'right bottom',
  entropy: 'entropy',
  attention: 'attention',
};

/** The size sharp would produce, for the fits that scale rather than fill a box. */
export function scaledSize(ops: Ops, width: number, height: number): [number, number] | undefined {
  const scales: number[] = [];
  if (ops.width !== undefined) scales.push(ops.width / width);
  if (ops.height !== undefined) scales.push(ops.height / height);
  const boxed = scales.length === 2;
  if (boxed && ops.fit !== 'inside' && ops.fit !== 'outside') return undefined; // cover, contain, fill: the box
  let scale = scales.length === 0 ? 1 : ops.fit === 'outside' ? Math.max(...scales) : Math.min(...scales);
  if (!ops.enlarge) scale = Math.min(scale, 1);
  return [width * scale, height * scale];
}

/** libvips' largest image side: scaling up past it fails, however small the output. */
const MAX_COORDINATE = 10_000_000;

/**
 * For an enlarging cover crop of an extreme aspect ratio (a 10000x1 source
 * to 8192x8192), the region of the source to crop before scaling, because
 * sharp would first scale the whole source past libvips' limit. It is cut at
 * the requested position; entropy and attention fall back to the centre.
 */
function preCrop(ops: Ops, width: number, height: number) {
  if (ops.width === undefined || ops.height === undefined || (ops.fit ?? 'cover') !== 'cover' || !ops.enlarge) return undefined;
  const scale = Math.max(ops.width / width, ops.height / height);
  if (Math.max(width, height) * scale <= MAX_COORDINATE) return undefined;
  const cropWidth = Math.min(width, Math.max(1, Math.round(ops.width / scale)));
  const cropHeight = Math.min(height, Math.max(1, Math.round(ops.height / scale)));
  const position = ops.position ?? 'center';
  const along = (low: string, high: string, room: number) =>
    position.includes(low) ? 0 : position.includes(high) ? room : Math.floor(room / 2);
  return {
    left: along('left', 'right', width - cropWidth),
    top: along('top', 'bottom', height - cropHeight),
    width: cropWidth,
    height: cropHeight,
  };
}

/** The pipeline, in order. Orientation first, so every later step sees the image as displayed. */
const STEPS: Step[] = [
  function orient(image) {
    image.autoOrient();
  },

  function rotate(image, { ops, plan }) {
    // Frames can only be turned by halves: a half turn is a flip plus a flop (see mirror).
    if (ops.rotate && !plan.animated) image.rotate(ops.rotate);
  },

  function mirror(image, { ops, plan }) {
    const halfTurn = plan.animated && ops.rotate === 180;
    if (Boolean(ops.flip) !== halfTurn) image.flip();
    if (Boolean(ops.flop) !== halfTurn) image.flop();
  },

  function flatten(image, context) {
    const colour = background(context);
    // JPEG has no alpha; elsewhere only an opaque background asked for fills transparent pixels.
    if (context.info.hasAlpha && colour.alpha === 1 && (context.plan.format === 'jpeg' || context.ops.background)) {
      image.flatten({ background: colour });
    }
  },

  function resize(image, context) {
    const { ops, info, limits } = context;
    const quarterTurn = ops.rotate === 90 || ops.rotate === 270;
    const [width, height] = quarterTurn ? [info.height, info.width] : [info.width, info.height];
    const scaled = scaledSize(ops, width, height);
    // Keep the output within maxDimension even when the request leaves a side to the aspect ratio.
    if (scaled && Math.max(...scaled) > limits.maxDimension) {
      const shrink = limits.maxDimension / Math.max(...scaled);
      image.resize({
        width: Math.max(1, Math.round(scaled[0] * shrink)),
        height: Math.max(1, Math.round(scaled[1] * shrink)),
        fit: 'fill',
      });
      return;
    }
    if (ops.width === undefined && ops.height === undefined) return;
    const crop = preCrop(ops, width, height);
    if (crop) {
      image.extract(crop).resize({ width: ops.width, height: ops.height, fit: 'fill' });
      return;
    }
    image.resize({
      width: ops.width,
      height: ops.height,
      fit: ops.fit ?? 'cover',
      position: SHARP_POSITIONS[ops.position ?? 'center'],
      withoutEnlargement: !ops.enlarge,
      background: background(context),
    });
  },

  function blur(image, { ops }) {
    if (ops.blur !== undefined) image.blur(ops.blur);
  },

  function sharpen(image, { ops }) {
    if (ops.sharpen !== undefined) image.sharpen({ sigma: ops.sharpen });
  },

  function colour(image, { ops }) {
    // 8-bit sRGB for every source (CMYK, 16-bit, wide gamut); grayscale is its own colourspace.
    if (ops.grayscale) image.grayscale();
    else image.toColourspace('srgb');
  },

  function output(image, { ops, plan }) {
    encode(image, plan, ops);
  },
];

export function applySteps(image: Sharp, context: StepContext): void {
  STEPS.forEach((step) => step(image, context));
}
