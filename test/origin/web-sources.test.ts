// Web origins through the real handler on LocalStack: a key prefix served
// from a site on loopback (allowed only because the test says so in code),
// its variants kept in the cache bucket (under `/`, where no viewer's URI
// reaches them), served while current, asked again
// conditionally after the revalidation time, replaced when the image changed,
// and served stale for a minute while the site is down.

import { GetObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeKeyPath, parseCanonicalUri } from '../../lambda/grammar';
import type { OriginConfig } from '../../lambda/origin/config';
import { gradientJpeg } from '../support/images';
import { createTestOrigin, type TestOrigin } from '../support/origin';
import { startTestSite, type TestSite } from '../support/web-site';

let site: TestSite;
let origin: TestOrigin;
/** A deployment's origin: the same site, loopback not allowed. */
let deployed: TestOrigin;

const REVALIDATE_SECONDS = 1;
const after = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000 + 100));

/**
 * An origin reading `shop/` from the test site (on loopback, allowed here), revalidating every `revalidateSeconds`.
 * Tests whose timing must not depend on the machine's load have one of their own, with a longer time.
 */
const originRevalidatingEvery = (name: string, revalidateSeconds: number, settings: Partial<OriginConfig> = {}) =>
  createTestOrigin(
    name,
    { webOrigins: { 'shop/': { url: site.base, revalidateSeconds } }, ...settings },
    { allowLoopbackWebOrigins: true },
  );

beforeAll(async () => {
  site = await startTestSite();
  origin = await originRevalidatingEvery('web', REVALIDATE_SECONDS);
  deployed = await createTestOrigin('web-deployed', { webOrigins: { 'shop/': { url: site.base, revalidateSeconds: REVALIDATE_SECONDS } } });
  await origin.putSource('cat.jpg', await gradientJpeg(300, 200));
});

const widthOf = async (body: Buffer) => (await sharp(body).metadata()).width;
const requestsFor = (path: string) => site.requests.filter((request) => request.path === '/images/' + path);

