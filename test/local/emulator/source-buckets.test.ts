// `npm start -- --bucket archive/=<dir>`: a folder served as a second source
// bucket under a key prefix, end to end over HTTP on this run's LocalStack, as
// a deployment's sourceBuckets: the edge, the origin reading that bucket, the
// playground's source list and uploads, and the watcher handing the bucket's
// changes to the invalidation handler as EventBridge events.

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../../local/harness/command-line';
import { prefixedValues, startEmulator, type RunningEmulator } from '../../../local/emulator/start';
import { isNear, pixelAt, type Rgb } from '../../support/images';
import { createTestBuckets, deleteBucket, listKeys, putObject, testS3Client, type TestBuckets } from '../../support/s3';

const RED: Rgb = { r: 255, g: 0, b: 0 };
const GREEN: Rgb = { r: 0, g: 255, b: 0 };
const BLUE: Rgb = { r: 0, g: 0, b: 255 };

const png = (colour: Rgb) =>
  sharp({ create: { width: 40, height: 40, channels: 3, background: colour } })
    .png()
    .toBuffer();

const s3 = testS3Client();
const folders: string[] = [];
let pair: TestBuckets;
let emulator: RunningEmulator;

async function folderOf(files: Record<string, Buffer>): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'emulator-buckets-'));
  folders.push(folder);
  for (const [path, body] of Object.entries(files)) {
    await mkdir(dirname(join(folder, path)), { recursive: true });
    await writeFile(join(folder, path), body);
  }
  return folder;
}

/** The colour in the middle of what `path` answers, which must be a 200 image. */
async function colourAt(path: string): Promise<Rgb> {
  const response = await fetch(emulator.url + path);
  const body = Buffer.from(await response.arrayBuffer());
  expect(response.status, `${path}: ${body.toString('utf8', 0, 200)}`).toBe(200);
  return pixelAt(body, 10, 10);
}

async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  pair = await createTestBuckets('emulator buckets');
  emulator = await startEmulator({
    s3,
    port: 0,
    images: await folderOf({ 'photos/a.png': await png(GREEN), 'archive/2020/a.png': await png(GREEN) }),
    prefixFolders: { 'archive/': await folderOf({ '2020/a.png': await png(RED) }) },
    edgeCache: true,
    buckets: { source: pair.sourceBucket, cache: pair.cacheBucket },
    watchIntervalMs: 200,
    log: () => {},
  });
});

afterAll(async () => {
  await emulator?.close();
  await Promise.all([pair?.cleanup(), ...Object.values(emulator?.sourceBuckets ?? {}).map((bucket) => deleteBucket(s3, bucket))]);
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
}, 60_000);

describe('--bucket archive/=<dir>', () => {
  it("serves archive/... from the folder's own bucket, keyed without the prefix; every other key from the default bucket", async () => {
    const archive = emulator.sourceBuckets['archive/']!;
    expect(await listKeys(s3, archive)).toEqual(['2020/a.png']);
    expect(isNear(await colourAt('/archive/2020/a.png?w=20'), RED)).toBe(true);
    expect(isNear(await colourAt('/photos/a.png?w=20'), GREEN)).toBe(true);
    expect((await listKeys(s3, emulator.cacheBucket)).some((key) => key.startsWith('archive/2020/a.png/'))).toBe(true);
  });

  it("lists in the playground the sources a URL reaches, by URL key (not the default bucket's hidden one)", async () => {
    const listed = (await (await fetch(emulator.url + '/_api/sources')).json()) as { key: string }[];
    expect(listed.map((source) => source.key).sort()).toEqual(['archive/2020/a.png', 'photos/a.png']);
    expect([...emulator.sources].sort()).toEqual(['archive/2020/a.png', 'photos/a.png']);
  });

  it('a replacement written straight to that bucket is seen by the watcher, and the edge serves the new image', async () => {
    expect(isNear(await colourAt('/archive/2020/a.png?w=30'), RED)).toBe(true);
    await putObject(s3, emulator.sourceBuckets['archive/']!, '2020/a.png', await png(BLUE), 'image/png');
    await eventually('the new image', async () => isNear(await colourAt('/archive/2020/a.png?w=30'), BLUE));
  });

  it('a playground upload under the prefix goes to that bucket, keyed without it', async () => {
    const upload = await fetch(emulator.url + '/_api/sources/archive/new.png', {
      method: 'PUT',
      headers: { 'content-type': 'image/png' },
      body: await png(BLUE),
    });
    expect(upload.status).toBe(201);
    expect(await listKeys(s3, emulator.sourceBuckets['archive/']!)).toContain('new.png');
    expect(isNear(await colourAt('/archive/new.png?w=20'), BLUE)).toBe(true);
  });
});

describe('the --bucket option', () => {
  it('reads <prefix>=<folder>, repeated', () => {
    expect(prefixedValues('--bucket', 'archive/=./photos', ['archive/=./photos', 'press/kit/=/tmp/a=b'])).toEqual({
      'archive/': './photos',
      'press/kit/': '/tmp/a=b',
    });
  });

  it.each([['archive/'], ['=./photos'], ['archive/=']])('refuses %j as a usage error', (value) => {
    expect(() => prefixedValues('--bucket', 'archive/=./photos', [value])).toThrow(UsageError);
    expect(() => prefixedValues('--bucket', 'archive/=./photos', [value])).toThrow(
      `--bucket must be <prefix>=<value>, e.g. archive/=./photos, not "${value}"`,
    );
  });

  it('refuses a prefix the construct would refuse, in its words, before creating anything', async () => {
    const start = startEmulator({
      s3,
      port: 0,
      images: folders[0],
      prefixFolders: { archive: folders[1]! },
      edgeCache: false,
      log: () => {},
    });
    await expect(start).rejects.toThrow(UsageError);
    await expect(start).rejects.toThrow(
      'a --bucket prefix must be a key prefix ending with "/" such as "archive/" (it does not end with "/"), not "archive".',
    );
  });
});
