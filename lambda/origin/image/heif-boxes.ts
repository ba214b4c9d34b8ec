// Reading the boxes of the ISO base media file format that HEIF is made of:
// each box skipped by its size, each field read once and never past its box,
// so that any walk over them is linear in the bytes walked.

/** A header that breaks the format's rules: the source is damaged (422). */
export class HeifDamaged extends Error {}

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
export class FieldReader {
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
      case 0:
        return 0;
      case 1:
        return this.bytes[at]!;
      case 2:
        return this.bytes.readUInt16BE(at);
      case 4:
        return this.bytes.readUInt32BE(at);
      case 8:
        return Number(this.bytes.readBigUInt64BE(at));
      default:
        throw new HeifDamaged(`box ${this.box} has a field of ${size} bytes`);
    }
  }

  skip(size: number): void {
    if (this.at + size > this.end) throw new HeifDamaged(`box ${this.box} ends inside a field`);
    this.at += size;
  }

  /** A string ended by a NUL, read up to it (without it). */
  text(): string {
    const end = this.bytes.subarray(this.at, this.end).indexOf(0);
    if (end === -1) throw new HeifDamaged(`box ${this.box} ends inside a string`);
    const text = this.bytes.toString('utf8', this.at, this.at + end);
    this.at += end + 1;
    return text;
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

export const reader = (bytes: Buffer, box: Box) => new FieldReader(bytes, box.start, box.end, box.type);

export function primaryItem(bytes: Buffer, pitm: Box): number {
  const fields = reader(bytes, pitm);
  return fields.uint(fields.fullBox().version === 0 ? 2 : 4);
}

/** One run of an item's bytes: its offset from the item's base, and its length (0: to the end of the data). */
export interface Extent {
  offset: number;
  length: number;
}

/** Where iloc puts an item: its base offset and first extent's offset, and where each is written. */
export interface ItemLocation {
  item: number;
  /** 0: offsets are in the file; 1: in the meta box's idat; others are not read here. */
  method: number;
  /** Data reference index: 0 is this file, anything else another file. */
  reference: number;
  base: { value: number; at: number; size: number };
  first: { value: number; at: number; size: number };
  /** Every extent, read when asked. */
  extents: () => Extent[];
}

/**
 * The location of each of `wanted` (every item without it), in iloc's order. Every other item is
 * stepped over reading only its id and extent count (a header may list
 * millions), and the extents after the first are skipped in one step and
 * read only when asked.
 */
export function* itemLocations(bytes: Buffer, iloc: Box, wanted?: Set<number>): Generator<ItemLocation> {
  const fields = reader(bytes, iloc);
  const { version } = fields.fullBox();
  const sizes = fields.uint(1);
  const [offsetSize, lengthSize] = [sizes >> 4, sizes & 15];
  const baseSizes = fields.uint(1);
  const [baseSize, indexSize] = [baseSizes >> 4, version >= 1 ? baseSizes & 15 : 0];
  const idSize = version < 2 ? 2 : 4;
  const methodSize = version >= 1 ? 2 : 0;
  const extentSize = indexSize + offsetSize + lengthSize;
  const field = (size: number) => ({ at: fields.at, size, value: fields.uint(size) });
  for (let items = fields.uint(idSize); items > 0; items--) {
    const item = fields.uint(idSize);
    if (wanted && !wanted.has(item)) {
      fields.skip(methodSize + 2 + baseSize);
      fields.skip(fields.uint(2) * extentSize);
      continue;
    }
    const method = fields.uint(methodSize) & 15;
    const reference = fields.uint(2);
    const base = field(baseSize);
    const count = fields.uint(2);
    const extentsAt = fields.at;
    fields.uint(count > 0 ? indexSize : 0);
    const first = field(count > 0 ? offsetSize : 0);
    fields.skip(count > 0 ? lengthSize + (count - 1) * extentSize : 0);
    const extents = () => {
      const each = new FieldReader(bytes, extentsAt, iloc.end, 'iloc');
      return Array.from({ length: count }, () => {
        each.uint(indexSize);
        return { offset: each.uint(offsetSize), length: each.uint(lengthSize) };
      });
    };
    yield { item, method, reference, base, first, extents };
  }
}
