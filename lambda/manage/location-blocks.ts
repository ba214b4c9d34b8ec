// The metadata blocks that carry a photo's location, rewritten in place for
// the stored original (strip-location.ts): the same bytes, the same length,
// so no offset in the container around them moves (a HEIF's iloc, a JPEG's
// MPF index of its gain map, a TIFF's strips).
// - EXIF (a TIFF structure): each GPS IFD is emptied and the bytes its
//   entries point to are zeroed; the maker note, where some vendors keep
//   GPS of their own, is zeroed; everything else stays.
// - XMP: rebuilt with what `metadata=keep` keeps (xmp.ts, an allowlist that
//   holds no place) and an HDR gain map's parameters, padded with spaces to
//   the old packet's length, as XMP's own padding is; a packet whose kept
//   part would not fit, or of more than the outputs read (256 KB), is emptied.
// - IPTC-IIM: the datasets `metadata=keep` keeps (metadata.ts).
// Each walk reads an IFD's entries once and zeroes the union of what they
// point to, so its time is linear in the block, whatever the entries say.

import { keptMetadata, MAX_METADATA_BYTES } from '../origin/image/metadata';
import type { XmpNamespace } from '../origin/image/metadata-fields';
import { keptXmp } from '../origin/image/xmp';

/** The GPS IFD's pointer, the Exif IFD's, the maker note in the Exif IFD, and the tags whose values are metadata blocks. */
export const TIFF_TAGS = { gps: 0x8825, exif: 0x8769, makerNote: 0x927c, xmp: 700, iptc: 33723, photoshop: 34377, c2pa: 0xcd41 } as const;

/** Bytes of one value of each TIFF field type (BYTE, ASCII, SHORT, LONG, RATIONAL, SBYTE, UNDEFINED, SSHORT, SLONG, SRATIONAL, FLOAT, DOUBLE, IFD). */
const TYPE_BYTES: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 13: 4 };

/** One IFD entry: where it is, its tag, and where its value is (in the entry, or where it points). */
export interface IfdEntry {
  at: number;
  tag: number;
  type: number;
  count: number;
  start: number;
  size: number;
}

/** A file whose location cannot be removed as it stands (its structure is not one read here, or its walk would outgrow it). */
export class NotStrippable extends Error {}

/**
 * A TIFF structure's byte order and readers; undefined when it is none (or
 * BigTIFF, which is not read). Its IFDs may read at most one entry per 12
 * bytes of the block in all, which entries that do not overlap never exceed:
 * a chain of IFDs laid over each other would otherwise cost its length squared.
 */
function tiffReader(tiff: Buffer) {
  if (tiff.length < 8) return undefined;
  const order = tiff.toString('latin1', 0, 2);
  if (order !== 'II' && order !== 'MM') return undefined;
  const little = order === 'II';
  const u16 = (at: number) => (little ? tiff.readUInt16LE(at) : tiff.readUInt16BE(at));
  const u32 = (at: number) => (little ? tiff.readUInt32LE(at) : tiff.readUInt32BE(at));
  if (u16(2) !== 42) return undefined;
  const writeU32 = (value: number, at: number) => (little ? tiff.writeUInt32LE(value, at) : tiff.writeUInt32BE(value, at));
  let budget = Math.ceil(tiff.length / 12);
  /** The entries of the IFD at `at` that lie within the block, and where its next-IFD pointer is (undefined: none). */
  const entries = (at: number): { entries: IfdEntry[]; next?: number } => {
    if (at < 8 || at + 2 > tiff.length) return { entries: [] };
    const count = Math.min(u16(at), Math.floor((tiff.length - at - 2) / 12));
    budget -= count;
    if (budget < 0) throw new NotStrippable('its IFDs overlap: they hold more entries than its bytes can');
    const list: IfdEntry[] = [];
    for (let entry = at + 2; entry < at + 2 + count * 12; entry += 12) {
      const [tag, type, values] = [u16(entry), u16(entry + 2), u32(entry + 4)];
      const size = (TYPE_BYTES[type] ?? 0) * values;
      const start = size > 4 ? u32(entry + 8) : entry + 8;
      list.push({ at: entry, tag, type, count: values, start, size: start + size > tiff.length ? 0 : size });
    }
    const next = at + 2 + count * 12;
    return { entries: list, next: next + 4 <= tiff.length ? next : undefined };
  };
  return { u16, u32, writeU32, entries, firstIfd: u32(4) };
}

