// Every error status of the URL contract, through the real origin handler
// against LocalStack S3 and real sharp: the status and code a viewer sees, a
// short JSON body that leaks nothing internal, a Cache-Control that keeps the
// error from sticking, nothing written to the cache bucket, a structured log
// line, and an origin that still serves the next normal request.

import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { createOriginHandler, type InvocationContext } from '../../lambda/origin/handler';
import { localS3Client } from '../../local/harness/s3-client';
import { decodeResult, functionUrlEvent } from '../../local/emulator/function-url';
import { createTestOrigin, type OriginResponse, type TestOrigin } from '../support/origin';
import { gradientJpeg, noiseImage, opaquePng, pngBomb, pngChunk } from '../support/images';
import { unreachableS3Endpoint } from '../support/s3';

/** A small, valid source every origin here can serve, for "still works afterwards". */
const OK_KEY = 'ok/fine.jpg';
const OK_URI = '/ok/fine.jpg/width=40';

let origin: TestOrigin;
let okJpeg: Buffer;

beforeAll(async () => {
  origin = await createTestOrigin('errors');
  okJpeg = await gradientJpeg(80, 60);
  await origin.putSource(OK_KEY, okJpeg, 'image/jpeg');
});

interface Expected {
  status: number;
  code: string;
  /** What the message must say for a viewer to understand it. */
  message?: RegExp;
  method?: string;
  headers?: Record<string, string>;
  context?: InvocationContext;
}

