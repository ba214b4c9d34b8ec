// A custom loader for Next.js's `next/image`, so that it asks this service for
// each width instead of `/_next/image`. Built on imageUrl: the same grammar
// checks, canonical spelling and (with `sizes`) snapping as any other URL.
//
//   // next.config.js: images: { loader: 'custom', loaderFile: './image-loader.js' }
//   // image-loader.js
//   import { nextImageLoader } from 'edge-image-transformer/next';
//   export default nextImageLoader('https://img.example.com');

import { imageUrl, type GrammarOptions, type ImageParams } from './url';

/** What next/image passes a loader (its ImageLoaderProps). */
export interface NextImageLoaderProps {
  /** The `src` of the <Image>: the source key, with or without a leading '/'. */
  src: string;
  width: number;
  quality?: number;
}

/**
 * A next/image loader for the images at `base` (a host or origin, as for
 * imageUrl): `src` is the source key, the width and quality come from Next.js,
 * `params` (e.g. `{ format: 'auto', fit: 'inside' }`) go into every URL. Give
 * `options` as the edge has them (its `sizes`), so a width snaps as it will there.
 */
export function nextImageLoader(
  base: string,
  params: Omit<ImageParams, 'width' | 'quality'> = {},
  options?: GrammarOptions,
): (props: NextImageLoaderProps) => string {
  return ({ src, width, quality }) => imageUrl(base, src.replace(/^\/+/, ''), { ...params, width, quality }, options);
}
