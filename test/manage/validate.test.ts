// The validator on real staged objects in LocalStack, with the origin's own
// readers: a good image is ready at its key; a hostile one (a web page named
// .jpg, a PNG whose header claims 10^10 pixels, a JPEG cut short) is
// quarantined with the origin's reason and never reaches its key. Then
// GET /images/{key} for each state.

import { GetObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { claimedPng, gradientJpeg, opaquePng } from '../support/images';
import { validateEvent } from '../../lambda/manage/validate';
import { s3Event, s3EventKey } from '../invalidate/support';
import { createTestManage, type TestManage } from './support';

let manage: TestManage;

beforeAll(async () => {
  manage = await createTestManage('manage-validate');
});

const stage = (key: string, body: Buffer | string, contentType = 'image/jpeg') => manage.put('_uploads/' + key, body, contentType);

async function record(key: string) {
  const response = await manage.s3.send(new GetObjectCommand({ Bucket: manage.sourceBucket, Key: `_quarantine/${key}.json` }));
  return JSON.parse(await response.Body!.transformToString());
}

describe('a hostile upload is quarantined with its reason, never copied to its key', () => {
  const hostile: [string, string, () => Promise<Buffer | string>, string][] = [
    [
      'an HTML page named .jpg',
      'evil/page.jpg',
      async () => '<!doctype html><html><script>alert(1)</script></html>',
      'unsupported_media_type',
    ],
    ['a PNG whose header claims 100000x100000', 'evil/bomb.png', async () => claimedPng(100_000, 100_000), 'too_many_pixels'],
    ['a truncated JPEG', 'evil/cut.jpg', async () => (await gradientJpeg(800, 600)).subarray(0, 4000), 'undecodable_image'],
  ];
  it.each(hostile)('%s', async (_name, key, make, reason) => {
    const body = await make();
    await stage(key, body);
    const outcome = await manage.validate(key);
    expect(outcome).toMatchObject({ status: 'quarantined', key, reason });
    const keys = await manage.sourceKeys();
    expect(keys).not.toContain(key);
    expect(keys).not.toContain('_uploads/' + key);
    expect(keys).toContain('_quarantine/' + key);
    expect(await record(key)).toMatchObject({
      reason,
      message: expect.any(String),
      uploadedAt: expect.any(String),
      bytes: Buffer.byteLength(body),
    });
    const status = await manage.call('GET', '/images/' + key);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ key, status: 'quarantined', reason, bytes: Buffer.byteLength(body) });
  });

  it('and a later good upload of the same key is ready, its quarantine cleared', async () => {
    await stage('evil/page.jpg', await gradientJpeg(40, 30));
    expect(await manage.validate('evil/page.jpg')).toMatchObject({ status: 'ready', width: 40, height: 30 });
    const keys = await manage.sourceKeys();
    expect(keys).toContain('evil/page.jpg');
    expect(keys.filter((key) => key.startsWith('_quarantine/evil/page.jpg'))).toEqual([]);
    expect((await manage.call('GET', '/images/evil/page.jpg')).body.status).toBe('ready');
  });
});

describe('a key already ready', () => {
  it('keeps its source served when a later upload of it is quarantined, and its status tells the quarantine', async () => {
    const jpeg = await gradientJpeg(30, 20);
    await stage('kept/cat.jpg', jpeg);
    expect(await manage.validate('kept/cat.jpg')).toMatchObject({ status: 'ready' });
    // S3's Last-Modified is to the second: the later upload is a second later.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await stage('kept/cat.jpg', '<html></html>');
    expect(await manage.validate('kept/cat.jpg')).toMatchObject({ status: 'quarantined', reason: 'unsupported_media_type' });
    const stored = await manage.s3.send(new GetObjectCommand({ Bucket: manage.sourceBucket, Key: 'kept/cat.jpg' }));
    expect(Buffer.from(await stored.Body!.transformToByteArray()).equals(jpeg)).toBe(true);
    expect((await manage.call('GET', '/images/kept/cat.jpg')).body).toMatchObject({
      status: 'quarantined',
      reason: 'unsupported_media_type',
    });
  });
});

