// The real type of a source, from its first bytes: never its name or Content-Type.

import { startsAsSvg } from './svg';

export type SourceFormat = 'jpeg' | 'png' | 'gif' | 'webp' | 'avif' | 'heic' | 'tiff' | 'svg';

/** No format is told by more than a source's first kilobyte (SVG's, like libvips): a prefix this long sniffs as the whole. */
export const SNIFF_BYTES = 1024;

const ascii = (bytes: Buffer, start: number, end: number) => bytes.toString('latin1', start, end);

export function detectFormat(bytes: Buffer): SourceFormat | undefined {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (ascii(bytes, 0, 8) === '\x89PNG\r\n\x1a\n') return 'png';
  if (/^GIF8[79]a$/.test(ascii(bytes, 0, 6))) return 'gif';
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP') return 'webp';
  // ISO-BMFF: AVIF names itself as the major brand or among the compatible brands.
  if (ascii(bytes, 4, 8) === 'ftyp' && /avi[fs]/.test(ascii(bytes, 8, 64))) return 'avif';
  // Otherwise HEIF: HEVC's brands (heic, heix, hevc...) or HEIF's own (mif1, msf1), whose codec libheif finds out.
  if (ascii(bytes, 4, 8) === 'ftyp' && /he[iv][cxms]|m[is]f1/.test(ascii(bytes, 8, 64))) return 'heic';
  if (ascii(bytes, 0, 4) === 'II*\0' || ascii(bytes, 0, 4) === 'MM\0*') return 'tiff';
  if (startsAsSvg(ascii(bytes, 0, SNIFF_BYTES))) return 'svg';
  return undefined;
}
