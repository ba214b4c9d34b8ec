/**
 * Deterministic test source images, generated in code with sharp (no binary fixtures).
 * Every generator returns the same bytes on every call.
 */
import { crc32, deflateSync } from 'node:zlib';
import sharp, { type Sharp } from 'sharp';

export interface Rgb {
  r: number;
  g: number;
  b: number;
}

export interface Rgba extends Rgb {
  alpha: number;
}

export type Orientation = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;

/** Colours of the orientedJpeg corner blocks, as seen after correct auto-orientation. */
export const ORIENTATION_CORNERS = {
  topLeft: { r: 255, g: 0, b: 0 },
  topRight: { r: 0, g: 0, b: 255 },
  bottomLeft: { r: 0, g: 255, b: 0 },
  bottomRight: { r: 128, g: 128, b: 128 },
} as const satisfies Record<string, Rgb>;

/** Solid colour of frame `index` in animatedGif / animatedWebp; consecutive frames always differ. */
export function animationFrameColour(index: number): Rgb {
  return FRAME_COLOURS[index % FRAME_COLOURS.length]!;
}

const FRAME_COLOURS: readonly Rgb[] = [
  { r: 255, g: 0, b: 0 },
  { r: 0, g: 255, b: 0 },
  { r: 0, g: 0, b: 255 },
  { r: 255, g: 255, b: 0 },
  { r: 255, g: 0, b: 255 },
  { r: 0, g: 255, b: 255 },
];

const QUALITY = 90;
const DISC_COLOUR: Rgb = { r: 255, g: 140, b: 0 };

type Pixel = readonly number[];

/** Fills `target` (interleaved, `channels` per pixel, rows of `width`) from `pixel(x, y)`. */
function paint<T extends Uint8Array | Uint16Array>(target: T, width: number, channels: number, pixel: (x: number, y: number) => Pixel): T {
  const height = target.length / (width * channels);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) target.set(pixel(x, y), (y * width + x) * channels);
  }
  return target;
}

function fromRaw(data: Uint8Array | Uint16Array, width: number, height: number, channels: 3 | 4, pageHeight?: number): Sharp {
  return sharp(data, { raw: { width, height, channels, ...(pageHeight ? { pageHeight } : {}) } });
}

/** 8-bit image painted pixel by pixel. */
function painted(width: number, height: number, channels: 3 | 4, pixel: (x: number, y: number) => Pixel): Sharp {
  return fromRaw(paint(new Uint8Array(width * height * channels), width, channels, pixel), width, height, channels);
}

/** Smooth diagonal colour gradient scaled to `max` (255 for 8-bit, 65535 for 16-bit). */
function gradientPixel(x: number, y: number, width: number, height: number, max: number): Pixel {
  const u = width > 1 ? x / (width - 1) : 0;
  const v = height > 1 ? y / (height - 1) : 0;
  return [u, v, 1 - (u + v) / 2].map((c) => Math.round(c * max));
}

function gradient(width: number, height: number): Sharp {
  return painted(width, height, 3, (x, y) => gradientPixel(x, y, width, height, 255));
}

/** Opaque DISC_COLOUR disc centred in the image on a fully transparent background. */
function disc(width: number, height: number): Sharp {
  const cx = (width - 1) / 2;
  const cy = (height - 1) / 2;
  const radius = (Math.min(width, height) / 2) * 0.9;
  return painted(width, height, 4, (x, y) =>
    Math.hypot(x - cx, y - cy) <= radius ? [DISC_COLOUR.r, DISC_COLOUR.g, DISC_COLOUR.b, 255] : [0, 0, 0, 0],
  );
}

/** mulberry32: small seeded PRNG, fills `length` bytes deterministically. */
function seededBytes(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let state = seed >>> 0;
  for (let i = 0; i < length; i += 4) {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const word = (t ^ (t >>> 14)) >>> 0;
    for (let k = 0; k < 4 && i + k < length; k++) out[i + k] = (word >>> (8 * k)) & 0xff;
  }
  return out;
}

/** Smooth colour-gradient, photo-like baseline JPEG (quality 90 unless given). */
export function gradientJpeg(width: number, height: number, options: { quality?: number } = {}): Promise<Buffer> {
  return gradient(width, height)
    .jpeg({ quality: options.quality ?? QUALITY })
    .toBuffer();
}

