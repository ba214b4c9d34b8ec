// `metadata=none|copyright|keep`: what of the source's EXIF, XMP and IPTC an
// output carries. Nothing is passed through as it stands: the fields kept
// are read here and written anew, so that whatever metadata-fields.ts does
// not list (GPS and other location, camera serial numbers, maker notes,
// thumbnails of the uncropped picture, fields it does not know) never
// reaches a viewer.
// Each reader walks its block once, bounded by the block's length, and a
// block over its cap is dropped unread.

import type { Exif, Sharp } from 'sharp';
import type { MetadataMode } from '../../grammar';
import { COPYRIGHT_EXIF, EXIF_FIELDS, IPTC_FIELDS, IPTC_FRAME } from './metadata-fields';
import { keptXmp } from './xmp';

/** The blocks a source carries, as libvips reads them: EXIF (a TIFF structure), an XMP packet, IPTC in a Photoshop resource block. */
export interface SourceMetadata {
  exif?: Buffer;
  xmp?: Buffer;
  iptc?: Buffer;
}

/** What an output carries: EXIF fields as sharp's withExif writes them, an XMP packet, an IPTC resource block (JPEG only). */
export interface KeptMetadata {
  exif?: Exif;
  xmp?: string;
  iptc?: Buffer;
}

/**
 * The largest block of each kind read; a larger one is dropped. EXIF and IPTC
 * within a JPEG segment; XMP at four times what a camera or Lightroom writes.
 */
export const MAX_METADATA_BYTES = { exif: 65_000, xmp: 262_144, iptc: 65_000 };

/** The Exif IFD's pointer in IFD0. */
const EXIF_POINTER = 0x8769;

/** Bytes of one value of each TIFF field type. */
const TYPE_BYTES: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 7: 1, 9: 4, 10: 8 };

interface ExifField {
  ifd: number;
  tag: number;
  /** The value as libvips reads it back from a string: text, or numbers and `n/d` rationals separated by spaces. */
  text: string;
}

/** The fields of IFD0 and the Exif IFD that EXIF_FIELDS names, in a TIFF structure (with or without the `Exif\0\0` prefix). */
function exifFields(block: Buffer): ExifField[] {
  const tiff = block.subarray(0, 6).toString('latin1') === 'Exif\0\0' ? block.subarray(6) : block;
  if (tiff.length < 8) return [];
  const little = tiff.toString('latin1', 0, 2) === 'II';
  const u16 = (at: number) => (little ? tiff.readUInt16LE(at) : tiff.readUInt16BE(at));
  const u32 = (at: number) => (little ? tiff.readUInt32LE(at) : tiff.readUInt32BE(at));
  const fields: ExifField[] = [];
  const walk = (ifd: number, at: number): number | undefined => {
    if (at + 2 > tiff.length) return undefined;
    let pointer: number | undefined;
    // Each tag is read once: thousands of entries naming one tag and one 60 KB value would
    // otherwise decode that value thousands of times (seconds of CPU for a 64 KB block).
    const read = new Set<number>();
    const count = Math.min(u16(at), Math.floor((tiff.length - at - 2) / 12));
    for (let entry = at + 2; entry < at + 2 + count * 12; entry += 12) {
      const [tag, type, values] = [u16(entry), u16(entry + 2), u32(entry + 4)];
      if (ifd === 0 && tag === EXIF_POINTER) pointer = u32(entry + 8);
      const size = (TYPE_BYTES[type] ?? 0) * values;
      const start = size > 4 ? u32(entry + 8) : entry + 8;
      if (!EXIF_FIELDS[ifd]![tag] || read.has(tag) || size === 0 || start + size > tiff.length) continue;
      read.add(tag);
      const text = fieldText(tiff.subarray(start, start + size), type, values, little);
      if (text) fields.push({ ifd, tag, text });
    }
    return pointer;
  };
  const exifIfd = walk(0, u32(4));
  // IFD1 (the thumbnail), GPS and interoperability are never read.
  if (exifIfd !== undefined && exifIfd !== u32(4)) walk(2, exifIfd);
  return fields;
}

/** A field's values as text, as libvips parses them when it writes a field. */
function fieldText(data: Buffer, type: number, values: number, little: boolean): string {
  if (type === 2)
    return data
      .toString('utf8')
      .replace(/\0[\s\S]*$/, '')
      .trim();
  const read = (size: number, at: number, signed: boolean): number => {
    if (size === 1) return signed ? data.readInt8(at) : data.readUInt8(at);
    if (size === 2) return little ? data.readUInt16LE(at) : data.readUInt16BE(at);
    if (signed) return little ? data.readInt32LE(at) : data.readInt32BE(at);
    return little ? data.readUInt32LE(at) : data.readUInt32BE(at);
  };
  const size = TYPE_BYTES[type]!;
  const numbers: string[] = [];
  for (let i = 0; i < values; i++) {
    const at = i * size;
    if (type === 5 || type === 10) numbers.push(`${read(4, at, type === 10)}/${read(4, at + 4, type === 10)}`);
    else numbers.push(String(read(size, at, type === 9)));
  }
  return numbers.join(' ');
}

const PHOTOSHOP = 'Photoshop 3.0\0';
/** The Photoshop resource that holds IPTC-IIM. */
const IPTC_RESOURCE = 0x0404;

