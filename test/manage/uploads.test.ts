// POST /uploads and the presigned POST it answers with, against LocalStack's
// S3: a real upload from Node's fetch and FormData lands under the staging
// prefix and is ready at its key once validated; S3 itself refuses what the
// policy does not allow; every bad request is a 400 naming its problem.

import { GetObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { gradientJpeg } from '../support/images';
import { createTestManage, postUpload, type TestManage } from './support';

let manage: TestManage;
/** A deployment whose sources are at most 1 MB. */
let small: TestManage;
let photo: Buffer;

beforeAll(async () => {
  [manage, small] = await Promise.all([
    createTestManage('manage-uploads'),
    createTestManage('manage-small', { maxSourceBytes: 1_000_000 }),
  ]);
  photo = await gradientJpeg(640, 480);
});

describe('an upload', () => {
  it('is posted by a form straight to S3 (204), staged, then ready at its key with its type, size and format once validated', async () => {
    const ticket = await manage.ticket('photos/cat.jpg', 'image/jpeg', photo.length);
    expect(ticket.key).toBe('photos/cat.jpg');
    expect(ticket.fields.key).toBe('_uploads/photos/cat.jpg');
    expect(ticket.fields['Content-Type']).toBe('image/jpeg');
    const expiresIn = (Date.parse(ticket.expiresAt) - Date.now()) / 1000;
    expect(expiresIn).toBeGreaterThan(800);
    expect(expiresIn).toBeLessThanOrEqual(900);

    expect((await postUpload(ticket, photo)).status).toBe(204);
    expect(await manage.sourceKeys()).toEqual(['_uploads/photos/cat.jpg']);
    const pending = await manage.call('GET', '/images/photos/cat.jpg');
    expect(pending.body).toMatchObject({ key: 'photos/cat.jpg', status: 'pending', bytes: photo.length });

    expect(await manage.validate('photos/cat.jpg')).toEqual({
      status: 'ready',
      key: 'photos/cat.jpg',
      width: 640,
      height: 480,
      format: 'jpeg',
    });
    expect(await manage.sourceKeys()).toEqual(['photos/cat.jpg']);
    const stored = await manage.s3.send(new GetObjectCommand({ Bucket: manage.sourceBucket, Key: 'photos/cat.jpg' }));
    expect(stored.ContentType).toBe('image/jpeg');
    expect(Buffer.from(await stored.Body!.transformToByteArray()).equals(photo)).toBe(true);
    const ready = await manage.call('GET', '/images/photos/cat.jpg');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({
      key: 'photos/cat.jpg',
      status: 'ready',
      width: 640,
      height: 480,
      format: 'jpeg',
      bytes: photo.length,
    });
    expect(ready.body.etag).toBe(stored.ETag);
    expect(Date.parse(ready.body.uploadedAt)).toBeLessThanOrEqual(Date.now());
  });

  it('over the size limit is refused by S3 itself (400 EntityTooLarge), and nothing is staged', async () => {
    const ticket = await small.ticket('big.jpg', 'image/jpeg', 1_000);
    const answer = await postUpload(ticket, Buffer.alloc(1_000_001, 1));
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('EntityTooLarge');
    expect(await small.sourceKeys()).toEqual([]);
  });

  it('with another Content-Type than its policy pins is refused by S3 (403), and nothing is staged', async () => {
    const ticket = await small.ticket('page.jpg', 'image/jpeg', 100);
    const answer = await postUpload(ticket, '<html><script>alert(1)</script></html>', { 'Content-Type': 'text/html' });
    expect(answer.status).toBe(403);
    expect(answer.text).toContain('Policy Condition failed: ["eq", "$Content-Type", "image/jpeg"]');
    expect(await small.sourceKeys()).toEqual([]);
  });

  it('to another key than its policy pins is refused by S3 (403)', async () => {
    const ticket = await small.ticket('mine.jpg', 'image/jpeg', photo.length);
    const answer = await postUpload(ticket, photo, { key: 'theirs.jpg' });
    expect(answer.status).toBe(403);
    expect(answer.text).toContain('Policy Condition failed: {"key": "_uploads/mine.jpg"}');
    expect(await small.sourceKeys()).toEqual([]);
  });
});

describe('POST /uploads refuses with a 400 naming the problem', () => {
  const valid = { key: 'a.jpg', contentType: 'image/jpeg', contentLength: 1000 };
  const refusals: [string, unknown, string, RegExp][] = [
    ['malformed JSON', '{"key": "a.jpg",', 'malformed_json', /not JSON/],
    ['a body that is not an object', '["a.jpg"]', 'invalid_body', /JSON object/],
    ['an unknown field', { ...valid, acl: 'public-read' }, 'unknown_field', /"acl"/],
    ['a missing key', { contentType: 'image/jpeg', contentLength: 1000 }, 'missing_field', /"key"/],
    ['a key that is not a string', { ...valid, key: 7 }, 'invalid_field', /"key" must be a string/],
    ['a traversing key', { ...valid, key: 'photos/../secret.jpg' }, 'invalid_key', /"photos\/\.\.\/secret\.jpg".*\.\./],
    ['an empty key', { ...valid, key: '' }, 'invalid_key', /empty/],
    ['a key with a control character', { ...valid, key: 'a\nb.jpg' }, 'invalid_key', /control/],
    ['a staging key', { ...valid, key: '_uploads/a.jpg' }, 'reserved_key', /_uploads\//],
    ['a quarantine key', { ...valid, key: '_quarantine/a.jpg' }, 'reserved_key', /_quarantine\//],
    ['a type outside the list', { ...valid, contentType: 'text/html' }, 'unsupported_content_type', /"text\/html".*image\/jpeg/],
    ['SVG where the origin refuses SVG', { ...valid, contentType: 'image/svg+xml' }, 'unsupported_content_type', /svg/],
    ['a size over the limit', { ...valid, contentLength: 32 * 1024 * 1024 + 1 }, 'too_large', /33554432-byte limit/],
    ['a size of nothing', { ...valid, contentLength: 0 }, 'invalid_field', /at least 1/],
    ['a size that is not a whole number', { ...valid, contentLength: 10.5 }, 'invalid_field', /"contentLength" must be a whole number/],
    ['an expiry under 2 minutes', { ...valid, expiresIn: 119 }, 'invalid_expiry', /120 to 21600 seconds, not 119/],
    ['an expiry over 6 hours', { ...valid, expiresIn: 21601 }, 'invalid_expiry', /not 21601/],
  ];
  it.each(refusals)('%s', async (_name, body, error, message) => {
    const answer = await manage.call('POST', '/uploads', body);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe(error);
    expect(answer.body.message).toMatch(message);
  });

  it('and takes an expiry within the range', async () => {
    const answer = await manage.call('POST', '/uploads', { ...valid, expiresIn: 120 });
    expect(answer.status).toBe(200);
    expect(Date.parse(answer.body.expiresAt) - Date.now()).toBeLessThanOrEqual(120_000);
  });

  it('and takes SVG, up to its own limit, where the origin renders SVG', async () => {
    const svg = await createTestManage('manage-svg', { svgPolicy: 'rasterize' });
    const ok = await svg.call('POST', '/uploads', { key: 'logo.svg', contentType: 'image/svg+xml', contentLength: 1024 });
    expect(ok.status).toBe(200);
    const big = await svg.call('POST', '/uploads', { key: 'logo.svg', contentType: 'image/svg+xml', contentLength: 2 * 1024 * 1024 });
    expect(big.body).toMatchObject({ error: 'too_large', message: expect.stringMatching(/1048576-byte limit for image\/svg\+xml/) });
  });
});
