/**
 * Ultra HDR JPEGs made in code (no binary fixtures): a primary JPEG (the SDR
 * image) with an XMP container directory and an MPF index, followed by a
 * gain-map JPEG with its `hdrgm` XMP, as Android writes them.
 */
import sharp from 'sharp';

/** A JPEG segment: its marker, its length, its payload. */
function segment(marker: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt16BE(0xff00 | marker, 0);
  head.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([head, payload]);
}

const xmp = (description: string) =>
  segment(
    0xe1,
    Buffer.from(
      'http://ns.adobe.com/xap/1.0/\0' +
        '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">' +
        description +
        '</rdf:RDF></x:xmpmeta>',
      'latin1',
    ),
  );

/** The gain map's metadata: up to 4x (2 stops) brighter than the SDR image, where the map is white. */
const GAIN_MAP_XMP = xmp(
  '<rdf:Description xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" hdrgm:Version="1.0" hdrgm:GainMapMin="0" ' +
    'hdrgm:GainMapMax="2" hdrgm:Gamma="1" hdrgm:OffsetSDR="0.015625" hdrgm:OffsetHDR="0.015625" hdrgm:HDRCapacityMin="0" ' +
    'hdrgm:HDRCapacityMax="2" hdrgm:BaseRenditionIsHDR="False"/>',
);

const primaryXmp = (gainMapBytes: number) =>
  xmp(
    '<rdf:Description xmlns:Container="http://ns.google.com/photos/1.0/container/" ' +
      'xmlns:Item="http://ns.google.com/photos/1.0/container/item/" xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" ' +
      'hdrgm:Version="1.0"><Container:Directory><rdf:Seq>' +
      '<rdf:li rdf:parseType="Resource"><Container:Item Item:Semantic="Primary" Item:Mime="image/jpeg"/></rdf:li>' +
      `<rdf:li rdf:parseType="Resource"><Container:Item Item:Semantic="GainMap" Item:Mime="image/jpeg" Item:Length="${gainMapBytes}"/></rdf:li>` +
      '</rdf:Seq></Container:Directory></rdf:Description>',
  );

/** Bytes of the MPF segment's payload: its name, a TIFF header, an IFD of three entries, and two 16-byte image entries. */
const MPF_BYTES = 4 + 8 + 2 + 3 * 12 + 4 + 2 * 16;

/**
 * The MPF (CIPA DC-007) index of two images: the primary, `primaryBytes`
 * long from the file's start, and the gain map, `gainMapBytes` long at
 * `gainMapOffset` from the MPF's TIFF header (as the standard counts).
 */
function mpfIndex(primaryBytes: number, gainMapOffset: number, gainMapBytes: number): Buffer {
  const mpf = Buffer.alloc(MPF_BYTES);
  mpf.write('MPF\0', 0, 'latin1');
  const tiff = 4;
  mpf.write('MM', tiff, 'latin1');
  mpf.writeUInt16BE(42, tiff + 2);
  mpf.writeUInt32BE(8, tiff + 4);
  let at = tiff + 8;
  mpf.writeUInt16BE(3, at);
  at += 2;
  const entry = (tag: number, type: number, count: number, value: number | string) => {
    mpf.writeUInt16BE(tag, at);
    mpf.writeUInt16BE(type, at + 2);
    mpf.writeUInt32BE(count, at + 4);
    if (typeof value === 'string') mpf.write(value, at + 8, 'latin1');
    else mpf.writeUInt32BE(value, at + 8);
    at += 12;
  };
  const entriesAt = 8 + 2 + 3 * 12 + 4; // from the TIFF header
  entry(0xb000, 7, 4, '0100'); // MPFVersion
  entry(0xb001, 4, 1, 2); // NumberOfImages
  entry(0xb002, 7, 32, entriesAt); // MPEntry
  mpf.writeUInt32BE(0, at); // no next IFD
  at += 4;
  mpf.writeUInt32BE(0x030000, at); // the primary: a baseline MP primary image
  mpf.writeUInt32BE(primaryBytes, at + 4);
  mpf.writeUInt32BE(gainMapBytes, at + 16 + 4);
  mpf.writeUInt32BE(gainMapOffset, at + 16 + 8);
  return mpf;
}

