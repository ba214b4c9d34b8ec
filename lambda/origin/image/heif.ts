// HEIF (HEIC: HEVC-coded still images) in two halves. The header: the primary
// image's size as displayed and whether it has alpha, read from the boxes of the
// ISO base media file format before anything is decoded, so that the pixel limit
// and the budget apply first. The decode: libheif compiled to WebAssembly
// (libheif-js), loaded only by the transform child, whose kill at the deadline
// stops it like any other transform.

import { HeifDamaged, primaryItem, reader, type Box } from './heif-boxes';
import { heifMeta, itemData, itemProperties, itemTypes, referencesFrom, referencesTo, type HeifMeta } from './heif-items';
import { checkHevcData, hvcCSps, type SpsSize } from './hevc';

export interface HeifHeader {
  /** Size as displayed: after the container's rotation (irot). */
  width: number;
  height: number;
  hasAlpha: boolean;
  /**
   * The colour space of the decoded RGB when it is not sRGB: the ICC profile
   * the file carries (`colr` of type `prof`, as iPhones write Display P3), or
   * `display-p3` for the CICP primaries of Display P3 (`colr` of type `nclx`).
   */
  colourProfile?: Buffer | 'display-p3';
  /** Pixels libde265 decodes to make it: each HEVC picture (every tile of a grid, the alpha plane's) at the size its SPS codes. */
  decodedPixels: number;
}

/** CICP colour primaries 12: P3 with the D65 white point, as Display P3 has. */
const CICP_DISPLAY_P3 = 12;

/**
 * Whether an ICC profile describes itself as sRGB, whose pixels need no
 * conversion: its `desc` tag, found in the tag table (12 bytes an entry,
 * bounded by the profile's length), holds "sRGB" in ASCII or UTF-16.
 */
function describesSrgb(icc: Buffer): boolean {
  const tags = icc.length >= 132 ? icc.readUInt32BE(128) : 0;
  for (let at = 132; at + 12 <= icc.length && at < 132 + tags * 12; at += 12) {
    if (icc.toString('latin1', at, at + 4) !== 'desc') continue;
    const start = icc.readUInt32BE(at + 4);
    return icc
      .toString('latin1', start, Math.min(icc.length, start + icc.readUInt32BE(at + 8)))
      .replace(/\0/g, '')
      .includes('sRGB');
  }
  return false;
}

/** A header whose own size is over the pixel limit (413), refused before the rest is checked. */
export class HeifTooLarge extends Error {}

/** The URNs that mark an auxiliary image as the alpha plane. */
const ALPHA_URNS = ['urn:mpeg:hevc:2015:auxid:1', 'urn:mpeg:mpegB:cicp:systems:auxiliary:alpha'];

/** An image item as its properties describe it. */
interface Item {
  id: number;
  type: string;
  properties: Map<string, Box>;
  /** Its ispe: the size it says it has, before any turn. */
  size: [number, number];
}

/** The items of `ids`, each with its type and its ispe, which every image the decoder makes must have. */
function describeItems(meta: HeifMeta, ids: number[]): Item[] {
  const wanted = new Set(ids);
  const [types, properties] = [itemTypes(meta, wanted), itemProperties(meta, wanted)];
  return ids.map((id) => {
    const own = properties.get(id)!;
    const ispe = own.get('ispe');
    if (!ispe) throw new HeifDamaged(`item ${id} has no size (ispe)`);
    const fields = reader(meta.bytes, ispe);
    fields.fullBox();
    const size: [number, number] = [fields.uint(4), fields.uint(4)];
    if (size[0] === 0 || size[1] === 0) throw new HeifDamaged(`item ${id} has no size (ispe)`);
    return { id, type: types.get(id)?.type ?? 'none', properties: own, size };
  });
}

/**
 * The grid's tiles (ISO/IEC 23008-12, 6.6.2.3): rows x columns distinct
 * items, referenced once each, of one size, that cover the grid's output as
 * the format requires (more than columns - 1 tiles' width, at most columns'),
 * and whose output is the grid's ispe. libheif itself checks none of the
 * upper bounds and decodes every tile whole: one 16384x16384 tile under a
 * 64x64 grid is decoded at 268 MP.
 */
