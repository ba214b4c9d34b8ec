// The fallback image through the real handler on LocalStack
// (lambda/origin/fallback.ts): its size bound at any requested size, what a
// remembered failure answers, HEAD, the errors it never stands in for, its
// log line, and the JSON error when the fallback itself cannot be made.

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { HttpError } from '../../lambda/origin/errors';
import { fallbackSide } from '../../lambda/origin/fallback';
import { rememberFailure } from '../../lambda/origin/failures';
import { gradientJpeg, noiseImage } from '../support/images';
import { createTestOrigin, type TestOrigin } from '../support/origin';

let origin: TestOrigin;
let unreadable: TestOrigin;

beforeAll(async () => {
  const folder = await mkdtemp(join(tmpdir(), 'fallback-origin-'));
  const file = join(folder, 'noise.png');
  // The worst case for the answer's bytes: noise (under the synth's 1 MiB), enlarged as far as asked.
  const noise = await noiseImage(560, 560, 'png');
  expect(noise.length).toBeLessThanOrEqual(1024 * 1024);
  await writeFile(file, noise);
  [origin, unreadable] = await Promise.all([
    createTestOrigin('fallback', { fallbackImage: file, requireWatermark: { 'users/': 'logo' } }),
    createTestOrigin('fallback-unreadable', { fallbackImage: join(folder, 'nope.png') }),
  ]);
  await origin.putSource('photo.jpg', await gradientJpeg(400, 300));
}, 60_000);

describe('the fallback asked at 8192 px', () => {
  it.each([
    ['width=8192,height=8192,enlarge=1,format=png', 1, 'png'],
    ['width=8192,height=4096,enlarge=1,format=png', 0.5, 'png'],
    ['width=8192,enlarge=1,format=jpeg', 1, 'jpeg'],
    ['width=8192,height=8192,enlarge=1,accept=avif', 1, 'webp'],
  ])(
    '%s stays within the inline limit: the box scaled down to the fallback side',
    async (ops, aspect, format) => {
      const side = fallbackSide(origin.config.maxInlineBytes);
      const answer = await origin.request(`/missing.jpg/${ops}`);
      expect(answer.status).toBe(404);
      expect(answer.body.length).toBeLessThanOrEqual(origin.config.maxInlineBytes);
      const meta = await sharp(answer.body).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual([format, side, Math.round(side * aspect)]);
    },
    60_000,
  );

  it('is a square of 1047 px at the default 4.5 MB limit', () => {
    expect(fallbackSide(4_500_000)).toBe(1047);
  });
});

describe('when the fallback answers', () => {
  it("answers it for a failure the origin remembers, with that failure's status", async () => {
    const uri = '/photo.jpg/width=120,format=png';
    await rememberFailure(origin.s3, origin.cacheBucket, uri, new HttpError('undecodable_image', 'The source image is damaged.'));
    const answer = await origin.request(uri);
    expect(answer.status).toBe(422);
    expect(answer.headers['content-type']).toBe('image/png');
    expect((await sharp(answer.body).metadata()).width).toBe(120);
  });

  it('answers HEAD with the headers alone', async () => {
    const answer = await origin.request('/missing.jpg/width=100,format=webp', { method: 'HEAD' });
    expect(answer.status).toBe(404);
    expect(answer.headers['content-type']).toBe('image/webp');
    expect(Number(answer.headers['content-length'])).toBeGreaterThan(0);
    expect(answer.body.length).toBe(0);
  });

  it('logs the error as its last line, with what was answered in its place', async () => {
    await origin.request('/logged.jpg/width=64,format=png');
    const line = origin.logs.filter((entry) => entry.uri === '/logged.jpg/width=64,format=png').at(-1);
    expect(line).toMatchObject({ level: 'warn', event: 'error', code: 'not_found', status: 404, fallback: { width: 64 } });
  });
});

