// `npm run bench -- --first-view`: what the first viewer of a 1600 px variant
// waits for, through the origin handler on LocalStack, per photo and in one
// run, interleaved:
//   webp miss     `accept=webp` (a browser without AVIF): the response
//   avif before   `format=avif`: what a negotiated AVIF cost the first viewer
//                 before WebP came first (the same encode)
//   first view    `accept=avif` (Chromium): the response, WebP when the AVIF
//                 would keep it waiting; then the whole invocation, which
//                 ends once the AVIF is made and stored
// and whether the next request finds AVIF in the cache bucket.

import { DeleteObjectsCommand, HeadObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { Ops } from '../../lambda/grammar';
import { AVIF_CLAIMS_PREFIX, variantKey } from '../../lambda/origin/cache-keys';
import type { OriginHandler } from '../../lambda/origin/handler';
import { functionUrlEvent } from '../../local/emulator/function-url';
import type { Corpus } from './corpus';
import { markdownTable, median, ms, p95, pairedRatio, ratio } from './stats';

const WIDTH = 1600;

export interface Timed {
  /** Until the response. */
  answerMs: number;
  /** Until the invocation ended. */
  invocationMs: number;
  contentType: string;
}

export async function invoke(handler: OriginHandler, uri: string): Promise<Timed> {
  const start = performance.now();
  let answerMs = NaN;
  let contentType = '';
  await handler(functionUrlEvent(uri), undefined, (response) => {
    answerMs = performance.now() - start;
    contentType = response.headers?.['content-type'] ?? '';
  });
  return { answerMs, invocationMs: performance.now() - start, contentType };
}

/** Deletes every key under `prefix` (claims) or the one variant, so the next request is a first view again. */
async function forget(s3: S3Client, bucket: string, keys: string[]): Promise<void> {
  const claims = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: AVIF_CLAIMS_PREFIX }));
  const objects = keys.concat((claims.Contents ?? []).map((object) => object.Key!)).map((Key) => ({ Key }));
  await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: objects, Quiet: true } }));
}

export async function firstViewStudy(
  corpus: Corpus,
  options: { s3: S3Client; cacheBucket: string; handler: OriginHandler; iterations: number; log: (line: string) => void; header: string },
): Promise<string> {
  const { s3, cacheBucket, handler } = options;
  const photos = corpus.photos.filter((photo) => photo.width > WIDTH);
  const rows: string[][] = [];
  const all = { webp: [] as number[], before: [] as number[], first: [] as number[], invocation: [] as number[] };
  let deferred = 0;
  let avifNext = 0;
  let views = 0;
  for (const photo of photos) {
    const uri = (ops: Ops) => '/' + variantKey(photo.key, ops);
    const webpOps: Ops = { width: WIDTH, accept: 'webp' };
    const beforeOps: Ops = { width: WIDTH, format: 'avif' };
    const firstOps: Ops = { width: WIDTH, accept: 'avif' };
    const own = { webp: [] as number[], before: [] as number[], first: [] as number[], invocation: [] as number[] };
    // Untimed: warms the transform process on this photo's decoder.
    await invoke(handler, uri(webpOps));
    for (let i = 0; i < options.iterations; i++) {
      await forget(s3, cacheBucket, [variantKey(photo.key, webpOps), variantKey(photo.key, beforeOps), variantKey(photo.key, firstOps)]);
      own.webp.push((await invoke(handler, uri(webpOps))).answerMs);
      own.before.push((await invoke(handler, uri(beforeOps))).answerMs);
      const first = await invoke(handler, uri(firstOps));
      own.first.push(first.answerMs);
      own.invocation.push(first.invocationMs);
      views++;
      if (first.contentType === 'image/webp') deferred++;
      const stored = await s3.send(new HeadObjectCommand({ Bucket: cacheBucket, Key: variantKey(photo.key, firstOps) }));
      if (stored.ContentType === 'image/avif') avifNext++;
    }
    options.log(`first view: ${photo.key} ${ms(median(own.first))} (WebP miss ${ms(median(own.webp))})`);
    rows.push([
      photo.key,
      ms(median(own.webp)),
      ms(median(own.before)),
      ms(median(own.first)),
      ratio(pairedRatio(own.first, own.webp)),
      ms(median(own.invocation)),
    ]);
    for (const key of Object.keys(all) as (keyof typeof all)[]) all[key].push(...own[key]);
  }
  const firstOverWebp = all.first.map((value, i) => value / all.webp[i]!);
  return [
    `# First view of a negotiated AVIF (${WIDTH} px)`,
    '',
    options.header,
    '',
    markdownTable(
      ['photo', 'WebP miss', 'AVIF, answered as AVIF', 'first view (Chromium Accept)', 'first view / WebP miss', 'invocation, AVIF stored'],
      rows,
      ['l', 'r', 'r', 'r', 'r', 'r'],
    ),
    '',
    `- First view over WebP miss, p95 over ${views} views: ${ratio(p95(firstOverWebp))} (median ${ratio(median(firstOverWebp))}).`,
    `- First views answered WebP while the AVIF followed: ${deferred} of ${views}.`,
    `- Next request finds AVIF in the cache bucket: ${avifNext} of ${views}.`,
    `- Whole invocation of a first view, median: ${ms(median(all.invocation))} (the AVIF before, answered: ${ms(median(all.before))}).`,
    '',
  ].join('\n');
}
