// Opening a source: its real type, its displayed size and frames, and the
// limits on pixels and frames. Reads headers only; pixels are decoded once,
// later, by the pipeline (HEIC's by libheif, then handed to it as raw pixels).

import sharp, { type Sharp, type SharpOptions } from 'sharp';
import type { Limits } from '../config';
import { HttpError } from '../errors';
import { detectFormat, type SourceFormat } from './detect';
import { withColourProfile } from './colour-profile';
import { decodeHeif, heifHeader, HeifTooLarge } from './heif';
import { heifMetadata } from './heif-metadata';
import { MAX_JPEG_SCANS, walkJpeg } from './jpeg';
import { gainMapOf, type GainMap } from './gain-map';
import type { SourceMetadata } from './metadata';
import { MAX_SVG_BYTES, svgRefusal } from './svg';

export { MAX_SVG_BYTES };

export interface SourceInfo {
  format: SourceFormat;
  /** Size as displayed: after EXIF orientation, one frame. */
  width: number;
  height: number;
  /** Frames in the source (1 for a still image). */
  frames: number;
  hasAlpha: boolean;
  bytes: number;
  /** Bands and libvips' sample format as decoded (e.g. 3 and `ushort` for a 16-bit RGB TIFF): what a pixel weighs in memory. */
  channels: number;
  depth: string;
  /** EXIF orientation, 1 to 8. */
  orientation: number;
  /** A progressive JPEG or an interlaced PNG: decoders that hold more than a line at a time. */
  progressive: boolean;
  /** A HEIF whose pixels are not sRGB: they are copied into a file that carries their profile, and converted (colour-profile.ts). */
  colourProfile?: boolean;
  /** A HEIF's pixels as its decoder makes them before they are cut to the image: every tile of a grid, and the alpha plane's (heif.ts). */
  decoderPixels?: number;
  /** An HDR gain map an output can keep (gain-map.ts): present only while the transform means to keep it. */
  gainMap?: GainMap;
  /** The bytes of the gain map libvips found, kept or not: finding it copies the whole file (budget.ts). */
  gainMapBytes?: number;
}

export interface OpenedSource {
  info: SourceInfo;
  /** The EXIF, XMP and IPTC blocks libvips read from the header (HEIC's EXIF and XMP items are read here). */
  metadata: SourceMetadata;
  /**
   * The source's first frame, ready for a pipeline; for HEIC, this is when it
   * is decoded. A JPEG's gain map comes with it only when `withGainMap`.
   */
  firstFrame: (withGainMap?: boolean) => Promise<Sharp>;
  /** A JPEG's gain map as the file holds it, when its header read as one an output can keep (info.gainMap). */
  gainMapJpeg?: Buffer;
}

/**
 * `warning` refuses truncated and corrupt data instead of serving a half-grey image.
 * `unlimited: false` (sharp's default, said here because it matters) keeps libxml2's
 * and librsvg's limits on entity expansion, document depth and `<use>` references.
 */
const decodeOptions = (limits: Limits): SharpOptions => ({
  failOn: 'warning',
  limitInputPixels: limits.maxInputPixels,
  sequentialRead: true,
  unlimited: false,
});

const tooManyPixels = (limits: Limits, detail: string) =>
  new HttpError('too_many_pixels', `The source image has more than ${limits.maxInputPixels} pixels.`, detail);

/** Turns libvips' and libheif's words into the contract's statuses; their text goes to the log only. */
export function decodeError(error: unknown, limits: Limits): HttpError {
  const detail = error instanceof Error ? error.message : String(error);
  if (/pixel limit/i.test(detail)) return tooManyPixels(limits, detail);
  // libvips' "unsupported image format" lands here too: the bytes were sniffed as a format
  // this service reads (anything else is refused before sharp sees it), so the file is damaged.
  return new HttpError('undecodable_image', 'The source image is damaged or cannot be decoded.', detail);
}

/** decodeError as a promise's rejection handler: a decoder's failure rethrown as the contract's error. */
export const undecodableBy =
  (limits: Limits) =>
  (error: unknown): never => {
    throw decodeError(error, limits);
  };

/**
 * Whether a GIF stops before its trailer: an upload or copy cut short. libvips
 * decodes such a file without a warning, filling the missing part of the last
 * frame from the one before, so it is checked here by walking the blocks.
 */
export function gifTruncated(bytes: Buffer): boolean {
  const colourTable = (flags: number) => (flags & 0x80 ? 3 * (2 << (flags & 0x07)) : 0);
  let at = 13 + (bytes.length >= 13 ? colourTable(bytes[10]!) : 0); // header and logical screen
  /** Skips data sub-blocks and their terminator; false when the data ends first. */
  const subBlocks = () => {
    while (at < bytes.length) {
      const size = bytes[at]!;
      at += 1 + size;
      if (size === 0) return true;
    }
    return false;
  };
  while (at < bytes.length) {
    const introducer = bytes[at]!;
    if (introducer === 0x3b) return false; // the trailer
    if (introducer === 0x21) {
      at += 2; // introducer, label
      if (!subBlocks()) return true;
    } else if (introducer === 0x2c) {
      if (at + 10 > bytes.length) return true;
      at += 10 + colourTable(bytes[at + 9]!) + 1; // descriptor, local colour table, LZW code size
      if (!subBlocks()) return true;
    } else {
      return false; // not a block: the decoder judges it
    }
  }
  return true;
}

