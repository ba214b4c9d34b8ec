// What the origin answers when it can make the image, and what it leaves in
// the cache bucket: headers, ETags that match S3's, conditional requests,
// HEAD, concurrent misses, a store that fails, variants too big to return
// inline, and awkward keys. Real LocalStack S3 and real sharp throughout.

import { createHash, randomBytes } from 'node:crypto';
import { GetObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_GRAMMAR_OPTIONS,
  canonicalRequest,
  encodeKeyPath,
  parseCanonicalUri,
  splitQuery,
  DIALECT_REQUEST,
  type Ops,
} from '../../lambda/grammar';
import { variantKey } from '../../lambda/origin/cache-keys';
import { DEFAULT_CACHE_CONTROL, DEFAULT_MAX_INLINE_BYTES } from '../../lambda/origin/config';
import { createTestOrigin, type OriginResponse, type TestOrigin } from '../support/origin';
import { imageUrl, withSignature } from '../../lambda/client';
import { signedImageUrl, signedPrefix } from '../../lambda/client/sign';
import { forwardedQuery, isResponse, viewerEvent } from '../../local/emulator/cloudfront-function';
import { KVS_ID, loadEdge } from '../edge/fixtures';
import { alphaPng, animatedGif, gradientJpeg, noiseImage } from '../support/images';

const md5 = (body: Buffer) => createHash('md5').update(body).digest('hex');

let origin: TestOrigin;
let photo: Buffer;

beforeAll(async () => {
  origin = await createTestOrigin('responses');
  photo = await gradientJpeg(640, 480);
  await origin.putSource('photo.jpg', photo, 'image/jpeg');
});

async function headCached(target: TestOrigin, key: string) {
  return target.s3.send(new HeadObjectCommand({ Bucket: target.cacheBucket, Key: key }));
}

async function getCached(target: TestOrigin, key: string) {
  const object = await target.s3.send(new GetObjectCommand({ Bucket: target.cacheBucket, Key: key }));
  return { ...object, bytes: Buffer.from(await object.Body!.transformToByteArray()) };
}

/** The variant's key in the cache bucket for a canonical URI. */
function variantKeyOf(uri: string): string {
  const { key, ops } = parseCanonicalUri(uri, DEFAULT_GRAMMAR_OPTIONS);
  return variantKey(key, ops);
}

/** The `log` entries of kind `variant` for `uri`. */
function variantLogs(target: TestOrigin, uri: string) {
  return target.logs.filter((entry) => entry.event === 'variant' && entry.uri === uri);
}

