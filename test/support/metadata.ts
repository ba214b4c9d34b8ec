// Metadata made in code and read back whole, for the metadata policy's tests:
// a JPEG carrying EXIF (with GPS and serial numbers), XMP and IPTC, and
// readers that list every field an output carries, known to the policy or not.

import sharp from 'sharp';
import { pngChunk } from './images';

/** EXIF of the test photo: IFD0 (Orientation 6), the Exif IFD with serial numbers, and GPS. */
export const SOURCE_EXIF = {
  IFD0: { Copyright: '(c) Ann Example', Artist: 'Ann Example', Make: 'Examplecam', Model: 'X100', ImageDescription: 'Harbour at dawn' },
  IFD2: {
    ExposureTime: '1/250',
    FNumber: '28/10',
    ISOSpeedRatings: '200',
    DateTimeOriginal: '2026:05:01 06:12:00',
    BodySerialNumber: 'BODY-4711',
    LensSerialNumber: 'LENS-0815',
  },
  IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '51/1 30/1 0/1', GPSLongitudeRef: 'W', GPSLongitude: '0/1 7/1 30/1' },
};

/** XMP of the test photo: rights and credit, location as attributes and elements, a serial number and a tool. */
export const SOURCE_XMP = `<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/">
 <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
  <rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:exif="http://ns.adobe.com/exif/1.0/"
    xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/" xmlns:aux="http://ns.adobe.com/exif/1.0/aux/" xmlns:xmp="http://ns.adobe.com/xap/1.0/"
    xmlns:Iptc4xmpExt="http://iptc.org/std/Iptc4xmpExt/2008-02-29/"
    exif:GPSLatitude="51,30.0N" photoshop:City="Harwich" xmp:CreatorTool="Example Studio" photoshop:Credit="Example Agency">
   <dc:rights><rdf:Alt><rdf:li xml:lang="x-default">(c) Ann Example</rdf:li></rdf:Alt></dc:rights>
   <dc:creator><rdf:Seq><rdf:li>Ann Example</rdf:li></rdf:Seq></dc:creator>
   <exif:GPSLongitude>0,7.5W</exif:GPSLongitude>
   <aux:SerialNumber>BODY-4711</aux:SerialNumber>
   <Iptc4xmpExt:LocationCreated><rdf:Bag><rdf:li rdf:parseType="Resource"><Iptc4xmpExt:City>Harwich</Iptc4xmpExt:City></rdf:li></rdf:Bag></Iptc4xmpExt:LocationCreated>
   <dc:subject><rdf:Bag><rdf:li>harbour</rdf:li></rdf:Bag></dc:subject>
  </rdf:Description>
 </rdf:RDF>
</x:xmpmeta>
<?xpacket end="w"?>`;

/** IPTC-IIM datasets of the test photo (record 2): keywords, by-line, city, country, credit, copyright notice. */
export const SOURCE_IPTC: [number, string][] = [
  [25, 'harbour'],
  [80, 'Ann Example'],
  [90, 'Harwich'],
  [101, 'United Kingdom'],
  [110, 'Example Agency'],
  [116, '(c) Ann Example'],
];

/** A Photoshop resource block of IPTC-IIM `datasets` (record 2), as a JPEG's APP13 holds it. */
export function iptcResource(datasets: [number, string | Buffer][]): Buffer {
  const iim = Buffer.concat(
    datasets.map(([dataset, value]) => {
      const bytes = Buffer.isBuffer(value) ? value : Buffer.from(value);
      return Buffer.concat([Buffer.from([0x1c, 2, dataset, bytes.length >> 8, bytes.length & 0xff]), bytes]);
    }),
  );
  const header = Buffer.alloc(12);
  header.write('8BIM', 0, 'latin1');
  header.writeUInt16BE(0x0404, 4);
  header.writeUInt32BE(iim.length, 8);
  return Buffer.concat([Buffer.from('Photoshop 3.0\0', 'latin1'), header, iim, Buffer.alloc(iim.length & 1)]);
}

/** `jpeg` with an APP13 segment holding `resource`, right after its start marker. */
export function withApp13(jpeg: Buffer, resource: Buffer): Buffer {
  const marker = Buffer.from([0xff, 0xed, (resource.length + 2) >> 8, (resource.length + 2) & 0xff]);
  return Buffer.concat([jpeg.subarray(0, 2), marker, resource, jpeg.subarray(2)]);
}