/**
 * Photo-like RGB PNG for encoder comparisons: the gradient under seeded grain,
 * a band of fine stripes and a hard-edged disc, the detail lossy encoders trade off.
 */
export function grainyScenePng(width: number, height: number): Promise<Buffer> {
  const grain = seededBytes(width * height, 0x9a1e);
  const [cx, cy, radius] = [width * 0.7, height * 0.3, height * 0.15];
  return painted(width, height, 3, (x, y) => {
    const base =
      y > height * 0.6
        ? x % 6 < 3
          ? [43, 74, 30]
          : [109, 143, 58]
        : Math.hypot(x - cx, y - cy) <= radius
          ? [255, 244, 208]
          : gradientPixel(x, y, width, height, 255);
    const offset = (grain[y * width + x]! - 128) / 8;
    return base.map((c) => Math.max(0, Math.min(255, Math.round(c + offset))));
  })
    .png()
    .toBuffer();
}

/** Seeded random RGB noise (no alpha); effectively incompressible, so a 2500x2500 PNG is ~18 MB. */
export function noiseImage(width: number, height: number, format: 'png' | 'jpeg' | 'webp'): Promise<Buffer> {
  const image = fromRaw(seededBytes(width * height * 3, 0x5eed), width, height, 3);
  if (format === 'png') return image.png({ compressionLevel: 1 }).toBuffer();
  return image.toFormat(format, { quality: QUALITY }).toBuffer();
}

/** RGBA PNG: opaque orange disc (255,140,0) in the centre, fully transparent corners. */
export function alphaPng(width: number, height: number): Promise<Buffer> {
  return disc(width, height).png().toBuffer();
}

/** 3-channel (no alpha) gradient PNG. */
export function opaquePng(width: number, height: number): Promise<Buffer> {
  return gradient(width, height).png().toBuffer();
}

/** Displayed-space test card: coloured blocks over the outer third of each corner, white elsewhere. */
function orientationCard(x: number, y: number, width: number, height: number): Pixel {
  const left = x < width / 3;
  const right = x >= width - width / 3;
  const top = y < height / 3;
  const bottom = y >= height - height / 3;
  const c = ORIENTATION_CORNERS;
  const colour =
    top && left
      ? c.topLeft
      : top && right
        ? c.topRight
        : bottom && left
          ? c.bottomLeft
          : bottom && right
            ? c.bottomRight
            : { r: 255, g: 255, b: 255 };
  return [colour.r, colour.g, colour.b];
}

/** Where stored pixel (x, y) of a `sw` x `sh` image lands once EXIF `orientation` is applied. */
function storedToDisplayed(orientation: Orientation, x: number, y: number, sw: number, sh: number): [number, number] {
  switch (orientation) {
    case 1:
      return [x, y];
    case 2:
      return [sw - 1 - x, y];
    case 3:
      return [sw - 1 - x, sh - 1 - y];
    case 4:
      return [x, sh - 1 - y];
    case 5:
      return [y, x];
    case 6:
      return [sh - 1 - y, x];
    case 7:
      return [sh - 1 - y, sw - 1 - x];
    case 8:
      return [y, sw - 1 - x];
  }
}

/**
 * JPEG with EXIF Orientation `orientation` whose stored pixels are arranged so that, once
 * auto-oriented, it displays as `width` x `height` (landscape) with ORIENTATION_CORNERS blocks:
 * red top-left, blue top-right, green bottom-left, gray bottom-right, white in between.
 * Stored size is width x height for orientations 1-4 and height x width for 5-8.
 */
export function orientedJpeg(orientation: Orientation, width: number, height: number): Promise<Buffer> {
  if (!Number.isInteger(orientation) || orientation < 1 || orientation > 8) {
    throw new RangeError(`orientation must be 1..8, got ${orientation}`);
  }
  if (width <= height) throw new RangeError(`orientedJpeg is landscape: width ${width} must exceed height ${height}`);
  const [sw, sh] = orientation >= 5 ? [height, width] : [width, height];
  return painted(sw, sh, 3, (x, y) => orientationCard(...storedToDisplayed(orientation, x, y, sw, sh), width, height))
    .jpeg({ quality: QUALITY })
    .withMetadata({ orientation })
    .toBuffer();
}

