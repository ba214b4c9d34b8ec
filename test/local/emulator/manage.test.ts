// The management API in `npm start`: `/_manage/` on the emulator's port,
// called as a server would call the deployed HTTP API, signed with the AWS
// SDK's SignatureV4 and the emulator's credentials. An upload is a real
// presigned POST to this run's LocalStack; the emulator's source watcher
// finds it and runs the validator, which settled() waits for; the image is
// then served at its URL, or, refused, never. An import runs the per-key
// function in the emulator's process, from a legacy https server on loopback.

import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetBucketCorsCommand, GetObjectCommand } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UploadTicket } from '../../../lambda/manage/uploads';
import { Sha256 } from '../../../lambda/manage/client/signed-fetch';
import { allowUploadsFrom, MAX_MANAGE_BODY_BYTES } from '../../../local/emulator/manage-route';
import { startEmulator, type RunningEmulator } from '../../../local/emulator/start';
import { postUpload } from '../../manage/support';
import { exifTags, exifText } from '../../support/metadata';
import { createTestBuckets, listKeys, type TestBuckets } from '../../support/s3';
import { selfSignedCertificate } from '../../support/web-origin';

const photo = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#3a7' } })
    .jpeg()
    .toBuffer();

interface Call {
  body?: unknown;
  /** The secret signed with (the emulator's is `test`). */
  secret?: string;
  /** A body sent in place of the one signed. */
  sentBody?: string;
  /** A path (and query) called in place of the one signed. */
  sentPath?: string;
  signingDate?: Date;
  unsigned?: boolean;
  /** false: no x-amz-content-sha256 header (the emulator hashes the body itself, as curl's signatures need). */
  applyChecksum?: boolean;
}

