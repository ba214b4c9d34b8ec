// The management client (`edge-image-transformer/manage`) against the
// emulator's `/_manage/` routes on LocalStack: every call SigV4-signed, the
// upload a real presigned POST of a real JPEG, validated by the emulator's
// validator; listings page by cursor; a delete of more than 100 keys sent in
// batches whose 200 and 207 reports are merged.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { createManageClient, ManageApiError } from '../../../lambda/manage/client';
import { photo, recordingFetch, useManageEmulator } from './support';

const manage = useManageEmulator('manage-client');

describe('the management client', () => {
  it('uploads a JPEG, waits until the validator made it ready, and the emulator serves it', async () => {
    const { client, emulator } = manage();
    const result = await client().upload('photos/cat.jpg', await photo(640, 480), {
      contentType: 'image/jpeg',
      waitUntilReady: { timeoutMs: 20_000, intervalMs: 200 },
    });
    expect(result.ticket.fields.key).toBe('_uploads/photos/cat.jpg');
    expect(result.status).toMatchObject({ key: 'photos/cat.jpg', status: 'ready', width: 640, height: 480, format: 'jpeg' });
    expect(await client().status('photos/cat.jpg')).toMatchObject({ status: 'ready', width: 640 });
    const served = await fetch(`${emulator.url}/photos/cat.jpg?width=100`);
    expect(served.status).toBe(200);
    expect(await sharp(Buffer.from(await served.arrayBuffer())).metadata()).toMatchObject({ width: 100, height: 75 });
  }, 30_000);

  it('waits for a hostile upload to end quarantined, with its reason', async () => {
    const { client } = manage();
    const html = new Blob(['<html><script>alert(1)</script></html>'], { type: 'image/jpeg' });
    const { status } = await client().upload('evil.jpg', html, { contentType: 'image/jpeg', waitUntilReady: { intervalMs: 200 } });
    expect(status).toMatchObject({ key: 'evil.jpg', status: 'quarantined', reason: 'unsupported_media_type' });
  }, 30_000);

  it("throws the API's refusals as a ManageApiError with the status, code and message", async () => {
    const { client } = manage();
    const refused = await client()
      .upload('photos/big.jpg', new Uint8Array(10), { contentType: 'text/html' })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ManageApiError);
    expect(refused).toMatchObject({
      status: 400,
      code: 'unsupported_content_type',
      message: expect.stringMatching(/"text\/html" is not one of/),
    });
    await expect(client().status('never/uploaded.jpg')).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });

  it('is refused with a 403 ManageApiError when it signs with the wrong secret', async () => {
    const { client } = manage();
    const wrong = client({ credentials: { accessKeyId: 'test', secretAccessKey: 'not-the-secret' } });
    const refused = await wrong.status('photos/cat.jpg').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ManageApiError);
    expect(refused).toMatchObject({ status: 403, code: 'invalid_signature' });
  });

  it('signs a key with spaces, a plus and accents, in the path and in the query', async () => {
    const { client, put } = manage();
    const key = 'odd/my cat+dog é.jpg';
    await put([key]);
    expect(await client().status(key)).toMatchObject({ key, status: 'ready' });
    expect((await client().list({ prefix: 'odd/my cat+' })).images.map((image) => image.key)).toEqual([key]);
  });

  it('lists a prefix page by page with the cursor, and iterates over every page', async () => {
    const { client, put } = manage();
    const keys = ['many/a.jpg', 'many/b.jpg', 'many/c.jpg', 'many/d.jpg', 'many/e.jpg'];
    await put(keys);
    const first = await client().list({ prefix: 'many/', limit: 2 });
    expect(first.images.map((image) => image.key)).toEqual(keys.slice(0, 2));
    expect(first.cursor).toEqual(expect.any(String));
    const second = await client().list({ prefix: 'many/', limit: 2, cursor: first.cursor });
    expect(second.images.map((image) => image.key)).toEqual(keys.slice(2, 4));

    const recorded = recordingFetch();
    const all: string[] = [];
    for await (const image of client({ fetch: recorded.fetch }).images({ prefix: 'many/', limit: 2 })) all.push(image.key);
    expect(all).toEqual(keys);
    expect(recorded.calls).toHaveLength(3);
  });

  it('refuses a bad key before deleting anything', async () => {
    const { client, put, sourceKeys } = manage();
    await put(['keep/1.jpg']);
    const keys = [...Array.from({ length: 120 }, (_, index) => `keep/${index}.jpg`), 'keep/../x.jpg'];
    await expect(client().delete(keys)).rejects.toMatchObject({
      status: 400,
      code: 'invalid_key',
      message: expect.stringMatching(/^keys\[120\]/),
    });
    expect(await sourceKeys()).toContain('keep/1.jpg');
  });

  it('deletes 150 keys in two batches and merges their reports, a failed key among them', async () => {
    const { client, put, sourceKeys, withoutBucket } = manage();
    const keys = Array.from({ length: 149 }, (_, index) => `bulk/${String(index).padStart(3, '0')}.jpg`);
    await put(keys);
    const recorded = recordingFetch();
    const batches: number[] = [];
    const report = await withoutBucket(() =>
      client({ fetch: recorded.fetch }).delete([...keys.slice(0, 120), 'gone/x.jpg', ...keys.slice(120)], {
        onBatch: (batch) => batches.push(batch.succeeded_count + batch.failed_count),
      }),
    );
    expect(recorded.calls.map(({ method, body }) => [method, (body as { keys: string[] }).keys.length])).toEqual([
      ['DELETE', 100],
      ['DELETE', 50],
    ]);
    expect(batches).toEqual([100, 50]);
    expect(report).toEqual({
      failed_count: 1,
      failed_files: [{ key: 'gone/x.jpg', reason: expect.stringMatching(/^NoSuchBucket/) }],
      succeeded_count: 149,
      succeeded_files: keys,
    });
    expect((await sourceKeys()).filter((key) => key.startsWith('bulk/'))).toEqual([]);
  });
});

describe('the management client, throttled', () => {
  /** An API that answers each call with the next of `statuses` (its last one from then on), counting the calls. */
  async function answering(statuses: number[]) {
    let calls = 0;
    const server = createServer((_request, response) => {
      const status = statuses[Math.min(calls++, statuses.length - 1)]!;
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(status === 200 ? { images: [] } : { message: 'Too Many Requests' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const client = createManageClient({
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    });
    return { client, calls: () => calls, close: () => new Promise((resolve) => server.close(resolve)) };
  }

  it('tries a 429 or a 503 again after a pause, and gives up after 4 calls with the last refusal', async () => {
    const throttled = await answering([429, 503, 200]);
    expect(await throttled.client.list()).toEqual({ images: [] });
    expect(throttled.calls()).toBe(3);
    await throttled.close();

    const down = await answering([429]);
    const started = Date.now();
    await expect(down.client.list()).rejects.toMatchObject({ status: 429, code: 'http_429', message: 'Too Many Requests' });
    expect(down.calls()).toBe(4);
    // Pauses of 0.5, 1 and 2 s between the calls.
    expect(Date.now() - started).toBeGreaterThanOrEqual(3500);
    await down.close();
  }, 20_000);
});