describe('a flood of missing keys', () => {
  /** The request's last log line. */
  const lineOf = (uri: string) => origin.logs.filter((entry) => entry.uri === uri).at(-1);

  it('makes the fallback once per size and format: the next missing key runs no transform and answers the same bytes', async () => {
    const ops = 'width=150,height=100,format=webp';
    const answers = [];
    for (const key of ['flood/one.jpg', 'flood/two.jpg', 'flood/three.jpg']) answers.push(await origin.request(`/${key}/${ops}`));
    for (const answer of answers) {
      expect(answer.status).toBe(404);
      expect(answer.headers).toMatchObject({ 'content-type': 'image/webp', 'cache-control': 'public, max-age=10' });
      expect(answer.headers.etag).toBeUndefined();
      expect(answer.body.equals(answers[0]!.body)).toBe(true);
    }
    expect((await sharp(answers[0]!.body).metadata()).width).toBe(150);
    // The transform phase ran for the first only: its time in Server-Timing and the TransformTime metric.
    expect(answers.map((answer) => /transform;dur=/.test(answer.headers['server-timing'] ?? ''))).toEqual([true, false, false]);
    const lines = ['one', 'two', 'three'].map((name) => lineOf(`/flood/${name}.jpg/${ops}`));
    expect(lines.map((line) => line?.TransformTime !== undefined)).toEqual([true, false, false]);
    expect(lines.map((line) => (line?.fallback as { made?: boolean } | undefined)?.made)).toEqual([true, false, false]);
    expect(lines[1]).toMatchObject({
      level: 'warn',
      event: 'error',
      code: 'not_found',
      status: 404,
      fallback: { width: 150, height: 100 },
    });
  });

  it('makes it again for another size, or another format', async () => {
    for (const ops of ['width=151,height=100,format=webp', 'width=150,height=100,format=png']) {
      const answer = await origin.request(`/flood/four.jpg/${ops}`);
      expect(answer.status).toBe(404);
      expect(lineOf(`/flood/four.jpg/${ops}`)).toMatchObject({ fallback: { made: true } });
    }
  });

  it('remembers a fallback the ops cannot make: the next missing key answers the JSON error without trying', async () => {
    const ops = 'width=100,max_bytes=1,format=jpeg';
    for (const key of ['flood/five.jpg', 'flood/six.jpg']) {
      const answer = await origin.request(`/${key}/${ops}`);
      expect(answer.status).toBe(404);
      expect(answer.json().error).toBe('not_found');
    }
    const failed = (key: string) => origin.logs.find((entry) => entry.uri === `/${key}/${ops}` && entry.event === 'fallback_failed');
    expect(failed('flood/five.jpg')).toMatchObject({ code: 'not_found', made: true });
    expect(failed('flood/six.jpg')).toMatchObject({ code: 'not_found', made: false });
    expect(lineOf(`/flood/six.jpg/${ops}`)?.TransformTime).toBeUndefined();
  });
});

describe('when it does not', () => {
  it.each([
    ['format=json', '/missing.jpg/format=json', 404, 'not_found'],
    ['a refusal (a required watermark)', '/users/me.jpg/width=100', 403, 'watermark_required'],
    ['a bad canonical URI', '/missing.jpg/width=abc', 400, 'invalid_parameter'],
    // The fallback cannot meet max_bytes=1 either: the error it stood for is answered.
    ['a fallback that cannot be made (max_bytes=1)', '/missing.jpg/width=100,max_bytes=1,format=jpeg', 404, 'not_found'],
  ])('%s answers the JSON error', async (_name, uri, status, code) => {
    const answer = await origin.request(uri);
    expect(answer.status).toBe(status);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(answer.json().error).toBe(code);
  });

  it('a fallback file that cannot be read answers the JSON error, and says why in the log', async () => {
    const answer = await unreadable.request('/missing.jpg/width=100');
    expect(answer.status).toBe(404);
    expect(answer.json().error).toBe('not_found');
    expect(unreadable.logs.find((entry) => entry.event === 'fallback_failed')).toMatchObject({ code: 'not_found' });
  });

  it('none of them, nor any fallback, leaves a variant in the cache bucket', async () => {
    expect((await origin.cachedKeys()).filter((key) => !key.startsWith('.failures/'))).toEqual([]);
  });
});
