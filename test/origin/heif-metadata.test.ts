// A HEIC's EXIF and XMP items, read as metadata sources: the items that
// describe the primary image, the Exif item from its TIFF header on, and an
// item over its cap left out.

import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { heifMetadata } from '../../lambda/origin/image/heif-metadata';
import { keptMetadata, MAX_METADATA_BYTES } from '../../lambda/origin/image/metadata';
import { fakeHevcPicture, heicWithMetadata } from '../support/heic';
import { SOURCE_XMP } from '../support/metadata';

/** An EXIF block (a TIFF structure, no `Exif\0\0`) with a copyright, as libvips writes it. */
async function exifBlock(): Promise<Buffer> {
  const jpeg = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } })
    .withExif({ IFD0: { Copyright: '(c) Ann Example' } })
    .jpeg()
    .toBuffer();
  return (await sharp(jpeg).metadata()).exif!.subarray(6);
}

describe('heifMetadata', () => {
  it("reads the Exif and XMP items that describe the primary image, for metadata's modes", async () => {
    const exif = await exifBlock();
    const metadata = heifMetadata(heicWithMetadata(fakeHevcPicture(64, 64), exif, Buffer.from(SOURCE_XMP)));
    expect(metadata.exif).toEqual(exif);
    expect(metadata.xmp?.toString()).toBe(SOURCE_XMP);
    const kept = keptMetadata(metadata, 'copyright');
    expect(kept?.exif).toEqual({ IFD0: { Copyright: '(c) Ann Example' } });
    expect(kept?.xmp).toContain('(c) Ann Example');
    expect(kept?.xmp).not.toContain('Harwich');
  });

  it('leaves out an item over its cap', async () => {
    const xmp = Buffer.alloc(MAX_METADATA_BYTES.xmp + 1, 0x20);
    const metadata = heifMetadata(heicWithMetadata(fakeHevcPicture(64, 64), await exifBlock(), xmp));
    expect(metadata.xmp).toBeUndefined();
    expect(metadata.exif).toBeDefined();
  });
});
