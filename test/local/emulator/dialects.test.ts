// `npm start -- --dialect <name>` serves a dialect's URLs as a deployment with
// that dialects setting would: each documented example (DIT's in
// test/support/dialect-cases.ts, imgix's and Cloudflare's in
// test/edge/dialects/examples.ts) is the same variant as the native URL for the
// same image, so it is served with the same ETag, from the same stored object;
// a refusal is the 400 the generated function answers. The buckets the DIT
// examples name are this emulator's (a deployment's own names stand in for
// DIT's `my-images`). dit and cloudflare run side by side (Cloudflare's URLs
// have a behavior of their own); imgix reads every path, as Thumbor does, so
// it runs alone.

import { createHash, createHmac } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, writeSampleWatermark, type RunningEmulator } from '../../../local/emulator/start';
import { DIT_CASES, type DialectCase } from '../../support/dialect-cases';
import { CLOUDFLARE_EXAMPLES, IMGIX_EXAMPLES, type DialectExample } from '../../edge/dialects/examples';
import { noiseImage } from '../../support/images';
import { createTestBuckets, type TestBuckets } from '../../support/s3';

/** A folder holding `files` (key to bytes), as `--images` and `--bucket` take one. */
async function folder(files: Record<string, Buffer>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'dialect-images-'));
  for (const [key, bytes] of Object.entries(files)) {
    await mkdir(dirname(join(root, key)), { recursive: true });
    await writeFile(join(root, key), bytes);
  }
  return root;
}

/** One request of a table: the dialect's URL and the native URL of the same image (absent: refused with `refused`). */
interface Served {
  name: string;
  path: string;
  query?: string;
  native?: { path: string; query?: string };
  refused?: RegExp;
}

/** The case's URL with DIT's example bucket names replaced by the emulator's. */
function localPath(test: DialectCase, emulator: RunningEmulator): string {
  const names = (text: string) =>
    text.replace(/my-images/g, emulator.sourceBucket).replace(/my-archive/g, emulator.sourceBuckets['archive/'] as string);
  if (test.grammar !== 'dit-json') return names(test.path);
  const json = Buffer.from(test.path.slice(1), 'base64').toString('utf8');
  return '/' + Buffer.from(names(json)).toString('base64');
}

const ditServed = (emulator: RunningEmulator): Served[] =>
  DIT_CASES.map((test) => ({
    name: `${test.path.slice(0, 60)} (${test.source})`,
    path: localPath(test, emulator),
    query: test.query,
    native: test.native,
    refused: test.refused?.message,
  }));

const [pathOf, queryOf] = [(url: string) => url.split('?')[0]!, (url: string) => url.split('?').slice(1).join('?')];

const exampleServed = (examples: DialectExample[]): Served[] =>
  examples.map((example) => ({
    name: `${example.url} (${example.source})`,
    path: pathOf(example.url),
    query: queryOf(example.url),
    native: example.native ? { path: pathOf(example.native), query: queryOf(example.native) } : undefined,
    refused: example.refused,
  }));

/** The source keys the examples' native URLs read (DIT's are in the emulator's folders below). */
const exampleKeys = (examples: DialectExample[]): string[] => [
  ...new Set(examples.filter((example) => example.native).map((example) => decodeURIComponent(pathOf(example.native!).slice(1)))),
];

/** Each deployment: its dialects setting and the requests it serves. */
const DEPLOYMENTS: { dialects: string; served: (emulator: RunningEmulator) => Served[]; keys: string[] }[] = [
  {
    dialects: 'dit,cloudflare',
    served: (emulator) => ditServed(emulator).concat(exampleServed(CLOUDFLARE_EXAMPLES)),
    keys: exampleKeys(CLOUDFLARE_EXAMPLES),
  },
  { dialects: 'imgix', served: () => exampleServed(IMGIX_EXAMPLES), keys: exampleKeys(IMGIX_EXAMPLES) },
];

const photo = async (png: boolean) => {
  const image = sharp({ create: { width: 640, height: 480, channels: 3, background: '#3a7' } }).composite([
    { input: Buffer.from('<svg width="200" height="200"><circle cx="100" cy="100" r="90" fill="#e52"/></svg>') },
  ]);
  return png ? image.png().toBuffer() : image.jpeg().toBuffer();
};