describe('the validator', () => {
  it("runs on an S3 event's staged uploads, their keys decoded, and passes over other records", async () => {
    await stage('from event/ü+1.jpg', await gradientJpeg(30, 20));
    const bucket = manage.sourceBucket;
    const event = s3Event([
      { eventName: 'ObjectCreated:Post', rawKey: s3EventKey('_uploads/from event/ü+1.jpg'), bucket },
      { eventName: 'ObjectCreated:Put', rawKey: s3EventKey('elsewhere.jpg'), bucket },
      { eventName: 'ObjectRemoved:Delete', rawKey: s3EventKey('_uploads/gone.jpg'), bucket },
      { eventName: 'ObjectCreated:Put', rawKey: s3EventKey('_uploads/other-bucket.jpg'), bucket: 'another-bucket' },
    ]);
    expect(await validateEvent({ s3: manage.s3 }, manage.config, event)).toEqual([
      { status: 'ready', key: 'from event/ü+1.jpg', width: 30, height: 20, format: 'jpeg' },
    ]);
    expect(await manage.sourceKeys()).toContain('from event/ü+1.jpg');
  });

  it('reads the format by content: a PNG declared as JPEG is ready as a PNG, its declared type kept', async () => {
    await stage('misnamed.jpg', await opaquePng(20, 10));
    expect(await manage.validate('misnamed.jpg')).toEqual({ status: 'ready', key: 'misnamed.jpg', width: 20, height: 10, format: 'png' });
  });

  it('quarantines an upload staged by hand under a key that is no source key, never staging it again', async () => {
    await stage('_uploads/again.jpg', await gradientJpeg(30, 20));
    expect(await manage.validate('_uploads/again.jpg')).toMatchObject({ status: 'quarantined', reason: 'invalid_key' });
    const keys = await manage.sourceKeys();
    expect(keys).toContain('_quarantine/_uploads/again.jpg');
    expect(keys.filter((key) => key.startsWith('_uploads/'))).toEqual([]);
  });

  it('does nothing for an upload already gone (an event delivered twice)', async () => {
    expect(await manage.validate('never-staged.jpg')).toEqual({ status: 'gone', key: 'never-staged.jpg' });
  });

  it('quarantines an upload over the source limit without reading it', async () => {
    const tight = await createTestManage('manage-tight', { maxSourceBytes: 1000 });
    await tight.put('_uploads/large.jpg', await gradientJpeg(400, 300), 'image/jpeg');
    expect(await tight.validate('large.jpg')).toMatchObject({ status: 'quarantined', reason: 'source_too_large' });
    expect(await tight.sourceKeys()).toEqual(['_quarantine/large.jpg', '_quarantine/large.jpg.json']);
  });
});

describe('GET /images/{key}', () => {
  it('is pending while an upload waits to be validated', async () => {
    const jpeg = await gradientJpeg(30, 20);
    await stage('waiting/one.jpg', jpeg);
    const answer = await manage.call('GET', '/images/waiting/one.jpg');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ key: 'waiting/one.jpg', status: 'pending', bytes: jpeg.length, etag: expect.stringMatching(/^"/) });
  });

  it('is ready for a source put in the bucket directly, without the size the validator records', async () => {
    const jpeg = await gradientJpeg(30, 20);
    await manage.put('direct/one.jpg', jpeg, 'image/jpeg');
    const answer = await manage.call('GET', '/images/direct/one.jpg');
    expect(answer.body).toEqual({
      key: 'direct/one.jpg',
      status: 'ready',
      bytes: jpeg.length,
      etag: expect.any(String),
      uploadedAt: expect.any(String),
    });
  });

  it('decodes a percent-encoded key', async () => {
    await manage.put('with space/ü.jpg', await gradientJpeg(30, 20), 'image/jpeg');
    const answer = await manage.call('GET', '/images/with%20space/%C3%BC.jpg');
    expect(answer.body).toMatchObject({ key: 'with space/ü.jpg', status: 'ready' });
  });

  it('is a 404 JSON for a key nothing has', async () => {
    const answer = await manage.call('GET', '/images/nothing/here.jpg');
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({ error: 'not_found', message: expect.stringContaining('"nothing/here.jpg"') });
  });

  it('is a 400 for a traversing or reserved key', async () => {
    expect((await manage.call('GET', '/images/a/../b.jpg')).body.error).toBe('invalid_key');
    expect((await manage.call('GET', '/images/_uploads/a.jpg')).body.error).toBe('reserved_key');
    expect((await manage.call('GET', '/images/%E0%A4%A')).body.error).toBe('invalid_key');
  });
});
