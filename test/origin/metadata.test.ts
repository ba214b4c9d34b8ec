// metadata=none|copyright|keep through the real handler and its transform
// child on LocalStack S3: a JPEG made in code with GPS, serial numbers,
// copyright, artist, XMP and IPTC, asked in each mode and each output format,
// carries exactly the fields docs/url-contract.md lists, and no location in
// any mode; metadata bombs are answered without reading them.

import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalUri, DEFAULT_GRAMMAR_OPTIONS, parseCanonicalUri } from '../../lambda/grammar';
import { MAX_METADATA_BYTES } from '../../lambda/origin/image/metadata';
import { documentedMetadata } from '../docs/metadata-doc';
import {
  exifTags,
  exifText,
  iptcDatasets,
  iptcResource,
  metadataBombJpeg,
  metadataBombPng,
  SOURCE_IPTC,
  SOURCE_XMP,
  taggedJpeg,
  withApp13,
  xmpProperties,
} from '../support/metadata';
import { createTestOrigin, type TestOrigin } from '../support/origin';

let origin: TestOrigin;

const FORMATS = ['jpeg', 'png', 'webp', 'avif'] as const;
type Format = (typeof FORMATS)[number];

/** What libvips writes wherever it writes EXIF: the output's orientation, resolution and size, and the pointer to the Exif IFD. */
const STRUCTURAL = ['IFD0:0x0112', 'IFD0:0x011a', 'IFD0:0x011b', 'IFD0:0x0128', 'IFD0:0x8769', 'Exif:0xa002', 'Exif:0xa003'];
/** The source's EXIF fields by name, as the docs name them. */
const EXIF_NAMES: Record<string, string> = {
  Artist: 'IFD0:0x013b',
  Copyright: 'IFD0:0x8298',
  Make: 'IFD0:0x010f',
  Model: 'IFD0:0x0110',
  ImageDescription: 'IFD0:0x010e',
  ExposureTime: 'Exif:0x829a',
  FNumber: 'Exif:0x829d',
  ISOSpeedRatings: 'Exif:0x8827',
  DateTimeOriginal: 'Exif:0x9003',
};
/** What the test photo carries beyond that (GPS, serial numbers, EXIF version, colour space, YCbCr positioning): documented as not kept. */
const SOURCE_OTHERS = ['Exif:0xa431', 'Exif:0xa435', 'GPS:0x0001'];

/** The fields of the test photo that `mode` keeps, by the docs: EXIF tags, XMP properties, IPTC datasets (JPEG only). */
function expected(mode: 'copyright' | 'keep', format: Format) {
  const documented = documentedMetadata(mode);
  const exifNames = Object.keys(EXIF_NAMES).filter((name) => documented.exif.includes(name));
  const xmp = xmpProperties(Buffer.from(SOURCE_XMP)).filter((name) => documented.xmp.includes(name));
  const iptc = SOURCE_IPTC.map(([dataset]) => dataset).filter((dataset) => documented.iptc.includes(`2:${dataset}`));
  return { exif: [...STRUCTURAL, ...exifNames.map((name) => EXIF_NAMES[name]!)].sort(), xmp, iptc: format === 'jpeg' ? iptc : [] };
}

async function served(key: string, segment: string) {
  const uri = canonicalUri(key, parseCanonicalUri(`/${key}/${segment}`, DEFAULT_GRAMMAR_OPTIONS).ops);
  const answer = await origin.request(uri);
  expect(answer.status, uri).toBe(200);
  return { body: answer.body, meta: await sharp(answer.body).metadata() };
}

beforeAll(async () => {
  origin = await createTestOrigin('metadata', { maxInlineBytes: 16 * 1024 * 1024 });
  await origin.putSource('tagged.jpg', await taggedJpeg());
});

