// The hostile-input suite's shared parts: hostile sources made in code (no
// file is committed), an emulator on its own buckets reached over raw HTTP
// (fetch would normalise `..` and escapes away), and the one check every
// answer must pass: the contract's status and JSON error code, a
// Cache-Control that keeps errors from sticking, no internal detail in the
// body, one structured log entry per error, and nothing written to the cache
// bucket.

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { deflateSync } from 'node:zlib';
import { dirname, join } from 'node:path';
import sharp from 'sharp';
import { afterAll, expect } from 'vitest';
import { FAILURES_PREFIX, failureKey } from '../../lambda/origin/cache-keys';
import { DEFERRED_AVIF_CACHE_CONTROL } from '../../lambda/origin/responses';
import { startEmulator, type EmulatorStartOptions, type RunningEmulator } from '../../local/emulator/start';
import { gradientJpeg } from '../support/images';
import type { OriginResponse, TestOrigin } from '../support/origin';
import { browserCacheControl, DEFAULT_BROWSER_MAX_AGE_SECONDS } from '../../lib/viewer-response-function';
import { createTestBuckets, listKeys, putObject, testS3Client } from '../support/s3';
import { isFindingsKey } from '../../lambda/origin/cache-keys';

// ------------------------------------------------------------------ sources

/** The one good source every origin and emulator here has, for "still serving". */
export const OK_KEY = 'ok/fine.jpg';
export const OK_SIZE = { width: 80, height: 60 };
export const okJpeg = () => gradientJpeg(OK_SIZE.width, OK_SIZE.height);

/** Deterministic bytes (xorshift32) that start like no known file format. */
export function seededBytes(length: number, seed = 0x2545f491): Buffer {
  const bytes = Buffer.alloc(length);
  let state = seed;
  for (let i = 0; i < length; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    bytes[i] = state & 0xff;
  }
  bytes[0] = 0x00;
  return bytes;
}

/** The first `fraction` of the bytes: an upload cut short. */
export const truncated = (bytes: Buffer, fraction: number) => bytes.subarray(0, Math.floor(bytes.length * fraction));

/** A copy with every byte from `from` to the last 2 flipped: the header reads, the rest is garbage. */
export function scrambled(bytes: Buffer, from: number): Buffer {
  const copy = Buffer.from(bytes);
  for (let i = from; i < copy.length - 2; i++) copy[i] = copy[i]! ^ 0x5a;
  return copy;
}

/**
 * A GIF written by hand: a `width` x `height` black screen and `frames` frames
 * of one red pixel each, at successive positions, kept (disposal 1), 100 ms.
 * About 20 bytes a frame, so thousands of frames fit in a few tens of KB.
 */
export function gifOfPixelFrames(frames: number, width: number, height: number): Buffer {
  const screen = Buffer.alloc(7);
  screen.writeUInt16LE(width, 0);
  screen.writeUInt16LE(height, 2);
  screen[4] = 0x80; // a global colour table of 2 colours
  const parts = [Buffer.from('GIF89a', 'latin1'), screen, Buffer.from([0, 0, 0, 255, 0, 0])];
  parts.push(Buffer.from([0x21, 0xff, 0x0b]), Buffer.from('NETSCAPE2.0', 'latin1'), Buffer.from([3, 1, 0, 0, 0])); // loop forever
  for (let i = 0; i < frames; i++) {
    parts.push(Buffer.from([0x21, 0xf9, 4, 0x04, 10, 0, 0, 0])); // graphic control: keep, 100 ms
    const descriptor = Buffer.alloc(10);
    descriptor[0] = 0x2c;
    descriptor.writeUInt16LE(i % width, 1);
    descriptor.writeUInt16LE(Math.floor(i / width) % height, 3);
    descriptor.writeUInt16LE(1, 5);
    descriptor.writeUInt16LE(1, 7);
    // LZW, minimum code size 2: clear (4), colour 1, end (5), packed in 3-bit codes.
    parts.push(descriptor, Buffer.from([2, 2, 0x4c, 0x01, 0]));
  }
  parts.push(Buffer.from([0x3b]));
  return Buffer.concat(parts);
}

/** A GIF whose `screen`^2 logical screen holds one `frame`^2 frame, coding one pixel (the rest is background): libvips grows its canvas to the frame. */
export function gifWithFrame(screen: number, frame: number): Buffer {
  const gif = gifOfPixelFrames(1, screen, screen);
  const descriptor = gif.length - 16; // then the frame's 5 bytes of data and the trailer
  gif.writeUInt16LE(frame, descriptor + 5);
  gif.writeUInt16LE(frame, descriptor + 7);
  return gif;
}

