// `manageStripLocation`: the stored original without its location, its
// pixels untouched. No re-encode: each container's metadata blocks are found
// by walking its structure once (linear in the file, no length trusted past
// the end of the bytes) and rewritten by location-blocks.ts, in place where
// the container has offsets that must not move:
// - JPEG: the segments before the first scan: EXIF (APP1), XMP (APP1) and the
//   Photoshop resources' IPTC (APP13) in place; extended XMP, C2PA's JUMBF
//   (APP11) and comments become comments of spaces; the same in each further
//   image of its MPF index (an HDR gain map, a depth map), which are kept.
// - PNG: eXIf and an uncompressed XMP iTXt in place; every other text chunk
//   (tEXt, zTXt, iTXt: comments, exiftool's raw EXIF and IPTC profiles),
//   C2PA's caBX and anything after IEND dropped.
// - WebP: the EXIF and XMP chunks in place, the C2PA chunk zeroed.
// - AVIF, HEIC: the Exif items and XMP (`mime` application/rdf+xml) items in
//   place; top-level uuid boxes (C2PA's) zeroed.
// - TIFF: every page's GPS IFD, maker note, XMP, IPTC-NAA, Photoshop and C2PA tags.
// - GIF: comments and application extensions dropped, but the loop count's and the ICC profile's.
// - SVG: stored as it came (location-blocks.ts has nothing to read in it).
// The ICC profile, the orientation and every other EXIF field are kept.

import { eachBox, HeifDamaged } from '../origin/image/heif-boxes';
import { heifMeta, itemRanges, itemTypes } from '../origin/image/heif-items';
import type { SourceFormat } from '../origin/image/detect';
import { crc32 } from 'node:zlib';
import {
  keptIim,
  keptPhotoshop,
  mpfImages,
  NotStrippable,
  stripExif,
  stripXmpAt,
  TIFF_TAGS,
  type IfdEntry,
  type TiffReader,
} from './location-blocks';

const EXIF_ID = 'Exif\0\0';
const XMP_ID = 'http://ns.adobe.com/xap/1.0/\0';
const EXTENDED_XMP_ID = 'http://ns.adobe.com/xmp/extension/\0';
const PHOTOSHOP_ID = 'Photoshop 3.0\0';
const MARKER = { app1: 0xe1, app2: 0xe2, app11: 0xeb, app13: 0xed, comment: 0xfe, scan: 0xda, end: 0xd9 };

const startsWith = (bytes: Buffer, text: string) => bytes.toString('latin1', 0, text.length) === text;

/** A TIFF page's (or an EXIF's IFD0's) XMP, IPTC-NAA and Photoshop tags, each rewritten in its own bytes, its count shortened to what is kept. */
function stripTiffTag(tiff: Buffer, entry: IfdEntry, reader: TiffReader): void {
  if (entry.size === 0) return;
  const end = entry.start + entry.size;
  if (entry.tag === TIFF_TAGS.xmp) return stripXmpAt(tiff, entry.start, end);
  if (entry.tag === TIFF_TAGS.c2pa) return void tiff.fill(0, entry.start, end);
  if (entry.tag !== TIFF_TAGS.iptc && entry.tag !== TIFF_TAGS.photoshop) return;
  const value = tiff.subarray(entry.start, end);
  const kept = entry.tag === TIFF_TAGS.iptc ? keptIim(value) : (keptPhotoshop(value) ?? Buffer.alloc(0));
  const unit = entry.size / entry.count;
  const size = Math.ceil(kept.length / unit) * unit;
  if (size > entry.size) return void tiff.fill(0, entry.start, end);
  value.fill(0);
  kept.copy(value);
  reader.writeU32(size / unit, entry.at + 4);
}

/** An EXIF block (or a TIFF file) stripped in place; false when it is not a TIFF structure. */
const stripTiff = (tiff: Buffer) => stripExif(tiff, (entry, reader) => stripTiffTag(tiff, entry, reader));

/** The segment at `at` made a comment of spaces, its length kept. */
function blankSegment(jpeg: Buffer, at: number, end: number): void {
  jpeg[at + 1] = MARKER.comment;
  jpeg.fill(0x20, at + 4, end);
}

/** An APP13's Photoshop resources with only the kept IPTC, then a comment filling the rest; all a comment when that cannot be. */
function stripPhotoshopSegment(jpeg: Buffer, at: number, end: number): void {
  const kept = keptPhotoshop(jpeg.subarray(at + 4, end));
  const room = end - at - 4 - (kept?.length ?? 0);
  if (!kept || (room > 0 && room < 4)) return blankSegment(jpeg, at, end);
  kept.copy(jpeg, at + 4);
  jpeg.writeUInt16BE(kept.length + 2, at + 2);
  if (room === 0) return;
  const filler = at + 4 + kept.length;
  jpeg.writeUInt16BE(0xff00 | MARKER.comment, filler);
  jpeg.writeUInt16BE(room - 2, filler + 2);
  jpeg.fill(0x20, filler + 4, end);
}

