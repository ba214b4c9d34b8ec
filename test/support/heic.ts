// HEIC sources made at test time by Debian's heif-enc (package libheif-examples,
// which .ci/run installs), never committed; and the container's transforms
// (irot, imir), which heif-enc does not write, added to its output.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childBoxes, itemLocations, primaryItem, type Box } from '../../lambda/origin/image/heif-boxes';
import { heifMeta, itemData, itemProperties } from '../../lambda/origin/image/heif-items';

const HEIF_ENC = process.env.HEIF_ENC_PATH ?? 'heif-enc';

/**
 * Why the HEIC tests cannot run here, or undefined when heif-enc is there. In CI
 * (CI=true) a missing heif-enc is an error, never a skip.
 */
export function heifEncMissing(): string | undefined {
  if (spawnSync(HEIF_ENC, ['--help']).error === undefined) return undefined;
  const why = `heif-enc is not installed: \`apt-get install -y libheif-examples\` (as root, after apt-get update), or set HEIF_ENC_PATH.`;
  if (process.env.CI === 'true') throw new Error(why);
  return why;
}

/** A HEIC of `image` (a JPEG or PNG; a JPEG's EXIF goes along, its orientation not applied). */
export function heicOf(image: Buffer, options: { quality?: number } = {}): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'heic-'));
  try {
    const input = join(dir, image[0] === 0xff ? 'in.jpg' : 'in.png');
    writeFileSync(input, image);
    const made = spawnSync(HEIF_ENC, ['-q', String(options.quality ?? 60), input, '-o', join(dir, 'out.heic')], { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`heif-enc failed: ${made.stderr || made.error}`);
    return readFileSync(join(dir, 'out.heic'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const u32 = (value: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value);
  return bytes;
};

/** An ISO-BMFF box of `type` around `content`. */
export const box = (type: string, content: Buffer) => Buffer.concat([u32(8 + content.length), Buffer.from(type, 'latin1'), content]);

/** irot: turns the image `quarterTurns` x 90° anticlockwise. */
export const irot = (quarterTurns: number) => box('irot', Buffer.from([quarterTurns]));

/**
 * imir: mirrors it top-bottom (axis 0) or left-right (axis 1), as libheif reads
 * the field (the standard's wording, "a vertical axis" for 0, has been read both ways).
 */
export const imir = (axis: 0 | 1) => box('imir', Buffer.from([axis]));

/** The file with `bytes` put in place of `target`'s content (its 8-byte header rewritten for the new size). */
function replaceContent(file: Buffer, target: Box, bytes: Buffer): Buffer {
  const start = target.start - 8;
  const type = file.toString('latin1', start + 4, start + 8);
  return Buffer.concat([file.subarray(0, start), box(type, bytes), file.subarray(target.end)]);
}

/**
 * `heic` with `properties` added to its primary item, in order: appended to ipco
 * and associated in ipma, the enclosing boxes resized and iloc's file offsets
 * moved by what meta grew (heif-enc writes meta before the image data).
 */
export function withProperties(heic: Buffer, properties: Buffer[]): Buffer {
  const find = (file: Buffer) => {
    const meta = childBoxes(file, { type: 'file', start: 0, end: file.length }, ['meta']).get('meta')!;
    const parts = childBoxes(file, meta, ['pitm', 'iloc', 'iprp'], 4);
    const iprp = parts.get('iprp')!;
    const inner = childBoxes(file, iprp, ['ipco', 'ipma']);
    return { meta, iloc: parts.get('iloc')!, pitm: parts.get('pitm')!, iprp, ipco: inner.get('ipco')!, ipma: inner.get('ipma')! };
  };
  const before = find(heic);
  const item = primaryItem(heic, before.pitm);
  let count = 0;
  const ipcoContent = Buffer.concat([heic.subarray(before.ipco.start, before.ipco.end), ...properties]);
  for (let at = before.ipco.start; at < before.ipco.end; at += heic.readUInt32BE(at)) count++;
  // ipma (version 0, flags 0 as heif-enc writes it): 16-bit item ids, 8-bit property indices.
  const ipma = heic.subarray(before.ipma.start, before.ipma.end);
  if (ipma[0] !== 0 || ipma.readUInt32BE(0) !== 0) throw new Error('this helper reads ipma version 0, flags 0 only');
  const entries: Buffer[] = [];
  let at = 8;
  for (let n = ipma.readUInt32BE(4); n > 0; n--) {
    const id = ipma.readUInt16BE(at);
    const associations = ipma[at + 2]!;
    const added = id === item ? properties.map((_, i) => count + 1 + i) : [];
    entries.push(
      Buffer.from([id >> 8, id & 255, associations + added.length]),
      ipma.subarray(at + 3, at + 3 + associations),
      Buffer.from(added),
    );
    at += 3 + associations;
  }
  const ipmaContent = Buffer.concat([ipma.subarray(0, 8), ...entries]);
  const iprpContent = Buffer.concat([box('ipco', ipcoContent), box('ipma', ipmaContent)]);
  const grown = replaceContent(heic, before.iprp, iprpContent);
  const delta = grown.length - heic.length;
  const metaStart = before.meta.start - 8; // its size field
  grown.writeUInt32BE(grown.readUInt32BE(metaStart) + delta, metaStart);
  for (const location of itemLocations(grown, find(grown).iloc)) {
    if (location.method !== 0) continue;
    const field = location.base.size > 0 ? location.base : location.first;
    if (field.size !== 4) throw new Error('this helper moves 32-bit offsets only');
    grown.writeUInt32BE(field.value + delta, field.at);
  }
  return grown;
}

const u16 = (value: number) => Buffer.from([value >> 8, value & 255]);

const fullBox = (type: string, version: number, content: Buffer) => box(type, Buffer.concat([Buffer.from([version, 0, 0, 0]), content]));

/**
 * A HEIF header written by hand, with no image data: a primary item 1 of
 * `itemType` whose ispe says `width` x `height`. `ipcoTail` is appended to its
 * properties, `ipmaTail` (`entries` more entries) to its associations, and
 * `iloc` replaces its empty item locations: room for hostile structures.
 */
export function heifSkeleton(options: {
  width: number;
  height: number;
  itemType?: string;
  ipcoTail?: Buffer;
  ipmaTail?: { entries: number; bytes: Buffer };
  iloc?: Buffer;
}): Buffer {
  const { width, height, itemType = 'hvc1', ipcoTail = Buffer.alloc(0), ipmaTail = { entries: 0, bytes: Buffer.alloc(0) } } = options;
  const ispe = fullBox('ispe', 0, Buffer.concat([u32(width), u32(height)]));
  const meta = fullBox(
    'meta',
    0,
    Buffer.concat([
      fullBox('hdlr', 0, Buffer.concat([u32(0), Buffer.from('pict', 'latin1'), Buffer.alloc(13)])),
      fullBox('pitm', 0, u16(1)),
      fullBox(
        'iinf',
        0,
        Buffer.concat([u16(1), fullBox('infe', 2, Buffer.concat([u16(1), u16(0), Buffer.from(`${itemType}\0`, 'latin1')]))]),
      ),
      options.iloc ?? fullBox('iloc', 0, Buffer.from([0x44, 0x00, 0, 0])),
      box(
        'iprp',
        Buffer.concat([
          box('ipco', Buffer.concat([ispe, ipcoTail])),
          fullBox('ipma', 0, Buffer.concat([u32(1 + ipmaTail.entries), u16(1), Buffer.from([1, 0x81]), ipmaTail.bytes])),
        ]),
      ),
    ]),
  );
  return Buffer.concat([box('ftyp', Buffer.from('heic\0\0\0\0mif1heic', 'latin1')), meta]);
}

/** A box's 8-byte header, for hostile sizes. */
export const boxHeader = (size: number, type: string) => Buffer.concat([u32(size), Buffer.from(type, 'latin1')]);

// ------------------------------------------------------------------ HEIFs of any structure

/** An HEVC picture to put in an item: its hvcC property box, its data (length-prefixed NAL units) and its size. */
export interface HevcPicture {
  hvcC: Buffer;
  data: Buffer;
  width: number;
  height: number;
}

/** The primary picture of a HEIC that heif-enc made (a plain hvc1 item): to be put in files of other structures. */
export function hevcPictureOf(heic: Buffer): HevcPicture {
  const meta = heifMeta(heic);
  const item = primaryItem(heic, meta.pitm);
  const properties = itemProperties(meta, new Set([item])).get(item)!;
  const hvcC = properties.get('hvcC')!;
  const ispe = properties.get('ispe')!;
  const data = itemData(meta, new Set([item])).get(item)!;
  return {
    hvcC: heic.subarray(hvcC.start - 8, hvcC.end),
    data,
    width: heic.readUInt32BE(ispe.start + 4),
    height: heic.readUInt32BE(ispe.start + 8),
  };
}

/** Writes bits, then the NAL unit they make with its emulation-prevention bytes (00 00 0x becomes 00 00 03 0x). */
class BitWriter {
  private readonly bits: number[] = [];

  u(count: number, value: number): this {
    for (let i = count - 1; i >= 0; i--) this.bits.push(Math.floor(value / 2 ** i) % 2);
    return this;
  }

  ue(value: number): this {
    const length = Math.floor(Math.log2(value + 1));
    return this.u(length, 0).u(length + 1, value + 1);
  }

  nal(header: number[]): Buffer {
    this.u(1, 1);
    while (this.bits.length % 8) this.bits.push(0);
    const out = [...header];
    let zeros = 0;
    for (let at = 0; at < this.bits.length; at += 8) {
      const byte = this.bits.slice(at, at + 8).reduce((value, bit) => value * 2 + bit, 0);
      if (zeros >= 2 && byte <= 3) {
        out.push(3);
        zeros = 0;
      }
      zeros = byte === 0 ? zeros + 1 : 0;
      out.push(byte);
    }
    return Buffer.from(out);
  }
}

/**
 * An HEVC picture that codes `width` x `height` (4:2:0, Main profile) in its
 * SPS, with one slice of no real content: what the header says of a picture,
 * for files refused before anything is decoded, at any size without
 * encoding it. `shown` is the part its conformance window shows (even sizes).
 */
export function fakeHevcPicture(width: number, height: number, shown: [number, number] = [width, height]): HevcPicture {
  const sps = new BitWriter()
    .u(4, 0)
    .u(3, 0)
    .u(1, 1) // VPS 0, one sub-layer, temporal nesting
    .u(8, 1)
    .u(32, 0x60000000)
    .u(48, 0x900000000000)
    .u(8, 93) // Main profile, level 3.1
    .ue(0)
    .ue(1)
    .ue(width)
    .ue(height) // SPS 0, 4:2:0, the coded size
    .u(1, shown[0] !== width || shown[1] !== height ? 1 : 0);
  if (shown[0] !== width || shown[1] !== height)
    sps
      .ue(0)
      .ue((width - shown[0]) / 2)
      .ue(0)
      .ue((height - shown[1]) / 2);
  const spsNal = sps.nal([0x42, 0x01]);
  const config = Buffer.alloc(23);
  config[0] = 1; // configurationVersion
  config[22] = 1; // one array: the SPS
  const array = Buffer.concat([Buffer.from([0x80 | 33, 0, 1]), u16(spsNal.length), spsNal]);
  // One IDR slice (type 19) that starts its picture: the first bit after its header set.
  const slice = Buffer.from([0x26, 0x01, 0xaf, 0x00, 0x11]);
  return {
    hvcC: box('hvcC', Buffer.concat([config, array])),
    data: Buffer.concat([u32(slice.length), slice]),
    width: shown[0],
    height: shown[1],
  };
}

/** ispe: an image's size. */
export const ispe = (width: number, height: number) => fullBox('ispe', 0, Buffer.concat([u32(width), u32(height)]));

/** auxC marking an image as the alpha plane of the one it references (auxl). */
export const alphaAuxC = () => fullBox('auxC', 0, Buffer.from('urn:mpeg:hevc:2015:auxid:1\0', 'latin1'));

/** A grid item's data (ISO/IEC 23008-12, 6.6.2.3.2): rows, columns and the output size, in 16 or 32 bits as it needs. */
export function gridSpec(rows: number, columns: number, width: number, height: number): Buffer {
  const wide = width > 0xffff || height > 0xffff;
  return Buffer.concat([
    Buffer.from([0, wide ? 1 : 0, rows - 1, columns - 1]),
    wide ? Buffer.concat([u32(width), u32(height)]) : Buffer.concat([u16(width), u16(height)]),
  ]);
}

/** An item of a HEIF written by hand. */
export interface HeifItem {
  id: number;
  type: string;
  /** A `mime` item's content type. */
  contentType?: string;
  /** Property boxes; the same bytes in two items are one property. */
  properties?: Buffer[];
  /** Its data, in mdat; the same Buffer given to two items is stored once, and both point at it. */
  data?: Buffer;
  /** References from it (iref): of a type, to items. */
  references?: { type: string; to: number[] }[];
}

/** A HEIF of `items` whose primary item is `primary`: ftyp, meta (hdlr, pitm, iinf, iloc, iref, iprp) and mdat. */
export function heifOfItems(primary: number, items: HeifItem[]): Buffer {
  const properties = new Map<string, number>();
  const ipco: Buffer[] = [];
  const ipma = items.map((item) => {
    const indices = (item.properties ?? []).map((property) => {
      const key = property.toString('latin1');
      if (!properties.has(key)) properties.set(key, ipco.push(property));
      return properties.get(key)!;
    });
    return Buffer.concat([u16(item.id), Buffer.from([indices.length]), ...indices.map((index) => u16(0x8000 | index))]);
  });
  const stored: Buffer[] = [...new Set(items.flatMap((item) => (item.data ? [item.data] : [])))];
  const located = items.filter((item) => item.data);
  const meta = (mdatStart: number) => {
    const offsets = new Map<Buffer, number>();
    stored.reduce((at, data) => (offsets.set(data, at), at + data.length), mdatStart + 8);
    const iloc = located.map((item) =>
      Buffer.concat([u16(item.id), u16(0), u16(1), u32(offsets.get(item.data!)!), u32(item.data!.length)]),
    );
    const references = items.flatMap((item) =>
      (item.references ?? []).map(({ type, to }) => box(type, Buffer.concat([u16(item.id), u16(to.length), ...to.map(u16)]))),
    );
    return fullBox(
      'meta',
      0,
      Buffer.concat([
        fullBox('hdlr', 0, Buffer.concat([u32(0), Buffer.from('pict', 'latin1'), Buffer.alloc(13)])),
        fullBox('pitm', 0, u16(primary)),
        fullBox(
          'iinf',
          0,
          Buffer.concat([
            u16(items.length),
            ...items.map((item) => {
              // Its type, an empty name, and a mime item's content type.
              const names = `${item.type}\0${item.contentType === undefined ? '' : `${item.contentType}\0`}`;
              return fullBox('infe', 2, Buffer.concat([u16(item.id), u16(0), Buffer.from(names, 'latin1')]));
            }),
          ]),
        ),
        fullBox('iloc', 0, Buffer.concat([Buffer.from([0x44, 0x00]), u16(located.length), ...iloc])),
        ...(references.length ? [fullBox('iref', 0, Buffer.concat(references))] : []),
        box(
          'iprp',
          Buffer.concat([
            box('ipco', Buffer.concat(ipco)),
            box('ipma', Buffer.concat([Buffer.from([0, 0, 0, 1]), u32(items.length), ...ipma])),
          ]),
        ),
      ]),
    );
  };
  const ftyp = box('ftyp', Buffer.from('heic\0\0\0\0mif1heic', 'latin1'));
  const mdatStart = ftyp.length + meta(0).length;
  return Buffer.concat([ftyp, meta(mdatStart), box('mdat', Buffer.concat(stored))]);
}

/**
 * A grid HEIC: a `width` x `height` grid (item 1) of `rows` x `columns` cells
 * of `picture`. `cells` says which tile item fills each cell (default: a
 * distinct item each, 2, 3, ...); with `sharedData` every tile item points at
 * the same bytes, otherwise each has its own copy.
 */
export function heicGrid(options: {
  width: number;
  height: number;
  rows: number;
  columns: number;
  picture: HevcPicture;
  cells?: number[];
  sharedData?: boolean;
}): Buffer {
  const { width, height, rows, columns, picture } = options;
  const cells = options.cells ?? Array.from({ length: rows * columns }, (_, i) => i);
  const tiles = [...new Set(cells)].map((cell) => ({
    id: cell + 2,
    type: 'hvc1',
    properties: [picture.hvcC, ispe(picture.width, picture.height)],
    data: options.sharedData ? picture.data : Buffer.from(picture.data),
  }));
  const grid = {
    id: 1,
    type: 'grid',
    properties: [ispe(width, height)],
    data: gridSpec(rows, columns, width, height),
    references: [{ type: 'dimg', to: cells.map((cell) => cell + 2) }],
  };
  return heifOfItems(1, [grid, ...tiles]);
}

/**
 * A HEIC of `picture` (item 1) described by an Exif item holding `exif` (a
 * TIFF structure) and a mime item holding `xmp`, each pointing at it (cdsc).
 */
export function heicWithMetadata(picture: HevcPicture, exif: Buffer, xmp: Buffer): Buffer {
  return heifOfItems(1, [
    { id: 1, type: 'hvc1', properties: [picture.hvcC, ispe(picture.width, picture.height)], data: picture.data },
    // The offset of the TIFF header past the Exif item's first field: after `Exif\0\0`, as cameras write it.
    {
      id: 2,
      type: 'Exif',
      data: Buffer.concat([u32(6), Buffer.from('Exif\0\0', 'latin1'), exif]),
      references: [{ type: 'cdsc', to: [1] }],
    },
    { id: 3, type: 'mime', contentType: 'application/rdf+xml', data: xmp, references: [{ type: 'cdsc', to: [1] }] },
  ]);
}
