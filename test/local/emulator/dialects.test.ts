// `npm start -- --dialect dit` serves DIT's URLs as a deployment with
// dialects=dit would: each documented example (test/support/dialect-cases.ts)
// is the same variant as the native URL for the same image, so it is served
// with the same ETag, from the same stored object; a refusal is the 400 the
// generated function answers. The buckets the examples name are this
// emulator's (a deployment's own names stand in for DIT's `my-images`).

import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, writeSampleWatermark, type RunningEmulator } from '../../../local/emulator/start';
import { DIT_CASES, type DialectCase } from '../../support/dialect-cases';
import { createTestBuckets, type TestBuckets } from '../../support/s3';

let buckets: TestBuckets;
let emulator: RunningEmulator;

/** A folder holding `files` (key to bytes), as `--images` and `--bucket` take one. */
async function folder(files: Record<string, Buffer>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'dialect-images-'));
  for (const [key, bytes] of Object.entries(files)) {
    await mkdir(dirname(join(root, key)), { recursive: true });
    await writeFile(join(root, key), bytes);
  }
  return root;
}

beforeAll(async () => {
  const photo = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#3a7' } })
    .composite([{ input: Buffer.from('<svg width="200" height="200"><circle cx="100" cy="100" r="90" fill="#e52"/></svg>') }])
    .jpeg()
    .toBuffer();
  buckets = await createTestBuckets('dialect-dit');
  // As `npm start -- --dialect dit --bucket archive/=<dir>` with a watermark named logo.
  emulator = await startEmulator({
    context: { dialects: 'dit' },
    images: await folder({ 'photos/cat.jpg': photo }),
    prefixFolders: { 'archive/': await folder({ 'old/dog.jpg': photo }) },
    watermarks: { logo: { file: await writeSampleWatermark() } },
    s3: buckets.s3,
    buckets: { source: buckets.sourceBucket, cache: buckets.cacheBucket },
    port: 0,
    edgeCache: false,
    log: () => {},
  });
}, 120_000);

afterAll(async () => {
  await emulator?.close();
  await buckets?.cleanup();
});

/** The case's URL with DIT's example bucket names replaced by this emulator's. */
function localPath(test: DialectCase): string {
  const names = (text: string) =>
    text.replace(/my-images/g, emulator.sourceBucket).replace(/my-archive/g, emulator.sourceBuckets['archive/'] as string);
  if (test.grammar !== 'dit-json') return names(test.path);
  const json = Buffer.from(test.path.slice(1), 'base64').toString('utf8');
  return '/' + Buffer.from(names(json)).toString('base64');
}

const get = (path: string, query = '') => fetch(`${emulator.url}${path}${query ? '?' + query : ''}`);

describe('npm start -- --dialect dit', () => {
  for (const test of DIT_CASES.filter((example) => example.native)) {
    it(`serves ${test.path.slice(0, 60)} (${test.source}) as the native URL's variant, same ETag`, async () => {
      const dialect = await get(localPath(test), test.query);
      expect(dialect.status, await dialect.clone().text()).toBe(200);
      await emulator.settled();
      const native = await get(test.native!.path, test.native!.query);
      expect(native.status).toBe(200);
      expect(native.headers.get('etag')).toBe(dialect.headers.get('etag'));
      // The native URL found the variant the dialect's request stored.
      expect(native.headers.get('x-origin')).toBe('cache-bucket');
    });
  }

  it('answers a refusal with the 400 the generated function words', async () => {
    const refused = DIT_CASES.find((example) => example.refused && example.grammar === 'dit-json')!;
    const answer = await get(localPath(refused));
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { message: string }).message).toMatch(refused.refused!.message);
  });
});
