// What the text tests compare: the glyphs' coverage (one 8-bit band, 255
// inside a glyph) cut to its ink, and the same text drawn directly by sharp
// with one packaged font file, so that a render can be checked against it.

import { join } from 'node:path';
import sharp from 'sharp';
import { fontsFolder } from '../../lambda/origin/image/text/fonts';

/** One band of coverage, `width` x `height`. */
export interface Coverage {
  data: Buffer;
  width: number;
  height: number;
}

/** Where the ink is: the bounding box of the coverage's non-zero pixels. */
export function inkBox({ data, width, height }: Coverage) {
  let [left, top, right, bottom] = [width, height, -1, -1];
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (data[y * width + x]! > 0)
        [left, top, right, bottom] = [Math.min(left, x), Math.min(top, y), Math.max(right, x), Math.max(bottom, y)];
    }
  }
  return { left, top, width: right - left + 1, height: bottom - top + 1 };
}

/** The coverage cut to its ink: the same glyphs compare equal whatever the box around them. */
export async function inkOnly(coverage: Coverage): Promise<Coverage> {
  const { data, info } = await sharp(coverage.data, { raw: { width: coverage.width, height: coverage.height, channels: 1 } })
    .extract(inkBox(coverage))
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** `markup` drawn directly by sharp with the packaged font `file` of `family`, at 40 px: its coverage cut to its ink. */
export async function drawnDirectly(markup: string, file: string, family: string): Promise<Coverage> {
  const { data, info } = await sharp({ text: { text: markup, font: `${family} 40`, fontfile: join(fontsFolder(), file), dpi: 72 } })
    .extractChannel(0)
    .raw()
    .toBuffer({ resolveWithObject: true });
  return inkOnly({ data, width: info.width, height: info.height });
}