const MPF_ID = 'MPF\0';

/** The JPEG's segments before its first scan, each stripped in place; where its MPF index starts, if it has one. */
function stripJpegHeader(jpeg: Buffer): number | undefined {
  let mpf: number | undefined;
  for (let at = 2; at + 4 <= jpeg.length;) {
    const marker = jpeg[at + 1]!;
    if (jpeg[at] !== 0xff) throw new NotStrippable('a JPEG segment does not start with a marker');
    if (marker === 0xff) {
      at += 1; // a fill byte
      continue;
    }
    if (marker === MARKER.scan || marker === MARKER.end) return mpf;
    const end = at + 2 + jpeg.readUInt16BE(at + 2);
    if (end > jpeg.length || end < at + 4) throw new NotStrippable('a JPEG segment runs past the file');
    const content = jpeg.subarray(at + 4, end);
    if (marker === MARKER.app1 && startsWith(content, EXIF_ID)) stripTiff(content.subarray(EXIF_ID.length));
    else if (marker === MARKER.app1 && startsWith(content, XMP_ID)) stripXmpAt(jpeg, at + 4 + XMP_ID.length, end);
    else if (marker === MARKER.app13 && startsWith(content, PHOTOSHOP_ID)) stripPhotoshopSegment(jpeg, at, end);
    else if (marker === MARKER.comment || marker === MARKER.app11 || (marker === MARKER.app1 && startsWith(content, EXTENDED_XMP_ID)))
      blankSegment(jpeg, at, end);
    else if (marker === MARKER.app2 && startsWith(content, MPF_ID)) mpf ??= at + 4 + MPF_ID.length;
    at = end;
  }
  return mpf;
}

/**
 * The JPEG's header stripped, and the header of each further image its MPF
 * index lists (a gain map, a depth map, a second camera's picture), each
 * once: images that overlap one before them are passed over.
 */
function stripJpeg(jpeg: Buffer): void {
  const mpf = stripJpegHeader(jpeg);
  if (mpf === undefined) return;
  let reached = 0;
  for (const [offset, size] of mpfImages(jpeg.subarray(mpf)).sort((a, b) => a[0] - b[0])) {
    const start = mpf + offset;
    if (offset === 0 || start < reached || start + size > jpeg.length) continue;
    reached = start + size;
    const image = jpeg.subarray(start, reached);
    if (image[0] === 0xff && image[1] === 0xd8) stripJpegHeader(image);
  }
}

/** The PNG chunks left out: text, and C2PA's manifest store (whose assertions may hold EXIF with GPS). */
const PNG_DROPPED = new Set(['tEXt', 'zTXt', 'iTXt', 'caBX']);
const PNG_XMP = 'XML:com.adobe.xmp\0';

/** The PNG's chunks up to IEND, its eXIf and uncompressed XMP stripped in place, its other text chunks left out. */
function stripPng(png: Buffer): Buffer {
  const kept: Buffer[] = [png.subarray(0, 8)];
  for (let at = 8; ;) {
    if (at + 12 > png.length) throw new NotStrippable('the PNG ends before its IEND chunk');
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const end = at + 12 + length;
    if (end > png.length) throw new NotStrippable(`its ${type} chunk runs past the file`);
    const data = png.subarray(at + 8, at + 8 + length);
    // An iTXt: keyword, compression flag and method, language, translated keyword, then the text.
    const xmpText = type === 'iTXt' && startsWith(data, PNG_XMP) && data[PNG_XMP.length] === 0 ? textOfItxt(data) : undefined;
    if (type === 'eXIf') stripTiff(startsWith(data, EXIF_ID) ? data.subarray(EXIF_ID.length) : data);
    if (xmpText !== undefined) stripXmpAt(data, xmpText, data.length);
    if (type === 'eXIf' || xmpText !== undefined) png.writeUInt32BE(crc32(png.subarray(at + 4, at + 8 + length)), at + 8 + length);
    if (!PNG_DROPPED.has(type) || xmpText !== undefined) kept.push(png.subarray(at, end));
    if (type === 'IEND') return Buffer.concat(kept);
    at = end;
  }
}

/** Where an uncompressed iTXt's text starts, after its language tag and translated keyword; undefined when they do not end. */
function textOfItxt(data: Buffer): number | undefined {
  const language = data.indexOf(0, PNG_XMP.length + 2);
  const translated = language === -1 ? -1 : data.indexOf(0, language + 1);
  return translated === -1 ? undefined : translated + 1;
}

