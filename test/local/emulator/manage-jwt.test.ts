// `npm start` with a JWT issuer: the `/_manage/user/` routes take a Bearer
// token signed HS256 with the emulator's secret, checked as API Gateway's JWT
// authoriser checks one (a refusal is a 401 and the handler never runs), and
// confine its caller to `users/{sub}/`; a browser's upload through them is
// validated and served. The IAM routes still want SigV4.

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signJwt } from '../../../local/emulator/jwt';
import { startEmulator, type RunningEmulator } from '../../../local/emulator/start';
import { postUpload } from '../../manage/support';
import { createTestBuckets, type TestBuckets } from '../../support/s3';

const ISSUER = 'https://issuer.example.com';
const hour = () => Math.floor(Date.now() / 1000) + 3600;
const token = (claims: Record<string, unknown> = {}, secret?: string) =>
  signJwt({ iss: ISSUER, aud: 'local-app', sub: 'alice', exp: hour(), ...claims }, secret);

describe('npm start: JWT callers under /_manage/user/', () => {
  let buckets: TestBuckets;
  let emulator: RunningEmulator;

  beforeAll(async () => {
    buckets = await createTestBuckets('emulator-manage-jwt');
    const images = await mkdtemp(join(tmpdir(), 'manage-jwt-images-'));
    await writeFile(
      join(images, 'seed.jpg'),
      await sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } })
        .jpeg()
        .toBuffer(),
    );
    emulator = await startEmulator({
      images,
      s3: buckets.s3,
      buckets: { source: buckets.sourceBucket, cache: buckets.cacheBucket },
      port: 0,
      edgeCache: false,
      watchIntervalMs: 600_000,
      context: { manageJwtIssuer: ISSUER, manageJwtAudience: 'local-app' },
      log: () => {},
    });
  }, 120_000);

  afterAll(async () => {
    await emulator?.close();
    await buckets?.cleanup();
  });

  async function call(method: string, path: string, authorization?: string, body?: unknown) {
    const headers: Record<string, string> = { ...(authorization ? { authorization } : {}) };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${emulator.url}/_manage${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  }

  it("uploads under the caller's prefix with a Bearer token; the validator makes it ready and it is served", async () => {
    const file = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3a7' } })
      .jpeg()
      .toBuffer();
    const ticket = await call('POST', '/user/uploads', `Bearer ${token()}`, {
      key: 'users/alice/cat.jpg',
      contentType: 'image/jpeg',
      contentLength: file.length,
    });
    expect(ticket.status, JSON.stringify(ticket.body)).toBe(200);
    expect(await postUpload(ticket.body, file)).toMatchObject({ status: 204 });
    await emulator.settled();
    expect(await call('GET', '/user/images/users/alice/cat.jpg', `Bearer ${token()}`)).toMatchObject({
      status: 200,
      body: { status: 'ready', width: 64, height: 48 },
    });
    expect((await fetch(`${emulator.url}/users/alice/cat.jpg?width=32`)).status).toBe(200);
  });

  it("refuses another's key, 403 forbidden_key, and lists only the caller's prefix", async () => {
    const refused = await call('POST', '/user/uploads', `Bearer ${token()}`, {
      key: 'users/bob/cat.jpg',
      contentType: 'image/jpeg',
      contentLength: 10,
    });
    expect(refused).toMatchObject({ status: 403, body: { error: 'forbidden_key' } });
    const bob = await call('GET', '/user/images', `Bearer ${token({ sub: 'bob' })}`);
    expect(bob).toMatchObject({ status: 200, body: { images: [] } });
  });

  it('answers 401, naming the problem, for a token the JWT authoriser would refuse; the handler never runs', async () => {
    const now = Math.floor(Date.now() / 1000);
    const [header, payload] = token().split('.');
    const cases: [string | undefined, string][] = [
      [undefined, 'missing_token'],
      ['Basic dGVzdDp0ZXN0', 'missing_token'],
      ['Bearer not-a-jwt', 'malformed_token'],
      [`Bearer ${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.`, 'malformed_token'],
      [`Bearer ${token({}, 'another secret')}`, 'invalid_token'],
      [
        `Bearer ${header}.${Buffer.from(JSON.stringify({ iss: ISSUER, aud: 'local-app', sub: 'bob', exp: hour() })).toString('base64url')}.${token().split('.')[2]}`,
        'invalid_token',
      ],
      [`Bearer ${token({ exp: now - 1 })}`, 'token_expired'],
      [`Bearer ${token({ exp: undefined })}`, 'token_expired'],
      [`Bearer ${token({ nbf: now + 600 })}`, 'token_expired'],
      [`Bearer ${token({ iat: now + 600 })}`, 'token_expired'],
      [`Bearer ${token({ iss: 'https://elsewhere.example.com' })}`, 'wrong_issuer'],
      [`Bearer ${token({ aud: 'another-app' })}`, 'wrong_audience'],
    ];
    for (const [authorization, error] of cases) {
      const answer = await call('GET', '/user/images', authorization);
      expect(answer, authorization).toMatchObject({ status: 401, body: { error } });
    }
    // An access token names its app client in client_id, not aud.
    expect((await call('GET', '/user/images', `Bearer ${token({ aud: undefined, client_id: 'local-app' })}`)).status).toBe(200);
  });

  it('keeps SigV4 on the IAM routes: a Bearer token there is a 403', async () => {
    expect(await call('GET', '/images', `Bearer ${token()}`)).toMatchObject({ status: 403, body: { error: 'malformed_signature' } });
  });
});