describe.each(DEPLOYMENTS)('npm start -- --dialect for dialects=$dialects', ({ dialects, served, keys }) => {
  let buckets: TestBuckets;
  let nativeBuckets: TestBuckets;
  let emulator: RunningEmulator;
  let native: RunningEmulator;

  beforeAll(async () => {
    const [jpeg, png] = [await photo(false), await photo(true)];
    const files: Record<string, Buffer> = { 'photos/cat.jpg': jpeg };
    for (const key of keys) files[key] = /\.png$/.test(key) ? png : jpeg;
    buckets = await createTestBuckets('dialect-' + dialects.replace(/,/g, '-'));
    nativeBuckets = await createTestBuckets('dialect-native-' + dialects.replace(/,/g, '-'));
    // As `npm start -- --dialect <name> --bucket archive/=<dir>` with a watermark named logo; and the same
    // files served natively, since a dialect that owns every path (imgix) reads native URLs as its own.
    // One cache bucket; a source bucket each, so that neither start rewrites sources the other watches
    // (its watcher would purge their variants, as a deployment's does when a source changes).
    const start = async (context: Record<string, string>, sourceBucket: string) =>
      startEmulator({
        context,
        images: await folder(files),
        prefixFolders: { 'archive/': await folder({ 'old/dog.jpg': jpeg }) },
        watermarks: { logo: { file: await writeSampleWatermark() } },
        s3: buckets.s3,
        buckets: { source: sourceBucket, cache: buckets.cacheBucket },
        port: 0,
        edgeCache: false,
        log: () => {},
      });
    emulator = await start({ dialects }, buckets.sourceBucket);
    native = await start({}, nativeBuckets.sourceBucket);
  }, 180_000);

  afterAll(async () => {
    await emulator?.close();
    await native?.close();
    await buckets?.cleanup();
    await nativeBuckets?.cleanup();
  });

  const get = (path: string, query = '', on = emulator) => fetch(`${on.url}${path}${query ? '?' + query : ''}`);

  it('serves each documented example as the native URL for the same image, same ETag from the same stored object', async () => {
    for (const test of served(emulator).filter((request) => request.native)) {
      const dialect = await get(test.path, test.query);
      expect(dialect.status, `${test.name}: ${await dialect.clone().text()}`).toBe(200);
      await emulator.settled();
      const same = await get(test.native!.path, test.native!.query, native);
      expect(same.status, test.name).toBe(200);
      expect(same.headers.get('etag'), test.name).toBe(dialect.headers.get('etag'));
      // The native URL found the variant the dialect's request stored.
      expect(same.headers.get('x-origin'), test.name).toBe('cache-bucket');
    }
  }, 300_000);

  it('answers each documented refusal with the 400 the generated function words', async () => {
    for (const test of served(emulator).filter((request) => request.refused)) {
      const answer = await get(test.path, test.query);
      expect(answer.status, test.name).toBe(400);
      expect(((await answer.json()) as { message: string }).message, test.name).toMatch(test.refused!);
    }
  });
});

/**
 * A variant larger than the origin answers inline is stored and the viewer sent
 * back to the URL it asked, as it asked it: the dialect's function reads it and
 * checks its signature again, and the cache bucket serves it. On deployments
 * that sign, so that a signed dialect URL keeps working for large variants.
 */
describe.each([
  {
    dialects: 'imgix',
    url: (secret: string) => {
      const path = '/large/noise.png?fm=png';
      return (
        path +
        '&s=' +
        createHash('md5')
          .update(secret + path)
          .digest('hex')
      );
    },
  },
  {
    dialects: 'dit',
    url: (secret: string, emulator: RunningEmulator) => {
      const path =
        '/' +
        Buffer.from(JSON.stringify({ bucket: emulator.sourceBucket, key: 'large/noise.png', edits: { toFormat: 'png' } })).toString(
          'base64',
        );
      return path + '?signature=' + createHmac('sha256', secret).update(path).digest('hex');
    },
  },
])('a variant too large to answer inline, on a signing $dialects deployment', ({ dialects, url }) => {
  const SECRET = 'large-variant-secret';
  let buckets: TestBuckets;
  let emulator: RunningEmulator;

  beforeAll(async () => {
    buckets = await createTestBuckets('dialect-large-' + dialects);
    emulator = await startEmulator({
      context: { dialects },
      images: await folder({ 'large/noise.png': await noiseImage(2500, 2500, 'png') }),
      signingSecret: SECRET,
      s3: buckets.s3,
      buckets: { source: buckets.sourceBucket, cache: buckets.cacheBucket },
      port: 0,
      edgeCache: false,
      log: () => {},
    });
  }, 180_000);

  afterAll(async () => {
    await emulator?.close();
    await buckets?.cleanup();
  });

  it('redirects to the dialect URL as sent, which then serves the stored variant in full', async () => {
    const asked = url(SECRET, emulator);
    const redirect = await fetch(emulator.url + asked, { redirect: 'manual' });
    expect(redirect.status, await redirect.clone().text()).toBe(302);
    expect(redirect.headers.get('location')).toBe(asked);
    await emulator.settled();

    const followed = await fetch(emulator.url + redirect.headers.get('location'));
    expect(followed.status).toBe(200);
    expect(followed.headers.get('x-origin')).toBe('cache-bucket');
    const body = Buffer.from(await followed.arrayBuffer());
    expect(body.length).toBeGreaterThan(4_500_000);
    expect(await sharp(body).metadata()).toMatchObject({ format: 'png', width: 2500, height: 2500 });
    // Unsigned, the same URL is still refused.
    expect((await fetch(emulator.url + asked.replace(/[?&](s|signature)=.*$/, ''))).status).toBe(403);
  }, 120_000);
});