/** 4-channel CMYK JPEG (no embedded ICC profile) of the gradient. */
export function cmykJpeg(width: number, height: number): Promise<Buffer> {
  return gradient(width, height).toColourspace('cmyk').jpeg({ quality: QUALITY }).toBuffer();
}

/** 16-bit-per-channel RGB PNG (metadata depth 'ushort') of the gradient at full 16-bit precision. */
export function png16(width: number, height: number): Promise<Buffer> {
  const data = paint(new Uint16Array(width * height * 3), width, 3, (x, y) => gradientPixel(x, y, width, height, 65535));
  return fromRaw(data, width, height, 3).toColourspace('rgb16').png().toBuffer();
}

/** `frames` frames stacked vertically, frame i solid animationFrameColour(i), 100 ms each, looping forever. */
function animation(frames: number, width: number, height: number): { image: Sharp; delay: number[]; loop: number } {
  if (!Number.isInteger(frames) || frames < 2) throw new RangeError(`an animation needs >= 2 frames, got ${frames}`);
  const data = paint(new Uint8Array(width * height * frames * 3), width, 3, (_x, y) => {
    const { r, g, b } = animationFrameColour(Math.floor(y / height));
    return [r, g, b];
  });
  // An explicit per-frame delay array: libvips 8.18's GIF writer applies a scalar delay to frame 0 only.
  return { image: fromRaw(data, width, height * frames, 3, height), delay: new Array<number>(frames).fill(100), loop: 0 };
}

/** Animated GIF: `frames` pages of `height` (metadata pages === frames), distinct solid colour per frame. */
export function animatedGif(frames: number, width: number, height: number): Promise<Buffer> {
  const { image, delay, loop } = animation(frames, width, height);
  return image.gif({ delay, loop }).toBuffer();
}

/** Animated WebP: `frames` pages of `height` (metadata pages === frames), distinct solid colour per frame. */
export function animatedWebp(frames: number, width: number, height: number): Promise<Buffer> {
  const { image, delay, loop } = animation(frames, width, height);
  return image.webp({ delay, loop, quality: QUALITY }).toBuffer();
}

/** AVIF of the gradient (sharp metadata reports format 'heif', compression 'av1'). */
export function avifImage(width: number, height: number): Promise<Buffer> {
  return gradient(width, height).avif().toBuffer();
}

/** TIFF of the gradient. */
export function tiffImage(width: number, height: number): Promise<Buffer> {
  return gradient(width, height).tiff().toBuffer();
}

/** Still WebP: the gradient, or with `alpha` the transparent-cornered disc of alphaPng. */
export function webpImage(width: number, height: number, options: { alpha?: boolean } = {}): Promise<Buffer> {
  return (options.alpha ? disc(width, height) : gradient(width, height)).webp({ quality: QUALITY }).toBuffer();
}

/**
 * The 8-bit sRGB(A) value of pixel (x, y) as stored (no auto-orientation); alpha is 255 when
 * the image has none. Animated images give the first frame unless `page` is set.
 */
export async function pixelAt(image: Buffer, x: number, y: number, options: { page?: number } = {}): Promise<Rgba> {
  const data = await sharp(image, { page: options.page ?? 0 })
    .extract({ left: x, top: y, width: 1, height: 1 })
    .ensureAlpha()
    .toColourspace('srgb')
    .raw({ depth: 'uchar' })
    .toBuffer();
  const [r = 0, g = 0, b = 0, alpha = 0] = data;
  return { r, g, b, alpha };
}

/** True when every one of r, g, b is within `tolerance` of the expected value. */
export function isNear(actual: Rgb, expected: Rgb, tolerance = 40): boolean {
  return (['r', 'g', 'b'] as const).every((k) => Math.abs(actual[k] - expected[k]) <= tolerance);
}

/** One PNG chunk: length, type, data and its CRC, for PNGs written by hand. */
export function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typeAndData = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typeAndData));
  return Buffer.concat([length, typeAndData, crc]);
}

