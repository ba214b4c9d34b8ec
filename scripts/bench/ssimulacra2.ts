// SSIMULACRA 2 (Jon Sneyers, Cloudinary, 2022; the metric of libjxl's tools):
// a perceptual score of a distorted image against its original, 100 for
// identical, about 90 visually lossless, 70 high, 50 medium quality. Written
// here from the published algorithm: both images in the XYB colour space,
// six scales (halved in linear RGB each time), and per scale and channel an
// SSIM-like error map and two edge maps (ringing, blurring), each as a 1-norm
// and a 4-norm, weighted by the metric's 108 fitted weights and mapped to the
// score. The Gaussian (sigma 1.5) is zero-padded at the sides and mirrored at
// the top and bottom, as in PyPI's `ssimulacra2` 0.3.0, which the tests
// compare it with. Time and memory are linear in the pixels: MEMORY_PER_PIXEL.

import sharp from 'sharp';

/** sRGB 8-bit pixels, interleaved RGB (3 channels), row by row. */
export interface RgbImage {
  data: Uint8Array;
  width: number;
  height: number;
}

const SCALES = 6;
const C2 = 0.0009;
const SIGMA = 1.5;
const RADIUS = 5;
/** The opsin absorbance of XYB: rows for L, M, S; and the bias before the cube root. */
const OPSIN = [
  [0.3, 0.622, 0.078],
  [0.23, 0.692, 0.078],
  [0.24342268924547819, 0.20476744424496821, 0.5515898665095536],
] as const;
const OPSIN_BIAS = 0.0037930732552754493;
const CBRT_BIAS = Math.cbrt(OPSIN_BIAS);

/**
 * Per channel (X, Y, B), per scale, per norm (1, 4): the weights of the SSIM
 * error, the ringing (edges added) and the blurring (edges lost).
 */
const WEIGHTS = [
  0.0, 0.0007376606707406586, 0.0, 0.0, 0.0007793481682867309, 0.0, 0.0, 0.0004371155730107379, 0.0, 1.1041726426657346,
  0.00066284834129271, 0.00015231632783718752, 0.0, 0.0016406437456599754, 0.0, 1.8422455520539298, 11.441172603757666, 0.0,
  0.0007989109436015163, 0.000176816438078653, 0.0, 1.8787594979546387, 10.94906990605142, 0.0, 0.0007289346991508072, 0.9677937080626833,
  0.0, 0.00014003424285435884, 0.9981766977854967, 0.00031949755934435053, 0.0004550992113792063, 0.0, 0.0, 0.0013648766163243398, 0.0, 0.0,
  0.0, 0.0, 0.0, 7.466890328078848, 0.0, 17.445833984131262, 0.0006235601634041466, 0.0, 0.0, 6.683678146179332, 0.00037724407979611296,
  1.027889937768264, 225.20515300849274, 0.0, 0.0, 19.213238186143016, 0.0011401524586618361, 0.001237755635509985, 176.39317598450694, 0.0,
  0.0, 24.43300999870476, 0.28520802612117757, 0.0004485436923833408, 0.0, 0.0, 0.0, 34.77906344483772, 44.835625328877896, 0.0, 0.0, 0.0,
  0.0, 0.0, 0.0, 0.0, 0.0, 0.0008680556573291698, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0005313191874358747, 0.0, 0.00016533814161379112, 0.0, 0.0,
  0.0, 0.0, 0.0, 0.0004179171803251336, 0.0017290828234722833, 0.0, 0.0020827005846636437, 0.0, 0.0, 8.826982764996862, 23.19243343998926,
  0.0, 95.1080498811086, 0.9863978034400682, 0.9834382792465353, 0.0012286405048278493, 171.2667255897307, 0.9807858872435379, 0.0, 0.0,
  0.0, 0.0005130064588990679, 0.0, 0.00010854057858411537,
];

/**
 * Bytes of working memory per pixel of the images compared: the two images
 * in linear RGB (6 float planes), the XYB planes of one scale (6), and the
 * five blurred planes and two scratch planes of one channel (7), 4 bytes
 * each; the smaller scales add a third.
 */
export const MEMORY_PER_PIXEL = Math.ceil(((6 + 6 + 7) * 4 * 4) / 3);

const KERNEL = (() => {
  const taps = Array.from({ length: 2 * RADIUS + 1 }, (_, i) => Math.exp(-((i - RADIUS) ** 2) / (2 * SIGMA * SIGMA)));
  const total = taps.reduce((a, b) => a + b, 0);
  return Float64Array.from(taps, (tap) => tap / total);
})();

