// The EXIF walk of the location strip on hostile blocks: it works each byte
// at most once, however the entries point, and refuses IFDs laid over each
// other rather than read them again and again. Pure: no storage.

import { describe, expect, it } from 'vitest';
import { NotStrippable, stripExif, strippedXmp, TIFF_TAGS } from '../../lambda/manage/location-blocks';

/** A little-endian TIFF structure of `length` bytes whose IFD0, at 8, has `entries` ([tag, type, count, value]) and then `next`. */
function tiff(length: number, entries: [number, number, number, number][], next = 0): Buffer {
  const block = Buffer.alloc(length);
  block.write('II', 0, 'latin1');
  block.writeUInt16LE(42, 2);
  block.writeUInt32LE(8, 4);
  block.writeUInt16LE(entries.length, 8);
  for (const [index, [tag, type, count, value]] of entries.entries()) {
    const at = 10 + 12 * index;
    block.writeUInt16LE(tag, at);
    block.writeUInt16LE(type, at + 2);
    block.writeUInt32LE(count, at + 4);
    block.writeUInt32LE(value, at + 8);
  }
  block.writeUInt32LE(next, 10 + 12 * entries.length);
  return block;
}

describe('stripExif', () => {
  it('refuses a chain of IFDs laid over each other: more entries than its bytes hold', () => {
    const length = 1200;
    const count = Math.floor((length - 14) / 12);
    // The next IFD starts inside IFD0's first entry, whose value makes its count 0xffff.
    const block = tiff(
      length,
      [[1, 4, 1, 0xffff0000], ...Array.from({ length: count - 1 }, (): [number, number, number, number] => [2, 1, 1, 0])],
      20,
    );
    expect(() => stripExif(block)).toThrow(NotStrippable);
  });

  it('rewrites a value many entries point at once, and zeroes those that overlap it', () => {
    const xmpAt = 400;
    const block = tiff(
      1000,
      Array.from({ length: 20 }, (_, i): [number, number, number, number] => [TIFF_TAGS.xmp, 1, 300 - i, xmpAt + i]),
    );
    block.fill('x', xmpAt, xmpAt + 300);
    const rewritten: number[] = [];
    expect(stripExif(block, (entry) => rewritten.push(entry.start))).toBe(true);
    expect(rewritten).toEqual([xmpAt]);
    expect(block.subarray(xmpAt + 1, xmpAt + 300).every((byte) => byte === 0)).toBe(true);
  });

  it('empties the GPS IFD and zeroes what it points to, keeping IFD0', () => {
    const block = tiff(200, [
      [0x0112, 3, 1, 6], // Orientation
      [TIFF_TAGS.gps, 4, 1, 100],
    ]);
    block.writeUInt16LE(1, 100);
    block.writeUInt16LE(2, 102); // GPSLatitude, 3 rationals at 150
    block.writeUInt16LE(5, 104);
    block.writeUInt32LE(3, 106);
    block.writeUInt32LE(150, 110);
    block.fill(0x47, 150, 174);
    expect(stripExif(block)).toBe(true);
    expect(block.subarray(100, 118).every((byte) => byte === 0)).toBe(true);
    expect(block.subarray(150, 174).every((byte) => byte === 0)).toBe(true);
    expect(block.readUInt16LE(10)).toBe(0x0112);
    expect(block.readUInt32LE(18)).toBe(6);
  });
});

describe('strippedXmp', () => {
  const rights = `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/" photoshop:City="Zzyzxcity"><dc:rights><rdf:Alt><rdf:li xml:lang="x-default">(c) Ann</rdf:li></rdf:Alt></dc:rights></rdf:Description></rdf:RDF></x:xmpmeta>`;
  const stripped = (extra: number) => strippedXmp(Buffer.from(rights + ' '.repeat(Math.max(0, extra))).subarray(0, rights.length + extra));

  it("keeps the packet's length, with what keep keeps: in the usual form where it fits, else the shortest", () => {
    for (const extra of [600, 0]) {
      const kept = stripped(extra);
      expect(kept.length).toBe(rights.length + extra);
      expect(kept.toString()).toContain('(c) Ann');
      expect(kept.toString()).not.toContain('Zzyzx');
    }
    expect(stripped(600).toString()).toMatch(/^<\?xpacket begin.* +<\?xpacket end="w"\?>$/s);
    expect(stripped(0).toString()).toMatch(/^<x:xmpmeta xmlns:x="adobe:ns:meta\/"><rdf:RDF .*<\/x:xmpmeta> *$/s);
  });

  it('is an empty packet when what is kept does not fit, and spaces when not even that does', () => {
    expect(stripped(-200).toString()).toMatch(/^<\?xpacket begin.*<x:xmpmeta xmlns:x="adobe:ns:meta\/"\/> +<\?xpacket end="w"\?>$/s);
    expect(strippedXmp(Buffer.from('<x:xmpmeta/>')).toString()).toBe(' '.repeat(12));
  });
});
