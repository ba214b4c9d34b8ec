// `npm start -- --web shop/=<url>` end to end, over HTTP: a key prefix served
// from a site on loopback through the emulator's edge function, edge cache
// and origin handler, never from the cache bucket origin (as the prefix's own
// cache behavior is deployed).

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../../local/emulator/start';
import { gradientJpeg } from '../../support/images';
import { createTestBuckets } from '../../support/s3';
import { startTestSite, type TestSite } from '../../support/web-site';

let site: TestSite;
const running: RunningEmulator[] = [];

async function emulator(edgeCache: boolean): Promise<RunningEmulator> {
  const folder = await mkdtemp(join(tmpdir(), 'web-origin-'));
  await writeFile(join(folder, 'local.jpg'), await gradientJpeg(120, 80));
  const buckets = await createTestBuckets(`web-emulator-${edgeCache}`);
  afterAll(() => buckets.cleanup());
  const started = await startEmulator({
    s3: buckets.s3,
    port: 0,
    images: folder,
    edgeCache,
    buckets: { source: buckets.sourceBucket, cache: buckets.cacheBucket },
    webOrigins: { 'shop/': { url: site.base, revalidateSeconds: 60 } },
    log: () => {},
  });
  running.push(started);
  return started;
}

beforeAll(async () => {
  site = await startTestSite();
  site.put('photos/dog.jpg', await gradientJpeg(400, 300));
});
afterAll(() => Promise.all(running.map((started) => started.close())));

async function get(base: string, path: string) {
  const response = await fetch(base + path, { headers: { accept: '*/*' } });
  return { status: response.status, headers: response.headers, body: Buffer.from(await response.arrayBuffer()) };
}

describe('a web origin in the emulator', () => {
  it('with the generated samples and no --web, serves them from a site of its own under web/, listed by the playground', async () => {
    const buckets = await createTestBuckets('web-demo');
    afterAll(() => buckets.cleanup());
    const started = await startEmulator({
      s3: buckets.s3,
      port: 0,
      edgeCache: false,
      buckets: { source: buckets.sourceBucket, cache: buckets.cacheBucket },
      log: () => {},
    });
    running.push(started);
    const listed = (await (await fetch(started.url + '/_api/sources')).json()) as { key: string }[];
    const sample = started.sources.find((key) => key.endsWith('.jpg'))!;
    expect(listed.map((source) => source.key)).toContain('web/' + sample);
    const response = await get(started.url, `/web/${sample}?w=64`);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-origin')).toBe('lambda');
    expect((await sharp(response.body).metadata()).width).toBe(64);
    // The bucket's copy is not involved: the cache bucket origin never answered.
    expect((await get(started.url, `/web/${sample}?w=64`)).headers.get('x-origin')).toBe('lambda');
  });

  it("serves the site's image through the edge, then from the edge cache", async () => {
    const { url } = await emulator(true);
    const first = await get(url, '/shop/photos/dog.jpg?w=100');
    expect(first.status).toBe(200);
    expect((await sharp(first.body).metadata()).width).toBe(100);
    expect(first.headers.get('x-origin')).toBe('lambda');
    const second = await get(url, '/shop/photos/dog.jpg?w=100');
    expect(second.headers.get('x-cache')).toBe('Hit from cloudfront');
    // Keys outside the prefix still come from the bucket.
    expect((await get(url, '/local.jpg?w=60')).status).toBe(200);
  });

  it('without an edge cache, goes to the origin each time, which answers from what it stored', async () => {
    const { url, settled } = await emulator(false);
    const fetched = site.requests.length;
    expect((await get(url, '/shop/photos/dog.jpg?w=110')).status).toBe(200);
    await settled();
    const again = await get(url, '/shop/photos/dog.jpg?w=110');
    expect(again.status).toBe(200);
    expect(again.headers.get('x-origin')).toBe('lambda');
    expect((await sharp(again.body).metadata()).width).toBe(110);
    expect(site.requests.length).toBe(fetched + 1);
  });

  it("refuses a playground upload under the site's prefix, which no bucket serves, and stores nothing", async () => {
    const { url } = await emulator(false);
    const upload = await fetch(url + '/_api/sources/shop/new.jpg', {
      method: 'PUT',
      headers: { 'content-type': 'image/jpeg' },
      body: new Uint8Array(await gradientJpeg(40, 30)),
    });
    expect(upload.status).toBe(409);
    expect(await upload.json()).toEqual({ error: 'not_a_bucket_key', message: 'shop/new.jpg is served from a web site, not a bucket.' });
    const listed = (await (await fetch(url + '/_api/sources')).json()) as { key: string }[];
    expect(listed.map((source) => source.key)).toEqual(['local.jpg']);
  });
});
