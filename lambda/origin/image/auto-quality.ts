// `quality=auto`: the AVIF quality each image needs for one SSIMULACRA 2
// score (scripts/bench/ssimulacra2.ts), predicted from how hard the image is
// to compress rather than measured: a proxy of the output (tiles of it at
// full scale, so the encoder sees the same detail) is encoded once at a trial
// quality, and its bits per pixel give the quality through a curve fitted on
// the bench corpus (docs/performance.md#qualityauto-2026-11-24). Measuring the
// score would cost more than the encode (about 2 s per megapixel in
// JavaScript), so the Lambda predicts and `npm run bench -- --auto-quality`
// measures. JPEG and WebP keep their defaults: no cheap statistic tried
// predicted the quality they need (bits per pixel correlate 0.29 and 0.01
// with it over the corpus).

import sharp, { type Sharp } from 'sharp';
import type { Ops } from '../../grammar';

interface Pixels {
  data: Buffer;
  info: { width: number; height: number; channels: 1 | 2 | 3 | 4 };
}

/**
 * The fitted curve, quality = intercept + slope × ln(bits per pixel of the
 * proxy at the trial quality), for a SSIMULACRA 2 of 71 (the corpus mean of
 * AVIF q50 is 70.8); the range it is held to; and the bytes of an empty AVIF
 * (its headers), taken off the trial's size.
 */
export const AVIF_AUTO_QUALITY = { trial: 50, intercept: 65.2, slope: 11.9, min: 30, max: 75, headerBytes: 281 };

/** Whether the quality of an output is chosen per image: `quality=auto` on a still AVIF. */
export const choosesQuality = (quality: Ops['quality'], format: string, animated: boolean) =>
  quality === 'auto' && format === 'avif' && !animated;

/** The proxy: up to GRID x GRID tiles of TILE pixels, spread evenly over the image on TILE_STEP boundaries (the encoders' block grid). */
const TILE = 64;
const GRID = 4;
const TILE_STEP = 16;
/** The proxy's largest size in pixels, for the memory model. */
export const PROXY_PIXELS = (TILE * GRID) ** 2;

/** The tiles of `pixels` side by side, at most PROXY_PIXELS (the whole image when it is no larger). */
export function proxyOf({ data, info }: Pixels): Pixels {
  const { width, height, channels } = info;
  if (width * height <= PROXY_PIXELS) return { data, info };
  // A side shorter than a tile gives tiles of its length, one across it.
  const [tileWidth, tileHeight] = [Math.min(TILE, width), Math.min(TILE, height)];
  const [columns, rows] = [Math.min(GRID, Math.floor(width / tileWidth)), Math.min(GRID, Math.floor(height / tileHeight))];
  const outWidth = columns * tileWidth;
  const out = Buffer.alloc(outWidth * rows * tileHeight * channels);
  const start = (extent: number, tile: number, count: number, index: number) =>
    Math.floor(((extent - tile) * (index + 0.5)) / count / TILE_STEP) * TILE_STEP;
  for (let row = 0; row < rows; row++) {
    for (let column = 0; column < columns; column++) {
      const left = start(width, tileWidth, columns, column);
      const top = start(height, tileHeight, rows, row);
      for (let y = 0; y < tileHeight; y++) {
        const from = ((top + y) * width + left) * channels;
        data.copy(out, ((row * tileHeight + y) * outWidth + column * tileWidth) * channels, from, from + tileWidth * channels);
      }
    }
  }
  return { data: out, info: { width: outWidth, height: rows * tileHeight, channels } };
}

/** The AVIF quality this image needs, from one trial encode of its proxy with `encodeAt`. */
export async function autoQuality(pixels: Pixels, encodeAt: (image: Sharp, quality: number) => Sharp): Promise<number> {
  const model = AVIF_AUTO_QUALITY;
  const proxy = proxyOf(pixels);
  const trial = await encodeAt(sharp(proxy.data, { raw: proxy.info }), model.trial).toBuffer();
  const bitsPerPixel = (Math.max(1, trial.length - model.headerBytes) * 8) / (proxy.info.width * proxy.info.height);
  const quality = Math.round(model.intercept + model.slope * Math.log(bitsPerPixel));
  return Math.min(model.max, Math.max(model.min, quality));
}