/** The test photo: a 600x400 gradient JPEG, stored turned (orientation 6), with SOURCE_EXIF, SOURCE_XMP and SOURCE_IPTC. */
export async function taggedJpeg(): Promise<Buffer> {
  const jpeg = await sharp({ create: { width: 600, height: 400, channels: 3, background: '#4080c0' } })
    .withExif(SOURCE_EXIF)
    .withXmp(SOURCE_XMP)
    .withMetadata({ orientation: 6 })
    .jpeg()
    .toBuffer();
  return withApp13(jpeg, iptcResource(SOURCE_IPTC));
}

/** Every tag of an EXIF block, as `IFD0:0x8298`, IFD0, IFD1, the Exif IFD (`Exif:`), GPS and interoperability alike. */
export function exifTags(block: Buffer | undefined): string[] {
  if (!block) return [];
  const tiff = block.subarray(0, 6).toString('latin1') === 'Exif\0\0' ? block.subarray(6) : block;
  const little = tiff.toString('latin1', 0, 2) === 'II';
  const u16 = (at: number) => (little ? tiff.readUInt16LE(at) : tiff.readUInt16BE(at));
  const u32 = (at: number) => (little ? tiff.readUInt32LE(at) : tiff.readUInt32BE(at));
  const tags: string[] = [];
  const pointers: Record<number, string> = { 0x8769: 'Exif', 0x8825: 'GPS', 0xa005: 'Interop' };
  const walk = (name: string, at: number) => {
    const count = u16(at);
    for (let i = 0; i < count; i++) {
      const entry = at + 2 + 12 * i;
      const tag = u16(entry);
      tags.push(`${name}:0x${tag.toString(16).padStart(4, '0')}`);
      if (pointers[tag]) walk(pointers[tag]!, u32(entry + 8));
    }
    return u32(at + 2 + 12 * count);
  };
  const next = walk('IFD0', u32(4));
  if (next) walk('IFD1', next);
  return tags.sort();
}

/** The ASCII value of an IFD0 tag, or undefined. */
export function exifText(block: Buffer | undefined, tag: number): string | undefined {
  if (!block) return undefined;
  const tiff = block.subarray(0, 6).toString('latin1') === 'Exif\0\0' ? block.subarray(6) : block;
  const little = tiff.toString('latin1', 0, 2) === 'II';
  const u16 = (at: number) => (little ? tiff.readUInt16LE(at) : tiff.readUInt16BE(at));
  const u32 = (at: number) => (little ? tiff.readUInt32LE(at) : tiff.readUInt32BE(at));
  const ifd = u32(4);
  for (let i = 0; i < u16(ifd); i++) {
    const entry = ifd + 2 + 12 * i;
    if (u16(entry) !== tag) continue;
    const size = u32(entry + 4);
    const start = size > 4 ? u32(entry + 8) : entry + 8;
    return tiff.toString('utf8', start, start + size).replace(/\0.*$/s, '');
  }
  return undefined;
}

/** The qualified names of every XMP property an XMP packet holds, as elements or as attributes (namespace declarations and rdf: left out). */
export function xmpProperties(xmp: Buffer | undefined): string[] {
  if (!xmp) return [];
  const text = xmp.toString('utf8');
  const elements = [...text.matchAll(/<([\w-]+:[\w-]+)[\s>/]/g)].map((match) => match[1]!);
  const attributes = [...text.matchAll(/\s([\w-]+:[\w-]+)\s*=/g)].map((match) => match[1]!);
  return [...new Set([...elements, ...attributes])].filter((name) => !/^(xmlns|rdf|x|xml):/.test(name)).sort();
}

/** The record 2 datasets of an IPTC resource block (as sharp's metadata gives it), as numbers. */
export function iptcDatasets(block: Buffer | undefined): number[] {
  if (!block) return [];
  const found: number[] = [];
  for (let at = block.indexOf(Buffer.from([0x1c, 2])); at !== -1 && at + 5 <= block.length;) {
    found.push(block[at + 2]!);
    at += 5 + block.readUInt16BE(at + 3);
    if (block[at] !== 0x1c) break;
  }
  return found.sort((a, b) => a - b);
}

/**
 * A 64x64 PNG with an XMP packet of about `xmpBytes` (properties nested
 * 50,000 deep, then padding) and an EXIF block of `exifBytes` claiming 65,535
 * entries, before its image data: what a metadata bomb looks like.
 */