const LINEAR = Float32Array.from({ length: 256 }, (_, v) => {
  const c = v / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
});

interface Planes {
  width: number;
  height: number;
  /** Three planes. */
  channels: [Float32Array, Float32Array, Float32Array];
}

function linearRgb(image: RgbImage): Planes {
  const { width, height, data } = image;
  const n = width * height;
  if (data.length !== n * 3) throw new RangeError(`expected ${n * 3} bytes of RGB, got ${data.length}`);
  const channels: Planes['channels'] = [new Float32Array(n), new Float32Array(n), new Float32Array(n)];
  for (let i = 0; i < n; i++) {
    channels[0][i] = LINEAR[data[i * 3]!]!;
    channels[1][i] = LINEAR[data[i * 3 + 1]!]!;
    channels[2][i] = LINEAR[data[i * 3 + 2]!]!;
  }
  return { width, height, channels };
}

/** Halves each side (rounding up), averaging the pixels of each 2x2 block that exist. */
function downsample(planes: Planes): Planes {
  const width = Math.ceil(planes.width / 2);
  const height = Math.ceil(planes.height / 2);
  const channels = planes.channels.map((plane) => {
    const out = new Float32Array(width * height);
    for (let y = 0; y < height; y++) {
      const rows = Math.min(2, planes.height - 2 * y);
      for (let x = 0; x < width; x++) {
        const columns = Math.min(2, planes.width - 2 * x);
        let total = 0;
        for (let dy = 0; dy < rows; dy++) {
          for (let dx = 0; dx < columns; dx++) total += plane[(2 * y + dy) * planes.width + 2 * x + dx]!;
        }
        out[y * width + x] = total / (rows * columns);
      }
    }
    return out;
  }) as Planes['channels'];
  return { width, height, channels };
}

/** XYB, shifted and scaled as SSIMULACRA 2 does so that every channel is positive. */
function xyb(linear: Planes): Planes {
  const n = linear.width * linear.height;
  const [r, g, b] = linear.channels;
  const out: Planes['channels'] = [new Float32Array(n), new Float32Array(n), new Float32Array(n)];
  const [[l0, l1, l2], [m0, m1, m2], [s0, s1, s2]] = OPSIN;
  for (let i = 0; i < n; i++) {
    const l = Math.cbrt(Math.max(0, l0 * r[i]! + l1 * g[i]! + l2 * b[i]! + OPSIN_BIAS)) - CBRT_BIAS;
    const m = Math.cbrt(Math.max(0, m0 * r[i]! + m1 * g[i]! + m2 * b[i]! + OPSIN_BIAS)) - CBRT_BIAS;
    const s = Math.cbrt(Math.max(0, s0 * r[i]! + s1 * g[i]! + s2 * b[i]! + OPSIN_BIAS)) - CBRT_BIAS;
    const y = 0.5 * (l + m);
    out[0][i] = 0.5 * (l - m) * 14 + 0.42;
    out[1][i] = y + 0.01;
    out[2][i] = s - y + 0.55;
  }
  return { width: linear.width, height: linear.height, channels: out };
}

/**
 * Gaussian blur of `plane` into `out`, through `scratch`: zero beyond the left
 * and right edges, mirrored (d c b a | a b c d | d c b a) beyond the top and
 * bottom. (The reference pads its arrays this way, which are indexed [x][y].)
 */
function blur(plane: Float32Array, width: number, height: number, scratch: Float32Array, out: Float32Array): void {
  for (let y = 0; y < height; y++) {
    const row = y * width;
    for (let x = 0; x < width; x++) {
      const from = Math.max(0, x - RADIUS);
      const to = Math.min(width - 1, x + RADIUS);
      let total = 0;
      for (let at = from; at <= to; at++) total += KERNEL[at - x + RADIUS]! * plane[row + at]!;
      scratch[row + x] = total;
    }
  }
  for (let y = 0; y < height; y++) {
    const out0 = y * width;
    out.fill(0, out0, out0 + width);
    for (let k = -RADIUS; k <= RADIUS; k++) {
      let at = y + k;
      while (at < 0 || at >= height) at = at < 0 ? -at - 1 : 2 * height - at - 1;
      const weight = KERNEL[k + RADIUS]!;
      const from = at * width;
      for (let x = 0; x < width; x++) out[out0 + x] = out[out0 + x]! + weight * scratch[from + x]!;
    }
  }
}

/** The 1-norm and 4-norm of a non-negative map, given its sums of d and d⁴. */
const norms = (sum: number, sum4: number, n: number): [number, number] => [sum / n, Math.sqrt(Math.sqrt(sum4 / n))];

