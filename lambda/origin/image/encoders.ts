// The encoder settings per format. Kept apart from the output plan
// (output.ts), which asks the steps what they do to an animation, so that the
// output step can encode without importing the plan's module back.

import type { Sharp } from 'sharp';
import { DEFAULT_QUALITY } from '../../grammar';
import type { FrameTiming, OutputPlan } from './output';

/**
 * Encoder settings per format, chosen with `npm run bench -- --quality` on 20
 * real photos: bytes against SSIMULACRA 2 (or SSIM where said) to the
 * uncompressed resize, and encode CPU time (docs/performance.md has the
 * tables). `quality` is a lossy format's (the format's default when absent).
 */
export function encode(image: Sharp, plan: Pick<OutputPlan, 'format'> & { timing?: FrameTiming }, quality?: number): Sharp {
  switch (plan.format) {
    case 'jpeg':
      // Progressive, with mozjpeg's quantisation table (3): at equal SSIMULACRA 2 it needs
      // 5.7% fewer bytes at 400x400 and 8.0% at 1200 px, for the same encode CPU (it moves
      // bits from luma to chroma, so luma SSIM alone rated it worse). The rest of mozjpeg
      // does not pay: trellis alone needs 3.1% more bytes, optimiseScans saves 1-1.4% more
      // for 2-3x the encode CPU, the whole preset 3-4.5x. Progressive is 1.7% smaller than
      // baseline at 1200 px, 0.9% at 400 px (1.2% larger at 200 px; luma SSIM).
      return image.jpeg({ quality: quality ?? DEFAULT_QUALITY.jpeg, progressive: true, quantisationTable: 3 });
    case 'webp':
      // Effort 2 needs 9.6% more bytes for the same luma SSIM. At equal SSIMULACRA 2 (400x400),
      // effort 5 saves 2.5% for 1.5x the encode CPU (not yet measured at 800 px, nor against
      // the worst-case encode rate the budget holds), effort 6 2.2% for 2x, smartSubsample
      // 0.4% for 2.3x, and preset photo costs 1.7%.
      return image.webp({ quality: quality ?? DEFAULT_QUALITY.webp, effort: 4, ...plan.timing });
    case 'avif':
      // Effort 2 with 4:2:0 chroma, like JPEG and WebP: 5.4% fewer bytes than 4:4:4 at equal
      // luma SSIM and 15% less encode time. Even so a 1600 px AVIF takes about 1 s of CPU
      // (up to 2.4 s on detailed photos) against 0.27 s for WebP, for 21% fewer bytes at
      // equal SSIM; effort 4 (sharp's default) takes 10x longer still. Effort 1 saves only 8%
      // over WebP, effort 0 nothing; effort 3 saves 6.7% at equal SSIMULACRA 2 for 2.1x the
      // encode CPU (400x400). sharp's default tune, iq: at equal SSIMULACRA 2, ssim needs
      // 24.5% more bytes and psnr 28.8% (at equal luma SSIM only 1.5% and 4.9%).
      return image.avif({ quality: quality ?? DEFAULT_QUALITY.avif, effort: 2, chromaSubsampling: '4:2:0' });
    case 'png':
      return image.png({ compressionLevel: 6 });
    case 'gif':
      // Effort 6: the same bytes and SSIM as the default 7 with a quarter less encode time
      // (GIF encoding is most of an animation's transform). Below 6 the palette and its
      // dithering visibly coarsen (and dither 0 bands smooth skies, which SSIM misses).
      return image.gif({ effort: 6, ...plan.timing });
  }
}