/** An animated WebP whose first frame (ANMF) says it is `side`^2 on its 16x16 canvas. */
export async function webpFrameBeyondCanvas(side: number): Promise<Buffer> {
  const frames = await sharp({ create: { width: 16, height: 32, channels: 3, background: '#f00' } })
    .raw()
    .toBuffer();
  const webp = Buffer.from(
    await sharp(frames, { raw: { width: 16, height: 32, channels: 3, pageHeight: 16 } })
      .webp({ lossless: true })
      .toBuffer(),
  );
  const anmf = webp.indexOf(Buffer.from('ANMF', 'latin1')) + 8; // its payload: x, y, width - 1, height - 1 in 3 bytes each
  webp.writeUIntLE(side - 1, anmf + 6, 3);
  webp.writeUIntLE(side - 1, anmf + 9, 3);
  return webp;
}

/**
 * A TIFF written by hand: one page (IFD) of each size, 8-bit grey, every
 * pixel `grey`, each in one deflated strip, so a page of many megapixels
 * takes a few KB. Pages of different sizes are what no encoder here writes.
 */
export function tiffPages(pages: { width: number; height: number }[], grey = 0x80): Buffer {
  const strips = pages.map(({ width, height }) => deflateSync(Buffer.alloc(width * height, grey)));
  const IFD_BYTES = 2 + 9 * 12 + 4;
  const parts: Buffer[] = [Buffer.from([0x49, 0x49, 42, 0, 8, 0, 0, 0])]; // little-endian, the first IFD at 8
  let at = 8;
  pages.forEach(({ width, height }, i) => {
    const strip = strips[i]!;
    const stripAt = at + IFD_BYTES;
    const next = i + 1 < pages.length ? stripAt + strip.length : 0;
    const ifd = Buffer.alloc(IFD_BYTES);
    ifd.writeUInt16LE(9, 0);
    // tag, type (3 short, 4 long), value: width, height, 8 bits, deflate, min-is-black, strip offset, 1 sample, rows per strip, strip bytes.
    const entries = [
      [256, 4, width],
      [257, 4, height],
      [258, 3, 8],
      [259, 3, 8],
      [262, 3, 1],
      [273, 4, stripAt],
      [277, 3, 1],
      [278, 4, height],
      [279, 4, strip.length],
    ];
    entries.forEach(([tag, type, value], e) => {
      ifd.writeUInt16LE(tag!, 2 + e * 12);
      ifd.writeUInt16LE(type!, 4 + e * 12);
      ifd.writeUInt32LE(1, 6 + e * 12);
      if (type === 3) ifd.writeUInt16LE(value!, 10 + e * 12);
      else ifd.writeUInt32LE(value!, 10 + e * 12);
    });
    ifd.writeUInt32LE(next, 2 + 9 * 12);
    parts.push(ifd, strip);
    at = stripAt + strip.length;
  });
  return Buffer.concat(parts);
}

// ------------------------------------------------------------------ HTTP

export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

