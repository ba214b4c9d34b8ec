// Imports from a legacy server, against this run's LocalStack: the server is
// a real https server on loopback with a certificate made for its name
// (reached only through the web origins' test seams: loopback allowed, the
// name resolved to it, the certificate trusted); the emulator's runner runs
// the per-key function over the items. Good images end ready and readable at
// their keys; hostile ones quarantined with their reason and listed in the
// failures; a private address is refused by the SSRF guard. Then every 400
// of the contract, the 404, and the Batch Operations result schema.

import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { LookupAddress } from 'node:dns';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { S3BatchEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBatchTasks } from '../../lambda/manage/imports/batch';
import { MAX_IMPORT_ITEMS, taskKey } from '../../lambda/manage/imports/items';
import { claimedPng, gradientJpeg, opaquePng } from '../support/images';
import { selfSignedCertificate } from '../support/web-origin';
import { createTestManage, type TestManage } from './support';

const HOST = 'old.example.com';
const certificate = selfSignedCertificate(HOST);

/** The legacy server's names: its own on loopback, an intranet host at a private address. */
const resolve = async (name: string): Promise<LookupAddress[]> => [{ address: name === HOST ? '127.0.0.1' : '10.1.2.3', family: 4 }];

let manage: TestManage;
let server: Server;
let base: string;
const pages = new Map<string, { status: number; type: string; body: Buffer | string }>();

beforeAll(async () => {
  manage = await createTestManage(
    'manage-imports',
    {},
    { importRules: { allowLoopback: true, resolve, trustedCertificates: certificate.cert } },
  );
  server = createServer(certificate, (request, response) => {
    const page = pages.get(request.url ?? '') ?? { status: 404, type: 'text/plain', body: 'no such page' };
    response.writeHead(page.status, { 'content-type': page.type }).end(page.body);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `https://${HOST}:${(server.address() as AddressInfo).port}`;
  pages.set('/a.jpg', { status: 200, type: 'image/jpeg', body: await gradientJpeg(64, 48) });
  pages.set('/b.png', { status: 200, type: 'image/png', body: await opaquePng(30, 20) });
  pages.set('/page.jpg', { status: 200, type: 'image/jpeg', body: '<!doctype html><html><script>alert(1)</script></html>' });
  pages.set('/bomb.png', { status: 200, type: 'image/png', body: claimedPng(100_000, 100_000) });
  pages.set('/busy.jpg', { status: 503, type: 'text/plain', body: 'try later' });
});
afterAll(() => new Promise<void>((done) => server.close(() => done())));

const body = async (key: string) => {
  const response = await manage.s3.send(new GetObjectCommand({ Bucket: manage.sourceBucket, Key: key }));
  return { bytes: Buffer.from(await response.Body!.transformToByteArray()), contentType: response.ContentType };
};

/** Starts an import, waits for the emulator's runner, and answers its final status. */
async function imported(request: unknown) {
  const started = await manage.call('POST', '/imports', request);
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  await manage.imports.settled();
  const status = await manage.call('GET', `/imports/${started.body.id}`);
  expect(status.status).toBe(200);
  return { started: started.body, status: status.body };
}

describe('an import of inline items', () => {
  let result: Awaited<ReturnType<typeof imported>>;
  beforeAll(async () => {
    result = await imported({
      items: [
        { url: `${base}/a.jpg`, key: 'legacy/a.jpg' },
        { url: `${base}/b.png`, key: 'legacy/b.png' },
        { url: `${base}/page.jpg`, key: 'legacy/page.jpg' },
        { url: `${base}/bomb.png`, key: 'legacy/bomb.png' },
        { url: `${base}/gone.jpg`, key: 'legacy/gone.jpg' },
        { url: 'https://intranet.example.com/secret.jpg', key: 'legacy/secret.jpg' },
        { url: 'https://169.254.169.254/latest/meta-data/iam', key: 'legacy/metadata.jpg' },
        // A port nothing listens on: the server is unreachable.
        { url: `https://${HOST}:1/a.jpg`, key: 'legacy/unreachable.jpg' },
      ],
    });
  });

  it('answers 202 running with its total, then complete with its counts', () => {
    expect(result.started).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 'running', total: 8 });
    expect(result.status).toMatchObject({ id: result.started.id, status: 'complete', total: 8, succeeded: 2, failed: 6 });
    expect(result.status.reportKey).toBe(`_imports/${result.started.id}/failures.csv`);
  });

  it('stores good images ready at their keys, byte for byte, with their type', async () => {
    expect(await body('legacy/a.jpg')).toEqual({ bytes: pages.get('/a.jpg')!.body, contentType: 'image/jpeg' });
    expect((await body('legacy/b.png')).contentType).toBe('image/png');
    const status = await manage.call('GET', '/images/legacy/a.jpg');
    expect(status.body).toMatchObject({ key: 'legacy/a.jpg', status: 'ready', width: 64, height: 48, format: 'jpeg' });
  });

  it('quarantines hostile images with their reason, never at their keys, and lists them in the failures', async () => {
    const keys = await manage.sourceKeys();
    for (const [key, reason] of [
      ['legacy/page.jpg', 'unsupported_media_type'],
      ['legacy/bomb.png', 'too_many_pixels'],
    ] as const) {
      expect(keys).not.toContain(key);
      expect((await manage.call('GET', '/images/' + key)).body).toMatchObject({ key, status: 'quarantined', reason });
      expect(result.status.failures).toContainEqual({
        key,
        url: expect.any(String),
        reason: expect.stringMatching(new RegExp(`^${reason}: `)),
      });
    }
    // The bomb's bytes were read whole (its header lies, not its size): they are kept in quarantine.
    expect(keys).toContain('_quarantine/legacy/bomb.png');
  });

  it('refuses private and metadata addresses with the SSRF guard, and reports a missing page and an unreachable server; nothing stored', async () => {
    const reasons = Object.fromEntries(
      result.status.failures.map((failure: { key: string; reason: string }) => [failure.key, failure.reason]),
    );
    expect(reasons['legacy/secret.jpg']).toMatch(/^source_not_allowed: .*10\.1\.2\.3.*private/);
    expect(reasons['legacy/metadata.jpg']).toMatch(/^source_not_allowed: .*169\.254\.169\.254.*link-local/);
    expect(reasons['legacy/gone.jpg']).toMatch(/^not_found: /);
    expect(reasons['legacy/unreachable.jpg']).toMatch(/^source_unavailable: .*ECONNREFUSED/);
    const keys = await manage.sourceKeys();
    for (const key of ['legacy/secret.jpg', 'legacy/metadata.jpg', 'legacy/gone.jpg', 'legacy/unreachable.jpg']) {
      expect(keys.filter((stored) => stored.includes(key))).toEqual([]);
    }
  });

  it('writes every failure to the report', async () => {
    const report = (await body(result.status.reportKey)).bytes.toString('utf8').trim().split('\n');
    expect(report[0]).toBe('key,url,reason');
    expect(
      report
        .slice(1)
        .map((line) => line.split(',')[0])
        .sort(),
    ).toEqual(
      [
        'legacy/bomb.png',
        'legacy/gone.jpg',
        'legacy/metadata.jpg',
        'legacy/page.jpg',
        'legacy/secret.jpg',
        'legacy/unreachable.jpg',
      ].sort(),
    );
  });
});

