// `npx tsx scripts/bench/hdr-bytes.ts`: what keeping an HDR gain map costs
// in bytes, on the bench corpus's JPEG photos (scripts/bench/corpus.ts). Each
// photo becomes an Ultra HDR JPEG whose gain map is made from its own
// highlights (a quarter of its sides, as Android writes, brighter where the
// photo is bright, smooth as camera maps are), then goes through the
// handler's transform() at 1280 px wide: kept (JPEG with its gain map, what
// format=auto answers), and dropped as JPEG, WebP and AVIF (what hdr=drop
// answers each browser). It prints a markdown table of the medians.

import sharp from 'sharp';
import type { Ops } from '../../lambda/grammar';
import { DEFAULT_LIMITS } from '../../lambda/origin/config';
import { budgetFor } from '../../lambda/origin/image/budget';
import { transform } from '../../lambda/origin/image/transform';
import { joinUltraHdr } from '../../test/support/ultra-hdr';
import { loadCorpus } from './corpus';
import { median } from './stats';

const WIDTH = 1280;

/** A gain map from the photo's own light: its lightness at a quarter of its sides, the brightest half lifted most. */
async function withGainMap(photo: Buffer): Promise<Buffer> {
  const { width, height } = await sharp(photo).metadata();
  const map = await sharp(photo)
    .resize(Math.ceil(width / 4), Math.ceil(height / 4), { fit: 'fill' })
    .grayscale()
    .linear(2, -255) // lightness 128..255 -> gain 0..255; darker parts keep the SDR light
    .blur(2)
    .jpeg({ quality: 85 })
    .toBuffer();
  return joinUltraHdr(photo, map);
}

async function main(): Promise<void> {
  const corpus = await loadCorpus((line) => console.error(line));
  if (corpus.kind !== 'photos') throw new Error('the corpus fell back to generated images; this study needs the photos');
  // A one-band primary is left out: libultrahdr reads it as three bands and libvips refuses the load (gain-map.ts).
  const photos: typeof corpus.photos = [];
  for (const photo of corpus.photos.filter((one) => one.key.endsWith('.jpg'))) {
    if ((await sharp(photo.bytes).metadata()).channels === 3) photos.push(photo);
  }
  const asked: Record<string, Ops> = {
    'HDR JPEG (kept)': { width: WIDTH, format: 'jpeg' },
    'SDR JPEG': { width: WIDTH, hdr: 'drop', format: 'jpeg' },
    'SDR WebP': { width: WIDTH, hdr: 'drop', format: 'webp' },
    'SDR AVIF': { width: WIDTH, hdr: 'drop', format: 'avif' },
  };
  const sizes: Record<string, number[]> = Object.fromEntries(Object.keys(asked).map((name) => [name, []]));
  const gainMapShare: number[] = [];
  for (const photo of photos) {
    const source = await withGainMap(photo.bytes);
    for (const [name, ops] of Object.entries(asked)) {
      const variant = await transform(source, ops, DEFAULT_LIMITS, budgetFor(DEFAULT_LIMITS.memorySizeMb, 120_000, source.length));
      sizes[name]!.push(variant.body.length);
      if (name === 'HDR JPEG (kept)') {
        const map = (await sharp(variant.body).metadata()).gainMap;
        if (!map) throw new Error(`${photo.key}: the gain map was not kept`);
        gainMapShare.push(map.image.length / variant.body.length);
      }
    }
    console.error(
      `${photo.key}: ${Object.keys(asked)
        .map((name) => sizes[name]!.at(-1))
        .join(', ')} bytes`,
    );
  }
  const hdr = sizes['HDR JPEG (kept)']!;
  const rows = Object.keys(asked).map((name) => {
    const ratios = hdr.map((bytes, index) => bytes / sizes[name]![index]!);
    return `| ${name} | ${Math.round(median(sizes[name]!) / 1024)} KB | ${median(ratios).toFixed(2)} |`;
  });
  console.log(`${photos.length} JPEG photos of the bench corpus, ${WIDTH} px wide, quality defaults:\n`);
  console.log('| answer | median bytes | HDR JPEG over it (median of per-photo ratios) |\n|---|---:|---:|');
  console.log(rows.join('\n'));
  console.log(`\nThe gain map is a median ${(100 * median(gainMapShare)).toFixed(0)}% of the HDR JPEG's bytes.`);
}

await main();