describe('a web source', () => {
  it('is fetched from the site, transformed and stored under its URL key after a "/"; the site sees no credentials', async () => {
    site.put('a/dog.jpg', await gradientJpeg(400, 300));
    const response = await origin.request('/shop/a/dog.jpg/width=100');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('image/jpeg');
    expect(await widthOf(response.body)).toBe(100);
    expect(response.headers['cache-control']).toBe(`public, max-age=${REVALIDATE_SECONDS}`);
    expect(await origin.cachedKeys()).toContain('/shop/a/dog.jpg/width=100');
    const [fetch] = requestsFor('a/dog.jpg');
    expect(fetch!.headers.cookie).toBeUndefined();
    expect(fetch!.headers.authorization).toBeUndefined();
  });

  it('is served from the cache bucket while current, without asking the site', async () => {
    // A minute, not the suite's second: a loaded machine can take a second between two requests.
    const current = await originRevalidatingEvery('web-current', 60);
    site.put('current.jpg', await gradientJpeg(400, 300));
    expect((await current.request('/shop/current.jpg/width=120')).status).toBe(200);
    const second = await current.request('/shop/current.jpg/width=120');
    expect(second.status).toBe(200);
    expect(await widthOf(second.body)).toBe(120);
    expect(requestsFor('current.jpg')).toHaveLength(1);
  });

  it('is asked again conditionally once stale: a 304 renews the stored copy without a transform', async () => {
    // Longer than the suite's second, so that a loaded machine still asks the third time within it.
    const renewSeconds = 3;
    const renewing = await originRevalidatingEvery('web-renew', renewSeconds);
    site.put('same.jpg', await gradientJpeg(400, 300));
    const first = await renewing.request('/shop/same.jpg/width=80');
    await after(renewSeconds);
    const transformsBefore = renewing.logs.filter((entry) => entry.event === 'variant').length;
    const second = await renewing.request('/shop/same.jpg/width=80');
    expect(second.status).toBe(200);
    expect(second.body.equals(first.body)).toBe(true);
    const [, conditional] = requestsFor('same.jpg');
    expect(conditional!.headers['if-none-match']).toMatch(/^"[0-9a-f]{32}"$/);
    expect(renewing.logs.filter((entry) => entry.event === 'variant')).toHaveLength(transformsBefore);
    // Renewed: the next request within the revalidation time does not ask again.
    await renewing.request('/shop/same.jpg/width=80');
    expect(requestsFor('same.jpg')).toHaveLength(2);
  });

  it('is made again when the site has a new image, replacing the stored variant', async () => {
    site.put('changing.jpg', await gradientJpeg(400, 300));
    expect((await sharp((await origin.request('/shop/changing.jpg/height=50')).body).metadata()).width).toBe(67);
    site.put('changing.jpg', await gradientJpeg(200, 200));
    await after(REVALIDATE_SECONDS);
    const changed = await origin.request('/shop/changing.jpg/height=50');
    expect(await widthOf(changed.body)).toBe(50);
    const stored = await origin.s3.send(new HeadObjectCommand({ Bucket: origin.cacheBucket, Key: '/shop/changing.jpg/height=50' }));
    expect(stored.ContentLength).toBe(changed.body.length);
  });

  it('is served stale for a minute while the site fails, and is an error when nothing was stored', async () => {
    site.put('down.jpg', await gradientJpeg(400, 300));
    const good = await origin.request('/shop/down.jpg/width=90');
    await after(REVALIDATE_SECONDS);
    site.fail(503);
    try {
      const stale = await origin.request('/shop/down.jpg/width=90');
      expect(stale.status).toBe(200);
      expect(stale.body.equals(good.body)).toBe(true);
      expect(stale.headers['cache-control']).toBe('public, max-age=60');
      const none = await origin.request('/shop/down.jpg/width=91');
      expect(none.status).toBe(502);
      expect(JSON.parse(none.body.toString())).toMatchObject({ error: 'source_unavailable' });
    } finally {
      site.fail(undefined);
    }
    expect(await origin.cachedKeys()).not.toContain('/shop/down.jpg/width=91');
  });

  it('missing on the site is a 404, and a page that is not an image a 415; neither is stored', async () => {
    const missing = await origin.request('/shop/nothing.jpg/width=100');
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body.toString())).toMatchObject({ error: 'not_found' });
    site.put('page.jpg', '<!doctype html><title>Not an image</title>', 'image/jpeg');
    const page = await origin.request('/shop/page.jpg/width=100');
    expect(page.status).toBe(415);
    const keys = await origin.cachedKeys();
    expect(keys.filter((key) => key.includes('shop/nothing.jpg') || key.includes('shop/page.jpg'))).toEqual([]);
    // And the origin still serves the next request.
    expect((await origin.request('/shop/a/dog.jpg/width=100')).status).toBe(200);
  });

  it('is answered inline however large, since its path has no cache-bucket origin to redirect to', async () => {
    const small = await originRevalidatingEvery('web-inline', 60, { maxInlineBytes: 1000 });
    site.put('big.jpg', await gradientJpeg(400, 300));
    const response = await small.request('/shop/big.jpg/width=300');
    expect(response.status).toBe(200);
    expect(response.body.length).toBeGreaterThan(1000);
  });

  it('is stored at no key a bucket variant could have, so the cache-bucket origin never serves it unrevalidated', async () => {
    site.put('kept.jpg', await gradientJpeg(400, 300));
    const uri = '/shop/kept.jpg/width=100';
    const made = await origin.request(uri);
    expect(made.status).toBe(200);
    expect((await origin.request('/cat.jpg/width=100')).status).toBe(200);
    const keys = (await origin.cachedKeys()).filter((key) => key.includes('kept.jpg') || key.includes('cat.jpg'));
    expect(keys.sort()).toEqual(['/shop/kept.jpg/width=100', 'cat.jpg/width=100']);
    // The default behavior's cache-bucket origin, reached by /shop%2Fkept.jpg?width=100, asks S3 for the URI's key: none there.
    const asked = origin.s3.send(new GetObjectCommand({ Bucket: origin.cacheBucket, Key: decodeURIComponent(uri.slice(1)) }));
    await expect(asked).rejects.toMatchObject({ name: 'NoSuchKey' });
    // The URI that would make CloudFront ask S3 for each stored key: the grammar makes the bucket variant's, and refuses the web one's.
    const uriOf = (stored: string) => encodeKeyPath(stored.slice(0, stored.lastIndexOf('/'))) + stored.slice(stored.lastIndexOf('/'));
    expect(parseCanonicalUri(uriOf('cat.jpg/width=100'), origin.config).uri).toBe('/cat.jpg/width=100');
    expect(() => parseCanonicalUri(uriOf('/shop/kept.jpg/width=100'), origin.config)).toThrow(/empty path segment/);
    // And the origin itself still serves it (the copy it stored, or the same image after asking the site).
    const again = await origin.request(uri);
    expect(again.status).toBe(200);
    expect(again.body.equals(made.body)).toBe(true);
  });

  it('keys outside the prefix are still read from the bucket', async () => {
    const response = await origin.request('/cat.jpg/width=100');
    expect(response.status).toBe(200);
    expect(await widthOf(response.body)).toBe(100);
  });
});

describe('a deployment', () => {
  it('never reaches a web origin at a loopback address: refused before any connection, nothing stored', async () => {
    site.put('inside.jpg', await gradientJpeg(100, 100));
    const connections = site.connections();
    const response = await deployed.request('/shop/inside.jpg/width=50');
    expect(response.status).toBe(403);
    expect(JSON.parse(response.body.toString())).toMatchObject({ error: 'source_not_allowed' });
    expect(site.connections()).toBe(connections);
    expect(await deployed.cachedKeys()).toEqual([]);
  });
});
