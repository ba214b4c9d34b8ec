// What a variant is encoded as: the format rules of the contract and the
// encoder settings per format.

import type { Sharp } from 'sharp';
import { DEFAULT_QUALITY, type Ops } from '../../grammar';
import type { SourceInfo } from './input';

export type EncodedFormat = 'jpeg' | 'png' | 'webp' | 'avif' | 'gif';

export interface OutputPlan {
  format: EncodedFormat;
  /** Whether every frame of an animated source is kept. */
  animated: boolean;
}

export const CONTENT_TYPES: Record<EncodedFormat | 'json', string> = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  avif: 'image/avif',
  gif: 'image/gif',
  json: 'application/json',
};

/**
 * No format means the source's own family: GIF for animations, PNG with
 * alpha, JPEG otherwise. An animation stays animated in WebP or GIF; libvips
 * cannot write animated AVIF, so AVIF becomes WebP there. JPEG and PNG, and
 * quarter turns (which libvips cannot apply to frames), give the first frame.
 */
export function planOutput(ops: Ops, info: SourceInfo): OutputPlan {
  const animatedSource = info.frames > 1 && ops.rotate !== 90 && ops.rotate !== 270;
  const family: EncodedFormat = animatedSource ? 'gif' : info.hasAlpha ? 'png' : 'jpeg';
  let format = (ops.format === undefined || ops.format === 'json' ? family : ops.format) as EncodedFormat;
  if (animatedSource && format === 'avif') format = 'webp';
  return { format, animated: animatedSource && (format === 'webp' || format === 'gif') };
}

/** Encoder settings per format (see README "Output formats" for how they were chosen). */
export function encode(image: Sharp, plan: OutputPlan, ops: Ops): void {
  switch (plan.format) {
    case 'jpeg':
      image.jpeg({ quality: ops.quality ?? DEFAULT_QUALITY.jpeg, progressive: true });
      return;
    case 'webp':
      image.webp({ quality: ops.quality ?? DEFAULT_QUALITY.webp, effort: 4 });
      return;
    case 'avif':
      // Effort 2: effort 4 (the default) costs several seconds per photo on one core.
      image.avif({ quality: ops.quality ?? DEFAULT_QUALITY.avif, effort: 2 });
      return;
    case 'png':
      image.png({ compressionLevel: 6 });
      return;
    case 'gif':
      image.gif();
      return;
  }
}