export async function metadataBombPng(xmpBytes: number, exifBytes: number): Promise<Buffer> {
  const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#336699' } })
    .png()
    .toBuffer();
  const deep = '<a:b>'.repeat(50_000) + '</a:b>'.repeat(50_000);
  const xmp = SOURCE_XMP.replace(
    '<dc:subject>',
    `<dc:title>${deep}${' '.repeat(Math.max(0, xmpBytes - deep.length))}</dc:title><dc:subject>`,
  );
  const exif = Buffer.alloc(exifBytes);
  exif.write('II*\0', 0, 'latin1');
  exif.writeUInt32LE(8, 4);
  exif.writeUInt16LE(65_535, 8);
  // After the header chunk (33 bytes in): the metadata, then the image data and the end.
  return Buffer.concat([
    png.subarray(0, 33),
    pngChunk('iTXt', Buffer.from(`XML:com.adobe.xmp\0\0\0\0\0${xmp}`)),
    pngChunk('eXIf', exif),
    png.subarray(33),
  ]);
}

/** A JPEG application segment `marker` (0xe1: APP1, 0xed: APP13) holding `data`. */
const appSegment = (marker: number, data: Buffer) => {
  const header = Buffer.from([0xff, marker, 0, 0]);
  header.writeUInt16BE(data.length + 2, 2);
  return Buffer.concat([header, data]);
};

/**
 * An EXIF block as large as a JPEG segment holds: IFD0 of `entries` Copyright
 * entries and an Exif IFD of as many ISOSpeedRatings entries, every one
 * pointing at the same 60 KB (texts, and 30,000 shorts): each read once per
 * entry, it would take the whole block thousands of times.
 */
export function exifBomb(entries = 2690): Buffer {
  const tiff = Buffer.alloc(2 * (2 + entries * 12 + 4) + 8);
  tiff.write('II*\0', 0, 'latin1');
  tiff.writeUInt32LE(8, 4);
  const exifIfd = 8 + 2 + entries * 12 + 4;
  const ifd = (at: number, entry: (index: number) => [number, number, number, number]) => {
    tiff.writeUInt16LE(entries, at);
    for (let i = 0; i < entries; i++) {
      const [tag, type, count, value] = entry(i);
      tiff.writeUInt16LE(tag, at + 2 + 12 * i);
      tiff.writeUInt16LE(type, at + 4 + 12 * i);
      tiff.writeUInt32LE(count, at + 6 + 12 * i);
      tiff.writeUInt32LE(value, at + 10 + 12 * i);
    }
  };
  ifd(8, (i) => (i === 0 ? [0x8769, 4, 1, exifIfd] : [0x8298, 2, 60_000, 8]));
  ifd(exifIfd, () => [0x8827, 3, 30_000, 8]);
  return Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff]);
}

/**
 * A 64x64 JPEG carrying every metadata bomb a JPEG can: exifBomb, an XMP
 * packet nested 5,000 deep with the test photo's location in it, an APP13 of
 * 10,000 tiny IPTC datasets, and `extensions` more XMP segments of 64 KB each
 * (extended XMP, about 26 MB at the default), all before the image data.
 */
export async function metadataBombJpeg(extensions = 400): Promise<Buffer> {
  const jpeg = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#336699' } })
    .jpeg()
    .toBuffer();
  const deep = '<a:b>'.repeat(5_000) + '</a:b>'.repeat(5_000);
  const xmp = Buffer.from(
    'http://ns.adobe.com/xap/1.0/\0' + SOURCE_XMP.replace('<dc:subject>', `<dc:title>${deep}</dc:title><dc:subject>`),
  );
  const datasets: [number, string][] = Array.from({ length: 10_000 }, (_, i) => [i % 2 ? 25 : 90, 'x']);
  const chunk = 65_000;
  const extension = (index: number) => {
    const header = Buffer.alloc(8);
    header.writeUInt32BE(chunk * extensions, 0);
    header.writeUInt32BE(chunk * index, 4);
    return appSegment(
      0xe1,
      Buffer.concat([Buffer.from('http://ns.adobe.com/xmp/extension/\0' + 'F'.repeat(32)), header, Buffer.alloc(chunk, 0x20)]),
    );
  };
  return Buffer.concat([
    jpeg.subarray(0, 2),
    appSegment(0xe1, exifBomb()),
    appSegment(0xe1, xmp),
    appSegment(0xed, iptcResource(datasets)),
    ...Array.from({ length: extensions }, (_, index) => extension(index)),
    jpeg.subarray(2),
  ]);
}
