// SSIM (Wang, Bovik et al. 2004) with 8x8 windows overlapping by 4, as x264
// and libvpx compute it, and the usual constants, on 8-bit planes. Computed
// here, with sharp only to decode, so the quality study needs no extra tool.
// `ssimImages` compares an encoded candidate with the uncompressed resized
// reference on luma (BT.601 Y) and on the two chroma planes (Cb, Cr), which is
// where chroma subsampling shows.

import sharp from 'sharp';

const WINDOW = 8;
const STRIDE = 4;
const C1 = (0.01 * 255) ** 2;
const C2 = (0.03 * 255) ** 2;

/** Per window (row-major, STRIDE apart): sum and sum of squares of one plane. */
function windowSums(values: ArrayLike<number>, width: number, height: number, other?: ArrayLike<number>) {
  const across = Math.floor((width - WINDOW) / STRIDE) + 1;
  const down = Math.floor((height - WINDOW) / STRIDE) + 1;
  const sums = new Float64Array(across * down);
  const squares = new Float64Array(across * down);
  const products = other ? new Float64Array(across * down) : undefined;
  for (let wy = 0; wy < down; wy++) {
    for (let wx = 0; wx < across; wx++) {
      let total = 0;
      let totalSquares = 0;
      let totalProducts = 0;
      for (let y = wy * STRIDE; y < wy * STRIDE + WINDOW; y++) {
        const row = y * width + wx * STRIDE;
        for (let i = row; i < row + WINDOW; i++) {
          const value = values[i]!;
          total += value;
          totalSquares += value * value;
          if (other) totalProducts += value * other[i]!;
        }
      }
      const at = wy * across + wx;
      sums[at] = total;
      squares[at] = totalSquares;
      if (products) products[at] = totalProducts;
    }
  }
  return { sums, squares, products };
}

/** A reference plane with its window sums, computed once for many candidates. */
export interface PreparedPlane {
  values: ArrayLike<number>;
  width: number;
  height: number;
  sums: Float64Array;
  squares: Float64Array;
}

export function preparePlane(values: ArrayLike<number>, width: number, height: number): PreparedPlane {
  if (values.length !== width * height) throw new RangeError('plane size mismatch');
  if (width < WINDOW || height < WINDOW) throw new RangeError(`planes must be at least ${WINDOW} pixels a side`);
  return { values, width, height, ...windowSums(values, width, height) };
}

/** Mean SSIM of a candidate plane against a prepared reference; 1 means identical. */
export function ssimPrepared(reference: PreparedPlane, candidate: ArrayLike<number>): number {
  if (candidate.length !== reference.values.length) throw new RangeError('plane size mismatch');
  const { sums, squares, products } = windowSums(candidate, reference.width, reference.height, reference.values);
  const n = WINDOW * WINDOW;
  let total = 0;
  for (let i = 0; i < sums.length; i++) {
    const mux = reference.sums[i]! / n;
    const muy = sums[i]! / n;
    const varX = reference.squares[i]! / n - mux * mux;
    const varY = squares[i]! / n - muy * muy;
    const cov = products![i]! / n - mux * muy;
    total += ((2 * mux * muy + C1) * (2 * cov + C2)) / ((mux * mux + muy * muy + C1) * (varX + varY + C2));
  }
  return total / sums.length;
}

/** Mean SSIM of two planes of `width` x `height` values in 0..255; 1 means identical. */
export function ssimPlane(a: ArrayLike<number>, b: ArrayLike<number>, width: number, height: number): number {
  if (b.length !== width * height) throw new RangeError('plane size mismatch');
  return ssimPrepared(preparePlane(a, width, height), b);
}

export interface Planes {
  width: number;
  height: number;
  y: Float32Array;
  cb: Float32Array;
  cr: Float32Array;
}

/** BT.601 Y'CbCr planes (full range, as JPEG) of interleaved 8-bit RGB(A) pixels. */
export function ycbcrPlanes(pixels: ArrayLike<number>, width: number, height: number, channels: number): Planes {
  const n = width * height;
  const y = new Float32Array(n);
  const cb = new Float32Array(n);
  const cr = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const r = pixels[i * channels]!;
    const g = channels >= 3 ? pixels[i * channels + 1]! : r;
    const b = channels >= 3 ? pixels[i * channels + 2]! : r;
    y[i] = 0.299 * r + 0.587 * g + 0.114 * b;
    cb[i] = 128 - 0.168736 * r - 0.331264 * g + 0.5 * b;
    cr[i] = 128 + 0.5 * r - 0.418688 * g - 0.081312 * b;
  }
  return { width, height, y, cb, cr };
}

export interface Ssim {
  /** Luma SSIM. */
  y: number;
  /** Mean of the Cb and Cr SSIMs. */
  c: number;
}

/** The reference's three planes, prepared once. */
export interface Reference {
  width: number;
  height: number;
  y: PreparedPlane;
  cb: PreparedPlane;
  cr: PreparedPlane;
}

export function prepareReference(planes: Planes): Reference {
  const { width, height } = planes;
  return {
    width,
    height,
    y: preparePlane(planes.y, width, height),
    cb: preparePlane(planes.cb, width, height),
    cr: preparePlane(planes.cr, width, height),
  };
}

export function ssimOfPlanes(reference: Reference, candidate: Planes): Ssim {
  if (reference.width !== candidate.width || reference.height !== candidate.height) {
    throw new RangeError(`sizes differ: ${reference.width}x${reference.height} and ${candidate.width}x${candidate.height}`);
  }
  return {
    y: ssimPrepared(reference.y, candidate.y),
    c: (ssimPrepared(reference.cb, candidate.cb) + ssimPrepared(reference.cr, candidate.cr)) / 2,
  };
}

/** Any image sharp reads (all frames of an animation, stacked), flattened onto white, as 8-bit sRGB planes. */
export async function decodePlanes(
  image: Buffer | { data: Buffer; width: number; height: number; channels: 1 | 2 | 3 | 4 },
): Promise<Planes> {
  const input = Buffer.isBuffer(image)
    ? sharp(image, { pages: -1 })
    : sharp(image.data, { raw: { width: image.width, height: image.height, channels: image.channels } });
  const { data, info } = await input.flatten({ background: '#ffffff' }).toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  return ycbcrPlanes(data, info.width, info.height, info.channels);
}

/** SSIM of an encoded `candidate` against the reference (the uncompressed resize). */
export async function ssimImages(reference: Reference, candidate: Buffer): Promise<Ssim> {
  return ssimOfPlanes(reference, await decodePlanes(candidate));
}
