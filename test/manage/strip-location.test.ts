// manageStripLocation on real staged objects in LocalStack: the location
// catalogue (test/support/location-catalogue.ts), written by exiftool into a
// turned (orientation 6), Display P3 JPEG, PNG, WebP, TIFF, GIF, AVIF and
// HEIC, is validated with the setting on: each is ready at its key, exiftool
// finds no place in it (the check the outputs' tests make), its pixels are
// the source's, its orientation and colour profile kept, what `keep` keeps
// kept. With the setting off, the stored original is the upload, byte for byte.

import { GetObjectCommand } from '@aws-sdk/client-s3';
import { crc32 } from 'node:zlib';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { validateUpload } from '../../lambda/manage/validate';
import { decodeHeif } from '../../lambda/origin/image/heif';
import { heicOf, heifEncMissing, heifOfItems, hevcPictureOf, ispe } from '../support/heic';
import { CATALOGUE_XMP, COPYRIGHT, exiftoolMissing, placesIn, readTags, withCatalogue } from '../support/location-catalogue';
import { joinUltraHdr } from '../support/ultra-hdr';
import { createTestManage, type TestManage } from './support';

const missing = exiftoolMissing() ?? heifEncMissing();
if (missing) console.warn(`test/manage/strip-location.test.ts skipped: ${missing}`);

const FORMATS = ['jpeg', 'png', 'webp', 'tiff', 'gif', 'avif', 'heic'] as const;
type Format = (typeof FORMATS)[number];

let stripping: TestManage;
let keeping: TestManage;
const sources = new Map<Format, Buffer>();

beforeAll(async () => {
  if (missing) return;
  stripping = await createTestManage('manage-strip', {}, { stripLocation: true });
  keeping = await createTestManage('manage-nostrip');
  const base = () =>
    sharp({ create: { width: 96, height: 64, channels: 3, background: '#4080c0' } })
      .withIccProfile('p3')
      .withMetadata({ orientation: 6 });
  const plain: Record<Format, Buffer> = {
    jpeg: await base().jpeg().toBuffer(),
    png: await base().png().toBuffer(),
    webp: await base().webp().toBuffer(),
    tiff: await base().tiff().toBuffer(),
    gif: await base().gif().toBuffer(),
    avif: await base().avif().toBuffer(),
    heic: Buffer.alloc(0),
  };
  plain.heic = heicOf(plain.jpeg);
  const made = withCatalogue(FORMATS.map((format) => ({ name: `catalogue.${format}`, bytes: plain[format] })));
  for (const [index, format] of FORMATS.entries()) sources.set(format, made[index]!);
}, 120_000);

/** What a C2PA manifest store's EXIF assertion may tell: a place. */
const MANIFEST_TEXT = 'jumb c2pa stds.exif GPSLatitude 47.123456 Zzyzxcity';
const C2PA_UUID = Buffer.from('d8fec3d61b0e483c92975828877ec481', 'hex');

/** `image` with a C2PA manifest store (a stand-in holding MANIFEST_TEXT) where `format` keeps one. */
function withManifest(format: Format, image: Buffer): Buffer {
  const text = Buffer.from(MANIFEST_TEXT, 'latin1');
  const u32 = (value: number, little = false) => {
    const bytes = Buffer.alloc(4);
    if (little) bytes.writeUInt32LE(value);
    else bytes.writeUInt32BE(value);
    return bytes;
  };
  if (format === 'jpeg') {
    const segment = Buffer.concat([Buffer.from([0xff, 0xeb, 0, text.length + 2]), text]);
    return Buffer.concat([image.subarray(0, 2), segment, image.subarray(2)]);
  }
  if (format === 'png') {
    const chunk = Buffer.concat([Buffer.from('caBX', 'latin1'), text]);
    const end = image.length - 12; // IEND
    return Buffer.concat([image.subarray(0, end), u32(text.length), chunk, u32(crc32(chunk)), image.subarray(end)]);
  }
  if (format === 'webp') {
    const padded = Buffer.concat([text, Buffer.alloc(text.length & 1)]);
    const riff = Buffer.concat([image, Buffer.from('C2PA', 'latin1'), u32(text.length, true), padded]);
    riff.writeUInt32LE(riff.length - 8, 4);
    return riff;
  }
  return Buffer.concat([image, u32(8 + 16 + text.length), Buffer.from('uuid', 'latin1'), C2PA_UUID, text]);
}

async function stored(manage: TestManage, key: string): Promise<Buffer> {
  const response = await manage.s3.send(new GetObjectCommand({ Bucket: manage.sourceBucket, Key: key }));
  return Buffer.from(await response.Body!.transformToByteArray());
}

