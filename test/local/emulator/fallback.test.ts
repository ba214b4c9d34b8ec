// The fallback image through the emulator, as `npm start -- --fallback-image
// <file>` runs it (the deployment's fallbackImage over the generated
// CloudFront Function, the edge cache and the real origin on LocalStack): a
// missing key, a text file and a truncated JPEG answer the fallback at the
// size and format asked, with their error's status, and leave nothing in the
// cache bucket; more missing keys at one size reuse the fallback made for
// it; a bad parameter, a bad signature and format=json still answer JSON.

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../../local/emulator/start';
import { gradientJpeg, isNear, pixelAt } from '../../support/images';
import { createTestBuckets, listKeys, testS3Client, type TestBuckets } from '../../support/s3';

const SIGNING_SECRET = 'fallback-secret-0123456789abcdef';
/** The fallback's colour: no source here has it. */
const MAGENTA = { r: 230, g: 20, b: 200 };

let emulator: RunningEmulator;
let signed: RunningEmulator;
const buckets: TestBuckets[] = [];
let folder: string;

async function start(label: string, fallback: string, signingSecret?: string): Promise<RunningEmulator> {
  const pair = await createTestBuckets(`fallback ${label}`);
  buckets.push(pair);
  return startEmulator({
    s3: testS3Client(),
    port: 0,
    images: join(folder, 'images'),
    edgeCache: true,
    signingSecret,
    buckets: { source: pair.sourceBucket, cache: pair.cacheBucket },
    // What the command line's --fallback-image sets (local/emulator/cli.ts).
    context: { fallbackImage: fallback },
    log: () => {},
  });
}

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'fallback-'));
  const fallback = join(folder, 'placeholder.png');
  await writeFile(
    fallback,
    await sharp({ create: { width: 400, height: 300, channels: 3, background: MAGENTA } })
      .png()
      .toBuffer(),
  );
  const whole = await gradientJpeg(400, 300);
  const images = join(folder, 'images');
  await mkdir(join(images, 'broken'), { recursive: true });
  await writeFile(join(images, 'photo.jpg'), whole);
  await writeFile(join(images, 'notes.txt'), 'not an image');
  await writeFile(join(images, 'broken', 'truncated.jpg'), whole.subarray(0, Math.floor(whole.length / 2)));
  [emulator, signed] = await Promise.all([start('plain', fallback), start('signed', fallback, SIGNING_SECRET)]);
}, 120_000);

afterAll(async () => {
  await Promise.all([emulator, signed].map((running) => running?.close()));
  await Promise.all(buckets.map((pair) => pair.cleanup()));
  if (folder) await rm(folder, { recursive: true, force: true });
});

async function get(running: RunningEmulator, path: string) {
  const response = await fetch(running.url + path);
  return { status: response.status, headers: response.headers, body: Buffer.from(await response.arrayBuffer()) };
}

describe('a deployment with a fallback image', () => {
  it.each([
    ['a missing key', '/nowhere/missing.jpg', 404],
    ['a text file', '/notes.txt', 415],
    ['a truncated JPEG', '/broken/truncated.jpg', 422],
  ])('answers %s with the fallback at the size and format asked, with its error status', async (_name, path, status) => {
    for (const [query, format, size] of [
      ['w=200&h=150&fit=cover&format=webp', 'webp', [200, 150]],
      ['w=120&format=png', 'png', [120, 90]],
    ] as const) {
      const answer = await get(emulator, `${path}?${query}`);
      expect(answer.status, `${path}?${query}`).toBe(status);
      expect(answer.headers.get('content-type')).toBe(`image/${format}`);
      // The error's own short lifetime: a source uploaded now shows within seconds.
      expect(answer.headers.get('cache-control')).toBe('public, max-age=10');
      expect(answer.headers.get('etag')).toBeNull();
      const meta = await sharp(answer.body).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual([format, ...size]);
      expect(isNear(await pixelAt(answer.body, 10, 10), MAGENTA, 12)).toBe(true);
    }
    // Never stored: the cache bucket holds no variant for it, nor a remembered failure.
    expect(await listKeys(testS3Client(), emulator.cacheBucket)).toEqual([]);
  });

  it('makes the fallback once for a size and format: more missing keys at it answer the same bytes, with no transform', async () => {
    const answers = [];
    for (const name of ['one', 'two', 'three']) answers.push(await get(emulator, `/flood/${name}.jpg?w=180&format=webp`));
    for (const answer of answers) {
      expect(answer.status).toBe(404);
      expect(answer.headers.get('content-type')).toBe('image/webp');
      expect(answer.headers.get('cache-control')).toBe('public, max-age=10');
      expect(answer.body.equals(answers[0]!.body)).toBe(true);
    }
    // The origin's Server-Timing names the transform phase when it ran.
    expect(answers.map((answer) => /transform;dur=/.test(answer.headers.get('server-timing') ?? ''))).toEqual([true, false, false]);
    expect(await listKeys(testS3Client(), emulator.cacheBucket)).toEqual([]);
  });

  it('still serves the sources that are there, and stores their variants', async () => {
    const answer = await get(emulator, '/photo.jpg?w=100&format=png');
    expect(answer.status).toBe(200);
    expect(isNear(await pixelAt(answer.body, 10, 10), MAGENTA, 60)).toBe(false);
    // Written after the answer went out.
    await expect.poll(() => listKeys(testS3Client(), emulator.cacheBucket)).toHaveLength(1);
  });

  it('answers JSON for a bad parameter and for format=json', async () => {
    const bad = await get(emulator, '/nowhere/missing.jpg?w=abc');
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toBe('application/json');
    const described = await get(emulator, '/nowhere/missing.jpg?format=json');
    expect(described.status).toBe(404);
    expect(described.headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(described.body.toString()).error).toBe('not_found');
  });

  it('answers JSON for a bad signature, and the fallback for a signed URL to a missing key', async () => {
    const refused = await get(signed, `/nowhere/missing.jpg?w=200&sig=${'A'.repeat(32)}`);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(refused.body.toString()).error).toBe('invalid_signature');
    const signing = await get(signed, `/_api/sign?path=${encodeURIComponent('/nowhere/missing.jpg')}&query=${encodeURIComponent('w=200')}`);
    const url = String(JSON.parse(signing.body.toString()).url);
    const answer = await get(signed, url);
    expect(answer.status).toBe(404);
    expect((await sharp(answer.body).metadata()).width).toBe(200);
  });
});
