// No output tells where a photo was taken, whatever carries the place: the
// location catalogue (test/support/location-catalogue.ts), written by exiftool
// into a JPEG, PNG, WebP, TIFF and HEIC source, asked through the real handler
// and its transform child on LocalStack S3 as JPEG, PNG, WebP and AVIF with
// metadata=copyright and metadata=keep. exiftool reads each output back
// whole, and the raw bytes are searched too: no coordinate, altitude or place
// name, under any name; and what the docs say the mode keeps is there.
// Skipped with the reason when exiftool or heif-enc is missing, except in CI.

import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalUri, DEFAULT_GRAMMAR_OPTIONS, parseCanonicalUri } from '../../lambda/grammar';
import { documentedMetadata } from '../docs/metadata-doc';
import { heicOf, heifEncMissing } from '../support/heic';
import { COPYRIGHT, CREATOR, exiftoolMissing, KEYWORD, MAKE, placesIn, readTags, withCatalogue } from '../support/location-catalogue';
import { createTestOrigin, type TestOrigin } from '../support/origin';

const missing = exiftoolMissing() ?? heifEncMissing();
if (missing) console.warn(`test/origin/location.test.ts skipped: ${missing}`);

const SOURCES = ['jpeg', 'png', 'webp', 'tiff', 'heic'] as const;
const OUTPUTS = ['jpeg', 'png', 'webp', 'avif'] as const;
const MODES = ['copyright', 'keep'] as const;
type Block = 'exif' | 'xmp' | 'iptc';

/**
 * The blocks the origin reads of each source format: libvips gives a TIFF's
 * own EXIF tags and its bare IPTC-IIM not as blocks, and IPTC-IIM is read
 * only from a JPEG's Photoshop resource (docs/url-contract.md#metadata).
 */
const READS: Record<(typeof SOURCES)[number], Block[]> = {
  jpeg: ['exif', 'xmp', 'iptc'],
  png: ['exif', 'xmp'],
  webp: ['exif', 'xmp'],
  tiff: ['xmp'],
  heic: ['exif', 'xmp'],
};

/** The tags exiftool reads of an output that `mode` keeps from a source whose `blocks` the origin reads, by the docs. */
function expectedTags(mode: 'copyright' | 'keep', blocks: Block[], output: string): Record<string, unknown> {
  const documented = documentedMetadata(mode);
  const expected: Record<string, unknown> = {};
  const add = (listed: boolean, tag: string, value: unknown) => {
    if (listed) expected[tag] = value;
  };
  if (blocks.includes('exif')) {
    add(documented.exif.includes('Copyright'), 'IFD0:Copyright', COPYRIGHT);
    add(documented.exif.includes('Artist'), 'IFD0:Artist', CREATOR);
    add(documented.exif.includes('Make'), 'IFD0:Make', MAKE);
    // Written anew with the EXIF: the pixels are turned already.
    expected['IFD0:Orientation'] = 1;
  }
  if (blocks.includes('xmp')) {
    add(documented.xmp.includes('dc:rights'), 'XMP-dc:Rights', COPYRIGHT);
    add(documented.xmp.includes('dc:creator'), 'XMP-dc:Creator', CREATOR);
    add(documented.xmp.includes('photoshop:Credit'), 'XMP-photoshop:Credit', CREATOR);
    add(documented.xmp.includes('dc:subject'), 'XMP-dc:Subject', KEYWORD);
    add(documented.xmp.includes('xmp:CreatorTool'), 'XMP-xmp:CreatorTool', MAKE);
  }
  if (blocks.includes('iptc') && output === 'jpeg') {
    add(documented.iptc.includes('2:116'), 'IPTC:CopyrightNotice', COPYRIGHT);
    add(documented.iptc.includes('2:80'), 'IPTC:By-line', CREATOR);
    add(documented.iptc.includes('2:25'), 'IPTC:Keywords', KEYWORD);
  }
  return expected;
}

