// A HEIF's decoded pixels in the colour space its file names (an iPhone's
// Display P3), handed to libvips so the pipeline converts them to sRGB as it
// does any tagged source. libvips takes a colour profile only with an image
// file, not with raw pixels: the pixels go into an uncompressed TIFF (a
// header, then the pixels as they are) that carries the profile.

import sharp, { type Sharp, type SharpOptions } from 'sharp';

let displayP3: Promise<Buffer> | undefined;

/** libvips' own Display P3 profile, read back from a pixel it tagged with it. */
function displayP3Profile(): Promise<Buffer> {
  displayP3 ??= sharp({ create: { width: 1, height: 1, channels: 3, background: '#000' } })
    .withIccProfile('p3')
    .png()
    .toBuffer()
    .then(async (png) => (await sharp(png).metadata()).icc as Buffer);
  return displayP3;
}

/** TIFF field types used here. */
const SHORT = 3;
const LONG = 4;
const UNDEFINED = 7;

/** A little-endian, uncompressed, single-strip TIFF of 8-bit RGB(A) `data`, tagged with `icc`. */
function taggedTiff(data: Buffer, width: number, height: number, channels: 3 | 4, icc: Buffer): Buffer {
  // [tag, type, count, value]; an array value is stored after the directory and pointed to.
  const entries: [number, number, number, number | Buffer][] = [
    [256, LONG, 1, width],
    [257, LONG, 1, height],
    [258, SHORT, channels, Buffer.from(new Uint16Array(channels).fill(8).buffer)],
    [259, SHORT, 1, 1], // no compression
    [262, SHORT, 1, 2], // RGB
    [273, LONG, 1, 0], // the strip's offset, set below
    [277, SHORT, 1, channels],
    [278, LONG, 1, height],
    [279, LONG, 1, data.length],
    [284, SHORT, 1, 1], // interleaved
    ...(channels === 4 ? [[338, SHORT, 1, 2] as [number, number, number, number]] : []), // unassociated alpha
    [34675, UNDEFINED, icc.length, icc],
  ];
  const directoryBytes = 2 + entries.length * 12 + 4;
  const arrays = entries.map(([, , , value]) => value).filter((value): value is Buffer => Buffer.isBuffer(value));
  const header = Buffer.alloc(8 + directoryBytes + arrays.reduce((sum, array) => sum + array.length, 0));
  header.write('II*\0', 0, 'latin1');
  header.writeUInt32LE(8, 4);
  header.writeUInt16LE(entries.length, 8);
  let arrayAt = 8 + directoryBytes;
  entries.forEach(([tag, type, count, value], index) => {
    const at = 10 + index * 12;
    header.writeUInt16LE(tag, at);
    header.writeUInt16LE(type, at + 2);
    header.writeUInt32LE(count, at + 4);
    if (Buffer.isBuffer(value)) {
      value.copy(header, arrayAt);
      header.writeUInt32LE(arrayAt, at + 8);
      arrayAt += value.length;
    } else if (tag === 273) {
      header.writeUInt32LE(header.length, at + 8);
    } else if (type === SHORT) {
      header.writeUInt16LE(value, at + 8);
    } else {
      header.writeUInt32LE(value, at + 8);
    }
  });
  return Buffer.concat([header, data]);
}

/** Raw pixels as libheif decoded them, in the colour space `profile` names: ready for the pipeline. */
export async function withColourProfile(
  pixels: { data: Buffer; width: number; height: number; channels: 3 | 4 },
  profile: Buffer | 'display-p3',
  options: SharpOptions,
): Promise<Sharp> {
  const icc = profile === 'display-p3' ? await displayP3Profile() : profile;
  return sharp(taggedTiff(pixels.data, pixels.width, pixels.height, pixels.channels, icc), options);
}