function gridTiles(meta: HeifMeta, grid: Item): Item[] {
  const spec = itemData(meta, new Set([grid.id])).get(grid.id)!;
  if (spec.length < 8 || spec[0] !== 0) throw new HeifDamaged('a grid whose data is not version 0');
  const wide = (spec[1]! & 1) === 1; // 32-bit sizes
  if (wide && spec.length < 12) throw new HeifDamaged('a grid whose data ends inside its size');
  const [rows, columns] = [spec[2]! + 1, spec[3]! + 1];
  const output = wide ? [spec.readUInt32BE(4), spec.readUInt32BE(8)] : [spec.readUInt16BE(4), spec.readUInt16BE(6)];
  if (output[0] !== grid.size[0] || output[1] !== grid.size[1])
    throw new HeifDamaged(`the grid is ${output[0]}x${output[1]}, its ispe ${grid.size.join('x')}`);
  const references = referencesFrom(meta, 'dimg', grid.id);
  if (references.length !== rows * columns) throw new HeifDamaged(`a ${rows}x${columns} grid references ${references.length} tiles`);
  if (new Set(references).size !== references.length) throw new HeifDamaged('a grid references one tile twice');
  const tiles = describeItems(meta, references);
  const [width, height] = tiles[0]!.size;
  for (const tile of tiles) {
    if (tile.type !== 'hvc1') throw new HeifDamaged(`a grid tile of type ${tile.type}`);
    if (tile.size[0] !== width || tile.size[1] !== height) throw new HeifDamaged('grid tiles of different sizes');
  }
  const covers = (side: number, count: number, tile: number) => (count - 1) * tile < side && side <= count * tile;
  if (!covers(grid.size[0], columns, width) || !covers(grid.size[1], rows, height)) {
    throw new HeifDamaged(`${rows}x${columns} tiles of ${width}x${height} do not fit a ${grid.size.join('x')} grid`);
  }
  return tiles;
}

/**
 * The HEVC pictures libde265 decodes to make `image` (itself, or a grid's
 * tiles) and the pixels it codes for each, after checking that each picture
 * is what its ispe says: its SPS shows that size (hevc.ts).
 */
function pictures(meta: HeifMeta, image: Item): Map<number, number> {
  if (image.type !== 'hvc1' && image.type !== 'grid') throw new HeifDamaged(`an image item of type ${image.type}`);
  const coded = new Map<number, number>();
  const configs = new Map<number, SpsSize>(); // tiles share their hvcC
  for (const picture of image.type === 'grid' ? gridTiles(meta, image) : [image]) {
    const hvcC = picture.properties.get('hvcC');
    if (!hvcC) throw new HeifDamaged(`item ${picture.id} has no hvcC`);
    const sps = configs.get(hvcC.start) ?? hvcCSps(meta.bytes.subarray(hvcC.start, hvcC.end));
    configs.set(hvcC.start, sps);
    if (sps.width !== picture.size[0] || sps.height !== picture.size[1]) {
      throw new HeifDamaged(`item ${picture.id} is coded as ${sps.width}x${sps.height}, its ispe says ${picture.size.join('x')}`);
    }
    coded.set(picture.id, sps.codedWidth * sps.codedHeight);
  }
  return coded;
}

/**
 * The primary image's alpha plane, if it has one: the auxiliary image (auxl)
 * marked as alpha (auxC), which libheif decodes with it; of the same size, as
 * libheif would otherwise scale it whatever its size.
 */
function alphaPlane(meta: HeifMeta, primary: Item): Item | undefined {
  const auxiliary = describeItems(meta, referencesTo(meta, 'auxl', primary.id));
  const alphas = auxiliary.filter(({ properties }) => {
    const auxC = properties.get('auxC');
    const urn = auxC ? meta.bytes.toString('latin1', auxC.start + 4, Math.min(auxC.end, auxC.start + 64)) : '';
    return ALPHA_URNS.some((alpha) => urn.startsWith(alpha));
  });
  if (alphas.length > 1) throw new HeifDamaged('the primary image has two alpha planes');
  const alpha = alphas[0];
  if (alpha && (alpha.size[0] !== primary.size[0] || alpha.size[1] !== primary.size[1])) {
    throw new HeifDamaged(`an alpha plane of ${alpha.size.join('x')} for a ${primary.size.join('x')} image`);
  }
  return alpha;
}

/** The colour space of an item's pixels, from its colr property, when it is not sRGB. */
function colourProfileOf(bytes: Buffer, colr: Box | undefined): HeifHeader['colourProfile'] {
  if (!colr) return undefined;
  const fields = reader(bytes, colr);
  const kind = fields.type();
  const icc = bytes.subarray(fields.at, colr.end);
  if ((kind === 'prof' || kind === 'rICC') && !describesSrgb(icc)) return icc;
  if (kind === 'nclx' && fields.uint(2) === CICP_DISPLAY_P3) return 'display-p3';
  return undefined;
}

/**
 * The primary image's displayed size, alpha and colour, and the pixels the
 * decoder will really make for it, from the boxes alone: meta's pitm (which
 * item), iinf (its type), iprp (its properties: ispe, the size; irot, the
 * turn; colr), iref (a grid's tiles, its alpha plane) and iloc (each
 * picture's data, checked for a second picture or SPS). What the decoder
 * would expand beyond that (overlays, identity items, tiles that are not HEVC
 * pictures, anything sized otherwise than its ispe) is refused.
 */