describe('200: the variant and its headers', () => {
  const cases: [string, string, string, () => Promise<Buffer>, string][] = [
    // [label, key, canonical URI, source, content type], the sharp format name is the subtype
    ['JPEG from a JPEG', 'h/photo.jpg', '/h/photo.jpg/width=320', () => gradientJpeg(640, 480), 'image/jpeg'],
    ['WebP asked for', 'h/photo.jpg', '/h/photo.jpg/width=320,format=webp', () => gradientJpeg(640, 480), 'image/webp'],
    ['AVIF asked for', 'h/photo.jpg', '/h/photo.jpg/width=320,format=avif', () => gradientJpeg(640, 480), 'image/avif'],
    ['PNG asked for', 'h/photo.jpg', '/h/photo.jpg/width=320,format=png', () => gradientJpeg(640, 480), 'image/png'],
    ['PNG kept for a source with alpha', 'h/disc.png', '/h/disc.png/width=100', () => alphaPng(200, 200), 'image/png'],
    ['GIF kept for an animation', 'h/anim.gif', '/h/anim.gif/width=40', () => animatedGif(3, 80, 60), 'image/gif'],
  ];
  const SHARP_FORMAT: Record<string, string> = {
    'image/jpeg': 'jpeg',
    'image/webp': 'webp',
    'image/avif': 'heif',
    'image/png': 'png',
    'image/gif': 'gif',
  };

  beforeAll(async () => {
    const sources = new Map(cases.map(([, key, , make]) => [key, make]));
    for (const [key, make] of sources) await origin.putSource(key, await make());
  });

  it.each(cases)('%s: %s', async (_label, key, uri, _make, contentType) => {
    const response = await origin.request(uri);
    expect(response.status).toBe(200);

    // Content-Type names what the bytes really are.
    expect(response.headers['content-type']).toBe(contentType);
    const meta = await sharp(response.body).metadata();
    expect(meta.format).toBe(SHARP_FORMAT[contentType]);
    if (contentType === 'image/avif') expect(meta.compression).toBe('av1');
    expect(response.headers['content-length']).toBe(String(response.body.length));

    // The ETag is the quoted MD5 of the body, and exactly what S3 reports for the stored variant.
    const etag = response.headers.etag;
    expect(etag).toBe(`"${md5(response.body)}"`);
    const { ops } = parseCanonicalUri(uri, DEFAULT_GRAMMAR_OPTIONS);
    const stored = await headCached(origin, variantKey(key, ops));
    expect(stored.ETag).toBe(etag);

    expect(response.headers.vary).toBe('Accept');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['cache-control']).toBe(origin.config.cacheControl);
    expect(origin.config.cacheControl).toBe(DEFAULT_CACHE_CONTROL);
    // The response goes out before the variant's write: Server-Timing has the phases before it.
    expect(response.headers['server-timing']).toMatch(/^fetch;dur=\d+(\.\d+)?, transform;dur=\d+(\.\d+)?$/);
  });

  it('the variant is stored under exactly variantKey(key, ops), with its type, cache-control and the source ETag', async () => {
    const uri = '/photo.jpg/width=200,grayscale=1,format=webp';
    const response = await origin.request(uri);
    expect(response.status).toBe(200);

    const key = variantKey('photo.jpg', { width: 200, grayscale: true, format: 'webp' } satisfies Ops);
    expect(key).toBe('photo.jpg/width=200,grayscale=1,format=webp');
    expect(await origin.cachedKeys()).toContain(key);

    const stored = await getCached(origin, key);
    expect(stored.bytes.equals(response.body)).toBe(true);
    expect(stored.ContentType).toBe('image/webp');
    expect(stored.CacheControl).toBe(DEFAULT_CACHE_CONTROL);
    const source = await origin.s3.send(new HeadObjectCommand({ Bucket: origin.sourceBucket, Key: 'photo.jpg' }));
    expect(source.ETag).toBe(`"${md5(photo)}"`);
    expect(stored.Metadata?.['source-etag']).toBe(source.ETag);
  });

  describe('with a configured Cache-Control', () => {
    const cacheControl = 'public, max-age=600, stale-while-revalidate=60';
    let custom: TestOrigin;

    beforeAll(async () => {
      custom = await createTestOrigin('responses cache-control', { cacheControl });
      await custom.putSource('photo.jpg', photo);
    });

    it('it is sent with the variant and stored with it', async () => {
      const response = await custom.request('/photo.jpg/width=100');
      expect(response.status).toBe(200);
      expect(response.headers['cache-control']).toBe(cacheControl);
      expect((await headCached(custom, 'photo.jpg/width=100')).CacheControl).toBe(cacheControl);
    });
  });
});

