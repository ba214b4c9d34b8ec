// The local edge emulator end to end, over HTTP, as `npm start -- --images`
// runs it: the generated CloudFront Function, the edge cache, the cache
// bucket, the real origin handler and the source watcher, on this run's
// LocalStack. Sources are generated into a temporary folder; responses are
// decoded with sharp.

import { CopyObjectCommand, DeleteObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../../lambda/origin/config';
import { DEFERRED_AVIF_CACHE_CONTROL } from '../../../lambda/origin/responses';
import { browserCacheControl, DEFAULT_BROWSER_MAX_AGE_SECONDS } from '../../../lib/viewer-response-function';
import { startEmulator, type RunningEmulator } from '../../../local/emulator/start';
import { imageUrl, withSignature } from '../../../lambda/client';
import { signedImageUrl, signedPrefix } from '../../../lambda/client/sign';
import {
  alphaPng,
  animatedGif,
  animatedWebp,
  cmykJpeg,
  gradientJpeg,
  isNear,
  noiseImage,
  ORIENTATION_CORNERS,
  orientedJpeg,
  pixelAt,
  png16,
  webpImage,
  type Rgb,
} from '../../support/images';
import { createTestBuckets, listKeys, putObject, testS3Client, type TestBuckets } from '../../support/s3';

// ------------------------------------------------------------------ fixtures

const ACCEPT = {
  avif: 'image/avif,image/webp,image/apng,image/*,*/*;q=0.8',
  webp: 'image/webp,*/*',
  plain: '*/*',
} as const;
type Client = keyof typeof ACCEPT;
const CLIENTS = Object.keys(ACCEPT) as Client[];

const SIGNING_SECRET = 'emulator-test-secret-0123456789';
/** What a browser is told to keep a variant for: `public, max-age=3600`. */
const BROWSER_CACHE_CONTROL = browserCacheControl(DEFAULT_BROWSER_MAX_AGE_SECONDS);
const PHOTO = { width: 5184, height: 3456 }; // 18 MP, a 3:2 camera frame

/**
 * A camera-like 18 MP JPEG: a smooth gradient with sensor-like grain, so it
 * is several megabytes like a real photo. Painted straight into a typed array
 * (images.ts paints pixel by pixel, which takes ~10 s at this size).
 */
function photoJpeg(width: number, height: number): Promise<Buffer> {
  const data = new Uint8Array(width * height * 3);
  let state = 0x2545f491; // xorshift32: deterministic grain
  for (let y = 0, i = 0; y < height; y++) {
    const v = y / (height - 1);
    for (let x = 0; x < width; x++) {
      const u = x / (width - 1);
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      data[i++] = 10 + u * 230 + (state & 31) - 16;
      data[i++] = 10 + v * 230 + ((state >> 5) & 31) - 16;
      data[i++] = 10 + (1 - (u + v) / 2) * 230 + ((state >> 10) & 31) - 16;
    }
  }
  return sharp(data, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 90 })
    .toBuffer();
}

/** Keys a file system and a URL both make awkward; each source has its own width, so a response tells which was read. */
const AWKWARD_KEYS: Record<string, number> = {
  'with space.jpg': 101,
  'a+b.jpg': 102,
  '#1 hash.jpg': 103,
  'café/größe ü.png': 104,
  'nested/deeper/still/deepest.webp': 105,
  '日本/写真 1.jpg': 106,
  'mixed/+ # % é.jpg': 107,
  'UPPER/IMG_0001.JPG': 108,
};
const AWKWARD_HEIGHT = 50;

/** Files under --images that are not images the service reads: uploaded all the same, as `aws s3 sync` would. */
const NOT_IMAGES: Record<string, string> = {
  'notes.txt': 'holiday photos, unsorted',
  'formats/vector.svg': '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>',
  '.DS_Store': '\0\0\0\u0001Bud1',
  'nested/readme.md': '# nested',
  'formats/data.json': '{"not":"an image"}',
  'Thumbs.db': 'thumbs',
  jpg: 'a file called jpg, with no extension',
};

async function awkwardImage(key: string, width: number): Promise<Buffer> {
  const image = await gradientJpeg(width, AWKWARD_HEIGHT);
  if (key.endsWith('.png')) return sharp(image).png().toBuffer();
  if (key.endsWith('.webp')) return sharp(image).webp().toBuffer();
  return image;
}

async function writeTree(folder: string, files: Record<string, Buffer | string>): Promise<void> {
  await Promise.all(
    Object.entries(files).map(async ([path, body]) => {
      const file = join(folder, ...path.split('/'));
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, body);
    }),
  );
}

// ------------------------------------------------------------------ HTTP helpers

interface Answer {
  status: number;
  headers: Headers;
  body: Buffer;
  redirected: boolean;
  url: string;
}

interface RequestOptions {
  client?: Client;
  method?: string;
  headers?: Record<string, string>;
  redirect?: 'follow' | 'manual' | 'error';
}

async function request(base: string, path: string, options: RequestOptions = {}): Promise<Answer> {
  const response = await fetch(base + path, {
    method: options.method ?? 'GET',
    headers: { accept: ACCEPT[options.client ?? 'plain'], ...options.headers },
    redirect: options.redirect ?? 'follow',
  });
  return {
    status: response.status,
    headers: response.headers,
    body: Buffer.from(await response.arrayBuffer()),
    redirected: response.redirected,
    url: response.url,
  };
}

/**
 * A request to the emulator that says it is for `host`, as a browser does on a page whose
 * name was rebound to 127.0.0.1 (fetch will not let a caller choose the Host header).
 */
function requestFor(host: string, base: string, path: string, options: { method?: string; body?: Buffer } = {}): Promise<Answer> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { method: options.method ?? 'GET', headers: { host } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () =>
        resolve({
          status: response.statusCode!,
          headers: new Headers(Object.entries(response.headers).map(([name, value]) => [name, String(value)])),
          body: Buffer.concat(chunks),
          redirected: false,
          url: url.href,
        }),
      );
    });
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}

/** A source key as a URL path: every segment percent-encoded (`#` as `%23`, `+` as `%2B`). */
const pathOf = (key: string) => '/' + key.split('/').map(encodeURIComponent).join('/');

const json = (answer: Answer) => JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>;
const md5Etag = (body: Buffer) => `"${createHash('md5').update(body).digest('hex')}"`;

