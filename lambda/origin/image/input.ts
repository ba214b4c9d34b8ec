// Opening a source: its real type, its displayed size and frames, and the
// limits on pixels and frames. Reads headers only; pixels are decoded once,
// later, by the pipeline.

import sharp, { type Sharp, type SharpOptions } from 'sharp';
import type { Limits } from '../config';
import { HttpError } from '../errors';
import { detectFormat, type SourceFormat } from './detect';

export interface SourceInfo {
  format: SourceFormat;
  /** Size as displayed: after EXIF orientation, one frame. */
  width: number;
  height: number;
  /** Frames in the source (1 for a still image). */
  frames: number;
  hasAlpha: boolean;
  bytes: number;
}

export interface OpenedSource {
  info: SourceInfo;
  /** The source's first frame, ready for a pipeline. */
  firstFrame: Sharp;
}

/** `warning` refuses truncated and corrupt data instead of serving a half-grey image. */
const decodeOptions = (limits: Limits): SharpOptions => ({
  failOn: 'warning',
  limitInputPixels: limits.maxInputPixels,
  sequentialRead: true,
});

/** Turns libvips' words into the contract's statuses; its text goes to the log only. */
export function decodeError(error: unknown, limits: Limits): HttpError {
  const detail = error instanceof Error ? error.message : String(error);
  if (/pixel limit/i.test(detail)) {
    return new HttpError('too_many_pixels', `The source image has more than ${limits.maxInputPixels} pixels.`, detail);
  }
  if (/timeout/i.test(detail)) {
    return new HttpError('timeout', 'The image took too long to transform.', detail);
  }
  if (/unsupported image format/i.test(detail)) {
    return new HttpError('unsupported_media_type', 'The source is not an image this service reads.', detail);
  }
  return new HttpError('undecodable_image', 'The source image is damaged or cannot be decoded.', detail);
}

export async function openSource(bytes: Buffer, limits: Limits): Promise<OpenedSource> {
  const format = detectFormat(bytes);
  if (format === undefined || format === 'svg') {
    throw new HttpError(
      'unsupported_media_type',
      'The source is not an image this service reads (JPEG, PNG, WebP, AVIF, GIF or TIFF).',
      format,
    );
  }
  const firstFrame = sharp(bytes, decodeOptions(limits));
  let meta;
  try {
    meta = await firstFrame.metadata();
  } catch (error) {
    throw decodeError(error, limits);
  }
  const displayed = meta.autoOrient;
  return {
    firstFrame,
    info: {
      format,
      width: displayed.width,
      height: displayed.height,
      frames: meta.pages ?? 1,
      hasAlpha: meta.hasAlpha,
      bytes: bytes.length,
    },
  };
}

/**
 * All frames of an animation, as many as the frame and pixel limits allow
 * (the rest are dropped rather than refusing the whole image).
 */
export function openFrames(bytes: Buffer, info: SourceInfo, limits: Limits): Sharp {
  const byPixels = Math.floor(limits.maxInputPixels / (info.width * info.height));
  const pages = Math.max(1, Math.min(info.frames, limits.maxFrames, byPixels));
  return sharp(bytes, { ...decodeOptions(limits), pages });
}