/** Words that would mean internal detail escaped into a response body. */
const INTERNAL_DETAIL =
  /vips|\bsharp\b|libjpeg|libpng|spng|\bS3\b|aws|sdk|ECONNREFUSED|127\.0\.0\.1|localhost|NoSuch|AccessDenied|Exception|Error:|\bat .*\(|\.ts:\d|stack|bucket/i;

/** Asserts everything a viewer and an operator see of one error response. */
function expectErrorResponse(response: OriginResponse, expected: Expected, buckets: string[]) {
  const text = response.body.toString('utf8');
  expect(response.status, text).toBe(expected.status);
  expect(response.headers['content-type']).toBe('application/json');
  expect(response.headers['x-content-type-options']).toBe('nosniff');
  expect(response.headers['cache-control']).toBe(expected.status >= 500 ? 'no-store' : 'public, max-age=10');
  // Exactly two fields: the code and a message.
  const body = response.json();
  expect(body).toEqual({ error: expected.code, message: expect.any(String) });
  expect(body.message.length).toBeGreaterThan(10);
  if (expected.message) expect(body.message).toMatch(expected.message);
  expect(text).not.toMatch(INTERNAL_DETAIL);
  buckets.forEach((bucket) => expect(text).not.toContain(bucket));
}

/** The log entry the handler wrote for an error on `uri`. */
function expectErrorLogged(logs: Record<string, unknown>[], expected: Expected, uri: string) {
  const entries = logs.filter((entry) => entry.event === 'error');
  expect(entries, JSON.stringify(logs)).toHaveLength(1);
  expect(entries[0]).toMatchObject({
    level: expected.status >= 500 ? 'error' : 'warn',
    code: expected.code,
    status: expected.status,
    uri,
  });
}

async function expectStillServing(target: TestOrigin) {
  const response = await target.request(OK_URI);
  expect(response.status).toBe(200);
  expect(response.headers['content-type']).toBe('image/jpeg');
  expect((await sharp(response.body).metadata()).width).toBe(40);
}

/**
 * Requests `uri` from `target` and checks the whole error contract: the
 * response, its log entry, no new object in the cache bucket, and that a
 * normal request on `next` (default: the same origin) right after is a 200.
 */
async function expectRefused(target: TestOrigin, uri: string, expected: Expected, next: TestOrigin = target) {
  const keysBefore = await target.cachedKeys();
  const logsBefore = target.logs.length;
  const response = await target.request(uri, { method: expected.method, headers: expected.headers, context: expected.context });
  expectErrorResponse(response, expected, [target.sourceBucket, target.cacheBucket]);
  expectErrorLogged(target.logs.slice(logsBefore), expected, uri);
  expect(await target.cachedKeys()).toEqual(keysBefore);
  await expectStillServing(next);
  return response;
}

describe('400 for a request that is not a canonical URI of a valid key', () => {
  it.each([
    ['/a.jpg/width=0', /width "0".*1 to 8192/],
    ['/a.jpg/width=8193', /width.*"8193"/],
    ['/a.jpg/width=abc', /width.*"abc"/],
    ['/a.jpg/quality=101', /quality "101".*1 to 100/],
    ['/a.jpg/quality=0', /quality.*"0"/],
    ['/a.jpg/fit=stretch', /fit.*"stretch"/],
    ['/a.jpg/format=bmp', /format.*"bmp"/],
    ['/a.jpg/rotate=45', /rotate.*"45"/],
    ['/a.jpg/accept=jpeg', /accept "jpeg".*avif, webp/],
  ])('invalid_parameter: %s, naming the parameter and value', async (uri, message) => {
    await expectRefused(origin, uri, { status: 400, code: 'invalid_parameter', message });
  });

  it.each([
    ['an alias', '/a.jpg/w=10'],
    ['an upper-case name', '/a.jpg/WIDTH=10'],
    ['ops out of order', '/a.jpg/format=webp,width=10'],
    ['format=auto (the edge resolves it)', '/a.jpg/format=auto'],
    ['format=auto beside a width', '/a.jpg/width=10,format=auto'],
    ['dpr (the edge folds it into width)', '/a.jpg/width=10,dpr=2'],
    ['dpr alone', '/a.jpg/dpr=2'],
    ['a default value (fit=cover)', '/a.jpg/width=10,height=10,fit=cover'],
    ['a leading zero', '/a.jpg/width=010'],
    ['a boolean spelled true', '/a.jpg/grayscale=true'],
    ['the jpg spelling of jpeg', '/a.jpg/format=jpg'],
    ['accept beside an explicit format', '/a.jpg/width=10,format=webp,accept=avif'],
    ['accept before another op', '/a.jpg/accept=webp,width=10'],
    ['an empty ops segment', '/a.jpg/'],
    ['no ops segment', '/a.jpg'],
    ['a raw space in the key', '/my cat.jpg/original'],
    ['a raw + in the key', '/a+b.jpg/original'],
    ['a raw non-ASCII key', '/café.jpg/original'],
    ['lower-case percent escapes', '/caf%c3%a9.jpg/original'],
    ['an escaped unreserved character', '/a%2Ejpg/original'],
  ])('not_canonical: %s (%s)', async (_why, uri) => {
    await expectRefused(origin, uri, { status: 400, code: 'not_canonical', message: /canonical/i });
  });

  it.each([
    ['a .. segment', '/a/../b.jpg/original'],
    ['a . segment', '/a/./b.jpg/original'],
    ['an empty segment', '/a//b.jpg/original'],
    ['a trailing slash in the key', '/a/b/%2F/original'],
    ['an encoded control character', '/a%0Ab.jpg/original'],
    ['malformed percent-encoding', '/a%E9.jpg/original'],
    ['a key over 1024 bytes', '/' + 'k'.repeat(1025) + '/original'],
  ])('invalid_key: %s', async (_why, uri) => {
    await expectRefused(origin, uri, { status: 400, code: 'invalid_key', message: /source key/i });
  });
});

describe('405 for a method other than GET and HEAD', () => {
  it.each(['POST', 'PUT', 'DELETE', 'PATCH'])('%s, with an Allow header', async (method) => {
    const response = await expectRefused(origin, '/ok/fine.jpg/width=40', {
      status: 405,
      code: 'method_not_allowed',
      method,
      message: new RegExp(`${method}.*GET`),
    });
    expect(response.headers.allow).toBe('GET, HEAD');
  });
});

describe('404 for a key with no source', () => {
  it.each(['/missing.jpg/original', '/no/such/dir/photo.jpg/width=100', '/ok/fine.jpg.bak/width=40'])('%s', async (uri) => {
    await expectRefused(origin, uri, { status: 404, code: 'not_found', message: /no source image/i });
  });

  it('also on HEAD', async () => {
    await expectRefused(origin, '/missing.jpg/original', { status: 404, code: 'not_found', method: 'HEAD' });
  });
});

describe('413 for a source over the configured limits', () => {
  const MAX_SOURCE_BYTES = 50_000;
  const MAX_INPUT_PIXELS = 100_000;
  let bytesLimited: TestOrigin;
  let pixelsLimited: TestOrigin;

  beforeAll(async () => {
    [bytesLimited, pixelsLimited] = await Promise.all([
      createTestOrigin('errors bytes limit', { maxSourceBytes: MAX_SOURCE_BYTES }),
      createTestOrigin('errors pixel limit', { maxInputPixels: MAX_INPUT_PIXELS }),
    ]);
    await Promise.all([bytesLimited, pixelsLimited].map((target) => target.putSource(OK_KEY, okJpeg, 'image/jpeg')));
  });

  it('source_too_large: a source of more bytes than maxSourceBytes', async () => {
    const big = await noiseImage(300, 300, 'jpeg');
    expect(big.length).toBeGreaterThan(MAX_SOURCE_BYTES);
    await bytesLimited.putSource('big.jpg', big, 'image/jpeg');

    await expectRefused(bytesLimited, '/big.jpg/width=100', {
      status: 413,
      code: 'source_too_large',
      message: new RegExp(`${MAX_SOURCE_BYTES}-byte limit`),
    });
  });

  it('too_many_pixels: a source of more pixels than maxInputPixels (few bytes), and one at the limit is served', async () => {
    const over = await gradientJpeg(317, 317); // 100 489 pixels
    const at = await gradientJpeg(316, 316); // 99 856 pixels
    await pixelsLimited.putSource('over.jpg', over, 'image/jpeg');
    await pixelsLimited.putSource('at.jpg', at, 'image/jpeg');

    await expectRefused(pixelsLimited, '/over.jpg/width=100', {
      status: 413,
      code: 'too_many_pixels',
      message: new RegExp(`${MAX_INPUT_PIXELS} pixels`),
    });
    const served = await pixelsLimited.request('/at.jpg/width=100');
    expect(served.status).toBe(200);
    expect((await sharp(served.body).metadata()).width).toBe(100);
  });

  it('too_many_pixels: format=json is refused too (the limit is on the source)', async () => {
    await pixelsLimited.putSource('over-json.jpg', await gradientJpeg(400, 300), 'image/jpeg');
    await expectRefused(pixelsLimited, '/over-json.jpg/format=json', { status: 413, code: 'too_many_pixels' });
  });

  it('a decompression bomb (a 20000x20000 PNG of a few KB) is refused quickly, from its header alone', async () => {
    const bomb = pngBomb(20_000, 20_000);
    expect(bomb.length).toBeLessThan(200_000);
    expect(await sharp(bomb, { limitInputPixels: false }).metadata()).toMatchObject({ format: 'png', width: 20_000, height: 20_000 });
    await origin.putSource('bomb.png', bomb, 'image/png');

    for (const uri of ['/bomb.png/width=100', '/bomb.png/original', '/bomb.png/format=json']) {
      const start = performance.now();
      await expectRefused(origin, uri, { status: 413, code: 'too_many_pixels', message: /pixels/ });
      // Decoding 400 MP would take many seconds and gigabytes; the header is enough.
      expect(performance.now() - start).toBeLessThan(2_000);
    }
  });
});

describe('415 for a source that is not an image the service reads', () => {
  const notImages: [string, string, Buffer | string, string][] = [
    ['plain text named photo.jpg', 'text/photo.jpg', 'This is not a photo, just some words.\n', 'image/jpeg'],
    [
      'HTML named photo.jpg',
      'html/photo.jpg',
      '<!DOCTYPE html>\n<html><head><title>x</title></head><body><img src="a.jpg"></body></html>\n',
      'image/jpeg',
    ],
    ['random bytes named photo.jpg', 'random/photo.jpg', randomishBytes(4096), 'image/jpeg'],
    [
      'an SVG',
      'vector/logo.svg',
      '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><rect width="100" height="100" fill="red"/></svg>',
      'image/svg+xml',
    ],
    [
      'an SVG with a script inside',
      'vector/evil.svg',
      '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n' +
        '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><script>alert(document.cookie)</script>' +
        '<circle cx="50" cy="50" r="40"/></svg>',
      'image/svg+xml',
    ],
    ['an SVG named photo.jpg', 'vector/photo.jpg', '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>', 'image/jpeg'],
    ['a zero-byte object', 'empty/photo.jpg', Buffer.alloc(0), 'image/jpeg'],
  ];

  it.each(notImages)('unsupported_media_type: %s', async (_why, key, body, contentType) => {
    await origin.putSource(key, body, contentType);
    for (const ops of ['width=100', 'original', 'format=json']) {
      await expectRefused(origin, `/${key}/${ops}`, {
        status: 415,
        code: 'unsupported_media_type',
        message: /not an image this service reads/,
      });
    }
  });
});

describe('422 for an image that cannot be decoded', () => {
  it('undecodable_image: a truncated JPEG (its first half)', async () => {
    const whole = await gradientJpeg(400, 300);
    await origin.putSource('broken/truncated.jpg', whole.subarray(0, Math.floor(whole.length / 2)), 'image/jpeg');
    for (const ops of ['width=100', 'original', 'format=webp']) {
      await expectRefused(origin, `/broken/truncated.jpg/${ops}`, {
        status: 422,
        code: 'undecodable_image',
        message: /damaged|cannot be decoded/,
      });
    }
  });

  it('undecodable_image: a PNG whose bytes after the header are corrupted', async () => {
    const png = Buffer.from(await opaquePng(200, 150));
    // Keep the signature and IHDR (33 bytes) intact: the service sees a PNG of a sane size.
    for (let i = 60; i < png.length - 12; i++) png[i] = png[i]! ^ 0x5a;
    await origin.putSource('broken/corrupt.png', png, 'image/png');
    for (const ops of ['width=100', 'original']) {
      await expectRefused(origin, `/broken/corrupt.png/${ops}`, {
        status: 422,
        code: 'undecodable_image',
        message: /damaged|cannot be decoded/,
      });
    }
  });

  it('undecodable_image: a PNG whose compressed pixels are garbage behind valid chunk checksums', async () => {
    const png = corruptIdat(await opaquePng(200, 150));
    // Only decoding the pixels can find the damage: the header reads fine.
    expect(await sharp(png).metadata()).toMatchObject({ format: 'png', width: 200, height: 150 });
    await origin.putSource('broken/garbled.png', png, 'image/png');
    for (const ops of ['width=100', 'format=webp']) {
      await expectRefused(origin, `/broken/garbled.png/${ops}`, {
        status: 422,
        code: 'undecodable_image',
        message: /damaged|cannot be decoded/,
      });
    }
  });
});

describe('503 when the storage is unavailable', () => {
  it('storage_unavailable, with Retry-After and no-store, when S3 cannot be reached', async () => {
    const endpoint = await unreachableS3Endpoint();
    const logs: Record<string, unknown>[] = [];
    const s3 = localS3Client(endpoint);
    const handle = createOriginHandler({ s3, config: origin.config, log: (entry) => logs.push(entry) });
    const keysBefore = await origin.cachedKeys();
    const uri = '/ok/fine.jpg/width=40';

    const start = performance.now();
    const response = decodeResult(await handle(functionUrlEvent(uri)));
    const elapsed = performance.now() - start;
    s3.destroy();

    const expected = { status: 503, code: 'storage_unavailable', message: /unavailable.*try again/ };
    expectErrorResponse(response, expected, [origin.sourceBucket, origin.cacheBucket, endpoint]);
    expect(response.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    expect(elapsed).toBeLessThan(10_000);
    expectErrorLogged(logs, expected, uri);
    // The operator's log has the cause the viewer does not see.
    expect(String(logs.find((entry) => entry.event === 'error')?.detail)).toMatch(/ECONNREFUSED|connect/i);
    expect(await origin.cachedKeys()).toEqual(keysBefore);
    await expectStillServing(origin);
  });
});

describe('504 when the transform runs out of time', () => {
  let hurried: TestOrigin;
  let noise: Buffer;

  beforeAll(async () => {
    noise = await noiseImage(2500, 2500, 'jpeg');
    hurried = await createTestOrigin('errors time budget', { timeBudgetMs: 5 });
    await Promise.all([hurried.putSource('noise.jpg', noise, 'image/jpeg'), origin.putSource('noise.jpg', noise, 'image/jpeg')]);
  });

  it('timeout: a 5 ms budget for a 2500x2500 source answers 504 on time and never stores the late result', async () => {
    const start = performance.now();
    await expectRefused(hurried, '/noise.jpg/width=2000', { status: 504, code: 'timeout', message: /too long/ }, origin);
    expect(performance.now() - start).toBeLessThan(5_000);
    // The abandoned transform may still be running: give it time to finish, then look again.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(await hurried.cachedKeys()).toEqual([]);
    expect(hurried.logs.filter((entry) => entry.event === 'variant' || entry.event === 'store_failed')).toEqual([]);
  });

  it('timeout: the budget shrinks to what Lambda has left (1050 ms remaining leaves ~50 ms)', async () => {
    const context: InvocationContext = { getRemainingTimeInMillis: () => 1050 };
    const start = performance.now();
    await expectRefused(origin, '/noise.jpg/width=2000', { status: 504, code: 'timeout', context });
    expect(performance.now() - start).toBeLessThan(2_000);
  });

  it('with plenty of time left in the invocation, the same origin serves normally', async () => {
    const response = await origin.request(OK_URI, { context: { getRemainingTimeInMillis: () => 60_000 } });
    expect(response.status).toBe(200);
  });
});

describe('error logs', () => {
  it('every error response above had one structured log entry with its code and URI', () => {
    const errors = origin.logs.filter((entry) => entry.event === 'error');
    expect(errors.length).toBeGreaterThan(40);
    errors.forEach((entry) => {
      expect(entry).toMatchObject({ code: expect.any(String), status: expect.any(Number), uri: expect.stringMatching(/^\//) });
    });
    // No request failed in a way the handler did not expect.
    expect(origin.logs.filter((entry) => entry.event === 'unexpected')).toEqual([]);
  });
});

/** Deterministic bytes that start like no image format. */
function randomishBytes(length: number): Buffer {
  const bytes = Buffer.alloc(length);
  let state = 12345;
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) >>> 0;
    bytes[i] = state >>> 24;
  }
  bytes[0] = 0x00;
  return bytes;
}

/** The PNG with the middle of its zlib pixel stream scrambled, each chunk's CRC recomputed. */
function corruptIdat(png: Buffer): Buffer {
  const chunks: Buffer[] = [png.subarray(0, 8)];
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    let data = png.subarray(at + 8, at + 8 + length);
    if (type === 'IDAT') {
      data = Buffer.from(data);
      for (let i = 16; i < data.length - 16; i++) data[i] = data[i]! ^ 0xa5;
    }
    chunks.push(pngChunk(type, data));
    at += 12 + length;
  }
  return Buffer.concat(chunks);
}
