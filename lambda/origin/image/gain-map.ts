// HDR gain maps (Ultra HDR JPEG, ISO 21496-1): a JPEG whose primary image is
// the SDR rendition, followed by a second, smaller JPEG that says how much
// brighter each part of the picture is on an HDR display. libvips (through
// libultrahdr) reads the gain map, and sharp's keepGainMap applies the
// primary's geometry to it (turns, mirrors, crops, resize, border, blur) and
// writes both again. Dropping it leaves the primary: the SDR rendition the
// photo's maker tone-mapped, not a clipped HDR one.

import sharp from 'sharp';
import type { Ops } from '../../grammar';
import { jpegScans, MAX_JPEG_SCANS } from './jpeg';

/** A source's gain map as stored (before EXIF orientation): its sides, each the primary's divided by `scale`. */
export interface GainMap {
  width: number;
  height: number;
  scale: number;
}

/** The gain map's scale, the primary's side over its own, at most this (Android writes 4, Apple 2). */
const MAX_GAIN_MAP_SCALE = 16;

/** Whether `side` is `primary` divided by `scale`, rounded either way. */
const divides = (primary: number, side: number, scale: number) =>
  side === Math.ceil(primary / scale) || side === Math.floor(primary / scale);

/**
 * The gain map sharp found in a source whose primary is `width` x `height`
 * as stored, read from its header only; undefined when the output could not
 * follow it, so that it is dropped and the SDR image served: a gain map
 * larger than the primary or of another shape (libvips would decode it
 * whole, or fail to cut it), a progressive one of too many scans, or one
 * whose header does not read. A gain map that libultrahdr cannot find (a
 * truncated file, an MPF index pointing out of the file) never gets here.
 */
export async function gainMapOf(image: Buffer | undefined, width: number, height: number): Promise<GainMap | undefined> {
  if (!image || jpegScans(image) > MAX_JPEG_SCANS) return undefined;
  const header = await sharp(image)
    .metadata()
    .catch(() => undefined);
  if (!header || header.format !== 'jpeg') return undefined;
  const scale = Math.round(width / header.width);
  if (!(scale >= 1 && scale <= MAX_GAIN_MAP_SCALE)) return undefined;
  if (!divides(width, header.width, scale) || !divides(height, header.height, scale)) return undefined;
  return { width: header.width, height: header.height, scale };
}

/**
 * Whether a gain map's data decodes, not only its header: libultrahdr reads a
 * map of random data as pixels and writes them again, where a damaged primary
 * is refused. Decoded whole, as libvips streams it into statistics (a line at
 * a time, nothing kept; shrink-on-load skips the data that tells), and thrown
 * away; a map that does not decode is dropped, the SDR image served.
 */
export async function gainMapDecodes(image: Buffer): Promise<boolean> {
  return sharp(image, { failOn: 'warning', sequentialRead: true })
    .stats()
    .then(
      () => true,
      () => false,
    );
}

/** `info` as an SDR source: what the transform works from when the output drops the gain map. */
export function withoutGainMap<Info extends { gainMap?: GainMap }>(info: Info): Omit<Info, 'gainMap'> {
  const { gainMap: _dropped, ...sdr } = info;
  return sdr;
}

/** Whether `ops` let a JPEG output keep a source's gain map: not when the URL says `hdr=drop`, nor for another format asked for. */
export const asksGainMap = (ops: Ops): boolean => ops.hdr !== 'drop' && (ops.format === undefined || ops.format === 'jpeg');

/**
 * Runs `encode` with libvips' operation cache on, emptied and set back after:
 * with it off, sharp 0.35.5 frees the source's bytes before it decodes a kept
 * gain map (lovell/sharp#4599: "Not a JPEG file", or whatever the freed memory
 * holds), and the cached load is what keeps them. Its memory cap is no cap,
 * since trimming the cache for memory drops that load first; what it holds is
 * the pipeline's own images, priced already. For a process that runs one
 * transform at a time, as a transform child does.
 */
export async function withSourceHeld<T>(encode: () => Promise<T>): Promise<T> {
  const { memory, files, items } = sharp.cache();
  sharp.cache({ memory: Number.MAX_SAFE_INTEGER, files: Math.max(files.max, 20), items: Math.max(items.max, 100) });
  try {
    return await encode();
  } finally {
    sharp.cache(items.max > 0 ? { memory: memory.max, files: files.max, items: items.max } : false);
  }
}