/** The IPTC-IIM datasets of a Photoshop resource block, in order, each as its bytes; undefined when there are none. */
function iptcDatasets(block: Buffer): { record: number; dataset: number; bytes: Buffer }[] | undefined {
  if (block.toString('latin1', 0, PHOTOSHOP.length) !== PHOTOSHOP) return undefined;
  for (let at = PHOTOSHOP.length; at + 12 <= block.length;) {
    if (block.toString('latin1', at, at + 4) !== '8BIM') return undefined;
    const id = block.readUInt16BE(at + 4);
    const nameBytes = (block[at + 6]! + 2) & ~1; // a Pascal string, padded to even
    if (at + 6 + nameBytes + 4 > block.length) return undefined;
    const size = block.readUInt32BE(at + 6 + nameBytes);
    const start = at + 6 + nameBytes + 4;
    if (start + size > block.length) return undefined;
    if (id === IPTC_RESOURCE) {
      const iim = block.subarray(start, start + size);
      const datasets = [];
      // A dataset of extended length (over 32 KB) ends the reading.
      for (let d = 0; d + 5 <= iim.length && iim[d] === 0x1c && !(iim[d + 3]! & 0x80);) {
        const length = 5 + iim.readUInt16BE(d + 3);
        if (d + length > iim.length) break;
        datasets.push({ record: iim[d + 1]!, dataset: iim[d + 2]!, bytes: iim.subarray(d, d + length) });
        d += length;
      }
      return datasets;
    }
    at = start + size + (size & 1);
  }
  return undefined;
}

/** A Photoshop resource block holding only `iim`. */
function iptcBlock(iim: Buffer): Buffer {
  const header = Buffer.alloc(12);
  header.write('8BIM', 0, 'latin1');
  header.writeUInt16BE(IPTC_RESOURCE, 4);
  header.writeUInt32BE(iim.length, 8); // an empty name, padded to two bytes
  return Buffer.concat([Buffer.from(PHOTOSHOP, 'latin1'), header, iim, Buffer.alloc(iim.length & 1)]);
}

/** What `mode` keeps of the source's blocks; undefined when nothing. */
export function keptMetadata(source: SourceMetadata, mode: MetadataMode | undefined): KeptMetadata | undefined {
  if (mode === undefined || mode === 'none') return undefined;
  const within = (block: Buffer | undefined, cap: number) => (block && block.length <= cap ? block : undefined);
  const copyright = mode === 'copyright';
  const kept: KeptMetadata = {};
  const exif = within(source.exif, MAX_METADATA_BYTES.exif);
  for (const { ifd, tag, text } of exif ? exifFields(exif) : []) {
    const name = EXIF_FIELDS[ifd]![tag]!;
    if (copyright && !COPYRIGHT_EXIF.includes(name)) continue;
    kept.exif ??= {};
    (kept.exif[ifd === 0 ? 'IFD0' : 'IFD2'] ??= {})[name] = text;
  }
  const xmp = within(source.xmp, MAX_METADATA_BYTES.xmp);
  if (xmp) kept.xmp = keptXmp(xmp.toString('utf8'), mode);
  const iptc = within(source.iptc, MAX_METADATA_BYTES.iptc);
  const listed = new Set([...IPTC_FRAME, ...Object.keys(IPTC_FIELDS.copyright), ...(copyright ? [] : Object.keys(IPTC_FIELDS.keep))]);
  const datasets = (iptc && iptcDatasets(iptc))?.filter(({ record, dataset }) => listed.has(`${record}:${dataset}`));
  if (datasets?.some(({ record, dataset }) => record === 2 && dataset !== 0))
    kept.iptc = iptcBlock(Buffer.concat(datasets.map(({ bytes }) => bytes)));
  return kept.exif || kept.xmp || kept.iptc ? kept : undefined;
}

/** A JPEG segment's marker and length, before its content. */
const SEGMENT_HEADER_BYTES = 4;

/**
 * The IPTC block added to an output after its encode, since libvips writes IPTC only as it read
 * it: a JPEG's, and none beside a gain map, which it would move away from where the MPF index says it is.
 */
export function iptcAfterEncode(kept: KeptMetadata | undefined, format: string, gainMap: boolean): Buffer | undefined {
  return kept?.iptc && format === 'jpeg' && !gainMap ? kept.iptc : undefined;
}

/** The bytes withIptc adds for `block`. */
export const iptcSegmentBytes = (block: Buffer) => SEGMENT_HEADER_BYTES + block.length;

/** A JPEG with `block` as its APP13 segment, after the application segments the encoder wrote (libvips writes no IPTC of its own). */
export function withIptc(jpeg: Buffer, block: Buffer): Buffer {
  let at = 2;
  while (at + SEGMENT_HEADER_BYTES <= jpeg.length && jpeg[at] === 0xff && jpeg[at + 1]! >= 0xe0 && jpeg[at + 1]! <= 0xef)
    at += 2 + jpeg.readUInt16BE(at + 2);
  const segment = Buffer.alloc(SEGMENT_HEADER_BYTES);
  segment.writeUInt16BE(0xffed, 0);
  segment.writeUInt16BE(block.length + 2, 2);
  return Buffer.concat([jpeg.subarray(0, at), segment, block, jpeg.subarray(at)]);
}

/** `image` set to write the EXIF and XMP kept; without them sharp writes none. */
export function withMetadata(image: Sharp, kept: KeptMetadata | undefined): Sharp {
  if (kept?.exif) image.withExif(kept.exif);
  if (kept?.xmp) image.withXmp(kept.xmp);
  return image;
}