describe('an import of a manifest in the source bucket', () => {
  const put = (key: string, text: string) => manage.s3.send(new PutObjectCommand({ Bucket: manage.sourceBucket, Key: key, Body: text }));

  it('reads a CSV of url,key lines (a header and a bad row allowed: the row fails alone)', async () => {
    await put(
      '_imports/old-site.csv',
      `url,key\n${base}/a.jpg,csv/a.jpg\n${base}/b.png,csv/b, with a comma.png\nhttp://${HOST}/a.jpg,csv/plain.jpg\n`,
    );
    const { started, status } = await imported({ manifestKey: '_imports/old-site.csv' });
    expect(started.total).toBe(3);
    expect(status).toMatchObject({ status: 'complete', succeeded: 2, failed: 1 });
    expect(status.failures).toEqual([
      { key: 'csv/plain.jpg', url: `http://${HOST}/a.jpg`, reason: expect.stringMatching(/^invalid_url: .*https/) },
    ]);
    expect((await manage.call('GET', '/images/' + encodeURIComponent('csv/b, with a comma.png'))).body.status).toBe('ready');
  });

  it('reads a JSON list of {url, key}', async () => {
    await put('_imports/old-site.json', JSON.stringify([{ url: `${base}/b.png`, key: 'json/b.png' }]));
    const { status } = await imported({ manifestKey: '_imports/old-site.json' });
    expect(status).toMatchObject({ status: 'complete', total: 1, succeeded: 1, failed: 0, failures: [] });
  });
});

