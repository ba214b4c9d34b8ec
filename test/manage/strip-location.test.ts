// manageStripLocation on real staged objects in LocalStack: the location
// catalogue (test/support/location-catalogue.ts), written by exiftool into a
// turned (orientation 6), Display P3 JPEG, PNG, WebP, TIFF, GIF, AVIF and
// HEIC, is validated with the setting on: each is ready at its key, exiftool
// finds no place in it (the check the outputs' tests make), its pixels are
// the source's, its orientation and colour profile kept, what `keep` keeps
// kept. With the setting off, the stored original is the upload, byte for byte.

import { GetObjectCommand } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeHeif } from '../../lambda/origin/image/heif';
import { heicOf, heifEncMissing, heifOfItems, hevcPictureOf, ispe } from '../support/heic';
import { COPYRIGHT, exiftoolMissing, placesIn, readTags, withCatalogue } from '../support/location-catalogue';
import { ultraHdrJpeg } from '../support/ultra-hdr';
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

  it("keeps an Ultra HDR JPEG's gain map where its MPF index says", { timeout: 60_000 }, async () => {
    const [source] = withCatalogue([{ name: 'hdr.jpg', bytes: await ultraHdrJpeg(320, 240) }]);
    const before = (await sharp(source!).metadata()).gainMap?.image;
    expect(before).toBeDefined();
    await stripping.put('_uploads/hdr/photo.jpg', source!, 'image/jpeg');
    expect(await stripping.validate('hdr/photo.jpg')).toMatchObject({ status: 'ready' });
    const bytes = await stored(stripping, 'hdr/photo.jpg');
    expect(bytes.length).toBe(source!.length);
    expect((await sharp(bytes).metadata()).gainMap?.image.equals(before!)).toBe(true);
    const [tags] = readTags([{ name: 'hdr.jpg', bytes }]);
    expect(placesIn(bytes, tags!)).toEqual([]);
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

  it('off (the default), stores each upload byte for byte', { timeout: 60_000 }, async () => {
    for (const format of FORMATS) expect((await upload(keeping, format)).equals(sources.get(format)!), format).toBe(true);
  });
});