/** A valid 1-bit black PNG of `width * height` pixels in a few kilobytes: a decompression bomb. */
export function pngBomb(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 1; // bit depth
  header[9] = 0; // greyscale
  const raw = Buffer.alloc((1 + Math.ceil(width / 8)) * height);
  return Buffer.concat([
    Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(raw, { level: 9 })),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * A flat image of 1 to 4 bands (grey, grey + alpha, RGB, RGBA) at 8 or 16 bits
 * per sample, with an EXIF orientation: a small file whose decode is as large
 * as its pixels say, the shape of a memory attack. The orientation is written
 * into the file by hand: sharp's withMetadata would convert it to 8-bit sRGB.
 */
export async function deepImage(
  format: 'tiff' | 'png',
  width: number,
  height: number,
  options: { bands: 1 | 2 | 3 | 4; bits: 8 | 16; orientation: Orientation },
): Promise<Buffer> {
  const { bands, bits, orientation } = options;
  const pixel = [200, 120, 40, 204].slice(0, bands);
  if (bands === 2) pixel[1] = 204;
  const data = Buffer.alloc(width * height * bands, Buffer.from(pixel));
  const colourspace = bands <= 2 ? (bits === 16 ? 'grey16' : 'b-w') : bits === 16 ? 'rgb16' : 'srgb';
  const image = sharp(data, { raw: { width, height, channels: bands } }).toColourspace(colourspace);
  if (format === 'png') {
    const png = await image.png({ compressionLevel: 9 }).toBuffer();
    const ihdrEnd = 8 + 25; // signature, IHDR
    return Buffer.concat([png.subarray(0, ihdrEnd), pngChunk('eXIf', exifOrientation(orientation)), png.subarray(ihdrEnd)]);
  }
  return tiffWithOrientation(await image.tiff({ compression: 'deflate' }).toBuffer(), orientation);
}

/** A big-endian EXIF block whose IFD0 holds only the Orientation tag (274, SHORT). */
function exifOrientation(orientation: Orientation): Buffer {
  const exif = Buffer.alloc(26);
  exif.write('MM\0*', 0, 'latin1');
  exif.writeUInt32BE(8, 4); // IFD0 offset
  exif.writeUInt16BE(1, 8); // one entry
  exif.writeUInt16BE(274, 10);
  exif.writeUInt16BE(3, 12);
  exif.writeUInt32BE(1, 14);
  exif.writeUInt16BE(orientation, 18);
  return exif; // next IFD offset: 0
}

/** The little-endian TIFF libvips writes, with IFD0 copied to the end of the file plus an Orientation entry. */
function tiffWithOrientation(tiff: Buffer, orientation: Orientation): Buffer {
  const ifd = tiff.readUInt32LE(4);
  const count = tiff.readUInt16LE(ifd);
  const entries = Array.from({ length: count }, (_, i) => tiff.subarray(ifd + 2 + 12 * i, ifd + 14 + 12 * i));
  const added = Buffer.alloc(12);
  added.writeUInt16LE(274, 0);
  added.writeUInt16LE(3, 2);
  added.writeUInt32LE(1, 4);
  added.writeUInt16LE(orientation, 8);
  const sorted = [...entries.filter((entry) => entry.readUInt16LE(0) !== 274), added].sort((a, b) => a.readUInt16LE(0) - b.readUInt16LE(0));
  const start = tiff.length + (tiff.length % 2);
  const copy = Buffer.alloc(start + 2 + 12 * sorted.length + 4);
  tiff.copy(copy);
  copy.writeUInt16LE(sorted.length, start);
  sorted.forEach((entry, i) => entry.copy(copy, start + 2 + 12 * i));
  copy.writeUInt32LE(tiff.readUInt32LE(ifd + 2 + 12 * count), start + 2 + 12 * sorted.length);
  copy.writeUInt32LE(start, 4);
  return copy;
}
/** A PNG whose header claims `width` x `height` grey pixels, with a few rows of data: a header that lies about its size. */
export function claimedPng(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 1; // bit depth
  const rows = Buffer.alloc((1 + Math.ceil(width / 8)) * 4);
  return Buffer.concat([
    Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(rows)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}