function origin(answer: Answer) {
  return { cache: answer.headers.get('x-cache'), origin: answer.headers.get('x-origin') };
}

const MISS_LAMBDA = { cache: 'Miss from cloudfront', origin: 'lambda' };
const MISS_BUCKET = { cache: 'Miss from cloudfront', origin: 'cache-bucket' };
const HIT = { cache: 'Hit from cloudfront', origin: null };
const AT_EDGE = { cache: 'FunctionGeneratedResponse from cloudfront', origin: null };

/** What the body really is: format, displayed size of one frame, frames. */
async function decoded(body: Buffer) {
  const meta = await sharp(body).metadata();
  return {
    format: meta.format === 'heif' && meta.compression === 'av1' ? 'avif' : meta.format,
    width: meta.width,
    height: meta.pageHeight ?? meta.height,
    frames: meta.pages ?? 1,
    orientation: meta.orientation ?? 1,
  };
}

async function cacheKeysUnder(s3: S3Client, bucket: string, sourceKey: string): Promise<string[]> {
  return (await listKeys(s3, bucket)).filter((key) => key.startsWith(sourceKey + '/'));
}

/**
 * The variants of `key` in the cache bucket once the invalidation of its change is over, `path`
 * asked again. Its second pass deletes what a miss stored while it ran, which may be the new image.
 */
async function storedOnceInvalidated(key: string, path: string): Promise<string[]> {
  await edge.settled();
  expect((await request(edge.url, path)).status).toBe(200);
  await edge.settled();
  return cacheKeysUnder(s3, edge.cacheBucket, key);
}

