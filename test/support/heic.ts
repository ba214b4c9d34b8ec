// HEIC sources made at test time by Debian's heif-enc (package libheif-examples,
// which .ci/run installs), never committed; and the container's transforms
// (irot, imir), which heif-enc does not write, added to its output.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childBoxes, itemLocations, primaryItem, type Box } from '../../lambda/origin/image/heif-boxes';

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
    entries.push(Buffer.from([id >> 8, id & 255, associations + added.length]), ipma.subarray(at + 3, at + 3 + associations), Buffer.from(added));
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
      fullBox('iinf', 0, Buffer.concat([u16(1), fullBox('infe', 2, Buffer.concat([u16(1), u16(0), Buffer.from(`${itemType}\0`, 'latin1')]))])),
      options.iloc ?? fullBox('iloc', 0, Buffer.from([0x44, 0x00, 0, 0])),
      box('iprp', Buffer.concat([box('ipco', Buffer.concat([ispe, ipcoTail])), fullBox('ipma', 0, Buffer.concat([u32(1 + ipmaTail.entries), u16(1), Buffer.from([1, 0x81]), ipmaTail.bytes]))])),
    ]),
  );
  return Buffer.concat([box('ftyp', Buffer.from('heic\0\0\0\0mif1heic', 'latin1')), meta]);
}

/** A box's 8-byte header, for hostile sizes. */
export const boxHeader = (size: number, type: string) => Buffer.concat([u32(size), Buffer.from(type, 'latin1')]);