/** The decoded pixels, as stored (no orientation applied). */
async function pixels(format: Format, bytes: Buffer): Promise<Buffer> {
  if (format === 'heic') return (await decodeHeif(bytes)).data;
  return sharp(bytes, { animated: format === 'gif' })
    .raw()
    .toBuffer();
}

async function upload(manage: TestManage, format: Format): Promise<Buffer> {
  const key = `catalogue/photo.${format}`;
  await manage.put('_uploads/' + key, sources.get(format)!, `image/${format}`);
  expect(await manage.validate(key), format).toMatchObject({ status: 'ready', key });
  expect(await manage.sourceKeys()).not.toContain('_uploads/' + key);
  return stored(manage, key);
}

describe.skipIf(missing !== undefined)('manageStripLocation', () => {
  it('is needed: every source carries the catalogue, in each of its carriers', () => {
    const tags = readTags(FORMATS.map((format) => ({ name: `source.${format}`, bytes: sources.get(format)! })));
    for (const [index, format] of FORMATS.entries()) {
      const found = placesIn(sources.get(format)!, tags[index]!).join('\n');
      expect(found, format).toContain('XMP-exif:GPSLatitude');
      if (format !== 'gif') expect(found, format).toContain('GPS:GPSLatitude');
      if (['jpeg', 'png', 'tiff'].includes(format)) expect(found, format).toContain('IPTC:City');
    }
  });

  it('stores every format ready, with no place in it, its pixels, orientation and colour profile kept', { timeout: 120_000 }, async () => {
    const outputs = [];
    for (const format of FORMATS) outputs.push({ name: `stored.${format}`, bytes: await upload(stripping, format) });
    const tags = readTags(outputs);
    for (const [index, format] of FORMATS.entries()) {
      const { bytes } = outputs[index]!;
      const source = sources.get(format)!;
      expect(placesIn(bytes, tags[index]!), format).toEqual([]);
      expect((await pixels(format, bytes)).equals(await pixels(format, source)), `${format}: pixels`).toBe(true);
      if (format === 'heic') continue; // sharp reads no HEIC: libheif has decoded it above
      const [before, after] = [await sharp(source).metadata(), await sharp(bytes).metadata()];
      expect(after.orientation, `${format}: orientation`).toBe(before.orientation);
      expect(after.icc, `${format}: ICC`).toEqual(before.icc);
      if (format !== 'gif') expect(after.icc, `${format}: ICC`).toBeDefined(); // libvips writes no GIF's
    }
    // What metadata=keep keeps stays: the rights, where the format holds XMP that is read back.
    for (const [index, format] of FORMATS.entries()) if (format !== 'gif') expect(tags[index]!['XMP-dc:Rights'], format).toBe(COPYRIGHT);
    expect(tags[FORMATS.indexOf('jpeg')]!['IPTC:CopyrightNotice']).toBe(COPYRIGHT);
    expect(tags[FORMATS.indexOf('jpeg')]!['IFD0:Orientation']).toBe(6);
  });

  it("strips an Ultra HDR JPEG's gain map too, keeping it where its MPF index says, with its parameters", { timeout: 60_000 }, async () => {
    const grey = sharp({ create: { width: 80, height: 60, channels: 3, background: '#808080' } }).grayscale();
    const gainMapJpeg = await grey
      .withXmp(CATALOGUE_XMP)
      .withExif({ IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '47/1 7/1 2444/100' } })
      .jpeg()
      .toBuffer();
    const primary = await sharp({ create: { width: 320, height: 240, channels: 3, background: '#c0783c' } })
      .jpeg()
      .toBuffer();
    // The catalogue in the primary, then the Ultra HDR directory (hdrgm, the container) before it, as a phone writes them.
    const source = joinUltraHdr(withCatalogue([{ name: 'primary.jpg', bytes: primary }])[0]!, gainMapJpeg);
    const gainMapOf = async (file: Buffer) => (await sharp(file).metadata()).gainMap!.image;
    expect((await gainMapOf(source)).toString('latin1')).toContain('Zzyzxcity');
    await stripping.put('_uploads/hdr/photo.jpg', source, 'image/jpeg');
    expect(await stripping.validate('hdr/photo.jpg')).toMatchObject({ status: 'ready' });
    const bytes = await stored(stripping, 'hdr/photo.jpg');
    expect(bytes.length).toBe(source.length);
    const [gainMap, before] = [await gainMapOf(bytes), await gainMapOf(source)];
    expect((await sharp(gainMap).raw().toBuffer()).equals(await sharp(before).raw().toBuffer())).toBe(true);
    const [tags, mapTags] = readTags([
      { name: 'hdr.jpg', bytes },
      { name: 'map.jpg', bytes: gainMap },
    ]);
    // HDRCapacityMin and -Max are no place, though their names hold "city".
    const placeless = (all: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(all).filter(([name]) => !/HDRCapacity/.test(name)));
    expect(placesIn(bytes, placeless(tags!))).toEqual([]);
    expect(placesIn(gainMap, placeless(mapTags!))).toEqual([]);
    expect(Number(tags!['XMP-hdrgm:Version'])).toBe(1);
    expect(Number(mapTags!['XMP-hdrgm:Version'])).toBe(1);
    expect(mapTags).toMatchObject({ 'XMP-hdrgm:GainMapMax': 2, 'XMP-hdrgm:HDRCapacityMax': 2, 'XMP-hdrgm:OffsetSDR': 0.015625 });
  });

  it("quarantines an upload whose metadata it cannot rewrite alone (an Exif item on the picture's bytes), rather than store it unstripped", async () => {
    const png = await sharp({ create: { width: 256, height: 256, channels: 3, background: '#808080' } })
      .png()
      .toBuffer();
    const picture = hevcPictureOf(heicOf(png));
    const shared = heifOfItems(1, [
      { id: 1, type: 'hvc1', properties: [picture.hvcC, ispe(picture.width, picture.height)], data: picture.data },
      { id: 2, type: 'Exif', data: picture.data, references: [{ type: 'cdsc', to: [1] }] },
    ]);
    await keeping.put('_uploads/shared/photo.heic', shared, 'image/heic');
    expect(await keeping.validate('shared/photo.heic')).toMatchObject({ status: 'ready' });
    await stripping.put('_uploads/shared/photo.heic', shared, 'image/heic');
    expect(await stripping.validate('shared/photo.heic')).toMatchObject({
      status: 'quarantined',
      reason: 'unsupported_media_type',
      message: expect.stringContaining('Its location cannot be removed: its metadata items cannot be read: two items share their data'),
    });
    expect(await stripping.sourceKeys()).not.toContain('shared/photo.heic');
  });

  it('removes C2PA manifest stores, whose assertions may hold EXIF with GPS', { timeout: 60_000 }, async () => {
    const formats = ['jpeg', 'png', 'webp', 'avif', 'heic'] as const;
    const outputs = [];
    for (const format of formats) {
      const source = withManifest(format, sources.get(format)!);
      expect(source.toString('latin1'), format).toContain(MANIFEST_TEXT);
      const key = `c2pa/photo.${format}`;
      await stripping.put('_uploads/' + key, source, `image/${format}`);
      expect(await stripping.validate(key), format).toMatchObject({ status: 'ready' });
      const bytes = await stored(stripping, key);
      expect((await pixels(format, bytes)).equals(await pixels(format, source)), `${format}: pixels`).toBe(true);
      outputs.push({ name: `c2pa.${format}`, bytes });
    }
    const tags = readTags(outputs);
    for (const [index, format] of formats.entries()) expect(placesIn(outputs[index]!.bytes, tags[index]!), format).toEqual([]);
  });

  it('off (the default), stores each upload byte for byte', { timeout: 60_000 }, async () => {
    for (const format of FORMATS) expect((await upload(keeping, format)).equals(sources.get(format)!), format).toBe(true);
  });
});

describe.skipIf(missing !== undefined)('manageStripLocation, an upload replaced while it is read', () => {
  it('is superseded: neither version is stored, the newer left staged for its own event', async () => {
    const key = 'raced/photo.jpeg';
    const newer = await sharp({ create: { width: 30, height: 20, channels: 3, background: '#102030' } })
      .jpeg()
      .toBuffer();
    let replaced = false;
    // The real client, whose first HEAD (the put's check) comes after another upload of the key: a race, on LocalStack.
    const racing = Object.create(stripping.s3, {
      send: {
        value: async (command: { constructor: { name: string } }) => {
          if (command.constructor.name === 'HeadObjectCommand' && !replaced) {
            replaced = true;
            await stripping.put('_uploads/' + key, newer, 'image/jpeg');
          }
          return stripping.s3.send(command as never);
        },
      },
    });
    await stripping.put('_uploads/' + key, sources.get('jpeg')!, 'image/jpeg');
    expect(await validateUpload({ s3: racing }, stripping.config, '_uploads/' + key)).toEqual({ status: 'superseded', key });
    const keys = await stripping.sourceKeys();
    expect(keys).not.toContain(key);
    expect((await stored(stripping, '_uploads/' + key)).equals(newer)).toBe(true);
  });
});
