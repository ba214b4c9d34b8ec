// GET /images (the ready sources, a page at a time), DELETE /images (200, 207,
// a key already gone, a batch over 100) and the router's 404 and 405, against
// LocalStack.

import { beforeAll, describe, expect, it } from 'vitest';
import { createTestManage, type TestManage } from './support';

let listing: TestManage;
let deleting: TestManage;

const SOURCES = ['a.jpg', 'photos/1.jpg', 'photos/2.jpg', 'photos/3.jpg', 'photos/4.jpg', 'photos/5.jpg', 'zebra.png'];

beforeAll(async () => {
  // A prefix mapped to a bucket that does not exist: deleting its keys fails, as a bucket out of reach would.
  [listing, deleting] = await Promise.all([
    createTestManage('manage-list'),
    createTestManage('manage-delete', { sourceBuckets: { 'gone/': 'no-such-bucket-for-manage-tests' } }),
  ]);
  await Promise.all(SOURCES.map((key) => listing.put(key, 'x'.repeat(key.length), 'image/jpeg')));
  await listing.put('_uploads/photos/6.jpg', 'staged');
  await listing.put('_quarantine/evil.jpg', 'refused');
  await listing.put('_quarantine/evil.jpg.json', '{}');
});

/** Every page of a listing, following its cursor. */
async function pages(query: string): Promise<{ images: any[]; cursor?: string }[]> {
  const all = [];
  let cursor: string | undefined;
  do {
    const answer = await listing.call('GET', `/images?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(answer.status).toBe(200);
    all.push(answer.body);
    cursor = answer.body.cursor;
  } while (cursor && all.length < 20);
  return all;
}

describe('GET /images', () => {
  it('lists the ready sources, never an upload staged or quarantined', async () => {
    const answer = await listing.call('GET', '/images');
    expect(answer.body.cursor).toBeUndefined();
    expect(answer.body.images.map((image: any) => image.key)).toEqual(SOURCES);
    expect(answer.body.images[0]).toEqual({
      key: 'a.jpg',
      status: 'ready',
      bytes: 5,
      etag: expect.any(String),
      uploadedAt: expect.any(String),
    });
  });

  it('pages by its cursor: every source once, in order, a page at most `limit`', async () => {
    const listed = await pages('limit=2');
    expect(listed.map((page) => page.images.length)).toEqual([2, 2, 2, 1]);
    expect(listed.flatMap((page) => page.images.map((image) => image.key))).toEqual(SOURCES);
  });

  it('keeps to a prefix, across pages', async () => {
    const listed = await pages('prefix=photos/&limit=3');
    expect(listed.flatMap((page) => page.images.map((image) => image.key))).toEqual(SOURCES.filter((key) => key.startsWith('photos/')));
    expect(listed).toHaveLength(2);
  });

  it.each([
    ['limit=0', 'invalid_query', /from 1 to 1000, not "0"/],
    ['limit=1001', 'invalid_query', /not "1001"/],
    ['limit=ten', 'invalid_query', /not "ten"/],
    ['sort=name', 'invalid_query', /"sort"/],
    ['prefix=_uploads/', 'reserved_key', /_uploads\//],
    ['prefix=a/../', 'invalid_key', /\.\./],
    ['cursor=not-a-cursor', 'invalid_cursor', /cursor/],
  ])('refuses %s with a 400', async (query, error, message) => {
    const answer = await listing.call('GET', '/images?' + query);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error, message: expect.stringMatching(message) });
  });
});

describe('DELETE /images', () => {
  it('deletes every key and answers 200; a key already gone counts as deleted', async () => {
    await deleting.put('old/1.jpg', 'one');
    await deleting.put('old/2.jpg', 'two');
    const answer = await deleting.call('DELETE', '/images', { keys: ['old/1.jpg', 'old/2.jpg', 'old/never.jpg'] });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      failed_count: 0,
      failed_files: [],
      succeeded_count: 3,
      succeeded_files: ['old/1.jpg', 'old/2.jpg', 'old/never.jpg'],
    });
    expect(await deleting.sourceKeys()).toEqual([]);
    expect((await deleting.call('GET', '/images/old/1.jpg')).status).toBe(404);
  });

  it('answers 207 when a key could not be deleted, with each failure and its reason', async () => {
    await deleting.put('kept/1.jpg', 'one');
    const answer = await deleting.call('DELETE', '/images', { keys: ['kept/1.jpg', 'gone/a.jpg', 'gone/b.jpg'] });
    expect(answer.status).toBe(207);
    expect(answer.body).toEqual({
      failed_count: 2,
      failed_files: [
        { key: 'gone/a.jpg', reason: expect.stringMatching(/^NoSuchBucket/) },
        { key: 'gone/b.jpg', reason: expect.stringMatching(/^NoSuchBucket/) },
      ],
      succeeded_count: 1,
      succeeded_files: ['kept/1.jpg'],
    });
    expect(await deleting.sourceKeys()).toEqual([]);
  });

  it.each([
    ['more than 100 keys', { keys: Array.from({ length: 101 }, (_, i) => `k/${i}.jpg`) }, 'too_many_keys', /101 keys; at most 100/],
    ['no keys', { keys: [] }, 'invalid_field', /at least one/],
    ['keys that are not an array', { keys: 'a.jpg' }, 'invalid_field', /array/],
    ['a key that is not a string', { keys: ['a.jpg', 3] }, 'invalid_field', /keys\[1\] must be a string/],
    ['a traversing key', { keys: ['a.jpg', '../b.jpg'] }, 'invalid_key', /keys\[1\] "\.\.\/b\.jpg"/],
    ['a staging key', { keys: ['_uploads/a.jpg'] }, 'reserved_key', /keys\[0\]/],
    ['an unknown field', { keys: ['a.jpg'], force: true }, 'unknown_field', /"force"/],
    ['malformed JSON', '{"keys": [', 'malformed_json', /not JSON/],
  ])('refuses %s with a 400, deleting nothing', async (_name, body, error, message) => {
    await deleting.put('a.jpg', 'a');
    const answer = await deleting.call('DELETE', '/images', body);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error, message: expect.stringMatching(message) });
    expect(await deleting.sourceKeys()).toContain('a.jpg');
  });
});

describe('the router', () => {
  it('answers 404 JSON for an unknown route, 405 with Allow for a known one by another method', async () => {
    const unknown = await listing.call('GET', '/nothing');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('route_not_found');
    const method = await listing.call('PUT', '/images');
    expect(method.status).toBe(405);
    expect(method.headers.allow).toBe('GET, DELETE');
    expect(method.body).toEqual({ error: 'method_not_allowed', message: 'PUT is not allowed on /images; use GET, DELETE.' });
    expect((await listing.call('GET', '/uploads')).status).toBe(405);
    expect((await listing.call('DELETE', '/images/a.jpg')).status).toBe(405);
  });

  it('refuses an upload of a key another bucket serves', async () => {
    const answer = await deleting.call('POST', '/uploads', { key: 'gone/a.jpg', contentType: 'image/png', contentLength: 10 });
    expect(answer.body).toMatchObject({ error: 'key_not_uploadable' });
  });
});