describe('npm start: the management API under /_manage/', () => {
  let buckets: TestBuckets;
  let emulator: RunningEmulator;
  const lines: string[] = [];
  /** The legacy server of imports: https on loopback, its name resolved there, its certificate trusted by the emulator's imports only. */
  const legacyHost = 'old.example.com';
  const certificate = selfSignedCertificate(legacyHost);
  let legacy: Server;
  let legacyBase: string;

  beforeAll(async () => {
    const legacyPhoto = await photo(300, 200);
    legacy = createHttpsServer(certificate, (request, response) => {
      if (request.url === '/photo.jpg') response.writeHead(200, { 'content-type': 'image/jpeg' }).end(legacyPhoto);
      else response.writeHead(200, { 'content-type': 'image/jpeg' }).end('<html>not an image</html>');
    });
    await new Promise<void>((done) => legacy.listen(0, '127.0.0.1', done));
    legacyBase = `https://${legacyHost}:${(legacy.address() as AddressInfo).port}`;
    buckets = await createTestBuckets('emulator-manage');
    const images = await mkdtemp(join(tmpdir(), 'manage-images-'));
    await writeFile(join(images, 'seed.jpg'), await photo(320, 240));
    emulator = await startEmulator({
      images,
      s3: buckets.s3,
      buckets: { source: buckets.sourceBucket, cache: buckets.cacheBucket },
      port: 0,
      edgeCache: false,
      // Nothing is seen until settled() polls: a staged upload stays pending until then.
      watchIntervalMs: 600_000,
      context: { presets: '{"thumb":{"width":"80"}}', eagerPresets: 'thumb', manageStripLocation: 'true' },
      importRules: { resolve: async () => [{ address: '127.0.0.1', family: 4 }], trustedCertificates: certificate.cert },
      log: (line) => lines.push(line),
    });
  }, 120_000);

  afterAll(async () => {
    await emulator?.close();
    await buckets?.cleanup();
    legacy?.close();
  });

  /** A call to `/_manage<path>`, signed as a server signs one for the deployed API, and its JSON answer. */
  async function call(method: string, path: string, options: Call = {}) {
    const url = new URL(`${emulator.url}/_manage${path}`);
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const request = {
      method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: Number(url.port),
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: { host: url.host, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body,
    };
    const signer = new SignatureV4({
      credentials: { accessKeyId: 'test', secretAccessKey: options.secret ?? 'test' },
      region: 'us-east-1',
      service: 'execute-api',
      sha256: Sha256,
      applyChecksum: options.applyChecksum ?? true,
    });
    const signed = options.unsigned ? request : await signer.sign(request, { signingDate: options.signingDate });
    const { host: _host, ...headers } = signed.headers;
    const target = options.sentPath === undefined ? url : `${emulator.url}/_manage${options.sentPath}`;
    const response = await fetch(target, { method, headers, body: options.sentBody ?? body });
    return { status: response.status, body: (await response.json()) as any };
  }

  const served = (path: string) => fetch(`${emulator.url}${path}`);

  async function upload(key: string, file: Buffer | string, contentType: string): Promise<UploadTicket> {
    const answer = await call('POST', '/uploads', { body: { key, contentType, contentLength: file.length } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const ticket = answer.body as UploadTicket;
    expect(await postUpload(ticket, file)).toMatchObject({ status: 204 });
    return ticket;
  }

  it('uploads through a presigned POST to LocalStack; the validator makes it ready, and the emulator serves it', async () => {
    const ticket = await upload('photos/new.jpg', await photo(640, 480), 'image/jpeg');
    expect(ticket.url).toMatch(/^http:\/\/(127\.0\.0\.1|localhost)/);
    expect(ticket.fields.key).toBe('_uploads/photos/new.jpg');

    // Staged, not validated yet: pending, and not served.
    expect((await call('GET', '/images/photos%2Fnew.jpg')).body).toMatchObject({ status: 'pending' });
    expect((await served('/photos/new.jpg?width=100')).status).toBe(404);

    await emulator.settled();
    const status = await call('GET', '/images/photos%2Fnew.jpg');
    expect(status).toMatchObject({
      status: 200,
      body: { key: 'photos/new.jpg', status: 'ready', width: 640, height: 480, format: 'jpeg' },
    });
    const image = await served('/photos/new.jpg?width=100');
    expect(image.status).toBe(200);
    expect(await sharp(Buffer.from(await image.arrayBuffer())).metadata()).toMatchObject({ width: 100, height: 75 });
    expect(lines).toContain('upload photos/new.jpg: ready (640x480 jpeg)');

    const listed = await call('GET', '/images?prefix=photos/&limit=10');
    expect(listed.status).toBe(200);
    expect(listed.body.images.map((entry: { key: string }) => entry.key)).toEqual(['photos/new.jpg']);
  }, 60_000);

  it('stores an upload without its location with -c manageStripLocation=true, its pixels as uploaded', async () => {
    const tagged = await sharp(await photo(64, 48))
      .withExif({ IFD0: { Copyright: '(c) Ann' }, IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '47/1 7/1 2444/100' } })
      .jpeg()
      .toBuffer();
    expect(exifTags((await sharp(tagged).metadata()).exif)).toContain('GPS:0x0002');
    await upload('located/photo.jpg', tagged, 'image/jpeg');
    await emulator.settled();
    const response = await buckets.s3.send(new GetObjectCommand({ Bucket: buckets.sourceBucket, Key: 'located/photo.jpg' }));
    const stored = Buffer.from(await response.Body!.transformToByteArray());
    const exif = (await sharp(stored).metadata()).exif;
    expect(exifTags(exif).filter((tag) => tag.startsWith('GPS:'))).toEqual([]);
    expect(exifText(exif, 0x8298)).toBe('(c) Ann');
    expect((await sharp(stored).raw().toBuffer()).equals(await sharp(tagged).raw().toBuffer())).toBe(true);
  }, 60_000);

  it('quarantines a hostile upload (an HTML page named .jpg) with its reason, and never serves it', async () => {
    await upload('evil.jpg', '<html><script>alert(1)</script></html>', 'image/jpeg');
    await emulator.settled();
    const status = await call('GET', '/images/evil.jpg');
    expect(status).toMatchObject({ status: 200, body: { key: 'evil.jpg', status: 'quarantined', reason: 'unsupported_media_type' } });
    for (const path of ['/evil.jpg', '/evil.jpg?width=100', '/_quarantine/evil.jpg', '/_uploads/evil.jpg']) {
      expect((await served(path)).status, path).toBe(404);
    }
  }, 60_000);

  it('makes eager presets of a ready upload, and nothing of a staged or quarantined one', async () => {
    const cached = await listKeys(buckets.s3, buckets.cacheBucket);
    // The preset `thumb` (width=80) was made when the upload was moved to its key, not asked for.
    expect(cached).toContain('photos/new.jpg/width=80');
    expect(cached.filter((key) => /_uploads|_quarantine|evil/.test(key))).toEqual([]);
    expect(lines.filter((line) => line.startsWith('invalidated') && /_uploads|_quarantine/.test(line))).toEqual([]);
  });

  it('deletes a batch (200), and the image is no longer served', async () => {
    const answer = await call('DELETE', '/images', { body: { keys: ['photos/new.jpg', 'gone.jpg'] } });
    expect(answer).toMatchObject({ status: 200, body: { succeeded_count: 2, failed_count: 0 } });
    await emulator.settled();
    expect((await served('/photos/new.jpg?width=100')).status).toBe(404);
    expect((await call('GET', '/images/photos%2Fnew.jpg')).status).toBe(404);
    // The variants made while it was ready (width=100 served, the preset `thumb` warmed) are gone from the cache bucket.
    expect((await listKeys(buckets.s3, buckets.cacheBucket)).filter((key) => key.startsWith('photos/new.jpg/'))).toEqual([]);
  }, 60_000);

  it('lets the pages it serves post an upload to LocalStack: the construct’s CORS rule, for its own origins only', async () => {
    const port = new URL(emulator.url).port;
    const origins = ['127.0.0.1', 'localhost', '[::1]'].map((name) => `http://${name}:${port}`);
    const { CORSRules } = await buckets.s3.send(new GetBucketCorsCommand({ Bucket: buckets.sourceBucket }));
    expect(CORSRules).toEqual([
      { ID: 'manage-uploads', AllowedMethods: ['POST'], AllowedOrigins: origins, ExposeHeaders: ['ETag'], MaxAgeSeconds: 3600 },
    ]);
    // What the browser checks: S3's answer to the page's origin allows it to be read; another origin's does not.
    const file = await photo(40, 30);
    const answer = await call('POST', '/uploads', { body: { key: 'cors/a.jpg', contentType: 'image/jpeg', contentLength: file.length } });
    const ticket = answer.body as UploadTicket;
    const post = async (origin: string) => {
      const form = new FormData();
      for (const [name, value] of Object.entries(ticket.fields)) form.append(name, value);
      form.append('file', new Blob([new Uint8Array(file)]), 'a.jpg');
      const response = await fetch(ticket.url, { method: 'POST', body: form, headers: { origin } });
      return { status: response.status, allowed: response.headers.get('access-control-allow-origin') };
    };
    expect(await post(origins[1]!)).toEqual({ status: 204, allowed: origins[1] });
    expect(await post('http://127.0.0.1:1')).toEqual({ status: 204, allowed: null });
    await emulator.settled();

    // An S3 that refuses bucket CORS costs the playground its upload, not the emulator its start.
    const logged: string[] = [];
    await allowUploadsFrom(buckets.s3, `${buckets.sourceBucket}-none`, origins, (line) => logged.push(line));
    expect(logged).toEqual([expect.stringMatching(/^the playground cannot upload: S3 refused the CORS of bucket .*-none \(/)]);
  }, 60_000);

  it('refuses, with a 403 and without running the handler, an unsigned call, a wrong secret, a tampered body, an old signature', async () => {
    const keep = { keys: ['seed.jpg'] };
    const refusals: [string, Call, string][] = [
      ['unsigned', { body: keep, unsigned: true }, 'missing_signature'],
      ['wrong secret', { body: keep, secret: 'not-test' }, 'invalid_signature'],
      ['tampered body', { body: { keys: ['other.jpg'] }, sentBody: JSON.stringify(keep) }, 'invalid_signature'],
      [
        'tampered body, hash not sent',
        { body: { keys: ['other.jpg'] }, sentBody: JSON.stringify(keep), applyChecksum: false },
        'invalid_signature',
      ],
      ['20 minutes old', { body: keep, signingDate: new Date(Date.now() - 20 * 60_000) }, 'request_expired'],
    ];
    for (const [name, options, error] of refusals) {
      const answer = await call('DELETE', '/images', options);
      expect(answer.status, name).toBe(403);
      expect(answer.body, name).toMatchObject({ error, message: expect.any(String) });
    }
    await emulator.settled();
    expect((await served('/seed.jpg?width=50')).status).toBe(200);
    // The path and the query are signed too: changed after signing, they are refused.
    expect(await call('GET', '/images?prefix=a', { sentPath: '/images?prefix=b' })).toMatchObject({
      status: 403,
      body: { error: 'invalid_signature' },
    });
    expect(await call('GET', '/images/a.jpg', { sentPath: '/images/b.jpg' })).toMatchObject({
      status: 403,
      body: { error: 'invalid_signature' },
    });
  }, 60_000);

  it('refuses a body over 6 MiB with a JSON 413, before reading the rest of it', async () => {
    const answer = await fetch(`${emulator.url}/_manage/images`, {
      method: 'DELETE',
      headers: { 'content-type': 'application/json' },
      body: Buffer.alloc(MAX_MANAGE_BODY_BYTES + 1, 0x20),
    });
    expect(answer.status).toBe(413);
    expect(await answer.json()).toMatchObject({ error: 'body_too_large' });
  });

  it('accepts a signature without x-amz-content-sha256, over the body as sent', async () => {
    const answer = await call('DELETE', '/images', { body: { keys: ['never-there.jpg'] }, applyChecksum: false });
    expect(answer).toMatchObject({ status: 200, body: { succeeded_files: ['never-there.jpg'] } });
  });

  it('answers the handler’s own refusals once signed: an unknown route, a bad body', async () => {
    expect(await call('GET', '/nothing')).toMatchObject({ status: 404, body: { error: 'route_not_found' } });
    expect(await call('POST', '/uploads', { body: { key: '_uploads/x.jpg', contentType: 'image/jpeg', contentLength: 10 } })).toMatchObject(
      { status: 400, body: { error: 'reserved_key' } },
    );
  });

  it('imports from a legacy server: the good image ready and served, the page quarantined and listed; the status kept under _imports/', async () => {
    const items = [
      { url: `${legacyBase}/photo.jpg`, key: 'legacy/photo.jpg' },
      { url: `${legacyBase}/page.jpg`, key: 'legacy/page.jpg' },
    ];
    const started = await call('POST', '/imports', { body: { items } });
    expect(started).toMatchObject({ status: 202, body: { status: 'running', total: 2 } });
    await emulator.settled();
    const status = await call('GET', `/imports/${started.body.id}`);
    expect(status).toMatchObject({ status: 200, body: { status: 'complete', total: 2, succeeded: 1, failed: 1 } });
    expect(status.body.failures).toEqual([
      { key: 'legacy/page.jpg', url: `${legacyBase}/page.jpg`, reason: expect.stringMatching(/^unsupported_media_type: /) },
    ]);
    const image = await served('/legacy/photo.jpg?width=150');
    expect(image.status).toBe(200);
    expect(await sharp(Buffer.from(await image.arrayBuffer())).metadata()).toMatchObject({ width: 150, height: 100 });
    expect((await served('/legacy/page.jpg')).status).toBe(404);
    expect((await call('GET', '/images/legacy%2Fpage.jpg')).body).toMatchObject({
      status: 'quarantined',
      reason: 'unsupported_media_type',
    });
    const kept = (await listKeys(buckets.s3, buckets.sourceBucket)).filter((key) => key.startsWith(`_imports/${started.body.id}/`));
    expect(kept.sort()).toEqual([`_imports/${started.body.id}/failures.csv`, `_imports/${started.body.id}/status.json`]);
    // Nothing under _imports/ is served.
    expect((await served(`/_imports/${started.body.id}/status.json`)).status).toBe(404);
  }, 60_000);
});
