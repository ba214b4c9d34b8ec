// `npm run bench -- --cards`: what a card's miss costs, through the origin
// handler on LocalStack, per photo of the corpus: the Open Graph card of
// docs/templates.md (the photo in its 600x630 slot, a title of 120
// characters fitted into its box), as JPEG, as WebP, and negotiated by
// Chromium's Accept (AVIF when the budget allows it); beside the plain
// 600x630 cover resize of the same photo, the work the card adds to.

import { DeleteObjectsCommand, type S3Client } from '@aws-sdk/client-s3';
import { parseCanonicalUri } from '../../lambda/grammar';
import { variantKey } from '../../lambda/origin/cache-keys';
import type { OriginHandler } from '../../lambda/origin/handler';
import { ogCardAsk } from '../bounds-cards';
import type { Corpus } from './corpus';
import { invoke } from './first-view';
import { markdownTable, median, ms, ratio } from './stats';

/** What is measured per photo: each card, and the resize beneath it. */
const ASKS: { label: string; ask: string }[] = [
  { label: 'resize 600x630 JPEG', ask: 'width=600,height=630,format=jpeg' },
  { label: 'card JPEG', ask: ogCardAsk('format=jpeg') },
  { label: 'card WebP', ask: ogCardAsk('accept=webp') },
  { label: 'card, Chromium Accept', ask: ogCardAsk('accept=avif') },
];

export async function cardStudy(
  corpus: Corpus,
  options: { s3: S3Client; cacheBucket: string; handler: OriginHandler; iterations: number; log: (line: string) => void; header: string },
): Promise<string> {
  const { s3, cacheBucket, handler } = options;
  const rows: string[][] = [];
  const all = ASKS.map(() => [] as number[]);
  const types = new Set<string>();
  for (const photo of corpus.photos) {
    const uris = ASKS.map(({ ask }) => `/${photo.key.split('/').map(encodeURIComponent).join('/')}/${ask}`);
    const keys = uris.map((uri) => {
      const { key, ops } = parseCanonicalUri(uri, { maxDimension: 8192 });
      return variantKey(key, ops);
    });
    // Untimed: warms the transform process on this photo's decoder and the fonts.
    await invoke(handler, uris[1]!);
    const own = ASKS.map(() => [] as number[]);
    for (let i = 0; i < options.iterations; i++) {
      await s3.send(new DeleteObjectsCommand({ Bucket: cacheBucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }));
      for (const [index, uri] of uris.entries()) {
        const timed = await invoke(handler, uri);
        own[index]!.push(timed.answerMs);
        if (index === 3) types.add(timed.contentType);
      }
    }
    options.log(`cards: ${photo.key} ${ms(median(own[1]!))} (resize ${ms(median(own[0]!))})`);
    rows.push([
      photo.key,
      `${photo.megapixels.toFixed(1)} MP`,
      ...own.map((values) => ms(median(values))),
      ratio(median(own[1]!) / median(own[0]!)),
    ]);
    own.forEach((values, index) => all[index]!.push(...values));
  }
  return [
    '# A card miss (Open Graph, 1200x630)',
    '',
    options.header,
    '',
    markdownTable(['photo', 'size', ...ASKS.map(({ label }) => label), 'card JPEG / resize'], rows, [
      'l',
      'r',
      ...ASKS.map(() => 'r' as const),
      'r',
    ]),
    '',
    `- Medians over ${all[0]!.length} misses: ${ASKS.map(({ label }, index) => `${label} ${ms(median(all[index]!))}`).join(', ')}.`,
    `- The negotiated card was served as ${[...types].join(' and ')}.`,
    '',
  ].join('\n');
}
