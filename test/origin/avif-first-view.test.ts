// AVIF without the wait: a first viewer whose negotiated AVIF would take
// noticeably longer than WebP gets WebP at once, kept by no shared cache, and
// the AVIF is made after the response and stored under the request's key, so
// the next viewer gets AVIF from the cache bucket. Through the real handler,
// its transform process, real sharp and LocalStack S3.

import { GetObjectCommand } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFERRED_AVIF_CACHE_CONTROL } from '../../lambda/origin/responses';
import { createTestOrigin, type TestOrigin } from '../support/origin';
import { gradientJpeg } from '../support/images';

let origin: TestOrigin;

beforeAll(async () => {
  origin = await createTestOrigin('avif-first-view');
  await origin.putSource('large.jpg', await gradientJpeg(2000, 1500));
});

/** The stored variant's format and Cache-Control, or undefined when nothing is stored under `key`. */
async function stored(key: string): Promise<{ format: string | undefined; cacheControl: string | undefined } | undefined> {
  try {
    const object = await origin.s3.send(new GetObjectCommand({ Bucket: origin.cacheBucket, Key: key }));
    const body = Buffer.from(await object.Body!.transformToByteArray());
    return { format: (await sharp(body).metadata()).format, cacheControl: object.CacheControl };
  } catch {
    return undefined;
  }
}

const events = (name: string, uri: string) => origin.logs.filter((entry) => entry.event === name && entry.uri === uri).length;

describe('a negotiated AVIF that would keep the first viewer waiting', () => {
  it('is answered as WebP at once, which no shared cache keeps, and stored as AVIF for the next viewer', async () => {
    const uri = '/large.jpg/width=1600,accept=avif';
    const first = await origin.request(uri);
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('image/webp');
    expect(first.headers['cache-control']).toBe(DEFERRED_AVIF_CACHE_CONTROL);
    expect((await sharp(first.body).metadata()).format).toBe('webp');
    // The request settled only once the AVIF was made and stored.
    expect(await stored('large.jpg/width=1600,accept=avif')).toEqual({ format: 'heif', cacheControl: origin.config.cacheControl });
    expect(events('avif_followed', uri)).toBe(1);
  });

  it('claims, makes and stores the AVIF without a warning on the console (the SDK warns of a body of unknown length)', async () => {
    const warn = vi.spyOn(console, 'warn');
    try {
      const first = await origin.request('/large.jpg/width=1400,accept=avif');
      expect(first.headers['content-type']).toBe('image/webp');
      expect(events('avif_followed', '/large.jpg/width=1400,accept=avif')).toBe(1);
      expect(warn.mock.calls).toEqual([]);
    } finally {
      warn.mockRestore();
    }
  });

  it('makes one AVIF for two first viewers at once: both get WebP, one makes the AVIF', async () => {
    const uri = '/large.jpg/width=1200,accept=avif';
    const answers = await Promise.all([origin.request(uri), origin.request(uri)]);
    expect(answers.map((answer) => answer.headers['content-type'])).toEqual(['image/webp', 'image/webp']);
    expect(events('avif_followed', uri)).toBe(1);
    expect(events('avif_claimed_elsewhere', uri)).toBe(1);
    expect((await stored('large.jpg/width=1200,accept=avif'))?.format).toBe('heif');
  });
});

describe('no wait to avoid', () => {
  it('a small AVIF is made and answered at once', async () => {
    const answer = await origin.request('/large.jpg/width=200,accept=avif');
    expect(answer.headers['content-type']).toBe('image/avif');
    expect(answer.headers['cache-control']).toBe(origin.config.cacheControl);
  });

  it('an explicit format=avif is always AVIF, however long it takes', async () => {
    const answer = await origin.request('/large.jpg/width=1600,format=avif');
    expect(answer.headers['content-type']).toBe('image/avif');
  });

  it('a viewer that accepts WebP but not AVIF gets WebP, stored as usual', async () => {
    const answer = await origin.request('/large.jpg/width=1600,accept=webp');
    expect(answer.headers['content-type']).toBe('image/webp');
    expect(answer.headers['cache-control']).toBe(origin.config.cacheControl);
    expect((await stored('large.jpg/width=1600,accept=webp'))?.format).toBe('webp');
  });
});