describe('refusals', () => {
  const item = (key: string, url = 'https://old.example.com/a.jpg') => ({ url, key });
  const many = Array.from({ length: MAX_IMPORT_ITEMS + 1 }, (_, index) => item(`many/${index}.jpg`));
  const refusals: [string, unknown, string, RegExp][] = [
    ['a body that is not JSON', '{items', 'malformed_json', /not JSON/],
    ['an unknown field', { items: [item('a.jpg')], force: true }, 'unknown_field', /"force"/],
    ['neither items nor manifestKey', {}, 'missing_field', /"items"/],
    ['both items and manifestKey', { items: [item('a.jpg')], manifestKey: '_imports/m.csv' }, 'invalid_body', /not both/],
    ['items that are not a list', { items: 'a.jpg' }, 'invalid_field', /list/],
    ['an empty list', { items: [] }, 'no_items', /empty/],
    ['more than 10,000 items', { items: many }, 'too_many_items', /10001 items; at most 10000/],
    ['an item that is not an object', { items: [item('a.jpg'), 'b.jpg'] }, 'invalid_item', /^items\[1\] must be an object/],
    ['an item with another field', { items: [{ ...item('a.jpg'), size: 1 }] }, 'invalid_item', /items\[0\] has the field "size"/],
    [
      'a key twice',
      { items: [item('a.jpg'), item('b.jpg'), item('a.jpg')] },
      'duplicate_key',
      /items\[2\]\.key "a\.jpg" is items\[0\]\.key/,
    ],
    ['a non-https URL', { items: [item('a.jpg', 'http://old.example.com/a.jpg')] }, 'invalid_url', /items\[0\]\.url must be https/],
    ['a URL that is not one', { items: [item('a.jpg', 'old.example.com/a.jpg')] }, 'invalid_url', /items\[0\]\.url .* is not a URL/],
    ['a URL with credentials', { items: [item('a.jpg', 'https://me:pw@old.example.com/a.jpg')] }, 'invalid_url', /credentials/],
    ['a traversing key', { items: [item('a/../../b.jpg')] }, 'invalid_key', /items\[0\]\.key/],
    ['a key that is no string', { items: [{ url: 'https://old.example.com/a.jpg', key: 7 }] }, 'invalid_field', /items\[0\]\.key/],
    ['a reserved key', { items: [item('ok.jpg'), item('_imports/x.jpg')] }, 'reserved_key', /items\[1\]\.key/],
    [
      'an item too long for a Batch Operations manifest',
      { items: [item('a.jpg', `https://old.example.com/${'x'.repeat(1000)}`)] },
      'invalid_item',
      /items\[0\] is too long/,
    ],
    ['a manifest outside _imports/', { manifestKey: 'photos/list.csv' }, 'invalid_manifest', /under _imports\//],
    ['a manifest that is not there', { manifestKey: '_imports/nothing.csv' }, 'manifest_not_found', /_imports\/nothing\.csv/],
  ];
  it.each(refusals)('%s is a 400', async (_name, request, error, message) => {
    const before = await manage.sourceKeys();
    const answer = await manage.call('POST', '/imports', request);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error, message: expect.stringMatching(message) });
    // Nothing was written: no manifest, no status.
    expect(await manage.sourceKeys()).toEqual(before);
  });

  it('an unknown import is a 404, as is an id that is none', async () => {
    for (const id of ['0b6f2d1e-4a1c-4f7e-9d59-3c2a1b0e9f11', 'not-an-id', '..%2F_uploads']) {
      const answer = await manage.call('GET', `/imports/${id}`);
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({ error: 'not_found', message: expect.stringMatching(/No import has the id/) });
    }
  });

  it('the other methods are a 405 naming the allowed one', async () => {
    expect((await manage.call('GET', '/imports')).headers.allow).toBe('POST');
    expect((await manage.call('DELETE', '/imports/0b6f2d1e-4a1c-4f7e-9d59-3c2a1b0e9f11')).status).toBe(405);
  });
});

describe('the Batch Operations answer (invocation schema 2.0), from the per-key function on LocalStack', () => {
  const event = (keys: string[]): S3BatchEvent => ({
    invocationSchemaVersion: '2.0',
    invocationId: 'invocation-1',
    job: { id: 'job-1' },
    tasks: keys.map((s3Key, index) => ({
      taskId: `task-${index}`,
      s3Key,
      s3VersionId: null,
      s3BucketArn: `arn:aws:s3:::${manage.sourceBucket}`,
    })),
  });

  it('answers a result per task: Succeeded, PermanentFailure with the reason, TemporaryFailure for a server that failed', async () => {
    const result = await runBatchTasks(
      { s3: manage.s3 },
      manage.config,
      event([
        taskKey({ url: `${base}/a.jpg`, key: 'batch/a.jpg' }),
        taskKey({ url: `${base}/page.jpg`, key: 'batch/page.jpg' }),
        taskKey({ url: `${base}/busy.jpg`, key: 'batch/busy.jpg' }),
        'not-an-item',
      ]),
      { allowLoopback: true, resolve, trustedCertificates: certificate.cert },
    );
    expect(result).toEqual({
      invocationSchemaVersion: '2.0',
      treatMissingKeysAs: 'PermanentFailure',
      invocationId: 'invocation-1',
      results: [
        { taskId: 'task-0', resultCode: 'Succeeded', resultString: 'ready: 64x48 jpeg' },
        { taskId: 'task-1', resultCode: 'PermanentFailure', resultString: expect.stringMatching(/^unsupported_media_type: /) },
        { taskId: 'task-2', resultCode: 'TemporaryFailure', resultString: expect.stringMatching(/^source_unavailable: .*503/) },
        { taskId: 'task-3', resultCode: 'PermanentFailure', resultString: expect.stringMatching(/^invalid_item: /) },
      ],
    });
    expect(await manage.sourceKeys()).toContain('batch/a.jpg');
  });

  it('reads a task key Batch Operations passes decoded as well as encoded', async () => {
    const result = await runBatchTasks(
      { s3: manage.s3 },
      manage.config,
      event([JSON.stringify({ url: `${base}/b.png`, key: 'batch/b.png' })]),
      {
        allowLoopback: true,
        resolve,
        trustedCertificates: certificate.cert,
      },
    );
    expect(result.results[0]).toMatchObject({ resultCode: 'Succeeded', resultString: 'ready: 30x20 png' });
  });
});