export type TiffReader = NonNullable<ReturnType<typeof tiffReader>>;

/** Zeroes the union of `ranges` of `bytes`: each byte once, however the ranges overlap. */
function zeroRanges(bytes: Buffer, ranges: [number, number][]): void {
  let reached = 0;
  for (const [start, end] of ranges.sort((a, b) => a[0] - b[0])) {
    const from = Math.max(start, reached);
    if (end > from) bytes.fill(0, from, end);
    reached = Math.max(reached, end);
  }
}

/** The tags whose values are metadata blocks of their own, rewritten by stripExif's caller. */
const BLOCK_TAGS = new Set<number>([TIFF_TAGS.xmp, TIFF_TAGS.iptc, TIFF_TAGS.photoshop, TIFF_TAGS.c2pa]);

/**
 * Strips an EXIF block in place: every IFD of IFD0's chain (a TIFF's pages,
 * an EXIF's thumbnail) has its GPS IFD emptied (its entries and what they
 * point to zeroed: no entries, no next IFD) and its Exif IFD's maker note
 * zeroed; `rewrite` is given each XMP, IPTC-NAA, Photoshop and C2PA value of those
 * IFDs (a TIFF file's, or one an EXIF carries). Bytes are zeroed as one union
 * and values rewritten in order, one overlapping another zeroed instead, so
 * that no byte is worked twice however the entries point. False when the
 * block is not one it reads.
 */
export function stripExif(tiff: Buffer, rewrite: (entry: IfdEntry, reader: TiffReader) => void = () => {}): boolean {
  const reader = tiffReader(tiff);
  if (!reader) return false;
  const seen = new Set<number>();
  const fresh = (pointer: number) => !seen.has(pointer) && Boolean(seen.add(pointer));
  const zeroed: [number, number][] = [];
  const pointed = (entries: IfdEntry[]) => entries.filter((e) => e.size > 4).map((e): [number, number] => [e.start, e.start + e.size]);
  const blocks: IfdEntry[] = [];
  for (let at: number | undefined = reader.firstIfd; at && at < tiff.length && fresh(at);) {
    const { entries, next } = reader.entries(at);
    for (const entry of entries) {
      const pointer = entry.size === 4 ? reader.u32(entry.start) : undefined;
      if (entry.tag === TIFF_TAGS.gps && pointer !== undefined && fresh(pointer)) {
        const gps = reader.entries(pointer);
        zeroed.push(...pointed(gps.entries), [pointer, gps.next === undefined ? pointer + 2 + gps.entries.length * 12 : gps.next + 4]);
      } else if (entry.tag === TIFF_TAGS.exif && pointer !== undefined && fresh(pointer)) {
        zeroed.push(...pointed(reader.entries(pointer).entries.filter((field) => field.tag === TIFF_TAGS.makerNote)));
      } else if (BLOCK_TAGS.has(entry.tag) && entry.size > 0) blocks.push(entry);
    }
    at = next === undefined ? undefined : reader.u32(next);
  }
  zeroRanges(tiff, zeroed);
  let reached = 0;
  const overlapping: [number, number][] = [];
  for (const entry of blocks.sort((a, b) => a.start - b.start)) {
    if (entry.start < reached) overlapping.push([entry.start, entry.start + entry.size]);
    else rewrite(entry, reader);
    reached = Math.max(reached, entry.start + entry.size);
  }
  zeroRanges(tiff, overlapping);
  return true;
}

