// The emulator walks a request down CloudFront's path, over HTTP: the cache
// behavior chosen from the path as the viewer spelled it, the viewer-request
// function, the edge cache, the behavior's origins, and the viewer-response
// function on the way back. What a user sees of each: a web image reached by
// any spelling of its prefix is served only as its own behavior serves it
// (revalidated, gone once the site deleted it), and a browser is told what the
// deployed distribution tells it (its lifetime, Vary on the hints it sent,
// never past a URL's expiry).

import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { browserCacheControl, DEFAULT_BROWSER_MAX_AGE_SECONDS, FORMAT_VARY, WIDTH_HINTS_VARY } from '../../../lib/viewer-response-function';
import { localS3Client } from '../../../local/harness/s3-client';
import { startEmulator, type EmulatorStartOptions, type RunningEmulator } from '../../../local/emulator/start';
import { gradientJpeg } from '../../support/images';
import { createTestBuckets } from '../../support/s3';
import { startTestSite, type TestSite } from '../../support/web-site';

const WEB_PREFIX = 'shop/photos/';
const REVALIDATE_SECONDS = 1;
const BROWSER_CACHE_CONTROL = browserCacheControl(DEFAULT_BROWSER_MAX_AGE_SECONDS);

let site: TestSite;
const running: RunningEmulator[] = [];

/** An emulator on fresh buckets, its default bucket holding `files` (key to bytes), the site under WEB_PREFIX. */
async function emulator(
  label: string,
  files: Record<string, Buffer>,
  options: Partial<EmulatorStartOptions> = {},
): Promise<RunningEmulator> {
  const folder = await mkdtemp(join(tmpdir(), 'edge-path-'));
  for (const [key, bytes] of Object.entries(files)) {
    await mkdir(join(folder, key, '..'), { recursive: true });
    await writeFile(join(folder, key), bytes);
  }
  const buckets = await createTestBuckets(label);
  afterAll(() => buckets.cleanup());
  const started = await startEmulator({
    s3: buckets.s3,
    port: 0,
    images: folder,
    edgeCache: false,
    buckets: { source: buckets.sourceBucket, cache: buckets.cacheBucket },
    webOrigins: { [WEB_PREFIX]: { url: site.base, revalidateSeconds: REVALIDATE_SECONDS } },
    log: () => {},
    ...options,
  });
  running.push(started);
  return started;
}

async function get(base: string, path: string, headers: Record<string, string> = {}) {
  const response = await fetch(base + path, { headers: { accept: '*/*', ...headers } });
  return { status: response.status, headers: response.headers, body: Buffer.from(await response.arrayBuffer()) };
}

const sizeOf = async (body: Buffer) => {
  const { width, height } = await sharp(body).metadata();
  return { width, height };
};

const percent = (character: string) => '%' + character.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0');

/**
 * Every way to spell `/<prefix><rest>` that names the same key but not the prefix's path pattern: each
 * of the prefix's characters percent-encoded in turn (its slashes as %2F and %2f), and all its slashes at once.
 */