describe('conditional requests and HEAD', () => {
  const uri = '/photo.jpg/width=150';
  let first: OriginResponse;

  beforeAll(async () => {
    first = await origin.request(uri);
    expect(first.status).toBe(200);
  });

  it.each([
    ['the same ETag', (etag: string) => etag],
    ['the weak form W/"..."', (etag: string) => `W/${etag}`],
    ['a list that contains it', (etag: string) => `"0123abcd", ${etag} ,"ffff"`],
    ['*', () => '*'],
  ])('304 with no body for If-None-Match: %s', async (_label, header) => {
    const response = await origin.request(uri, { headers: { 'if-none-match': header(first.headers.etag!) } });
    expect(response.status).toBe(304);
    expect(response.body.length).toBe(0);
    // A 304 still carries the validators and caching headers of the 200.
    expect(response.headers.etag).toBe(first.headers.etag);
    expect(response.headers['cache-control']).toBe(first.headers['cache-control']);
    expect(response.headers.vary).toBe('Accept');
  });

  it.each([
    ['a different ETag', '"0123456789abcdef0123456789abcdef"'],
    ['a weak different ETag', 'W/"0123456789abcdef0123456789abcdef"'],
  ])('200 with the image for If-None-Match: %s', async (_label, header) => {
    const response = await origin.request(uri, { headers: { 'if-none-match': header } });
    expect(response.status).toBe(200);
    expect(response.body.equals(first.body)).toBe(true);
    expect(response.headers.etag).toBe(first.headers.etag);
  });

  it('HEAD: 200, no body, the GET body length and the same ETag', async () => {
    const response = await origin.request(uri, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.body.length).toBe(0);
    expect(response.headers['content-length']).toBe(String(first.body.length));
    expect(response.headers.etag).toBe(first.headers.etag);
    expect(response.headers['content-type']).toBe('image/jpeg');
  });

  it('HEAD of a variant not made yet stores it as GET would', async () => {
    const headUri = '/photo.jpg/width=151';
    const head = await origin.request(headUri, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    const get = await origin.request(headUri);
    expect(get.headers.etag).toBe(head.headers.etag);
    expect(head.headers['content-length']).toBe(String(get.body.length));
    expect((await headCached(origin, 'photo.jpg/width=151')).ETag).toBe(head.headers.etag);
  });
});

describe('more than one request for the same variant', () => {
  it('8 concurrent misses: all 200 with one body and ETag, one object stored, one "created" and seven "exists"', async () => {
    await origin.putSource('concurrent.jpg', await gradientJpeg(1200, 900));
    const uri = '/concurrent.jpg/width=333,format=webp';

    const responses = await Promise.all(Array.from({ length: 8 }, () => origin.request(uri)));

    responses.forEach((response) => {
      expect(response.status).toBe(200);
      expect(response.headers.etag).toBe(responses[0]!.headers.etag);
      expect(response.body.equals(responses[0]!.body)).toBe(true);
    });
    expect((await origin.cachedKeys()).filter((key) => key.startsWith('concurrent.jpg/'))).toEqual([
      'concurrent.jpg/width=333,format=webp',
    ]);
    expect((await headCached(origin, variantKeyOf(uri))).ETag).toBe(responses[0]!.headers.etag);
    const stored = variantLogs(origin, uri).map((entry) => entry.stored);
    expect(stored).toHaveLength(8);
    expect(stored.filter((outcome) => outcome === 'created')).toHaveLength(1);
    expect(stored.filter((outcome) => outcome === 'exists')).toHaveLength(7);
  });

  it('a repeat request answers 200 and does not overwrite the stored variant', async () => {
    const uri = '/photo.jpg/width=222';
    const first = await origin.request(uri);
    expect(first.status).toBe(200);
    const before = await headCached(origin, 'photo.jpg/width=222');
    // LastModified has one-second resolution.
    await new Promise((resolve) => setTimeout(resolve, 1_100));

    const again = await origin.request(uri);
    expect(again.status).toBe(200);
    expect(again.headers.etag).toBe(first.headers.etag);
    expect(again.body.equals(first.body)).toBe(true);
    const after = await headCached(origin, 'photo.jpg/width=222');
    expect(after.ETag).toBe(before.ETag);
    expect(after.LastModified?.getTime()).toBe(before.LastModified?.getTime());
    expect(variantLogs(origin, uri).map((entry) => entry.stored)).toEqual(['created', 'exists']);
  });
});

describe('variants too large to return inline', () => {
  const uri = '/big.png/format=png';
  let big: Buffer;
  let broken: TestOrigin;

  beforeAll(async () => {
    big = await noiseImage(2500, 2500, 'png');
    // The cache bucket of this origin does not exist, so every store fails.
    broken = await createTestOrigin('responses store fails', { cacheBucket: `t-missing-${randomBytes(6).toString('hex')}-cache` });
    await Promise.all([origin.putSource('big.png', big, 'image/png'), broken.putSource('big.png', big, 'image/png')]);
  });

  it('302 to the viewer URL with no-store; the stored variant is whole', async () => {
    const response = await origin.request(uri);
    expect(response.status).toBe(302);
    expect(response.headers.location).toBe('/big.png?format=png');
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body.length).toBe(0);

    // The Location goes back through the edge to the same canonical URI, hence to the stored variant.
    const [path = '', query = ''] = response.headers.location!.split('?');
    expect(canonicalRequest(path, splitQuery(query), DEFAULT_GRAMMAR_OPTIONS, { accept: '' }).uri).toBe(uri);

    const stored = await getCached(origin, variantKeyOf(uri));
    expect(stored.bytes.length).toBeGreaterThan(DEFAULT_MAX_INLINE_BYTES);
    expect(stored.ContentType).toBe('image/png');
    expect(stored.ETag).toBe(`"${md5(stored.bytes)}"`);
    const { info } = await sharp(stored.bytes, { failOn: 'warning' }).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([2500, 2500]);
    expect(variantLogs(origin, uri).map((entry) => entry.stored)).toEqual(['created']);
  });

  it('with a key that needs encoding, the Location is the encoded key', async () => {
    const key = 'big files/ünïcode+big.png';
    await origin.putSource(key, big, 'image/png');
    const canonical = encodeKeyPath(key) + '/format=png';
    const response = await origin.request(canonical);
    expect(response.status).toBe(302);
    expect(response.headers.location).toBe(encodeKeyPath(key) + '?format=png');
    const [path = '', query = ''] = response.headers.location!.split('?');
    expect(canonicalRequest(path, splitQuery(query), DEFAULT_GRAMMAR_OPTIONS, { accept: '' }).uri).toBe(canonical);
    expect(await origin.cachedKeys()).toContain(key + '/format=png');
  });

  it('when the edge forwarded the viewer query, the Location repeats it, and it canonicalises back', async () => {
    const viewerQuery = 'FM=png&utm_source=mail&w=2500&enlarge=0';
    const canonical = '/big.png/width=2500,format=png';
    const response = await origin.request(`${canonical}?${viewerQuery}`);
    expect(response.status).toBe(302);
    expect(response.headers.location).toBe(`/big.png?${viewerQuery}`);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(canonicalRequest('/big.png', splitQuery(viewerQuery), DEFAULT_GRAMMAR_OPTIONS, { accept: '' }).uri).toBe(canonical);
    expect((await headCached(origin, variantKeyOf(canonical))).ContentLength).toBeGreaterThan(DEFAULT_MAX_INLINE_BYTES);
  });

  it("for a dialect's request, the Location is the viewer's URL as its edge function forwarded it; never another host's", async () => {
    const canonical = '/big.png/format=png';
    const forwarded = (request: unknown) =>
      origin.request(`${canonical}?${DIALECT_REQUEST}=${encodeURIComponent(JSON.stringify(request))}`);
    const cloudflare = await forwarded({ uri: '/cdn-cgi/image/format=png/big.png', pairs: [] });
    expect(cloudflare.status).toBe(302);
    expect(cloudflare.headers.location).toBe('/cdn-cgi/image/format=png/big.png');
    const imgix = await forwarded({
      uri: '/big.png',
      pairs: [
        ['fm', 'png'],
        ['s', '0123'],
      ],
    });
    expect(imgix.headers.location).toBe('/big.png?fm=png&s=0123');
    // One that a browser would read as another host's, or malformed, is not followed: the native URL instead.
    for (const request of [
      { uri: '//evil.example/x.png', pairs: [] },
      { uri: '/\\evil.example', pairs: [] },
      { uri: 'https://evil.example/', pairs: [] },
      { uri: '/a\r\nX-Evil: 1', pairs: [] },
      { uri: '/a.png', pairs: [['w']] },
      { uri: '/a.png' },
      'not json',
    ]) {
      const query = `${DIALECT_REQUEST}=${encodeURIComponent(JSON.stringify(request))}`;
      expect((await origin.request(`${canonical}?${query}`)).headers.location, JSON.stringify(request)).toBe('/big.png?format=png');
    }
  });

  it('for a negotiated variant, the Location leaves accept for the edge to negotiate again', async () => {
    const small = await createTestOrigin('responses negotiated redirect', { maxInlineBytes: 100 });
    await small.putSource('photo.jpg', photo);
    const canonical = '/photo.jpg/width=100,quality=70,accept=webp';
    const response = await small.request(canonical);
    expect(response.status).toBe(302);
    expect(response.headers.location).toBe('/photo.jpg?width=100&quality=70');
    expect(
      canonicalRequest('/photo.jpg', splitQuery('width=100&quality=70'), DEFAULT_GRAMMAR_OPTIONS, { accept: 'image/webp,*/*' }).uri,
    ).toBe(canonical);
    expect((await headCached(small, variantKeyOf(canonical))).ContentType).toBe('image/webp');
  });

  it('for an expiring or prefix-signed URL, the Location keeps the signature, and the edge verifies it again', async () => {
    const secret = 'origin-test-secret';
    const edge = loadEdge({ grammar: DEFAULT_GRAMMAR_OPTIONS, avif: true, signing: true, keyValueStoreId: KVS_ID }, secret);
    const small = await createTestOrigin('responses signed redirect', { maxInlineBytes: 100 });
    await small.putSource('users/42/photo.jpg', photo);
    const expires = new Date(Date.now() + 600_000);
    const grant = signedPrefix('users/42', { secret, expires, allow: [{ width: 90, format: 'webp' }] });
    for (const url of [
      signedImageUrl('img.example.com', 'users/42/photo.jpg', { width: 100, format: 'webp' }, { secret, expires }),
      withSignature(imageUrl('img.example.com', 'users/42/photo.jpg', { width: 90, format: 'webp' }), grant),
    ]) {
      const { pathname, search } = new URL(url);
      const forwarded = await edge.handler(viewerEvent(pathname, search.slice(1)));
      if (isResponse(forwarded)) throw new Error(`the edge refused ${url}: ${forwarded.body.data}`);
      // The origin ignores the signature's parameters, like any query, and hands them back.
      const response = await small.request(`${forwarded.uri}?${forwardedQuery(forwarded)}`);
      expect(response.status, url).toBe(302);
      const [path = '', query = ''] = response.headers.location!.split('?');
      expect(query).toMatch(/(^|&)sig=/);
      const again = await edge.handler(viewerEvent(path, query));
      expect(isResponse(again) ? again.body.data : again.uri).toBe(forwarded.uri);
    }
  });

  it('a failed store still serves an image that fits inline, and logs store_failed', async () => {
    await broken.putSource('photo.jpg', photo);
    const response = await broken.request('/photo.jpg/width=120');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('image/jpeg');
    expect(response.headers.etag).toBe(`"${md5(response.body)}"`);
    expect((await sharp(response.body).metadata()).width).toBe(120);
    const failed = broken.logs.filter((entry) => entry.event === 'store_failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ level: 'error', uri: '/photo.jpg/width=120' });
    expect(variantLogs(broken, '/photo.jpg/width=120').map((entry) => entry.stored)).toEqual(['failed']);
  });

  it('too large to inline and not stored: 503 to retry, never a truncated image', async () => {
    const response = await broken.request(uri);
    expect(response.status).toBe(503);
    expect(response.headers['content-type']).toBe('application/json');
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    expect(response.headers.location).toBeUndefined();
    expect(response.json()).toEqual({ error: 'storage_unavailable', message: expect.stringMatching(/unavailable/) });
    expect(broken.logs.filter((entry) => entry.event === 'store_failed' && entry.uri === uri)).toHaveLength(1);
  });
});

describe('keys that need encoding round-trip exactly', () => {
  const keys = [
    'my photos/summer day.jpg',
    'a+b/c+d.jpg',
    '100%/pure%20joy.jpg',
    'tags/#1 #best.jpg',
    'what?/really?.jpg',
    'Ünïcödé/café/日本語の写真.jpg',
    'emoji/😀 smile.jpg',
    "quotes/it's (1) [a] {b} *c* !d! ~e~.jpg",
    'deep/er/and/deeper/still/going/down/x.jpg',
  ];
  let small: Buffer;

  beforeAll(async () => {
    small = await gradientJpeg(160, 120);
  });

  it.each(keys)('%s', async (key) => {
    await origin.putSource(key, small, 'image/jpeg');
    const uri = encodeKeyPath(key) + '/width=50';
    expect(parseCanonicalUri(uri, DEFAULT_GRAMMAR_OPTIONS).key).toBe(key);

    const response = await origin.request(uri);
    expect(response.status, response.body.toString()).toBe(200);
    expect((await sharp(response.body).metadata()).width).toBe(50);

    const cached = (await origin.cachedKeys()).filter((cachedKey) => cachedKey.startsWith(key + '/'));
    expect(cached).toEqual([key + '/width=50']);
    expect((await headCached(origin, key + '/width=50')).ETag).toBe(response.headers.etag);
  });
});
