// A source's HDR gain map (gain-map.ts), carried through to the output
// where every step can carry it.

import type { Sharp } from 'sharp';
import { FREE, perMegapixel, type Step } from './context';
import { ENCODE_SECONDS_PER_MP, ENCODER_BYTES_PER_PIXEL } from './encode';

/** sharp 0.35's keepGainMap, which its type declarations leave out. */
type KeepsGainMap = Sharp & { keepGainMap(): Sharp };

/** CPU seconds per megapixel of the gain map: a JPEG's decode (budget.ts). */
const RATES = { gainMapDecode: 0.06 };

export const gainMapStep: Step = {
  name: 'gain map',
  price: ({ info, outputPixels }) => {
    const map = info.gainMap;
    if (!map) return FREE;
    const mapPixels = map.width * map.height;
    const mapOutput = outputPixels / map.scale ** 2;
    return {
      // Decoded twice: checked (gain-map.ts), then by libultrahdr; and encoded.
      seconds: 2 * perMegapixel(RATES.gainMapDecode, mapPixels) + perMegapixel(ENCODE_SECONDS_PER_MP.jpeg, mapOutput),
      // The map decoded (three bands at most) and encoded; the output held whole, four bytes a pixel, for libultrahdr's encoder.
      bytes: mapPixels * 3 + mapOutput * ENCODER_BYTES_PER_PIXEL.jpeg + outputPixels * 4,
    };
  },
  apply(image, { info }) {
    // Kept only where every step carries it (transform.ts); sharp then turns, cuts, scales and writes it with the image.
    if (info.gainMap) (image as KeepsGainMap).keepGainMap();
  },
};