/** The fields of the catalogue's that a mode may keep, as exiftool names them: each either kept as expected or absent. */
const KEEPABLE = [
  'IFD0:Copyright',
  'IFD0:Artist',
  'IFD0:Make',
  'XMP-dc:Rights',
  'XMP-dc:Creator',
  'XMP-photoshop:Credit',
  'XMP-dc:Subject',
  'XMP-xmp:CreatorTool',
  'IPTC:CopyrightNotice',
  'IPTC:By-line',
  'IPTC:Keywords',
];

let origin: TestOrigin;
const sources = new Map<string, Buffer>();

beforeAll(async () => {
  if (missing) return;
  origin = await createTestOrigin('location', { maxInlineBytes: 16 * 1024 * 1024 });
  const base = sharp({ create: { width: 96, height: 64, channels: 3, background: '#4080c0' } });
  const plain = {
    jpeg: await base.clone().jpeg().toBuffer(),
    png: await base.clone().png().toBuffer(),
    webp: await base.clone().webp().toBuffer(),
    tiff: await base.clone().tiff().toBuffer(),
  };
  const images = [...Object.entries(plain), ['heic', heicOf(plain.jpeg)] as const].map(([format, bytes]) => ({
    name: `catalogue.${format}`,
    bytes,
  }));
  const made = withCatalogue(images);
  for (const [index, format] of SOURCES.entries()) {
    sources.set(format, made[index]!);
    await origin.putSource(`catalogue.${format}`, made[index]!);
  }
}, 120_000);

describe.skipIf(missing !== undefined)('the location catalogue', () => {
  it('is in every source, every carrier of it', () => {
    const tags = readTags(SOURCES.map((format) => ({ name: `source.${format}`, bytes: sources.get(format)! })));
    for (const [index, format] of SOURCES.entries()) {
      const found = placesIn(sources.get(format)!, tags[index]!).join('\n');
      for (const carrier of ['GPS:GPSLatitude', 'GPS:GPSAltitude', 'XMP-exif:GPSLatitude', 'XMP-drone-dji:', 'XMP-iptcExt:LocationShown'])
        expect(found, `${format}: ${carrier}`).toContain(carrier);
      for (const carrier of ['XMP-iptcCore:Location', 'XMP-photoshop:City', 'XMP-xmpDM:ShotLocation', 'XMP-dc:Coverage'])
        expect(found, `${format}: ${carrier}`).toContain(carrier);
      // IPTC-IIM where the format holds it.
      if (format !== 'webp' && format !== 'heic') expect(found, format).toContain('IPTC:City');
      expect(tags[index]!['XMP-dc:Rights'], format).toBe(COPYRIGHT);
    }
  });

  it.for(SOURCES)(
    'from %s, no output in any mode carries a place, and each keeps what its mode keeps',
    { timeout: 120_000 },
    async (source) => {
      const cases = OUTPUTS.flatMap((output) => MODES.map((mode) => ({ output, mode })));
      const outputs = [];
      for (const { output, mode } of cases) {
        const key = `catalogue.${source}`;
        const uri = canonicalUri(key, parseCanonicalUri(`/${key}/width=48,metadata=${mode},format=${output}`, DEFAULT_GRAMMAR_OPTIONS).ops);
        const answer = await origin.request(uri);
        expect(answer.status, uri).toBe(200);
        outputs.push({ name: `${mode}.${output}`, bytes: answer.body });
      }
      const tags = readTags(outputs);
      for (const [index, { output, mode }] of cases.entries()) {
        const label = `${source} as ${output}, metadata=${mode}`;
        expect(placesIn(outputs[index]!.bytes, tags[index]!), label).toEqual([]);
        const kept = Object.fromEntries(
          [...KEEPABLE, 'IFD0:Orientation'].filter((tag) => tags[index]![tag] !== undefined).map((tag) => [tag, tags[index]![tag]]),
        );
        expect(kept, label).toEqual(expectedTags(mode, READS[source], output));
      }
    },
  );
});