export function heifHeader(bytes: Buffer, maxPixels = Infinity): HeifHeader {
  const meta = heifMeta(bytes);
  const [primary] = describeItems(meta, [primaryItem(bytes, meta.pitm)]) as [Item];
  // A size over the limit is the answer however the rest is built.
  if (primary.size[0] * primary.size[1] > maxPixels) throw new HeifTooLarge(`HEIF ispe: ${primary.size.join('x')}`);
  const alpha = alphaPlane(meta, primary);
  const coded = new Map([...pictures(meta, primary), ...(alpha ? pictures(meta, alpha) : [])]);
  for (const [id, data] of itemData(meta, new Set(coded.keys()))) checkHevcData(data, id);
  const irot = primary.properties.get('irot');
  const quarterTurns = irot ? reader(bytes, irot).uint(1) & 3 : 0;
  const [width, height] = quarterTurns % 2 === 1 ? [primary.size[1], primary.size[0]] : primary.size;
  const colourProfile = colourProfileOf(bytes, primary.properties.get('colr'));
  const decodedPixels = [...coded.values()].reduce((sum, pixels) => sum + pixels, 0);
  return { width, height, hasAlpha: alpha !== undefined, decodedPixels, ...(colourProfile ? { colourProfile } : {}) };
}

/** The decoded primary image: interleaved 8-bit RGB or RGBA, turned and mirrored as the container says. */
export interface HeifPixels {
  data: Buffer;
  width: number;
  height: number;
  channels: 3 | 4;
}

/** What libheif-js returns for an error: any answer that has a `code`. */
interface LibheifError {
  code: { value: number };
  message: string;
}

interface DecodedImage {
  image: unknown;
  channels: { id: unknown; width: number; height: number; stride: number; data: Uint8Array }[];
}

/** The part of libheif-js's Embind API used here (its own typings leave the results untyped). */
interface Libheif {
  heif_context_alloc(): unknown;
  heif_context_free(context: unknown): void;
  heif_context_read_from_memory(context: unknown, bytes: Uint8Array): LibheifError;
  heif_js_context_get_primary_image_handle(context: unknown): unknown;
  heif_image_handle_has_alpha_channel(handle: unknown): number;
  heif_image_handle_release(handle: unknown): void;
  heif_js_decode_image2(handle: unknown, colourspace: unknown, chroma: unknown): Promise<DecodedImage | LibheifError>;
  heif_image_release(image: unknown): void;
  heif_colorspace: { heif_colorspace_RGB: unknown };
  heif_chroma: { heif_chroma_interleaved_RGB: unknown; heif_chroma_interleaved_RGBA: unknown };
  heif_channel: { heif_channel_interleaved: unknown };
}

const isError = (answer: unknown): answer is LibheifError => !answer || (typeof answer === 'object' && 'code' in answer);

let libheif: Promise<Libheif> | undefined;

/**
 * Whether this process has loaded the decoder. WebAssembly memory grows to the
 * largest image decoded and never shrinks, so a process that has decoded a HEIF
 * should not serve another transform: its peak would no longer be the model's.
 */
export const heifDecoderLoaded = () => libheif !== undefined;

/**
 * Decodes the primary image (libheif applies irot and imir, once; the EXIF
 * orientation, which HEIF says to ignore, is left behind with the container).
 * A damaged file rejects with libheif's words.
 */
export async function decodeHeif(bytes: Buffer): Promise<HeifPixels> {
  // The .wasm is read from beside this file: the package is installed, not bundled, in the Lambda.
  libheif ??= import('libheif-js/libheif-wasm/libheif.js').then(({ default: factory }) => (factory as unknown as () => Promise<Libheif>)());
  const lib = await libheif;
  const context = lib.heif_context_alloc();
  let handle: unknown;
  try {
    const read = lib.heif_context_read_from_memory(context, bytes);
    if (read.code.value !== 0) throw new Error(`libheif: ${read.message}`);
    handle = lib.heif_js_context_get_primary_image_handle(context);
    if (isError(handle)) throw new Error(`libheif: ${handle?.message ?? 'no primary image'}`);
    const channels = lib.heif_image_handle_has_alpha_channel(handle) ? 4 : 3;
    const chroma = channels === 4 ? lib.heif_chroma.heif_chroma_interleaved_RGBA : lib.heif_chroma.heif_chroma_interleaved_RGB;
    const decoded = await lib.heif_js_decode_image2(handle, lib.heif_colorspace.heif_colorspace_RGB, chroma);
    if (isError(decoded)) throw new Error(`libheif: ${decoded?.message ?? 'decoding failed'}`);
    try {
      const plane = decoded.channels.find((channel) => channel.id === lib.heif_channel.heif_channel_interleaved);
      if (!plane) throw new Error('libheif: no interleaved plane');
      // The plane is a view of the WebAssembly memory: copied out, row by row to drop the stride's padding.
      const row = plane.width * channels;
      const data = Buffer.allocUnsafe(row * plane.height);
      for (let y = 0; y < plane.height; y++) data.set(plane.data.subarray(y * plane.stride, y * plane.stride + row), y * row);
      return { data, width: plane.width, height: plane.height, channels };
    } finally {
      lib.heif_image_release(decoded.image);
    }
  } finally {
    if (handle !== undefined && !isError(handle)) lib.heif_image_handle_release(handle);
    lib.heif_context_free(context);
  }
}