/** Per channel of one scale: SSIM error, ringing (edges added), blurring (edges lost), each as [1-norm, 4-norm]. */
function scaleValues(original: Planes, distorted: Planes): number[][] {
  const { width, height } = original;
  const n = width * height;
  const mu1 = new Float32Array(n);
  const mu2 = new Float32Array(n);
  const s11 = new Float32Array(n);
  const s22 = new Float32Array(n);
  const s12 = new Float32Array(n);
  const product = new Float32Array(n);
  const scratch = new Float32Array(n);
  const values: number[][] = [];
  for (let c = 0; c < 3; c++) {
    const a = original.channels[c]!;
    const b = distorted.channels[c]!;
    blur(a, width, height, scratch, mu1);
    blur(b, width, height, scratch, mu2);
    for (let i = 0; i < n; i++) product[i] = a[i]! * a[i]!;
    blur(product, width, height, scratch, s11);
    for (let i = 0; i < n; i++) product[i] = b[i]! * b[i]!;
    blur(product, width, height, scratch, s22);
    for (let i = 0; i < n; i++) product[i] = a[i]! * b[i]!;
    blur(product, width, height, scratch, s12);
    let error = 0;
    let error4 = 0;
    let ringing = 0;
    let ringing4 = 0;
    let blurring = 0;
    let blurring4 = 0;
    for (let i = 0; i < n; i++) {
      const m1 = mu1[i]!;
      const m2 = mu2[i]!;
      // SSIM without its luminance denominator: XYB is already perceptually uniform.
      const numM = 1 - (m1 - m2) * (m1 - m2);
      const numS = 2 * (s12[i]! - m1 * m2) + C2;
      const denomS = s11[i]! - m1 * m1 + (s22[i]! - m2 * m2) + C2;
      const d = Math.max(0, 1 - (numM * numS) / denomS);
      const d2 = d * d;
      error += d;
      error4 += d2 * d2;
      const edge = (1 + Math.abs(b[i]! - m2)) / (1 + Math.abs(a[i]! - m1)) - 1;
      const e2 = edge * edge;
      if (edge > 0) {
        ringing += edge;
        ringing4 += e2 * e2;
      } else {
        blurring -= edge;
        blurring4 += e2 * e2;
      }
    }
    values.push([...norms(error, error4, n), ...norms(ringing, ringing4, n), ...norms(blurring, blurring4, n)]);
  }
  return values;
}

/** The SSIMULACRA 2 score of `distorted` against `original` (same size, at least 8x8): 100 is identical, lower is worse. */
export function ssimulacra2(original: RgbImage, distorted: RgbImage): number {
  if (original.width !== distorted.width || original.height !== distorted.height) {
    throw new RangeError(`sizes differ: ${original.width}x${original.height} and ${distorted.width}x${distorted.height}`);
  }
  if (original.width < 8 || original.height < 8) throw new RangeError('images must be at least 8 pixels a side');
  let linear1 = linearRgb(original);
  let linear2 = linearRgb(distorted);
  // values[scale][channel] = the six norms.
  const values: number[][][] = [];
  for (let scale = 0; scale < SCALES && linear1.width >= 8 && linear1.height >= 8; scale++) {
    if (scale > 0) {
      linear1 = downsample(linear1);
      linear2 = downsample(linear2);
      if (linear1.width < 8 || linear1.height < 8) break;
    }
    values.push(scaleValues(xyb(linear1), xyb(linear2)));
  }
  // As the reference does, the weights are taken in order over the scales computed: an
  // image under 256 pixels a side, with fewer scales, uses the next channel's first weights.
  let weighted = 0;
  let w = 0;
  for (let c = 0; c < 3; c++) {
    for (const scale of values) {
      for (let norm = 0; norm < 2; norm++) {
        for (const at of [0, 2, 4]) weighted += WEIGHTS[w++]! * scale[c]![at + norm]!;
      }
    }
  }
  const x = weighted * 0.9562382616834844;
  const mapped = 2.326765642916932 * x - 0.020884521182843837 * x * x + 6.248496625763138e-5 * x * x * x;
  return mapped > 0 ? 100 - 10 * mapped ** 0.6276336467831387 : 100;
}

/** An encoded image as SSIMULACRA 2 takes it: sRGB, flattened onto white as the bench's references are. */
export async function rgbOf(image: Buffer): Promise<RgbImage> {
  const { data, info } = await sharp(image)
    .flatten({ background: '#ffffff' })
    .toColourspace('srgb')
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}