async function eventually<T>(what: string, attempt: () => Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await attempt();
    if (result !== undefined) return result;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// ------------------------------------------------------------------ the emulators

const s3 = testS3Client();
const folders: string[] = [];
const buckets: TestBuckets[] = [];
const running: RunningEmulator[] = [];

/** The main emulator (edge cache on) and its sources. */
let edge: RunningEmulator;
/** Edge cache off: every request goes to the origin group. */
let noEdge: RunningEmulator;
/** Signed URLs required. */
let signed: RunningEmulator;
let expectedKeys: string[];

async function start(label: string, files: Record<string, Buffer | string>, options: { edgeCache: boolean; signingSecret?: string }) {
  const folder = await mkdtemp(join(tmpdir(), `emulator-${label}-`));
  folders.push(folder);
  await writeTree(folder, files);
  const pair = await createTestBuckets(`emulator ${label}`);
  buckets.push(pair);
  const emulator = await startEmulator({
    s3,
    port: 0,
    images: folder,
    edgeCache: options.edgeCache,
    signingSecret: options.signingSecret,
    buckets: { source: pair.sourceBucket, cache: pair.cacheBucket },
    watchIntervalMs: 200,
    log: () => {},
  });
  running.push(emulator);
  return emulator;
}

beforeAll(async () => {
  const [photo, noise, awkward] = await Promise.all([
    photoJpeg(PHOTO.width, PHOTO.height),
    noiseImage(2500, 2500, 'png'),
    Promise.all(Object.entries(AWKWARD_KEYS).map(async ([key, width]) => [key, await awkwardImage(key, width)] as const)),
  ]);
  const images: Record<string, Buffer> = {
    'photos/DSC 0001.JPG': photo,
    'formats/alpha.png': await alphaPng(600, 400),
    'formats/still.webp': await webpImage(640, 480),
    'formats/oriented.jpg': await orientedJpeg(6, 600, 400),
    'formats/cmyk.jpg': await cmykJpeg(500, 300),
    'formats/deep.png': await png16(400, 300),
    'formats/anim.gif': await animatedGif(4, 120, 80),
    'formats/anim.webp': await animatedWebp(4, 120, 80),
    'large/noise.png': noise,
    'cache/photo.jpg': await gradientJpeg(800, 600),
    'cache/untouched.jpg': await gradientJpeg(64, 48),
    'photos/IMG_0002': await gradientJpeg(200, 100), // a JPEG without an extension
    'replace/via api +#é.jpg': await gradientJpeg(300, 200),
    'replace/via s3 é.jpg': await gradientJpeg(300, 200),
    'replace/delete me.jpg': await gradientJpeg(300, 200),
    ...Object.fromEntries(awkward),
  };
  expectedKeys = Object.keys({ ...images, ...NOT_IMAGES }).sort();
  const small = await gradientJpeg(800, 600);
  [edge, noEdge, signed] = await Promise.all([
    start('edge', { ...images, ...NOT_IMAGES }, { edgeCache: true }),
    start('no-edge', { 'cache/photo.jpg': small, 'notes.txt': 'not an image' }, { edgeCache: false }),
    start('signed', { 'signed/café #1.jpg': await gradientJpeg(400, 300) }, { edgeCache: true, signingSecret: SIGNING_SECRET }),
  ]);
}, 90_000);

afterAll(async () => {
  await Promise.all(running.map((emulator) => emulator.close()));
  await Promise.all(buckets.map((pair) => pair.cleanup()));
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
}, 60_000);

// ------------------------------------------------------------------ tests

describe('--images', () => {
  it('uploads every file under the folder, keyed by its relative path, whatever its type', async () => {
    expect([...edge.sources].sort()).toEqual(expectedKeys);
    expect((await listKeys(s3, edge.sourceBucket)).sort()).toEqual(expectedKeys);
    const listed = json(await request(edge.url, '/_api/sources')) as unknown as { key: string }[];
    expect(listed.map((source) => source.key).sort()).toEqual(expectedKeys);
    expect([...noEdge.sources].sort()).toEqual(['cache/photo.jpg', 'notes.txt']);
  });

  it('gives each upload the Content-Type its extension names, and none without one (S3 then says octet-stream)', async () => {
    const contentType = async (key: string) => (await s3.send(new HeadObjectCommand({ Bucket: edge.sourceBucket, Key: key }))).ContentType;
    expect(await contentType('formats/vector.svg')).toBe('image/svg+xml');
    expect(await contentType('notes.txt')).toBe('text/plain; charset=utf-8');
    expect(await contentType('photos/DSC 0001.JPG')).toBe('image/jpeg');
    // S3's own default: AWS says binary/octet-stream, LocalStack application/octet-stream.
    expect(await contentType('photos/IMG_0002')).toMatch(/^(binary|application)\/octet-stream$/);
    expect(await contentType('Thumbs.db')).toMatch(/^(binary|application)\/octet-stream$/);
  });

  it('serves an image whose name has no extension: its type comes from its bytes', async () => {
    const answer = await request(edge.url, '/photos/IMG_0002?w=100');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('image/jpeg');
    expect(await decoded(answer.body)).toMatchObject({ format: 'jpeg', width: 100, height: 50 });
  });

  it('serves each awkward key at its percent-encoded path (spaces, +, #, %, non-ASCII, nested folders)', async () => {
    const answers = await Promise.all(
      Object.entries(AWKWARD_KEYS).map(async ([key, width]) => ({
        key,
        width,
        answer: await request(edge.url, pathOf(key) + '?format=json'),
      })),
    );
    for (const { key, width, answer } of answers) {
      expect(answer.status, key).toBe(200);
      expect(json(answer), key).toMatchObject({ width, height: AWKWARD_HEIGHT });
    }
  });

  it('serves the image itself, and a literal + in a path is the same key as %2B', async () => {
    const encoded = await request(edge.url, pathOf('a+b.jpg') + '?w=51');
    expect(encoded.status).toBe(200);
    expect(encoded.headers.get('content-type')).toBe('image/jpeg');
    expect(await decoded(encoded.body)).toMatchObject({ format: 'jpeg', width: 51, height: 25 });

    const literal = await request(edge.url, '/a+b.jpg?w=51');
    expect(origin(literal)).toEqual(HIT);
    expect(literal.headers.get('etag')).toBe(encoded.headers.get('etag'));
  });

  it('answers a file that is not an image it reads (an SVG, text, no extension) with a JSON 415, as AWS would, and stores nothing', async () => {
    for (const key of ['notes.txt', 'formats/vector.svg', 'formats/data.json', 'nested/readme.md', 'Thumbs.db', 'jpg']) {
      const answer = await request(edge.url, pathOf(key) + '?w=10');
      expect(answer.status, key).toBe(415);
      expect(json(answer).error, key).toBe('unsupported_media_type');
    }
    await edge.settled();
    for (const key of ['notes.txt', 'formats/vector.svg', 'jpg']) expect(await cacheKeysUnder(s3, edge.cacheBucket, key), key).toEqual([]);
  });
});

describe('the Host header', () => {
  const portOf = (emulator: RunningEmulator) => new URL(emulator.url).port;

  function expectRefused(answer: Answer, label: string) {
    expect(answer.status, label).toBe(421);
    expect(answer.headers.get('content-type'), label).toBe('application/json');
    expect(json(answer).error, label).toBe('misdirected_request');
    expect(String(json(answer).message), label).toContain('DNS rebinding');
  }

  it('refuses a rebound name on the signing endpoint, the upload endpoint and an image URL, and nothing changes', async () => {
    const port = portOf(signed);
    const foreign = [`rebind.attacker.example:${port}`, `127.0.0.1.nip.io:${port}`, `localhost.:${port}`, `localhost:${Number(port) + 1}`];
    const signPath = `/_api/sign?path=${encodeURIComponent('/signed/café #1.jpg')}&query=w%3D300`;
    for (const host of foreign) {
      const answer = await requestFor(host, signed.url, signPath);
      expectRefused(answer, host);
      expect(answer.body.toString()).not.toContain('sig=');
    }

    const planted = 'rebind/planted.jpg';
    const upload = await requestFor(foreign[0]!, edge.url, '/_api/sources' + pathOf(planted), {
      method: 'PUT',
      body: await gradientJpeg(40, 30),
    });
    expectRefused(upload, 'upload');
    expect(await listKeys(s3, edge.sourceBucket)).not.toContain(planted);

    const image = await requestFor(`rebind.attacker.example:${portOf(edge)}`, edge.url, pathOf('formats/still.webp') + '?w=77');
    expectRefused(image, 'image');
    await edge.settled();
    // Nothing was made or cached for it: the first request with a right Host is a miss all the way to the Lambda.
    const first = await request(edge.url, pathOf('formats/still.webp') + '?w=77');
    expect(first.status).toBe(200);
    expect(origin(first)).toEqual(MISS_LAMBDA);
  });

  it('answers its loopback names with its port, in any case', async () => {
    const port = portOf(signed);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LocalHost:${port}`, `[::1]:${port}`]) {
      const health = await requestFor(host, signed.url, '/_health');
      expect(health.status, host).toBe(200);
      const sign = await requestFor(host, signed.url, `/_api/sign?path=${encodeURIComponent('/signed/café #1.jpg')}&query=w%3D300`);
      expect(sign.status, host).toBe(200);
      expect(String(json(sign).url), host).toMatch(/^\/signed\/café #1\.jpg\?w=300&sig=/);
    }
  });
});

describe('real-photo-like sources for AVIF, WebP-only and plain clients', () => {
  interface Case {
    key: string;
    query: string;
    width: number;
    height: number;
    /** The format per client: what Content-Type names and the body is. */
    formats: Record<Client, string>;
    frames?: number;
    /** The AVIF client's first answer is WebP while its AVIF is made after the response. */
    avifFollows?: true;
  }
  const STILL = { avif: 'avif', webp: 'webp', plain: 'jpeg' };
  const CASES: Case[] = [
    { key: 'photos/DSC 0001.JPG', query: '?w=1200', width: 1200, height: 800, formats: { ...STILL, avif: 'webp' }, avifFollows: true },
    { key: 'formats/alpha.png', query: '?w=300', width: 300, height: 200, formats: { avif: 'avif', webp: 'webp', plain: 'png' } },
    { key: 'formats/still.webp', query: '?w=320', width: 320, height: 240, formats: STILL },
    { key: 'formats/oriented.jpg', query: '?w=300', width: 300, height: 200, formats: STILL },
    { key: 'formats/cmyk.jpg', query: '?w=250', width: 250, height: 150, formats: STILL },
    // 16-bit but opaque: the plain client gets the opaque family, JPEG.
    { key: 'formats/deep.png', query: '?w=200', width: 200, height: 150, formats: STILL },
    { key: 'formats/anim.gif', query: '?w=60', width: 60, height: 40, frames: 4, formats: { avif: 'webp', webp: 'webp', plain: 'gif' } },
    { key: 'formats/anim.webp', query: '?w=60', width: 60, height: 40, frames: 4, formats: { avif: 'webp', webp: 'webp', plain: 'gif' } },
  ];
  const answers = new Map<string, Answer>();

  beforeAll(async () => {
    await Promise.all(
      CASES.flatMap((c) =>
        CLIENTS.map(async (client) => answers.set(`${c.key} ${client}`, await request(edge.url, pathOf(c.key) + c.query, { client }))),
      ),
    );
  }, 60_000);

  for (const c of CASES) {
    it(`${c.key}${c.query}: ${CLIENTS.map((client) => c.formats[client]).join(' / ')} at ${c.width}x${c.height}`, async () => {
      for (const client of CLIENTS) {
        const answer = answers.get(`${c.key} ${client}`)!;
        const label = `${c.key} for ${client}`;
        expect(answer.status, label).toBe(200);
        expect(answer.headers.get('content-type'), label).toBe(`image/${c.formats[client]}`);
        expect(answer.headers.get('content-length'), label).toBe(String(answer.body.length));
        expect(answer.headers.get('vary')?.toLowerCase(), label).toBe('accept');
        expect(answer.headers.get('x-content-type-options'), label).toBe('nosniff');
        const deferred = c.avifFollows && client === 'avif';
        // The viewer-response function gives browsers an hour, where CloudFront keeps the variant a year.
        expect(answer.headers.get('cache-control'), label).toBe(deferred ? DEFERRED_AVIF_CACHE_CONTROL : BROWSER_CACHE_CONTROL);
        expect(answer.headers.get('etag'), label).toBe(md5Etag(answer.body));
        expect(await decoded(answer.body), label).toMatchObject({
          format: c.formats[client],
          width: c.width,
          height: c.height,
          frames: c.frames ?? 1,
        });
      }
    });
  }

  it('gives the AVIF client of a 1200 px photo, asking again, the AVIF made after its first answer, from the cache bucket', async () => {
    await edge.settled();
    const again = await request(edge.url, pathOf('photos/DSC 0001.JPG') + '?w=1200', { client: 'avif' });
    expect(again.headers.get('content-type')).toBe('image/avif');
    expect(again.headers.get('x-origin')).toBe('cache-bucket');
    expect(await decoded(again.body)).toMatchObject({ format: 'avif', width: 1200, height: 800 });
  });

  it('shows the EXIF-rotated photo upright for every client: red top-left, blue top-right, no orientation tag left', async () => {
    for (const client of CLIENTS) {
      const body = answers.get(`formats/oriented.jpg ${client}`)!.body;
      expect((await decoded(body)).orientation, client).toBe(1);
      expect(isNear(await pixelAt(body, 10, 10), ORIENTATION_CORNERS.topLeft), client).toBe(true);
      expect(isNear(await pixelAt(body, 289, 10), ORIENTATION_CORNERS.topRight), client).toBe(true);
      expect(isNear(await pixelAt(body, 10, 189), ORIENTATION_CORNERS.bottomLeft), client).toBe(true);
    }
  });

  it('turns CMYK and 16-bit sources into 8-bit sRGB', async () => {
    for (const key of ['formats/cmyk.jpg', 'formats/deep.png']) {
      for (const client of CLIENTS) {
        const meta = await sharp(answers.get(`${key} ${client}`)!.body).metadata();
        expect(meta.space, `${key} for ${client}`).toBe('srgb');
        expect(meta.depth, `${key} for ${client}`).toBe('uchar');
      }
    }
  });

  it('keeps the transparency of the PNG in AVIF, WebP and PNG', async () => {
    for (const client of CLIENTS) {
      const body = answers.get(`formats/alpha.png ${client}`)!.body;
      expect((await sharp(body).metadata()).hasAlpha, client).toBe(true);
      expect((await pixelAt(body, 0, 0)).alpha, client).toBe(0);
      expect((await pixelAt(body, 150, 100)).alpha, client).toBe(255);
    }
  });

  it('serves the 18 MP photo at full size when no size is asked for', async () => {
    const answer = await request(edge.url, pathOf('photos/DSC 0001.JPG'), { client: 'plain' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('image/jpeg');
    expect(await decoded(answer.body)).toMatchObject({ format: 'jpeg', ...PHOTO });
  }, 60_000);
});

describe('cache semantics', () => {
  const KEY = 'cache/photo.jpg';
  const PATH = pathOf(KEY);

  it('gives equivalent URLs (aliases, casing, order, leading zeros, dpr, defaults, format=auto) one variant and one ETag', async () => {
    // An explicit WebP, and a negotiated one (which the origin may choose differently): two variants.
    type Spelling = [string, Client];
    const groups: [Spelling, ...Spelling[]][] = [
      [
        ['?width=400&height=200&format=webp', 'plain'],
        ['?W=0400&H=0200&FM=webp', 'plain'],
        ['?h=200&fit=cover&f=webp&w=400', 'avif'],
        ['?Width=200&dpr=2&HEIGHT=100&Format=WEBP', 'plain'],
        ['?w=400&h=200&fm=webp&position=center&rotate=0&enlarge=0&flip=false', 'plain'],
      ],
      [
        ['?w=400&h=200', 'webp'],
        ['?w=400&h=200&utm_source=newsletter', 'webp'],
        ['?w=400&h=200&format=auto', 'webp'],
        ['?W=200&dpr=2&h=100&accept=avif', 'webp'],
      ],
    ];
    const etags: string[] = [];
    for (const [[firstQuery, firstClient], ...spellings] of groups) {
      const first = await request(edge.url, PATH + firstQuery, { client: firstClient });
      expect(first.status).toBe(200);
      expect(origin(first)).toEqual(MISS_LAMBDA);
      expect(first.headers.get('etag')).toBe(md5Etag(first.body));
      expect(await decoded(first.body)).toMatchObject({ format: 'webp', width: 400, height: 200 });
      etags.push(first.headers.get('etag')!);

      const repeats = await Promise.all(spellings.map(([query, client]) => request(edge.url, PATH + query, { client })));
      repeats.forEach((answer, i) => {
        const label = spellings[i]![0];
        expect(answer.status, label).toBe(200);
        expect(origin(answer), label).toEqual(HIT);
        expect(answer.headers.get('etag'), label).toBe(first.headers.get('etag'));
        expect(answer.body.equals(first.body), label).toBe(true);
      });
    }

    // The origin answers before it stores the variant, as the streaming Lambda does.
    await edge.settled();
    const stored = await cacheKeysUnder(s3, edge.cacheBucket, KEY);
    expect(stored.sort()).toEqual([`${KEY}/width=400,height=200,accept=webp`, `${KEY}/width=400,height=200,format=webp`]);
    for (const key of stored) {
      const head = await s3.send(new HeadObjectCommand({ Bucket: edge.cacheBucket, Key: key }));
      expect(etags).toContain(head.ETag);
    }
  });

  it('answers If-None-Match with 304 from the edge cache, and HEAD with the length but no body', async () => {
    const full = await request(edge.url, PATH + '?w=400&h=200&fm=webp');
    const etag = full.headers.get('etag')!;
    for (const ifNoneMatch of [etag, `W/${etag}`, `"something-else", ${etag}`, '*']) {
      const notModified = await request(edge.url, PATH + '?h=200&w=400&f=webp', { headers: { 'if-none-match': ifNoneMatch } });
      expect(notModified.status, ifNoneMatch).toBe(304);
      expect(origin(notModified)).toEqual(HIT);
      expect(notModified.headers.get('etag')).toBe(etag);
      expect(notModified.body.length).toBe(0);
    }
    const changed = await request(edge.url, PATH + '?w=400&h=200&fm=webp', { headers: { 'if-none-match': '"stale"' } });
    expect(changed.status).toBe(200);
    expect(changed.body.equals(full.body)).toBe(true);

    const head = await request(edge.url, PATH + '?w=400&h=200&fm=webp', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(origin(head)).toEqual(HIT);
    expect(head.headers.get('content-type')).toBe('image/webp');
    expect(head.headers.get('content-length')).toBe(String(full.body.length));
    expect(head.headers.get('etag')).toBe(etag);
    expect(head.body.length).toBe(0);
  });

  it('HEAD on a miss everywhere reaches the origin as a HEAD, sends no body, and leaves the full image for the next GET', async () => {
    for (const [emulator, query] of [
      [edge, '?w=123'],
      [noEdge, '?w=124'],
    ] as const) {
      const head = await request(emulator.url, PATH + query, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(origin(head)).toEqual(MISS_LAMBDA);
      expect(head.headers.get('content-type')).toBe('image/jpeg');
      expect(head.body.length).toBe(0);
      const length = Number(head.headers.get('content-length'));
      expect(length).toBeGreaterThan(1000);
      await emulator.settled();

      // Neither the edge cache nor the cache bucket kept an empty body: the GET gets the whole variant from the bucket.
      const get = await request(emulator.url, PATH + query);
      expect(get.status).toBe(200);
      expect(origin(get)).toEqual(MISS_BUCKET);
      expect(get.body.length).toBe(length);
      expect(get.headers.get('etag')).toBe(md5Etag(get.body));
      expect(head.headers.get('etag')).toBe(get.headers.get('etag'));
      expect(await decoded(get.body)).toMatchObject({ format: 'jpeg', width: Number(query.slice(3)) });
    }
    const again = await request(edge.url, PATH + '?w=123');
    expect(origin(again)).toEqual(HIT);
    expect(again.body.length).toBeGreaterThan(1000);
  });

  it('with the edge cache off, repeats come from the cache bucket with the same ETag and bytes', async () => {
    const first = await request(noEdge.url, PATH + '?width=400&height=200&format=webp');
    expect(first.status).toBe(200);
    expect(origin(first)).toEqual(MISS_LAMBDA);
    const etag = first.headers.get('etag')!;
    await noEdge.settled();

    const [again, alias] = await Promise.all([
      request(noEdge.url, PATH + '?width=400&height=200&format=webp'),
      request(noEdge.url, PATH + '?H=0200&W=400&f=webp', { client: 'avif' }),
    ]);
    for (const answer of [again, alias]) {
      expect(answer.status).toBe(200);
      expect(origin(answer)).toEqual(MISS_BUCKET);
      expect(answer.headers.get('etag')).toBe(etag);
      expect(answer.headers.get('content-type')).toBe('image/webp');
      expect(answer.headers.get('cache-control')).toBe(BROWSER_CACHE_CONTROL);
      expect(answer.body.equals(first.body)).toBe(true);
    }

    const notModified = await request(noEdge.url, PATH + '?width=400&height=200&format=webp', { headers: { 'if-none-match': etag } });
    expect(notModified.status).toBe(304);
    expect(origin(notModified)).toEqual(MISS_BUCKET);
    expect(notModified.body.length).toBe(0);

    const head = await request(noEdge.url, PATH + '?width=400&height=200&format=webp', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(origin(head)).toEqual(MISS_BUCKET);
    expect(head.headers.get('content-length')).toBe(String(first.body.length));
    expect(head.body.length).toBe(0);
  });

  it('format=json reports the size as displayed, after EXIF orientation', async () => {
    const answer = await request(edge.url, pathOf('formats/oriented.jpg') + '?format=json&w=10');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/json');
    expect(json(answer)).toMatchObject({ width: 600, height: 400, format: 'jpeg', frames: 1, hasAlpha: false });
    expect(json(answer).placeholder).toMatch(/^data:image\/webp;base64,/);

    const animation = json(await request(edge.url, pathOf('formats/anim.gif') + '?fm=json'));
    expect(animation).toMatchObject({ width: 120, height: 80, format: 'gif', frames: 4 });
  });

  it('answers a missing source with a JSON 404 that is not stored in the cache bucket', async () => {
    const answer = await request(edge.url, pathOf('cache/no such photo.jpg') + '?w=100');
    expect(answer.status).toBe(404);
    expect(origin(answer)).toEqual(MISS_LAMBDA);
    expect(answer.headers.get('content-type')).toBe('application/json');
    expect(json(answer)).toMatchObject({ error: 'not_found', message: expect.any(String) });
    expect(await cacheKeysUnder(s3, edge.cacheBucket, 'cache/no such photo.jpg')).toEqual([]);
  });

  it('answers an absurd width with a JSON 400 at the edge, never reaching an origin', async () => {
    for (let i = 0; i < 2; i++) {
      const answer = await request(edge.url, pathOf('cache/untouched.jpg') + '?w=99999');
      expect(answer.status).toBe(400);
      expect(origin(answer)).toEqual(AT_EDGE);
      expect(answer.headers.get('content-type')).toBe('application/json');
      const body = json(answer);
      expect(body.error).toBe('invalid_parameter');
      expect(body.message).toContain('width');
      expect(body.message).toContain('99999');
    }
    expect(await cacheKeysUnder(s3, edge.cacheBucket, 'cache/untouched.jpg')).toEqual([]);
  });

  it('/_health is 200', async () => {
    for (const emulator of [edge, noEdge, signed]) {
      const answer = await request(emulator.url, '/_health');
      expect(answer.status).toBe(200);
      expect(json(answer)).toEqual({ status: 'ok' });
    }
  });
});

describe('watermarks', () => {
  // The emulator's own watermark, `logo` (a white badge outlined in dark blue), on a gradient.
  const KEY = 'cache/photo.jpg';

  it('puts the watermark on the image from one cache entry for every spelling, and leaves the rest of the image alone', async () => {
    const plain = await request(edge.url, pathOf(KEY) + '?w=400&format=png');
    const first = await request(edge.url, pathOf(KEY) + '?w=400&wm=logo&format=png');
    expect(first.status).toBe(200);
    expect(origin(first)).toEqual(MISS_LAMBDA);
    expect(await decoded(first.body)).toMatchObject({ format: 'png', width: 400, height: 300 });
    // A quarter of the width (100x33), 9 px in from the bottom right (x 291-390, y 258-290); its red dot at (308, 275).
    const dot = await pixelAt(first.body, 308, 275);
    expect(dot.r - dot.g, JSON.stringify(dot)).toBeGreaterThan(80);
    expect(isNear(dot, await pixelAt(plain.body, 308, 275), 20)).toBe(false);
    expect(await pixelAt(first.body, 40, 40)).toEqual(await pixelAt(plain.body, 40, 40));

    const again = await request(edge.url, pathOf(KEY) + '?format=png&WATERMARK=Logo&width=0400');
    expect(origin(again)).toEqual(HIT);
    expect(again.body.equals(first.body)).toBe(true);
    await edge.settled();
    const stored = (await cacheKeysUnder(s3, edge.cacheBucket, KEY)).filter((key) => key.includes('watermark='));
    expect(stored).toEqual([expect.stringMatching(/^cache\/photo\.jpg\/width=400,watermark=logo\.[0-9a-f]{8},format=png$/)]);
  });

  it('serves a preset that brings the watermark, and refuses a name the deployment does not have at the edge', async () => {
    const branded = await request(edge.url, pathOf(KEY) + '?preset=branded');
    expect(branded.status).toBe(200);
    expect(await decoded(branded.body)).toMatchObject({ width: 800, height: 800 });
    const unknown = await request(edge.url, pathOf(KEY) + '?w=400&wm=nope');
    expect(unknown.status).toBe(400);
    expect(origin(unknown)).toEqual(AT_EDGE);
    expect(json(unknown)).toEqual({ error: 'invalid_parameter', message: 'Invalid watermark "nope": expected one of logo.' });
  });
});

describe('invalidation when a source changes', () => {
  /** Two variants and the original, so there is something to purge; returns their answers. */
  async function warm(key: string) {
    const [wide, narrow, original] = await Promise.all(['?w=100', '?w=50', ''].map((query) => request(edge.url, pathOf(key) + query)));
    for (const answer of [wide!, narrow!, original!]) expect(answer.status).toBe(200);
    await edge.settled();
    expect(await cacheKeysUnder(s3, edge.cacheBucket, key)).toHaveLength(3);
    return { wide: wide!, narrow: narrow!, original: original! };
  }

  it('a replacement through the playground API is served at once, and the old variants are gone', async () => {
    const key = 'replace/via api +#é.jpg';
    const before = await warm(key);
    expect(await decoded(before.wide.body)).toMatchObject({ width: 100, height: 67 });
    expect(origin(await request(edge.url, pathOf(key) + '?w=100'))).toEqual(HIT);

    const upload = await fetch(edge.url + '/_api/sources' + pathOf(key), {
      method: 'PUT',
      headers: { 'content-type': 'image/jpeg' },
      body: await gradientJpeg(240, 240),
    });
    expect(upload.status).toBe(201);
    expect(await upload.json()).toEqual({ key });
    // The upload returns once the variants are purged and the edge invalidated.
    expect(await cacheKeysUnder(s3, edge.cacheBucket, key)).toEqual([]);

    const after = await request(edge.url, pathOf(key) + '?w=100');
    expect(after.status).toBe(200);
    expect(origin(after)).toEqual(MISS_LAMBDA);
    expect(after.headers.get('etag')).not.toBe(before.wide.headers.get('etag'));
    expect(await decoded(after.body)).toMatchObject({ width: 100, height: 100 });
    expect(json(await request(edge.url, pathOf(key) + '?fm=json'))).toMatchObject({ width: 240, height: 240 });
  });

  it('a miss that read the old image while it was replaced leaves nothing stale behind it', async () => {
    const key = 'replace/raced.jpg';
    const put = async (body: Buffer) => {
      const upload = await fetch(edge.url + '/_api/sources' + pathOf(key), {
        method: 'PUT',
        headers: { 'content-type': 'image/jpeg' },
        body,
      });
      expect(upload.status).toBe(201);
    };
    await put(await gradientJpeg(3000, 2000));
    // A full-size AVIF takes seconds: the replacement lands while it is being made from the old image.
    const racing = request(edge.url, pathOf(key) + '?fm=avif');
    await new Promise((resolve) => setTimeout(resolve, 400));
    await put(await gradientJpeg(300, 200));

    const raced = await racing;
    expect(await decoded(raced.body)).toMatchObject({ format: 'avif', width: 3000, height: 2000 });
    // The upload returned after a second purge and invalidation, once that miss was over.
    expect(await cacheKeysUnder(s3, edge.cacheBucket, key)).toEqual([]);
    const after = await request(edge.url, pathOf(key) + '?fm=avif');
    expect(origin(after)).toEqual(MISS_LAMBDA);
    expect(await decoded(after.body)).toMatchObject({ format: 'avif', width: 300, height: 200 });
  });

  it('refuses a playground upload over the source byte limit with a JSON 413, and stores nothing', async () => {
    const key = 'uploads/too-big.jpg';
    const upload = await fetch(edge.url + '/_api/sources' + pathOf(key), {
      method: 'PUT',
      headers: { 'content-type': 'image/jpeg' },
      body: Buffer.alloc(DEFAULT_LIMITS.maxSourceBytes + 1),
    });
    expect(upload.status).toBe(413);
    expect(await upload.json()).toMatchObject({ error: 'source_too_large' });
    expect((await request(edge.url, pathOf(key))).status).toBe(404);
  });

  it('a replacement written straight to the source bucket is picked up by the watcher', async () => {
    const key = 'replace/via s3 é.jpg';
    const before = await warm(key);
    const oldEtag = before.wide.headers.get('etag');

    await putObject(s3, edge.sourceBucket, key, await gradientJpeg(200, 300), 'image/jpeg');
    const after = await eventually('the replaced image', async () => {
      const answer = await request(edge.url, pathOf(key) + '?w=100');
      return answer.headers.get('etag') !== oldEtag ? answer : undefined;
    });
    expect(after.status).toBe(200);
    expect(origin(after)).toEqual(MISS_LAMBDA);
    expect(await decoded(after.body)).toMatchObject({ width: 100, height: 150 });

    // Only the variant of the new image is left: the old w=50 and original are gone.
    const stored = await storedOnceInvalidated(key, pathOf(key) + '?w=100');
    expect(stored).toHaveLength(1);
    const head = await s3.send(new HeadObjectCommand({ Bucket: edge.cacheBucket, Key: stored[0] }));
    expect(head.ETag).toBe(after.headers.get('etag'));
    expect(json(await request(edge.url, pathOf(key) + '?fm=json'))).toMatchObject({ width: 200, height: 300 });
  });

  it('a focal point set by copying the source onto itself (its metadata replaced) moves the crop: the watcher sees the copy', async () => {
    const key = 'focus/card.jpg';
    // A tall thin crop of the 300x200 card: its colour says where across the card it was cut.
    const cropped = async (expected: Rgb) =>
      eventually(`the crop at the ${JSON.stringify(expected)} block`, async () => {
        const answer = await request(edge.url, pathOf(key) + '?w=20&h=100&format=jpeg');
        return answer.status === 200 && isNear(await pixelAt(answer.body, 10, 10), expected) ? answer : undefined;
      });
    await s3.send(
      new PutObjectCommand({
        Bucket: edge.sourceBucket,
        Key: key,
        Body: await orientedJpeg(1, 300, 200),
        ContentType: 'image/jpeg',
        Metadata: { 'focal-point': '0.1,0.5' },
      }),
    );
    const writtenAt = Date.now();
    await cropped(ORIENTATION_CORNERS.topLeft);
    // A listing tells writes apart to the second, and the copy keeps the bytes and so the ETag.
    await new Promise((resolve) => setTimeout(resolve, Math.floor(writtenAt / 1000 + 1) * 1000 - Date.now() + 20));
    await s3.send(
      new CopyObjectCommand({
        Bucket: edge.sourceBucket,
        Key: key,
        CopySource: `${edge.sourceBucket}/${encodeURIComponent(key)}`,
        MetadataDirective: 'REPLACE',
        Metadata: { 'focal-point': '0.9,0.5' },
        ContentType: 'image/jpeg',
      }),
    );
    const moved = await cropped(ORIENTATION_CORNERS.topRight);
    expect(origin(moved)).toEqual(MISS_LAMBDA);
    expect(await storedOnceInvalidated(key, pathOf(key) + '?w=20&h=100&format=jpeg')).toEqual([`${key}/width=20,height=100,format=jpeg`]);
  });

  it('a deleted source becomes a 404, and its variants are gone', async () => {
    const key = 'replace/delete me.jpg';
    await warm(key);

    await s3.send(new DeleteObjectCommand({ Bucket: edge.sourceBucket, Key: key }));
    const gone = await eventually('the 404', async () => {
      const answer = await request(edge.url, pathOf(key) + '?w=100');
      return answer.status === 404 ? answer : undefined;
    });
    expect(json(gone).error).toBe('not_found');
    expect((await request(edge.url, pathOf(key))).status).toBe(404);
    expect(await cacheKeysUnder(s3, edge.cacheBucket, key)).toEqual([]);
  });
});

describe('a variant too large for a Lambda response', () => {
  it('is a 302 to an equivalent URL that the cache bucket then serves in full', async () => {
    const path = pathOf('large/noise.png') + '?format=png';
    const redirect = await request(edge.url, path, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    expect(origin(redirect)).toEqual(MISS_LAMBDA);
    expect(redirect.headers.get('cache-control')).toBe('no-store');
    const location = redirect.headers.get('location')!;
    expect(location).toMatch(/^\/large\/noise\.png\?/);

    const followed = await request(edge.url, location);
    expect(followed.status).toBe(200);
    expect(origin(followed)).toEqual(MISS_BUCKET);
    expect(followed.headers.get('content-type')).toBe('image/png');
    expect(followed.body.length).toBeGreaterThan(4_500_000);
    expect(followed.headers.get('content-length')).toBe(String(followed.body.length));
    expect(followed.headers.get('etag')).toBe(md5Etag(followed.body));
    expect(await decoded(followed.body)).toMatchObject({ format: 'png', width: 2500, height: 2500 });

    // Equivalent: the original URL now names the same cached variant.
    const again = await request(edge.url, path);
    expect(origin(again)).toEqual(HIT);
    expect(again.headers.get('etag')).toBe(followed.headers.get('etag'));
  }, 60_000);

  it('fetch follows the redirect to the full image', async () => {
    const answer = await request(edge.url, pathOf('large/noise.png') + '?fm=png&flip=1');
    expect(answer.redirected).toBe(true);
    expect(answer.status).toBe(200);
    expect(origin(answer)).toEqual(MISS_BUCKET);
    expect(answer.body.length).toBeGreaterThan(4_500_000);
    expect(await decoded(answer.body)).toMatchObject({ format: 'png', width: 2500, height: 2500 });
  }, 60_000);
});

describe('signed URLs', () => {
  const PATH = pathOf('signed/café #1.jpg');
  const QUERY = 'w=200&fit=cover';

  async function signedUrl(path: string, query: string): Promise<string> {
    const answer = await request(signed.url, `/_api/sign?path=${encodeURIComponent(path)}&query=${encodeURIComponent(query)}`);
    expect(answer.status).toBe(200);
    return String(json(answer).url);
  }

  it('refuses an unsigned or wrongly signed request with a JSON 403 at the edge', async () => {
    const url = await signedUrl(PATH, QUERY);
    const sig = new URL(url, signed.url).searchParams.get('sig')!;
    for (const path of [
      `${PATH}?${QUERY}`,
      PATH,
      `${PATH}?${QUERY}&sig=${'A'.repeat(32)}`,
      `${PATH}?w=201&fit=cover&sig=${sig}`, // someone else's signature, stretched to a new size
    ]) {
      const answer = await request(signed.url, path);
      expect(answer.status, path).toBe(403);
      expect(origin(answer), path).toEqual(AT_EDGE);
      expect(answer.headers.get('content-type')).toBe('application/json');
      expect(json(answer).error).toBe('invalid_signature');
    }
    expect(await listKeys(s3, signed.cacheBucket)).toEqual([]);
  });

  it('signs a URL that expires when asked, which the edge serves until then; refuses a lifetime that is not whole seconds', async () => {
    const answer = await request(signed.url, `/_api/sign?path=${encodeURIComponent(PATH)}&query=${encodeURIComponent(QUERY)}&expires=60`);
    const url = String(json(answer).url);
    const exp = Number(new URL(url, signed.url).searchParams.get('exp'));
    expect(exp - Date.now() / 1000).toBeGreaterThan(50);
    expect(exp - Date.now() / 1000).toBeLessThanOrEqual(60);
    expect((await request(signed.url, url)).status).toBe(200);
    // The same signature without its time, or with another, is not valid.
    expect((await request(signed.url, url.replace(/exp=\d+&/, ''))).status).toBe(403);
    expect((await request(signed.url, url.replace(/exp=\d+/, `exp=${exp + 3600}`))).status).toBe(403);
    for (const expires of ['0', '-5', '1.5', 'soon']) {
      const refused = await request(signed.url, `/_api/sign?path=${encodeURIComponent(PATH)}&query=w%3D1&expires=${expires}`);
      expect(refused.status, expires).toBe(400);
      expect(json(refused).error).toBe('invalid_parameter');
    }
  });

  it('serves a URL from /_api/sign, in every spelling, to every client', async () => {
    const url = await signedUrl(PATH, QUERY);
    expect(url.startsWith(`${PATH}?${QUERY}&sig=`)).toBe(true);
    const sig = new URL(url, signed.url).searchParams.get('sig')!;

    const answers = await Promise.all(CLIENTS.map((client) => request(signed.url, url, { client })));
    for (const [i, client] of CLIENTS.entries()) {
      const answer = answers[i]!;
      expect(answer.status, client).toBe(200);
      expect(answer.headers.get('content-type'), client).toBe(`image/${STILL_FORMATS[client]}`);
      expect(await decoded(answer.body), client).toMatchObject({ format: STILL_FORMATS[client], width: 200, height: 150 });
    }

    const alias = await request(signed.url, `${PATH}?W=0200&FIT=cover&sig=${sig}`, { client: 'webp' });
    expect(alias.status).toBe(200);
    expect(origin(alias)).toEqual(HIT);
    expect(alias.headers.get('etag')).toBe(answers[1]!.headers.get('etag'));
  });
});

describe('expiring signed URLs and prefix grants', () => {
  const KEY = 'signed/café #1.jpg';
  const pathAndQuery = (url: string) => url.slice(new URL(url).origin.length);

  it('answers 403 at the edge once a URL has expired, though its variant is still in the edge cache', async () => {
    const expires = Math.floor(Date.now() / 1000) + 2;
    const url = pathAndQuery(signedImageUrl(signed.url, KEY, { width: 120 }, { secret: SIGNING_SECRET, expires }));
    const first = await request(signed.url, url);
    expect([first.status, origin(first)]).toEqual([200, MISS_LAMBDA]);
    const cached = await request(signed.url, url);
    expect([cached.status, origin(cached)]).toEqual([200, HIT]);

    // The same URL, once its time has passed: the function runs before the cache.
    await new Promise((resolve) => setTimeout(resolve, expires * 1000 - Date.now() + 100));
    const expired = await request(signed.url, url);
    expect([expired.status, origin(expired)]).toEqual([403, AT_EDGE]);
    expect(json(expired)).toEqual({ error: 'invalid_signature', message: 'This URL has expired.' });

    // The variant stays cached, under the one key every expiry of this image shares.
    const renewed = await request(
      signed.url,
      pathAndQuery(signedImageUrl(signed.url, KEY, { width: 120 }, { secret: SIGNING_SECRET, expires: expires + 3600 })),
    );
    expect([renewed.status, origin(renewed)]).toEqual([200, HIT]);
    expect(renewed.headers.get('etag')).toBe(first.headers.get('etag'));
  });

  it('serves every image under a granted folder in the variants the grant allows, and nothing else', async () => {
    const grant = signedPrefix('signed', { secret: SIGNING_SECRET, expires: new Date(Date.now() + 60_000), allow: [{ width: 80 }] });
    const allowed = await request(signed.url, pathAndQuery(withSignature(imageUrl(signed.url, KEY, { width: 80 }), grant)), {
      client: 'webp',
    });
    expect(allowed.status).toBe(200);
    expect(await sharp(allowed.body).metadata()).toMatchObject({ format: 'webp', width: 80 });
    for (const url of [imageUrl(signed.url, KEY, { width: 81 }), imageUrl(signed.url, KEY)]) {
      const refused = await request(signed.url, pathAndQuery(withSignature(url, grant)));
      expect([refused.status, origin(refused)], url).toEqual([403, AT_EDGE]);
    }
    const outside = signedPrefix('sign', { secret: SIGNING_SECRET, allow: [{ width: 80 }] });
    const refused = await request(signed.url, pathAndQuery(withSignature(imageUrl(signed.url, KEY, { width: 80 }), outside)));
    expect([refused.status, origin(refused)]).toEqual([403, AT_EDGE]);
  });
});

const STILL_FORMATS: Record<Client, string> = { avif: 'avif', webp: 'webp', plain: 'jpeg' };