describe('metadata=none|copyright|keep, in each output format', () => {
  const cases = FORMATS.flatMap((format) => (['none', 'copyright', 'keep'] as const).map((mode) => ({ mode, format })));

  it.for(cases)('$mode as $format: exactly the documented fields, never a location', async ({ mode, format }) => {
    const segment = `width=200${mode === 'none' ? '' : `,metadata=${mode}`},format=${format}`;
    const { meta } = await served('tagged.jpg', segment);
    // Turned as displayed, and not told to turn again.
    expect([meta.width, meta.height]).toEqual([200, 300]);
    const found = { exif: exifTags(meta.exif), xmp: xmpProperties(meta.xmp), iptc: iptcDatasets(meta.iptc) };
    if (mode === 'none') {
      expect(found).toEqual({ exif: [], xmp: [], iptc: [] });
      return;
    }
    expect(found).toEqual(expected(mode, format));
    for (const other of SOURCE_OTHERS) expect(found.exif).not.toContain(other);
    expect(exifText(meta.exif, 0x8298)).toBe('(c) Ann Example');
    expect(exifText(meta.exif, 0x013b)).toBe('Ann Example');
    const xmp = meta.xmp!.toString('utf8');
    for (const place of ['Harwich', '51,30', '7.5W', 'BODY-4711']) expect(xmp).not.toContain(place);
    expect(xmp).toContain('(c) Ann Example');
    if (meta.iptc) expect(meta.iptc.toString('latin1')).not.toMatch(/Harwich|United Kingdom/);
  });

  it('documents each mode the test photo exercises', () => {
    expect(documentedMetadata('copyright').exif).toEqual(['Artist', 'Copyright']);
    expect(documentedMetadata('keep').exif).toEqual(expect.arrayContaining(Object.keys(EXIF_NAMES)));
    expect(documentedMetadata('keep').xmp).toEqual(expect.arrayContaining(['dc:rights', 'dc:creator', 'dc:subject', 'xmp:CreatorTool']));
    expect(documentedMetadata('keep').iptc).toEqual(expect.arrayContaining(['2:25', '2:80', '2:110', '2:116']));
  });
});

describe('metadata bombs', () => {
  it('drops an XMP and an EXIF block over their caps, unread, and answers at once', async () => {
    const bomb = await metadataBombPng(4_000_000, 1_000_000);
    const source = await sharp(bomb).metadata();
    expect(source.xmp!.length).toBeGreaterThan(MAX_METADATA_BYTES.xmp);
    expect(source.exif!.length).toBeGreaterThan(MAX_METADATA_BYTES.exif);
    await origin.putSource('bomb.png', bomb);
    const started = process.hrtime.bigint();
    const { meta } = await served('bomb.png', 'metadata=keep,format=jpeg');
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(5_000);
    expect({ exif: meta.exif, xmp: meta.xmp }).toEqual({ exif: undefined, xmp: undefined });
  });

  it('answers a JPEG carrying them all (EXIF, XMP, IPTC and 26 MB of extended XMP) in every mode at once, no location kept', async () => {
    await origin.putSource('bomb.jpg', await metadataBombJpeg());
    await origin.putSource(
      'plain.jpg',
      await sharp({ create: { width: 64, height: 64, channels: 3, background: '#336699' } })
        .jpeg()
        .toBuffer(),
    );
    for (const segment of ['metadata=keep,format=jpeg', 'metadata=copyright,format=webp', 'metadata=keep,format=png', 'format=jpeg']) {
      const started = process.hrtime.bigint();
      const { meta } = await served('bomb.jpg', segment);
      // Before each EXIF tag was read once, the EXIF block alone took 9 s; the 26 MB of segments cost about a second.
      expect(Number(process.hrtime.bigint() - started) / 1e6, segment).toBeLessThan(5_000);
      expect(exifTags(meta.exif).filter((tag) => tag.startsWith('GPS'))).toEqual([]);
      const xmp = meta.xmp?.toString('utf8') ?? '';
      for (const place of ['Harwich', '51,30', '7.5W']) expect(xmp).not.toContain(place);
      expect(iptcDatasets(meta.iptc)).not.toContain(90);
      // The transform process held no more than the plain image's, but the source's 26 MB read once.
      const rss = (uri: string) =>
        origin.logs.filter((line) => line.uri === uri && line.event === 'variant').at(-1)?.TransformRss as number;
      await served('plain.jpg', segment);
      expect(rss(`/bomb.jpg/${segment}`) - rss(`/plain.jpg/${segment}`), segment).toBeLessThan(100);
    }
  });

  it('reads a full IPTC segment of tiny datasets in one pass, and drops an XMP that is not plain XML', async () => {
    const jpeg = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#336699' } })
      .withXmp('<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa">]><x:xmpmeta xmlns:x="adobe:ns:meta/">&a;</x:xmpmeta>')
      .jpeg()
      .toBuffer();
    const datasets: [number, string][] = Array.from({ length: 10_000 }, (_, i) => [i % 2 ? 25 : 90, 'x']);
    await origin.putSource('iptc.jpg', withApp13(jpeg, iptcResource(datasets)));
    const { meta } = await served('iptc.jpg', 'metadata=keep,format=jpeg');
    expect(meta.xmp).toBeUndefined();
    // The keywords kept, every city left out.
    expect(new Set(iptcDatasets(meta.iptc))).toEqual(new Set([25]));
  });
});