/** The WebP's EXIF and XMP chunks, stripped in place. */
function stripWebp(webp: Buffer): void {
  for (let at = 12; at + 8 <= webp.length;) {
    const type = webp.toString('latin1', at, at + 4);
    const end = at + 8 + webp.readUInt32LE(at + 4);
    if (end > webp.length) throw new NotStrippable(`its ${type} chunk runs past the file`);
    const data = webp.subarray(at + 8, end);
    if (type === 'EXIF') stripTiff(startsWith(data, EXIF_ID) ? data.subarray(EXIF_ID.length) : data);
    if (type === 'XMP ') stripXmpAt(webp, at + 8, end);
    if (type === 'C2PA') data.fill(0);
    at = end + (end & 1);
  }
}

/** The HEIF's Exif and XMP items, stripped where iloc puts them (across extents). */
function stripHeif(heif: Buffer): void {
  let meta;
  try {
    meta = heifMeta(heif);
    const kinds = new Map<number, 'exif' | 'xmp'>();
    for (const [item, { type, contentType }] of itemTypes(meta)) {
      if (type === 'Exif') kinds.set(item, 'exif');
      else if (type === 'mime' && contentType === 'application/rdf+xml') kinds.set(item, 'xmp');
    }
    // Every item's ranges, so that a metadata item sharing bytes with a picture is refused, never rewritten.
    const located = itemRanges(meta);
    for (const [item, kind] of kinds) {
      const ranges = located.get(item) ?? [];
      const data = Buffer.concat(ranges.map(([start, end]) => heif.subarray(start, end)));
      // An Exif item starts with the offset of its TIFF header past that field.
      const tiffAt = kind === 'exif' && data.length >= 4 ? 4 + data.readUInt32BE(0) : undefined;
      if (tiffAt !== undefined && tiffAt < data.length) stripTiff(data.subarray(tiffAt));
      if (kind === 'xmp') stripXmpAt(data, 0, data.length);
      let from = 0;
      for (const [start, end] of ranges) from += data.copy(heif, start, from, from + end - start);
    }
    // Top-level uuid boxes (a C2PA manifest store, some writers' XMP) are no picture's: zeroed, their UUID too.
    eachBox(heif, 0, heif.length, (box) => void (box.type === 'uuid' && heif.fill(0, box.start, box.end)));
  } catch (error) {
    if (error instanceof HeifDamaged) throw new NotStrippable(`its metadata items cannot be read: ${error.message}`);
    throw error;
  }
}

/** The application extensions a GIF keeps: its loop count's, its ICC profile's. */
const GIF_KEPT = ['NETSCAPE2.0', 'ANIMEXTS1.0', 'ICCRGBG1012'];

/** The GIF without its comments and other application extensions (XMP's among them). */
function stripGif(gif: Buffer): Buffer {
  const table = (flags: number) => (flags & 0x80 ? 3 << ((flags & 7) + 1) : 0);
  /** The end of the sub-blocks starting at `at`. */
  const subBlocks = (at: number) => {
    while (at < gif.length && gif[at] !== 0) at += gif[at]! + 1;
    if (at >= gif.length) throw new NotStrippable('a GIF block runs past the file');
    return at + 1;
  };
  let at = 13 + table(gif[10]!);
  const kept: Buffer[] = [gif.subarray(0, at)];
  while (at < gif.length && gif[at] !== 0x3b) {
    const start = at;
    if (gif[at] === 0x2c) at = subBlocks(at + 10 + table(gif[at + 9]!) + 1);
    else if (gif[at] === 0x21) at = subBlocks(at + 2);
    else throw new NotStrippable(`a GIF block of unknown kind 0x${gif[at]!.toString(16)}`);
    const label = gif[start + 1];
    const dropped =
      gif[start] === 0x21 && (label === 0xfe || (label === 0xff && !GIF_KEPT.includes(gif.toString('latin1', start + 3, start + 14))));
    if (!dropped) kept.push(gif.subarray(start, at));
  }
  kept.push(Buffer.from([0x3b]));
  return Buffer.concat(kept);
}

/** `bytes` of `format` with every location removed and the pixels untouched; NotStrippable when its structure is not one read here. */
export function stripLocation(bytes: Buffer, format: SourceFormat): Buffer {
  if (format === 'svg') return bytes;
  const copy = Buffer.from(bytes);
  if (format === 'jpeg') stripJpeg(copy);
  else if (format === 'webp') stripWebp(copy);
  else if (format === 'heic' || format === 'avif') stripHeif(copy);
  else if (format === 'tiff' && !stripTiff(copy)) throw new NotStrippable('it is not a classic TIFF (a BigTIFF?)');
  else if (format === 'png') return stripPng(copy);
  else if (format === 'gif') return stripGif(copy);
  return copy;
}
