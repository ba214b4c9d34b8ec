// A coarse mask's edges refined against the image it belongs to: He, Sun and
// Tang's guided filter ("Guided Image Filtering", 2010), which makes the mask
// locally a linear function of the image's grey levels, so that its edges
// move onto the image's own. It runs at a bounded size (the "fast" guided
// filter, He and Sun 2015): its coefficients are found on a copy of at most
// MATTE_SIDE pixels a side and scaled up to the output, where each pixel's
// alpha is its coefficients applied to its own grey. Every box mean is two
// running sums (rows, then columns), so the cost is linear in the pixels
// whatever the radius.

/** A plane of numbers, one a pixel, row after row. */
export interface Plane {
  data: Float32Array;
  width: number;
  height: number;
}

/** The longest side the filter's coefficients are found at. */
export const MATTE_SIDE = 1024;

/**
 * The filter's regularisation, for grey levels from 0 to 1: an edge whose
 * contrast is well under its square root is smoothed over rather than followed.
 */
const EPSILON = 1e-3;

/**
 * What the refined mask calls wholly background and wholly subject: the
 * image's noise, carried into the mask where an edge makes it follow the
 * grey levels, stays under these and is cleared.
 */
const LEVELS = [0.1, 0.9] as const;

/** `src`'s mean over the (2r+1)-square window around each pixel, clipped to the plane. */
export function boxMean({ data, width, height }: Plane, r: number): Float32Array {
  const rows = new Float32Array(data.length);
  for (let y = 0; y < height; y++) {
    const row = y * width;
    let sum = 0;
    for (let x = 0; x < Math.min(r, width); x++) sum += data[row + x]!;
    for (let x = 0; x < width; x++) {
      if (x + r < width) sum += data[row + x + r]!;
      if (x - r - 1 >= 0) sum -= data[row + x - r - 1]!;
      rows[row + x] = sum / (Math.min(width - 1, x + r) - Math.max(0, x - r) + 1);
    }
  }
  const out = new Float32Array(data.length);
  for (let x = 0; x < width; x++) {
    let sum = 0;
    for (let y = 0; y < Math.min(r, height); y++) sum += rows[y * width + x]!;
    for (let y = 0; y < height; y++) {
      if (y + r < height) sum += rows[(y + r) * width + x]!;
      if (y - r - 1 >= 0) sum -= rows[(y - r - 1) * width + x]!;
      out[y * width + x] = sum / (Math.min(height - 1, y + r) - Math.max(0, y - r) + 1);
    }
  }
  return out;
}

const product = (a: Float32Array, b: Float32Array) => a.map((value, i) => value * b[i]!);

/**
 * The guided filter's coefficients for `mask` (0 to 1) against `guide` (grey,
 * 0 to 1), both of one size, over windows of radius `r`: the refined mask is
 * `a * guide + b`, at this size or, with `a` and `b` scaled up, at a larger one.
 */
export function guidedCoefficients(guide: Plane, mask: Plane, r: number): { a: Plane; b: Plane } {
  const { width, height } = guide;
  const plane = (data: Float32Array): Plane => ({ data, width, height });
  const meanGuide = boxMean(guide, r);
  const meanMask = boxMean(mask, r);
  const meanProduct = boxMean(plane(product(guide.data, mask.data)), r);
  const meanSquare = boxMean(plane(product(guide.data, guide.data)), r);
  const a = new Float32Array(guide.data.length);
  const b = new Float32Array(guide.data.length);
  for (let i = 0; i < a.length; i++) {
    const covariance = meanProduct[i]! - meanGuide[i]! * meanMask[i]!;
    const variance = meanSquare[i]! - meanGuide[i]! * meanGuide[i]!;
    a[i] = covariance / (variance + EPSILON);
    b[i] = meanMask[i]! - a[i]! * meanGuide[i]!;
  }
  return { a: plane(boxMean(plane(a), r)), b: plane(boxMean(plane(b), r)) };
}

/** For each of `out` positions along a side, the nearest lower of `size` samples scaled to it and the weight of the next (bilinear, edges held). */
function taps(size: number, out: number): { low: Int32Array; weight: Float32Array } {
  const low = new Int32Array(out);
  const weight = new Float32Array(out);
  for (let i = 0; i < out; i++) {
    const at = Math.min(size - 1, Math.max(0, ((i + 0.5) * size) / out - 0.5));
    low[i] = Math.min(size - 2, Math.floor(at));
    weight[i] = size === 1 ? 0 : at - low[i]!;
  }
  return { low, weight };
}

/** 8-bit pixels of `channels` bands, the last of them alpha, row after row. */
export interface AlphaPixels {
  data: Buffer;
  width: number;
  height: number;
  channels: number;
}

/** The grey level (0 to 1) of the pixel at `at`: Rec. 601 luma of its colour bands, or its one grey band. */
const greyAt = (data: Buffer, at: number, channels: number) =>
  channels < 4 ? data[at]! / 255 : (0.299 * data[at]! + 0.587 * data[at + 1]! + 0.114 * data[at + 2]!) / 255;

/** The grey plane (0 to 1) of `pixels`. */
export function greyOf({ data, width, height, channels }: AlphaPixels): Plane {
  const grey = new Float32Array(width * height);
  for (let i = 0; i < grey.length; i++) grey[i] = greyAt(data, i * channels, channels);
  return { data: grey, width, height };
}

/**
 * Makes `pixels`' alpha `mask` (0 to 1, a plane covering them at most
 * MATTE_SIDE a side) refined against their grey, `guide` (their grey at the
 * mask's size), over windows of radius `r`: the coefficients scaled up to
 * the pixels bilinearly and applied to each one's own grey, times the alpha
 * it had. Works in place, in one pass over the pixels.
 */
export function applyMatte(pixels: AlphaPixels, guide: Plane, mask: Plane, r: number): void {
  const { a, b } = guidedCoefficients(guide, mask, r);
  const { data, width, height, channels } = pixels;
  const columns = taps(a.width, width);
  const rows = taps(a.height, height);
  const next = a.width > 1 ? 1 : 0;
  const below = a.height > 1 ? a.width : 0;
  const bilinear = (plane: Float32Array, at: number, wx: number, wy: number) => {
    const upper = plane[at]! + (plane[at + next]! - plane[at]!) * wx;
    const lower = plane[at + below]! + (plane[at + below + next]! - plane[at + below]!) * wx;
    return upper + (lower - upper) * wy;
  };
  for (let y = 0; y < height; y++) {
    const top = Math.max(0, rows.low[y]!) * a.width;
    const wy = rows.weight[y]!;
    for (let x = 0; x < width; x++) {
      const at = top + Math.max(0, columns.low[x]!);
      const wx = columns.weight[x]!;
      const pixel = (y * width + x) * channels;
      const refined = bilinear(a.data, at, wx, wy) * greyAt(data, pixel, channels) + bilinear(b.data, at, wx, wy);
      const alpha = pixel + channels - 1;
      const levelled = (refined - LEVELS[0]) / (LEVELS[1] - LEVELS[0]);
      data[alpha] = Math.round(Math.min(1, Math.max(0, levelled)) * data[alpha]!);
    }
  }
}