export async function openSource(bytes: Buffer, limits: Limits): Promise<OpenedSource> {
  const format = detectFormat(bytes);
  const rasterize = limits.svgPolicy === 'rasterize';
  if (format === undefined || (format === 'svg' && !rasterize)) {
    throw new HttpError(
      'unsupported_media_type',
      `The source is not an image this service reads (JPEG, PNG, WebP, AVIF, HEIC, GIF${rasterize ? ', TIFF or SVG' : ' or TIFF'}).`,
      format,
    );
  }
  // sharp reads an SVG from a buffer, so librsvg has no base URL: it loads no file, http or
  // relative reference (only data: URIs), and it never runs a script.
  if (format === 'svg' && bytes.length > MAX_SVG_BYTES) {
    throw new HttpError('source_too_large', `The SVG source is larger than the ${MAX_SVG_BYTES}-byte limit for SVG.`);
  }
  const refusal = format === 'svg' ? svgRefusal(bytes) : undefined;
  if (refusal) {
    throw new HttpError('unsupported_media_type', `This SVG is not rendered: ${refusal}.`, refusal);
  }
  if (format === 'gif' && gifTruncated(bytes)) {
    throw new HttpError('undecodable_image', 'The source image is damaged or cannot be decoded.', 'GIF ends before its trailer');
  }
  const walked = format === 'jpeg' ? walkJpeg(bytes) : undefined;
  const scans = walked?.scans ?? 0;
  if (scans > MAX_JPEG_SCANS) {
    throw new HttpError('too_many_scans', `The source JPEG has ${scans} scans, more than the ${MAX_JPEG_SCANS} this service decodes.`);
  }
  if (format === 'heic') return openHeif(bytes, limits);
  const firstFrame = sharp(bytes, decodeOptions(limits));
  let meta;
  try {
    meta = await firstFrame.metadata();
  } catch (error) {
    throw decodeError(error, limits);
  }
  const displayed = meta.autoOrient;
  const gainMap = format === 'jpeg' ? await gainMapOf(meta.gainMap?.image, meta.width, meta.height) : undefined;
  // libvips reads a JPEG that carries a gain map through libultrahdr, which holds the whole
  // primary in memory even when the map is dropped; the primary alone is read line by line,
  // to the same pixels, and with shrink-on-load.
  const primary = meta.gainMap && walked?.end ? bytes.subarray(0, walked.end) : undefined;
  return {
    firstFrame: async (withGainMap = false) => (primary && !withGainMap ? sharp(primary, decodeOptions(limits)) : firstFrame),
    ...(gainMap ? { gainMapJpeg: meta.gainMap?.image } : {}),
    metadata: { exif: meta.exif, xmp: meta.xmp, iptc: meta.iptc },
    info: {
      format,
      width: displayed.width,
      height: displayed.height,
      frames: meta.pages ?? 1,
      hasAlpha: meta.hasAlpha,
      bytes: bytes.length,
      channels: meta.channels,
      depth: meta.depth,
      orientation: meta.orientation ?? 1,
      progressive: meta.isProgressive ?? false,
      ...(gainMap ? { gainMap } : {}),
      ...(meta.gainMap ? { gainMapBytes: meta.gainMap.image.length } : {}),
    },
  };
}

/**
 * A HEIF source from its header; its pixels are decoded by libheif when the
 * pipeline asks for them, as 8-bit RGB(A), turned as the container says: so
 * there is no EXIF orientation left to apply (orientation 1). Pixels in
 * another colour space than sRGB carry its profile into the pipeline.
 */
function openHeif(bytes: Buffer, limits: Limits): OpenedSource {
  let header;
  try {
    header = heifHeader(bytes, limits.maxInputPixels);
  } catch (error) {
    throw error instanceof HeifTooLarge ? tooManyPixels(limits, error.message) : decodeError(error, limits);
  }
  const { width, height, hasAlpha, decodedPixels } = header;
  // The tiles and the alpha plane count: a small grid over one huge tile is decoded at the tile's size.
  if (Math.max(width * height, decodedPixels) > limits.maxInputPixels)
    throw tooManyPixels(limits, `HEIF header: ${width}x${height}, ${decodedPixels} pixels decoded`);
  const channels = hasAlpha ? 4 : 3;
  return {
    metadata: heifMetadata(bytes),
    info: {
      format: 'heic',
      width,
      height,
      frames: 1,
      hasAlpha,
      bytes: bytes.length,
      channels,
      depth: 'uchar',
      orientation: 1,
      progressive: false,
      decoderPixels: decodedPixels,
      ...(header.colourProfile ? { colourProfile: true } : {}),
    },
    firstFrame: async () => {
      const pixels = await decodeHeif(bytes);
      if (header.colourProfile) return withColourProfile(pixels, header.colourProfile, decodeOptions(limits));
      return sharp(pixels.data, {
        ...decodeOptions(limits),
        raw: { width: pixels.width, height: pixels.height, channels: pixels.channels },
      });
    },
  };
}

/**
 * Frames of an animation to decode: as many as the frame and pixel limits
 * allow (the rest are dropped rather than refusing the whole image).
 */
export function framesToLoad(info: SourceInfo, limits: Limits): number {
  const byPixels = Math.floor(limits.maxInputPixels / (info.width * info.height));
  return Math.max(1, Math.min(info.frames, limits.maxFrames, byPixels));
}

export function openFrames(bytes: Buffer, pages: number, limits: Limits): Sharp {
  return sharp(bytes, { ...decodeOptions(limits), pages });
}
