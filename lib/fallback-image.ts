// The fallback image at synth: a PNG or JPEG of the CDK app, checked from its
// header and packaged with the origin function, which answers it in place of
// the error for a missing, unsupported or damaged source
// (lambda/origin/fallback.ts).

import { mustBe } from '../lambda/common/checks';
import { jpegSize, pngHeader, readAppFile, type PackagedFile } from './image-files';
import { fail } from './settings';

const WHAT = 'fallbackImage';

/** Largest fallback file, and its largest size in pixels: a placeholder, decoded on every answer it makes. */
const MAX_FALLBACK_BYTES = 1024 * 1024;
const MAX_FALLBACK_PIXELS = 4 * 1024 * 1024;

/** The size of the PNG or JPEG in `bytes`, and the extension it is packaged under; a synth error for anything else. */
function checkedImage(bytes: Buffer): { size: [number, number]; extension: 'png' | 'jpg' } {
  const png = pngHeader(bytes);
  if (png) {
    // Wider samples would double the worst-case bytes the answer's size bound counts on (fallback.ts).
    if (png.depth > 8) fail(mustBe(`${WHAT}'s PNG`, '8 bits per sample (save it as 8-bit)', `${png.depth}-bit`));
    return { size: [png.width, png.height], extension: 'png' };
  }
  const jpeg = jpegSize(bytes);
  if (jpeg) return { size: jpeg, extension: 'jpg' };
  return fail(`${WHAT} must be a PNG or JPEG file.`);
}

/** The fallback image checked (at most 1 MiB and 4 megapixels) and named as the origin's package holds it, or undefined without one. */
export function packageFallbackImage(file: string | undefined): PackagedFile | undefined {
  if (file === undefined) return undefined;
  const { source, bytes } = readAppFile(WHAT, file, MAX_FALLBACK_BYTES);
  const { size, extension } = checkedImage(bytes);
  const [width, height] = size;
  if (width * height > MAX_FALLBACK_PIXELS) fail(mustBe(WHAT, 'at most 4 megapixels', `${width}x${height}`));
  return { source, file: `fallback/fallback.${extension}` };
}
