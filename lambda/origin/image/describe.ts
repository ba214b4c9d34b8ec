// `format=json`: what the source is, plus a tiny blurred placeholder that a
// page can show while the real image loads.

import type { OpenedSource } from './input';

/** Longest side of the placeholder, in pixels; a page stretches and blurs it further with CSS. */
const PLACEHOLDER_SIZE = 16;

export interface Description {
  width: number;
  height: number;
  format: string;
  bytes: number;
  hasAlpha: boolean;
  frames: number;
  placeholder: string;
}

export async function describe({ info, firstFrame }: OpenedSource): Promise<Description> {
  const placeholder = await (await firstFrame())
    .autoOrient()
    .resize(PLACEHOLDER_SIZE, PLACEHOLDER_SIZE, { fit: 'inside' })
    .blur(0.5)
    .toColourspace('srgb')
    .webp({ quality: 40, alphaQuality: 40 })
    .toBuffer();
  return {
    width: info.width,
    height: info.height,
    format: info.format,
    bytes: info.bytes,
    hasAlpha: info.hasAlpha,
    frames: info.frames,
    placeholder: 'data:image/webp;base64,' + placeholder.toString('base64'),
  };
}
