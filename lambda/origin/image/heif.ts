// HEIF (HEIC: HEVC-coded still images) in two halves. The header: the primary
// image's size as displayed and whether it has alpha, read from the boxes of the
// ISO base media file format before anything is decoded, so that the pixel limit
// and the budget apply first. The decode: libheif compiled to WebAssembly
// (libheif-js), loaded only by the transform child, whose kill at the deadline
// stops it like any other transform.

/** A header that breaks the format's rules: the source is damaged (422). */
export class HeifDamaged extends Error {}

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
    return icc.toString('latin1', start, Math.min(icc.length, start + icc.readUInt32BE(at + 8))).replace(/\0/g, '').includes('sRGB');
  }
  return false;
}

export interface Box {
  type: string;
  /** Where the box's content starts and ends (its header excluded). */
  start: number;
  end: number;
}

/**
 * Calls `visit` on each box in `bytes[start, end)` in order, until it returns
 * true. Each box is skipped by its size, never searched: linear in the range.
 */
export function eachBox(bytes: Buffer, start: number, end: number, visit: (box: Box) => boolean | void): void {
  let at = start;
  while (at + 8 <= end) {
    const type = bytes.toString('latin1', at + 4, at + 8);
    let size = bytes.readUInt32BE(at);
    let header = 8;
    if (size === 1) {
      if (at + 16 > end) throw new HeifDamaged(`box ${type} ends inside its size`);
      size = Number(bytes.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) {
      size = end - at; // to the end of the enclosing box
    }
    if (size < header || size > end - at) throw new HeifDamaged(`box ${type} of ${size} bytes does not fit its parent`);
    if (visit({ type, start: at + header, end: at + size })) return;
    at += size;
  }
}

/** The first child box of each of `types` (later duplicates are ignored). */
export function childBoxes(bytes: Buffer, parent: Box, types: string[], skip = 0): Map<string, Box> {
  const found = new Map<string, Box>();
  eachBox(bytes, parent.start + skip, parent.end, (box) => {
    if (types.includes(box.type) && !found.has(box.type)) found.set(box.type, box);
  });
  return found;
}

/** Reads big-endian unsigned fields of a box, refusing any read past its end. */
class FieldReader {
  constructor(
    private readonly bytes: Buffer,
    public at: number,
    private readonly end: number,
    private readonly box: string,
  ) {}

  /** An unsigned integer of `size` bytes (0, 1, 2, 4 or 8; 0 reads nothing and is 0). */
  uint(size: number): number {
    if (this.at + size > this.end) throw new HeifDamaged(`box ${this.box} ends inside a field`);
    const at = this.at;
    this.at += size;
    switch (size) {
      case 0: return 0;
      case 1: return this.bytes[at]!;
      case 2: return this.bytes.readUInt16BE(at);
      case 4: return this.bytes.readUInt32BE(at);
      case 8: return Number(this.bytes.readBigUInt64BE(at));
      default: throw new HeifDamaged(`box ${this.box} has a field of ${size} bytes`);
    }
  }

  skip(size: number): void {
    if (this.at + size > this.end) throw new HeifDamaged(`box ${this.box} ends inside a field`);
    this.at += size;
  }

  /** A four-character code. */
  type(): string {
    const code = this.uint(4);
    return Buffer.from([code >>> 24, (code >>> 16) & 255, (code >>> 8) & 255, code & 255]).toString('latin1');
  }

  /** Version and flags of a full box. */
  fullBox(): { version: number; flags: number } {
    return { version: this.uint(1), flags: this.uint(1) * 65536 + this.uint(2) };
  }
}

const reader = (bytes: Buffer, box: Box) => new FieldReader(bytes, box.start, box.end, box.type);

/** Item types this decoder builds an image from: one HEVC picture, or a grid of HEVC tiles. */
const DECODED_ITEM_TYPES = ['hvc1', 'grid'];

/** The URNs that mark an auxiliary image as the alpha plane. */
const ALPHA_URNS = ['urn:mpeg:hevc:2015:auxid:1', 'urn:mpeg:mpegB:cicp:systems:auxiliary:alpha'];

export function primaryItem(bytes: Buffer, pitm: Box): number {
  const fields = reader(bytes, pitm);
  return fields.uint(fields.fullBox().version === 0 ? 2 : 4);
}

function itemType(bytes: Buffer, iinf: Box, item: number): string | undefined {
  const fields = reader(bytes, iinf);
  const countSize = fields.fullBox().version === 0 ? 2 : 4;
  let type: string | undefined;
  eachBox(bytes, iinf.start + 4 + countSize, iinf.end, (infe) => {
    if (infe.type !== 'infe') return false;
    const entry = reader(bytes, infe);
    const { version } = entry.fullBox();
    if (version < 2) return false; // versions 0 and 1 describe files, not images
    if (entry.uint(version === 2 ? 2 : 4) !== item) return false;
    entry.uint(2); // protection index
    type = entry.type();
    return true;
  });
  return type;
}

/** Indices (1-based, into ipco) of the properties associated with `item`. */
function propertyIndices(bytes: Buffer, ipma: Box, item: number): Set<number> {
  const fields = reader(bytes, ipma);
  const { version, flags } = fields.fullBox();
  const indices = new Set<number>();
  for (let entries = fields.uint(4); entries > 0; entries--) {
    const id = fields.uint(version < 1 ? 2 : 4);
    for (let associations = fields.uint(1); associations > 0; associations--) {
      const index = flags & 1 ? fields.uint(2) & 0x7fff : fields.uint(1) & 0x7f; // the top bit says "essential"
      if (id === item) indices.add(index);
    }
  }
  return indices;
}

/** Where iloc puts an item: its base offset and first extent's offset, and where each is written. */
export interface ItemLocation {
  item: number;
  /** 0: offsets are in the file; 1: in the meta box's idat; others are not read here. */
  method: number;
  base: { value: number; at: number; size: number };
  first: { value: number; at: number; size: number };
}

/** Each item's location, in iloc's order; only the first extent of each is read (the others are skipped in one step). */
export function* itemLocations(bytes: Buffer, iloc: Box): Generator<ItemLocation> {
  const fields = reader(bytes, iloc);
  const { version } = fields.fullBox();
  const sizes = fields.uint(1);
  const [offsetSize, lengthSize] = [sizes >> 4, sizes & 15];
  const baseSizes = fields.uint(1);
  const [baseSize, indexSize] = [baseSizes >> 4, version >= 1 ? baseSizes & 15 : 0];
  const field = (size: number) => ({ at: fields.at, size, value: fields.uint(size) });
  for (let items = fields.uint(version < 2 ? 2 : 4); items > 0; items--) {
    const item = fields.uint(version < 2 ? 2 : 4);
    const method = version >= 1 ? fields.uint(2) & 15 : 0;
    fields.uint(2); // data reference index: 0, this file
    const base = field(baseSize);
    const extents = fields.uint(2);
    fields.uint(extents > 0 ? indexSize : 0);
    const first = field(extents > 0 ? offsetSize : 0);
    fields.skip(extents > 0 ? lengthSize + (extents - 1) * (indexSize + offsetSize + lengthSize) : 0);
    yield { item, method, base, first };
  }
}

/** The first `length` bytes of an item's data, where iloc puts them: in the file or in idat. */
function itemData(bytes: Buffer, iloc: Box, idat: Box | undefined, item: number, length: number): Buffer {
  for (const location of itemLocations(bytes, iloc)) {
    if (location.item !== item) continue;
    const [start, end] = location.method === 1 ? [idat?.start ?? Infinity, idat?.end ?? 0] : location.method === 0 ? [0, bytes.length] : [Infinity, 0];
    const at = start + location.base.value + location.first.value;
    if (at + length > end) throw new HeifDamaged(`item ${item}'s data is not where iloc says`);
    return bytes.subarray(at, at + length);
  }
  throw new HeifDamaged(`item ${item} has no location`);
}

/** The output size written in a grid item's data. */
function gridSize(bytes: Buffer, iloc: Box, idat: Box | undefined, item: number): [number, number] {
  const head = itemData(bytes, iloc, idat, item, 4);
  const wide = (head[1]! & 1) === 1; // 32-bit sizes
  const data = itemData(bytes, iloc, idat, item, wide ? 12 : 8);
  return wide ? [data.readUInt32BE(4), data.readUInt32BE(8)] : [data.readUInt16BE(4), data.readUInt16BE(6)];
}

/**
 * The primary image's displayed size and alpha, from the boxes: ftyp, then
 * meta's pitm (which item), iinf (its type), iprp's ipma and ipco (its
 * properties: ispe, the size; irot, the rotation) and, for a grid, the grid's
 * own output size, which must agree with ispe (libheif refuses the image
 * otherwise, but only once it has decoded the tiles into it).
 */
export function heifHeader(bytes: Buffer): HeifHeader {
  const top = childBoxes(bytes, { type: 'file', start: 0, end: bytes.length }, ['ftyp', 'meta']);
  const meta = top.get('meta');
  if (!top.has('ftyp') || !meta) throw new HeifDamaged('no ftyp or meta box');
  const parts = childBoxes(bytes, meta, ['pitm', 'iinf', 'iloc', 'iprp', 'idat'], 4);
  const [pitm, iinf, iloc, iprp] = ['pitm', 'iinf', 'iloc', 'iprp'].map((type) => parts.get(type));
  if (!pitm || !iinf || !iloc || !iprp) throw new HeifDamaged('meta lacks pitm, iinf, iloc or iprp');
  const item = primaryItem(bytes, pitm);
  const type = itemType(bytes, iinf, item);
  if (!type || !DECODED_ITEM_TYPES.includes(type)) throw new HeifDamaged(`the primary item is of type ${type ?? 'none'}`);
  const properties = childBoxes(bytes, iprp, ['ipco', 'ipma']);
  const [ipco, ipma] = [properties.get('ipco'), properties.get('ipma')];
  if (!ipco || !ipma) throw new HeifDamaged('iprp lacks ipco or ipma');
  const indices = propertyIndices(bytes, ipma, item);
  let size: [number, number] | undefined;
  let quarterTurns = 0;
  let hasAlpha = false;
  let colourProfile: HeifHeader['colourProfile'];
  let index = 0;
  eachBox(bytes, ipco.start, ipco.end, (property) => {
    index++;
    if (property.type === 'auxC') {
      const urn = bytes.toString('latin1', property.start + 4, Math.min(property.end, property.start + 64));
      hasAlpha ||= ALPHA_URNS.some((alpha) => urn.startsWith(alpha));
    }
    if (!indices.has(index)) return;
    if (property.type === 'ispe' && !size) {
      const fields = reader(bytes, property);
      fields.fullBox();
      size = [fields.uint(4), fields.uint(4)];
    } else if (property.type === 'irot') {
      quarterTurns = reader(bytes, property).uint(1) & 3;
    } else if (property.type === 'colr' && !colourProfile) {
      const fields = reader(bytes, property);
      const kind = fields.type();
      const icc = bytes.subarray(fields.at, property.end);
      if ((kind === 'prof' || kind === 'rICC') && !describesSrgb(icc)) colourProfile = icc;
      else if (kind === 'nclx' && fields.uint(2) === CICP_DISPLAY_P3) colourProfile = 'display-p3';
    }
  });
  if (!size || size[0] === 0 || size[1] === 0) throw new HeifDamaged('the primary item has no size (ispe)');
  if (type === 'grid') {
    const [width, height] = gridSize(bytes, iloc, parts.get('idat'), item);
    if (width !== size[0] || height !== size[1]) throw new HeifDamaged(`the grid is ${width}x${height}, its ispe ${size[0]}x${size[1]}`);
  }
  const [width, height] = quarterTurns % 2 === 1 ? [size[1], size[0]] : size;
  return { width, height, hasAlpha, ...(colourProfile ? { colourProfile } : {}) };
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