/** GET (or HEAD) with the path sent exactly as given: no normalisation, no re-encoding. */
export function httpGet(base: string, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: url.hostname, port: url.port, path, method, headers, agent }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('error', reject);
      incoming.on('end', () => {
        const flat: Record<string, string> = {};
        for (const [name, value] of Object.entries(incoming.headers)) {
          if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        resolve({ status: incoming.statusCode ?? 0, headers: flat, body: Buffer.concat(chunks) });
      });
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

// ------------------------------------------------------------------ the emulator

export interface HostileEmulator {
  url: string;
  sourceBucket: string;
  cacheBucket: string;
  /** Structured entries the emulator's origin logged (warnings and errors). */
  logs: Record<string, unknown>[];
  get(path: string, headers?: Record<string, string>): Promise<Answer>;
  cachedKeys(): Promise<string[]>;
}

/**
 * `npm start -- --images <folder>` on this run's LocalStack, on fresh buckets
 * that already hold `sources` (so the source watcher sees no change), with
 * the edge cache on, as deployed, and the origin's SVG policy from `options`.
 * Stopped and removed after the file.
 */
export async function startHostileEmulator(
  label: string,
  sources: Record<string, Buffer | string>,
  options: Pick<EmulatorStartOptions, 'svgPolicy'> = {},
): Promise<HostileEmulator> {
  const s3 = testS3Client();
  const buckets = await createTestBuckets(label);
  const folder = await mkdtemp(join(tmpdir(), `hostile-${label.replace(/\W+/g, '-')}-`));
  await mkdir(dirname(join(folder, OK_KEY)), { recursive: true });
  await writeFile(join(folder, OK_KEY), await okJpeg());
  await Promise.all(Object.entries(sources).map(([key, body]) => putObject(s3, buckets.sourceBucket, key, body, 'image/jpeg')));

  const logs: Record<string, unknown>[] = [];
  let emulator: RunningEmulator | undefined;
  afterAll(async () => {
    await emulator?.close();
    await buckets.cleanup();
    await rm(folder, { recursive: true, force: true });
  });
  emulator = await startEmulator({
    s3,
    port: 0,
    images: folder,
    edgeCache: true,
    buckets: { source: buckets.sourceBucket, cache: buckets.cacheBucket },
    watchIntervalMs: 60_000,
    ...options,
    log: (line) => {
      if (line.startsWith('{')) logs.push(JSON.parse(line) as Record<string, unknown>);
    },
  });
  const url = emulator.url;
  return {
    url,
    sourceBucket: buckets.sourceBucket,
    cacheBucket: buckets.cacheBucket,
    logs,
    get: (path, headers) => httpGet(url, path, headers),
    // After the variants of the misses answered so far are written (the origin answers first).
    cachedKeys: async () => {
      await emulator!.settled();
      return listKeys(s3, buckets.cacheBucket);
    },
  };
}

// ------------------------------------------------------------------ the checks

export interface Expected {
  status: number;
  /** The JSON error code; required for 4xx and 5xx. */
  code?: string;
}

export const CLIENT_ERROR_CACHE_CONTROL = 'public, max-age=10';
export const VARIANT_CACHE_CONTROL = 'public, max-age=31536000, immutable';
/** What a browser is told to keep a variant for, after the viewer-response function (the emulator runs it; the handler does not). */
export const BROWSER_CACHE_CONTROL = browserCacheControl(DEFAULT_BROWSER_MAX_AGE_SECONDS);

/**
 * Words that mean internal detail escaped into a body: libraries, the SDK,
 * the storage, the network, stack frames, file paths. Viewer input quoted
 * back in a message is removed before this is applied (see withoutEcho).
 */
export const INTERNAL_DETAIL =
  /vips|\bsharp\b|libjpeg|libpng|libwebp|libheif|rsvg|libxml|glib|cairo|\bS3\b|aws|sdk|ECONN|EPIPE|ETIMEDOUT|127\.0\.0\.1|localhost|NoSuch|AccessDenied|Exception|Error:|TypeError|\bat .*\(|\.[cm]?[jt]s:\d|node_modules|stack|bucket|\/(tmp|var|work|opt|home|etc|proc|usr)\//i;

/** The grammar's messages quote the viewer's value or URI; that part is the viewer's own text. */
const ECHO = /^(Invalid [a-z_]+ |Invalid query string: |Not a canonical image URI: )"([\s\S]*)"(?=: | is |\.$)/;

/** The message with the viewer's quoted input replaced, and that input, if any. */
export function withoutEcho(message: string): { rest: string; echo?: string } {
  const match = ECHO.exec(message);
  if (!match) return { rest: message };
  return { rest: message.replace(ECHO, '$1"…"'), echo: match[2]!.replace(/…$/, '') };
}

/** Every way the viewer's text may appear after decoding, to find an echo in. */
function spellings(sent: string): string[] {
  const forms = [sent];
  for (const form of [sent, sent.replace(/\+/g, ' ')]) {
    try {
      forms.push(decodeURIComponent(form));
    } catch {
      // not decodable as a whole; the raw form stands
    }
  }
  return forms;
}

/**
 * The contract for one answer: status; for errors a JSON body of exactly
 * `error` and `message`, the code, a short message with no internal detail,
 * `nosniff`, and a Cache-Control that is brief for 4xx and `no-store` for
 * 5xx; for images a long-lived Cache-Control and an image type.
 */
export function expectAnswer(
  answer: Answer | OriginResponse,
  expected: Expected,
  context: { sent: string; buckets: string[]; variantCacheControl?: string },
) {
  const text = answer.body.toString('utf8');
  const where = `${context.sent.slice(0, 120)} → ${answer.status} ${text.slice(0, 200)}`;
  expect(answer.status, where).toBe(expected.status);
  if (expected.status < 400) {
    if (expected.status === 200) {
      // Or a WebP answered at once while the negotiated AVIF follows (lambda/origin/avif-claims.ts).
      const deferred = answer.headers['content-type'] === 'image/webp' && answer.headers['cache-control'] === DEFERRED_AVIF_CACHE_CONTROL;
      if (!deferred) expect(answer.headers['cache-control'], where).toBe(context.variantCacheControl ?? VARIANT_CACHE_CONTROL);
      expect(answer.headers['content-type'], where).toMatch(/^(image\/(jpeg|png|webp|avif|gif)|application\/json)$/);
    }
    return;
  }
  expect(answer.headers['content-type'], where).toBe('application/json');
  expect(answer.headers['x-content-type-options'], where).toBe('nosniff');
  expect(answer.headers['cache-control'], where).toBe(expected.status >= 500 ? 'no-store' : CLIENT_ERROR_CACHE_CONTROL);
  const body = JSON.parse(text) as { error: string; message: string };
  expect(Object.keys(body), where).toEqual(['error', 'message']);
  expect(body.error, where).toBe(expected.code);
  expect(typeof body.message, where).toBe('string');
  // Short whatever the request: absurd values are cut when quoted back.
  expect(text.length, where).toBeLessThan(400);
  const { rest, echo } = withoutEcho(body.message);
  expect(rest, where).not.toMatch(INTERNAL_DETAIL);
  if (echo !== undefined)
    expect(
      spellings(context.sent).some((form) => form.includes(echo)),
      `${where}: echo "${echo}"`,
    ).toBe(true);
  for (const bucket of context.buckets) expect(text, where).not.toContain(bucket);
}

/** The one structured entry an error answer must have left, as its JSON line would read back. */
export function expectErrorLogged(entries: Record<string, unknown>[], expected: Expected, uri: string) {
  const errors = entries.filter((entry) => entry.event === 'error' || entry.event === 'unexpected');
  expect(errors, JSON.stringify(entries).slice(0, 500)).toHaveLength(1);
  const entry = errors[0]!;
  expect(JSON.parse(JSON.stringify(entry))).toEqual(entry);
  expect(entry).toMatchObject({
    level: expected.status >= 500 ? 'error' : 'warn',
    code: expected.code,
    status: expected.status,
    uri,
  });
}

/**
 * The cache bucket's keys as last listed, per target: an error changes
 * nothing, so the listing taken after one is the listing before the next.
 */
const lastListing = new WeakMap<object, string[]>();

async function keysBefore(target: object, list: () => Promise<string[]>): Promise<string[]> {
  return lastListing.get(target) ?? list();
}

/** An error stores no variant; a transform that ran out of time leaves only its remembered failure (failures.ts). */
async function expectKeysUnchanged(target: object, list: () => Promise<string[]>, before: string[], what: string) {
  const after = await list();
  const variants = (keys: string[]) => keys.filter((key) => !key.startsWith(FAILURES_PREFIX));
  expect(variants(after), `${what}: the cache bucket changed`).toEqual(variants(before));
  lastListing.set(target, after);
}

/**
 * Requests a canonical URI from the real handler and checks the whole
 * contract, the log and the cache bucket (unchanged after an error, holding
 * the variant after a 200). Returns the response for further checks.
 */
export async function throughHandler(
  origin: TestOrigin,
  uri: string,
  expected: Expected,
  options: { headers?: Record<string, string> } = {},
): Promise<OriginResponse> {
  const before = await keysBefore(origin, origin.cachedKeys);
  const logsAt = origin.logs.length;
  const response = await origin.request(uri, { headers: options.headers });
  lastListing.delete(origin);
  expectAnswer(response, expected, { sent: uri, buckets: [origin.sourceBucket, origin.cacheBucket] });
  const entries = origin.logs.slice(logsAt);
  expect(entries.filter((entry) => entry.event === 'unexpected')).toEqual([]);
  if (expected.status >= 400) {
    expectErrorLogged(entries, expected, uri);
    await expectKeysUnchanged(origin, origin.cachedKeys, before, uri);
    if (expected.code === 'timeout') expect(await origin.cachedKeys(), `${uri}: the failure is remembered`).toContain(failureKey(uri));
  }
  return response;
}

/** Requests a viewer URL from the emulator over HTTP and checks the contract and the cache bucket. */
export async function throughEmulator(
  emulator: HostileEmulator,
  path: string,
  expected: Expected & { at?: 'edge' | 'origin' },
  options: { headers?: Record<string, string> } = {},
): Promise<Answer> {
  const before = await keysBefore(emulator, emulator.cachedKeys);
  const answer = await emulator.get(path, options.headers);
  lastListing.delete(emulator);
  expectAnswer(answer, expected, {
    sent: path,
    buckets: [emulator.sourceBucket, emulator.cacheBucket],
    variantCacheControl: BROWSER_CACHE_CONTROL,
  });
  if (expected.at === 'edge') expect(answer.headers['x-cache'], path).toBe('FunctionGeneratedResponse from cloudfront');
  if (expected.at === 'origin') expect(answer.headers['x-cache'], path).toMatch(/^(Miss|Hit) from cloudfront$/);
  if (expected.status >= 400) await expectKeysUnchanged(emulator, emulator.cachedKeys, before, path);
  return answer;
}

/**
 * After a barrage: `/_health` answers, a normal image request (a new
 * variant) is served, nothing unexpected was logged, and every object in
 * the cache bucket is the variant of a request that succeeded.
 */
export async function expectEmulatorStillServing(emulator: HostileEmulator, succeeded: Set<string>) {
  const health = await emulator.get('/_health');
  expect([health.status, JSON.parse(health.body.toString('utf8'))]).toEqual([200, { status: 'ok' }]);
  const normal = await emulator.get('/ok/fine.jpg?w=33&q=61', { accept: 'image/webp,*/*' });
  expect(normal.status).toBe(200);
  expect(normal.headers['content-type']).toBe('image/webp');
  expect(normal.headers['x-origin']).toBe('lambda');
  succeeded.add('ok/fine.jpg/width=33,quality=61,accept=webp');
  expect(emulator.logs.filter((entry) => entry.event === 'unexpected')).toEqual([]);
  // Beside the variants, the faces that format=json searched (no variant: no URI names them).
  const stored = (await emulator.cachedKeys()).filter((key) => !isFindingsKey(key));
  expect(stored.filter((key) => !succeeded.has(key))).toEqual([]);
  expect(stored).toContain('ok/fine.jpg/width=33,quality=61,accept=webp');
}

/** A 40x40 SVG (a blue square) with `inner` markup after the square and `prologue` before the root. */
export const square = (inner = '', prologue = '') =>
  `${prologue}<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" ` +
  `xmlns:xi="http://www.w3.org/2001/XInclude" width="40" height="40">` +
  `<rect id="r" width="40" height="40" fill="#0000ff"/>${inner}</svg>`;

/** 10^levels rectangles drawn through nested <use>: librsvg spends seconds on 10^5 from 1 KB. */
export function useBomb(levels: number): string {
  let defs = '<rect id="u0" width="1" height="1" fill="#ff0000"/>';
  for (let i = 1; i <= levels; i++)
    defs += `<g id="u${i}">${Array.from({ length: 10 }, (_, j) => `<use href="#u${i - 1}" x="${j}"/>`).join('')}</g>`;
  return square(`<defs>${defs}</defs><use href="#u${levels}"/>`);
}

/**
 * 10^levels translucent layers over a `side` x `side` canvas: cheap to parse, invisible to the
 * model, and each layer blends every pixel, so 10^5 layers of 400x400 draw for tens of seconds.
 */
export function layeredSvg(levels: number, side = 2000): string {
  let defs = `<rect id="l0" width="${side}" height="${side}" fill="#f00" opacity="0.5"/>`;
  for (let i = 1; i <= levels; i++) defs += `<g id="l${i}">${`<use href="#l${i - 1}"/>`.repeat(10)}</g>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${side}" height="${side}"><defs>${defs}</defs><use href="#l${levels}"/></svg>`;
}

/** Allocator and libvips' own buffers: what any transform costs beyond the pixels the model counts. */
export const NOISE_MB = 40;

/** What a variant's log line says of memory, in MB: the model's prediction and the processes' measurements. */
export interface MemoryLogged {
  predictedMb: number;
  transformStartMb: number;
  TransformRss: number;
  MemoryRss: number;
}

export const variantLog = (origin: TestOrigin, uri: string) =>
  origin.logs.filter((entry) => entry.event === 'variant' && entry.uri === uri).at(-1) as unknown as MemoryLogged;