function otherSpellings(prefix: string, rest: string): string[] {
  const spellings = [...prefix].map((character, at) => '/' + prefix.slice(0, at) + percent(character) + prefix.slice(at + 1) + rest);
  const slashes = [...prefix].flatMap((character, at) => (character === '/' ? [at] : []));
  spellings.push(...slashes.map((at) => '/' + prefix.slice(0, at) + '%2f' + prefix.slice(at + 1) + rest));
  spellings.push('/' + prefix.replace(/\//g, '%2F') + rest);
  return spellings;
}

beforeAll(async () => {
  site = await startTestSite();
});
afterAll(() => Promise.all(running.map((started) => started.close())));

describe('a web image spelled another way', () => {
  it('spells a slash as %2F at every slash of the prefix, and every other character encoded too', () => {
    const spellings = otherSpellings(WEB_PREFIX, 'dog.jpg');
    expect(spellings).toContain('/shop%2Fphotos/dog.jpg');
    expect(spellings).toContain('/shop/photos%2Fdog.jpg');
    expect(spellings).toContain('/shop%2fphotos/dog.jpg');
    expect(spellings).toContain('/shop%2Fphotos%2Fdog.jpg');
    expect(spellings).toContain('/%73hop/photos/dog.jpg');
    expect(spellings).toHaveLength(WEB_PREFIX.length + 3);
  });

  it('goes to the default behavior, whose cache bucket has nothing for it: the Lambda serves it as the web prefix does', async () => {
    site.put('dog.jpg', await gradientJpeg(400, 300));
    // The default bucket has an image under the same key, which the web origin's prefix shadows.
    const edge = await emulator('edge-path-web', {
      'shop/photos/dog.jpg': await gradientJpeg(200, 200),
      'other.jpg': await gradientJpeg(90, 60),
    });
    const first = await get(edge.url, '/shop/photos/dog.jpg?w=100');
    expect(first.status).toBe(200);
    expect(first.headers.get('x-origin')).toBe('lambda');
    await edge.settled(); // the web variant is in the cache bucket
    for (const spelling of otherSpellings(WEB_PREFIX, 'dog.jpg')) {
      const answer = await get(edge.url, spelling + '?w=100');
      expect(answer.status, spelling).toBe(200);
      // Not the cache bucket, which would have served the stored copy as it is, never asking the site again.
      expect(answer.headers.get('x-origin'), spelling).toBe('lambda');
      expect(answer.headers.get('cache-control'), spelling).toMatch(/^public, max-age=[01]$/);
      // The site's image, never the default bucket's of the same key.
      expect(await sizeOf(answer.body), spelling).toEqual({ width: 100, height: 75 });
    }
    // A bucket source still comes from the cache bucket once made.
    await get(edge.url, '/other.jpg?w=45');
    await edge.settled();
    expect((await get(edge.url, '/other.jpg?w=45')).headers.get('x-origin')).toBe('cache-bucket');
  });

  it('is gone by every spelling once the site deleted it and the stored copy was due to be asked again', async () => {
    site.put('deleted.jpg', await gradientJpeg(400, 300));
    const edge = await emulator('edge-path-deleted', { 'other.jpg': await gradientJpeg(90, 60) });
    expect((await get(edge.url, '/shop/photos/deleted.jpg?w=120')).status).toBe(200);
    await edge.settled();
    site.remove('deleted.jpg');
    await new Promise((resolve) => setTimeout(resolve, REVALIDATE_SECONDS * 1000 + 100));
    for (const spelling of ['/shop/photos/deleted.jpg', ...otherSpellings(WEB_PREFIX, 'deleted.jpg')]) {
      const answer = await get(edge.url, spelling + '?w=120');
      expect(answer.status, spelling).toBe(404);
      expect(JSON.parse(answer.body.toString()), spelling).toMatchObject({ error: 'not_found' });
    }
  });
});

describe('what a browser is told, by the viewer-response function', () => {
  let edge: RunningEmulator;
  beforeAll(async () => {
    site.put('cached.jpg', await gradientJpeg(400, 300));
    edge = await emulator('edge-path-browser', { 'photo.jpg': await gradientJpeg(800, 600) }, { edgeCache: true });
  });

  it('a w=auto answer varies on the client hints and lives an hour in the browser, from the origin and from the edge cache', async () => {
    const hints = { 'sec-ch-width': '300', 'sec-ch-dpr': '1' };
    const miss = await get(edge.url, '/photo.jpg?w=auto', hints);
    const hit = await get(edge.url, '/photo.jpg?w=auto', hints);
    expect([miss.headers.get('x-cache'), hit.headers.get('x-cache')]).toEqual(['Miss from cloudfront', 'Hit from cloudfront']);
    for (const answer of [miss, hit]) {
      expect(answer.status).toBe(200);
      expect(answer.headers.get('vary')).toBe(`${FORMAT_VARY}, ${WIDTH_HINTS_VARY}`);
      expect(answer.headers.get('cache-control')).toBe(BROWSER_CACHE_CONTROL);
      // CloudFront's Age on the hit is dropped: the browser's hour starts when it gets the image.
      expect(answer.headers.get('age')).toBeNull();
      expect((await sizeOf(answer.body)).width).toBe(320);
    }
    // An explicit width is one URL for every screen: no Vary on hints.
    const explicit = await get(edge.url, '/photo.jpg?w=320', hints);
    expect(explicit.headers.get('vary')).toBe(FORMAT_VARY);
    expect(explicit.headers.get('cache-control')).toBe(BROWSER_CACHE_CONTROL);
  });

  it("leaves what is not a variant's answer as the origin gave it: a web image's own lifetime with CloudFront's Age, an error", async () => {
    await get(edge.url, '/shop/photos/cached.jpg?w=64');
    const hit = await get(edge.url, '/shop/photos/cached.jpg?w=64');
    expect(hit.headers.get('x-cache')).toBe('Hit from cloudfront');
    expect(hit.headers.get('cache-control')).toMatch(/^public, max-age=[01]$/);
    expect(hit.headers.get('age')).toMatch(/^\d+$/);
    const missing = await get(edge.url, '/nothing.jpg?w=64&dpr=auto');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('vary')).toBe(FORMAT_VARY);
    expect(missing.headers.get('cache-control')).not.toBe(BROWSER_CACHE_CONTROL);
  });
});

describe('a signed URL that expires', () => {
  it('is kept by the browser no longer than it lives, and an unexpiring one for the browser lifetime', async () => {
    const edge = await emulator(
      'edge-path-expiry',
      { 'photo.jpg': await gradientJpeg(800, 600) },
      { signingSecret: 'edge-path-secret-0123456789' },
    );
    const sign = async (expires?: number) => {
      const query = new URLSearchParams({ path: '/photo.jpg', query: 'w=200', ...(expires ? { expires: String(expires) } : {}) });
      return ((await (await fetch(`${edge.url}/_api/sign?${query}`)).json()) as { url: string }).url;
    };
    const expiring = await get(edge.url, await sign(120));
    expect(expiring.status).toBe(200);
    const maxAge = Number(/^public, max-age=(\d+)$/.exec(expiring.headers.get('cache-control') ?? '')?.[1]);
    // The seconds it has left, give or take the few the request took.
    expect(maxAge).toBeGreaterThan(100);
    expect(maxAge).toBeLessThanOrEqual(120);
    const lasting = await get(edge.url, await sign());
    expect(lasting.status).toBe(200);
    expect(lasting.headers.get('cache-control')).toBe(BROWSER_CACHE_CONTROL);
  });
});

describe('an edge miss in flight', () => {
  it('is waited for by settled(), so no answer read before a purge enters the edge cache after it', async () => {
    // A client of its own, which says when the edge starts reading the variant from the cache bucket.
    const s3 = localS3Client(inject('s3Endpoint'));
    let reading: () => void = () => {};
    const readStarted = new Promise<void>((resolve) => (reading = resolve));
    s3.middlewareStack.add(
      (next, context) => (args) => {
        const input = args.input as { Key?: string };
        if (context.commandName === 'GetObjectCommand' && input.Key?.startsWith('settle.jpg/')) reading();
        return next(args);
      },
      { step: 'initialize' },
    );
    const edge = await emulator('edge-path-settle', { 'settle.jpg': await gradientJpeg(400, 300) }, { s3, edgeCache: true });
    const first = get(edge.url, '/settle.jpg?w=100');
    await readStarted;
    await edge.settled();
    // The first miss is over and its answer kept: the next viewer is served by the edge.
    expect((await get(edge.url, '/settle.jpg?w=100')).headers.get('x-cache')).toBe('Hit from cloudfront');
    expect((await first).headers.get('x-cache')).toBe('Miss from cloudfront');
  });
});