/** Ultra HDR's gain map parameters (hdrgm), kept beside `keep`'s so that an HDR photo stays one: numbers, no place. */
const GAIN_MAP_XMP: XmpNamespace = {
  prefix: 'hdrgm',
  uri: 'http://ns.adobe.com/hdr-gain-map/1.0/',
  copyright: [],
  keep: [
    'Version',
    'BaseRenditionIsHDR',
    'GainMapMin',
    'GainMapMax',
    'Gamma',
    'OffsetSDR',
    'OffsetHDR',
    'HDRCapacityMin',
    'HDRCapacityMax',
  ],
};

/** The MP Entry tag of an MPF index: 16 bytes an image, its size at 4 and its offset (from the index) at 8. */
const MP_ENTRY = 0xb002;

/** The images an MPF index (the TIFF structure after `MPF\0`) lists, as [offset from the index, size]; the first, the primary, has offset 0. */
export function mpfImages(index: Buffer): [number, number][] {
  const reader = tiffReader(index);
  const entry = reader?.entries(reader.firstIfd).entries.find(({ tag }) => tag === MP_ENTRY);
  if (!reader || !entry) return [];
  const images: [number, number][] = [];
  for (let at = entry.start; at + 16 <= entry.start + entry.size; at += 16) images.push([reader.u32(at + 8), reader.u32(at + 4)]);
  return images;
}

const EMPTY_XMP = '<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"/>';
const XMP_END = '<?xpacket end="w"?>';

/**
 * An XMP packet of exactly `packet`'s length holding what `metadata=keep`
 * keeps of it (and its gain map parameters), padded with spaces before its
 * end: in a packet's usual form, or else its shortest; an empty packet when
 * neither fits, spaces when not even that does.
 */
export function strippedXmp(packet: Buffer): Buffer {
  const text = packet.length <= MAX_METADATA_BYTES.xmp ? packet.toString('utf8') : undefined;
  const forms = text === undefined ? [] : [false, true].map((compact) => keptXmp(text, 'keep', { also: [GAIN_MAP_XMP], compact }));
  for (const form of [...forms, EMPTY_XMP + XMP_END]) {
    if (form === undefined) continue;
    const ending = form.endsWith(XMP_END) ? XMP_END : '';
    const body = Buffer.from(form.slice(0, form.length - ending.length), 'utf8');
    const room = packet.length - body.length - ending.length;
    if (room >= 0) return Buffer.concat([body, Buffer.alloc(room, 0x20), Buffer.from(ending, 'latin1')]);
  }
  return Buffer.alloc(packet.length, 0x20);
}

/** Writes strippedXmp of `bytes[start, end)` over it. */
export function stripXmpAt(bytes: Buffer, start: number, end: number): void {
  strippedXmp(bytes.subarray(start, end)).copy(bytes, start);
}

/** A Photoshop resource block (`Photoshop 3.0\0`, 8BIM resources) with only the IPTC-IIM datasets `metadata=keep` keeps; undefined when none. */
export function keptPhotoshop(block: Buffer): Buffer | undefined {
  return keptMetadata({ iptc: block }, 'keep')?.iptc;
}

const PHOTOSHOP_PREFIX = 'Photoshop 3.0\0';
/** The header of keptPhotoshop's one resource: `8BIM`, its id, an empty name, its size. */
const RESOURCE_HEADER_BYTES = 12;

/** Bare IPTC-IIM datasets (a TIFF's IPTC-NAA tag) with only those `metadata=keep` keeps; empty when none. */
export function keptIim(iim: Buffer): Buffer {
  const header = Buffer.alloc(RESOURCE_HEADER_BYTES);
  header.write('8BIM', 0, 'latin1');
  header.writeUInt16BE(0x0404, 4);
  header.writeUInt32BE(iim.length, 8);
  const kept = keptPhotoshop(Buffer.concat([Buffer.from(PHOTOSHOP_PREFIX, 'latin1'), header, iim, Buffer.alloc(iim.length & 1)]));
  if (!kept) return Buffer.alloc(0);
  const start = PHOTOSHOP_PREFIX.length + RESOURCE_HEADER_BYTES;
  return kept.subarray(start, start + kept.readUInt32BE(start - 4));
}