/** Where the MPF's gain-map entry holds its offset, in a file ultraHdrJpeg made: for hostile copies that point elsewhere. */
export const MPF_GAIN_MAP_OFFSET_AT = (file: Buffer) => file.indexOf('MPF\0', 0, 'latin1') + 4 + 8 + 2 + 3 * 12 + 4 + 16 + 8;

/** Joins a primary JPEG and a gain-map JPEG (each as an encoder wrote it) into an Ultra HDR JPEG. */
export function joinUltraHdr(primary: Buffer, gainMapJpeg: Buffer): Buffer {
  const gainMap = Buffer.concat([gainMapJpeg.subarray(0, 2), GAIN_MAP_XMP, gainMapJpeg.subarray(2)]);
  const directory = primaryXmp(gainMap.length);
  const mpfSegmentBytes = 4 + MPF_BYTES;
  const primaryBytes = primary.length + directory.length + mpfSegmentBytes;
  // The MPF's TIFF header: after the start of image, the XMP, the segment's marker and length, and "MPF\0".
  const tiffAt = 2 + directory.length + 4 + 4;
  const mpf = segment(0xe2, mpfIndex(primaryBytes, primaryBytes - tiffAt, gainMap.length));
  return Buffer.concat([primary.subarray(0, 2), directory, mpf, primary.subarray(2), gainMap]);
}

/** The picture's colours: a warm field with a blue quarter at the top left, so that crops and turns show. */
const FIELD = { r: 200, g: 120, b: 60 };
const QUARTER = { r: 32, g: 160, b: 255 };

type Colour = string | { r: number; g: number; b: number };

const NOISE = { type: 'gaussian' as const, mean: 128, sigma: 40 };

/** A `width` x `height` JPEG of `field` with `corner` over its top-left `cornerWidth` x `cornerHeight`, or of noise. */
async function picture(
  [width, height]: [number, number],
  field: Colour,
  [cornerWidth, cornerHeight, corner]: [number, number, Colour],
  noise: boolean,
): Promise<Buffer> {
  const base = sharp({ create: { width, height, channels: 3, background: field, ...(noise ? { noise: NOISE } : {}) } });
  if (noise) return base.jpeg({ quality: 90 }).toBuffer();
  const patch = await sharp({
    create: { width: Math.max(1, cornerWidth), height: Math.max(1, cornerHeight), channels: 3, background: corner },
  })
    .png()
    .toBuffer();
  const drawn = await base
    .composite([{ input: patch, left: 0, top: 0 }])
    .png()
    .toBuffer();
  return sharp(drawn).jpeg({ quality: 90 }).toBuffer();
}

export interface UltraHdrOptions {
  /** The gain map's sides are the primary's divided by this (default 4, as Android writes). */
  scale?: number;
  /** Noise in both images rather than flat colours: the encoders' worst case. */
  noise?: boolean;
  /** The primary's EXIF orientation (the gain map, as stored, follows the primary as stored). */
  orientation?: number;
}

/**
 * An Ultra HDR JPEG of `width` x `height`: the primary a warm field with a
 * blue top-left quarter, the gain map white (brightest) on its left half and
 * mid-grey on its right. Deterministic.
 */
export async function ultraHdrJpeg(width: number, height: number, options: UltraHdrOptions = {}): Promise<Buffer> {
  const scale = options.scale ?? 4;
  const [mapWidth, mapHeight] = [Math.ceil(width / scale), Math.ceil(height / scale)];
  const noise = options.noise === true;
  const drawn = await picture([width, height], FIELD, [width >> 1, height >> 1, QUARTER], noise);
  const primary = options.orientation
    ? await sharp(drawn).withMetadata({ orientation: options.orientation }).jpeg({ quality: 90 }).toBuffer()
    : drawn;
  const map = await picture([mapWidth, mapHeight], '#808080', [mapWidth >> 1, mapHeight, '#ffffff'], noise);
  return joinUltraHdr(primary, await sharp(map).grayscale().jpeg({ quality: 90 }).toBuffer());
}

/** The primary JPEG of an Ultra HDR file: what a viewer that ignores the gain map shows. */
export function primaryOf(file: Buffer, gainMapBytes: number): Buffer {
  return file.subarray(0, file.length - gainMapBytes);
}
