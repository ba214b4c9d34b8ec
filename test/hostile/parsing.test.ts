// Untrusted bytes are parsed in linear time. Each source here is built for
// the worst case of something that once read it: a sniffing expression that
// backtracked exponentially (minutes on a few hundred bytes, the JS thread
// blocked), a quadratic one over whole SVGs, libjpeg decoding every scan of
// a progressive JPEG. Each is at the largest size allowed (MAX_SOURCE_BYTES,
// or MAX_SVG_BYTES for SVGs, which are rasterized here), and each must get
// its precise answer within a bound of seconds, through the handler and
// through the emulator. While each is in flight, the emulator keeps
// answering /_health promptly: nothing holds the event loop.

import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../lambda/origin/config';
import { MAX_JPEG_SCANS } from '../../lambda/origin/image/jpeg';
import { MAX_SVG_BYTES } from '../../lambda/origin/image/input';
import { boxHeader, heifSkeleton } from '../support/heic';
import { createTestOrigin, type TestOrigin } from '../support/origin';
import { maxProgressiveScans, progressiveJpeg } from '../support/progressive-jpeg';
import {
  expectEmulatorStillServing,
  startHostileEmulator,
  throughEmulator,
  throughHandler,
  type Expected,
  type HostileEmulator,
} from './support';

const MAX_SOURCE_BYTES = DEFAULT_LIMITS.maxSourceBytes;

/** The answer of a linear parse of these sizes takes well under this; the expressions replaced took minutes to hours. */
const BOUND_MS = 10_000;
/** Longest a /_health may wait while a hostile request is in flight. */
const HEALTH_BOUND_MS = 1_000;

const UNSUPPORTED: Expected = { status: 415, code: 'unsupported_media_type' };
const DAMAGED: Expected = { status: 422, code: 'undecodable_image' };
const TOO_MANY_SCANS: Expected = { status: 413, code: 'too_many_scans' };

/** `head`, then `unit` repeated, cut to exactly `bytes` bytes. */
function sized(bytes: number, head: string, unit: string, tail = ''): Buffer {
  const body = head + unit.repeat(Math.ceil((bytes - head.length - tail.length) / unit.length));
  return Buffer.from(body.slice(0, bytes - tail.length) + tail, 'latin1');
}

/** The start of a 40x40 SVG whose text goes on with what a row adds. */
const SVG_START = '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><rect width="40" height="40" fill="#0000ff"/>';

interface Row {
  name: string;
  key: string;
  /** Its size: exactly a limit, or (for a JPEG, whose point is its scans) at most this. */
  bytes?: number;
  maxBytes?: number;
  make: () => Buffer;
  expected: Expected;
  /** The answer's message, when it says why. */
  message?: string;
}

const ROWS: Row[] = [
  // What the sniffing expression tried in every grouping of its comment repeats: 2^n ways.
  {
    name: 'comments that end and start again, and no <svg>',
    key: 'sniff/comments.svg',
    bytes: MAX_SOURCE_BYTES,
    make: () => sized(MAX_SOURCE_BYTES, '<!--', '--><!--x'),
    expected: UNSUPPORTED,
  },
  {
    name: 'an XML declaration, then a DOCTYPE whose internal subset never closes',
    key: 'sniff/doctype.svg',
    bytes: MAX_SOURCE_BYTES,
    make: () => sized(MAX_SOURCE_BYTES, '<?xml version="1.0"?><!DOCTYPE svg [', '] <!-- ] --> '),
    expected: UNSUPPORTED,
  },
  {
    name: 'XML declarations that never close, and no <svg>',
    key: 'sniff/declarations.svg',
    bytes: MAX_SOURCE_BYTES,
    make: () => sized(MAX_SOURCE_BYTES, '', '<?xml '),
    expected: UNSUPPORTED,
  },
  // What the encoding expression scanned to the end from each `<?xml`: n^2.
  {
    name: 'an SVG of XML declarations that never close, each naming UTF-8',
    key: 'svg/declarations.svg',
    bytes: MAX_SVG_BYTES,
    make: () => sized(MAX_SVG_BYTES, SVG_START, '<?xml encoding="utf-8" '),
    expected: DAMAGED,
  },
  {
    name: 'an SVG of character references and CSS escapes, then a data: URL spelled with them',
    key: 'svg/escapes.svg',
    bytes: MAX_SVG_BYTES,
    make: () => sized(MAX_SVG_BYTES, `${SVG_START}<desc>`, '&#x64;&#97;\\74 \\61 data', '</desc><image href="&#100;\\61 ta:x"/></svg>'),
    expected: UNSUPPORTED,
    message: 'This SVG is not rendered: it embeds a data: URL.',
  },
  // libjpeg decodes every scan over the whole image: 78 CPU-seconds for this one before the limit.
  {
    name: `a progressive JPEG of ${maxProgressiveScans(3)} scans, 10000x10000 in about 1 MB`,
    key: 'jpeg/scans.jpg',
    maxBytes: 1_100_000,
    make: () => progressiveJpeg(10_000, 10_000, 3, maxProgressiveScans(3)),
    expected: TOO_MANY_SCANS,
    message: `The source JPEG has ${maxProgressiveScans(3)} scans, more than the ${MAX_JPEG_SCANS} this service decodes.`,
  },
  {
    name: `a progressive JPEG of ${MAX_JPEG_SCANS + 1} scans`,
    key: 'jpeg/over.jpg',
    make: () => progressiveJpeg(1000, 1000, 3, MAX_JPEG_SCANS + 1),
    expected: TOO_MANY_SCANS,
  },
  // The HEIF header parser (heif.ts) skips each box by its size and reads each field once.
  {
    name: 'a HEIF whose ipco holds 4 million empty properties (the primary one of size 0x0)',
    key: 'heif/properties.heic',
    bytes: MAX_SOURCE_BYTES,
    make: () => heifFilling(MAX_SOURCE_BYTES, (room) => heifSkeleton({ width: 0, height: 0, ipcoTail: freeBoxes(room) })),
    expected: DAMAGED,
  },
  {
    name: 'a HEIF whose ipma associates 255 properties, over and over, with its primary image',
    key: 'heif/associations.heic',
    bytes: MAX_SOURCE_BYTES,
    make: () =>
      heifFilling(MAX_SOURCE_BYTES, (room) => {
        const entry = Buffer.concat([Buffer.from([0, 1, 255]), Buffer.alloc(255, 0x7f)]);
        const entries = Math.floor(room / entry.length);
        return heifSkeleton({
          width: 0,
          height: 0,
          ipmaTail: { entries, bytes: Buffer.concat([Buffer.alloc(entries * entry.length, entry), Buffer.alloc(room % entry.length)]) },
        });
      }),
    expected: DAMAGED,
  },
  {
    name: 'a HEIF grid whose iloc lists 3 million items of 65535 extents each, none of them its own',
    key: 'heif/locations.heic',
    bytes: MAX_SOURCE_BYTES,
    make: () =>
      heifFilling(MAX_SOURCE_BYTES, (room) => {
        // iloc version 2, every field size 0: an item is 10 bytes (id, method, reference, extent count).
        const item = Buffer.from([0, 0, 0, 2, 0, 0, 0, 0, 0xff, 0xff]);
        const items = Math.floor(room / item.length);
        const count = Buffer.alloc(4);
        count.writeUInt32BE(items);
        const content = Buffer.concat([
          Buffer.from([2, 0, 0, 0, 0, 0]),
          count,
          Buffer.alloc(items * item.length, item),
          Buffer.alloc(room % item.length),
        ]);
        return heifSkeleton({
          width: 64,
          height: 64,
          itemType: 'grid',
          iloc: Buffer.concat([boxHeader(8 + content.length, 'iloc'), content]),
        });
      }),
    expected: DAMAGED,
  },
];

/** Empty `free` boxes filling `bytes` (a multiple of 8 or not: the last box takes the rest). */
function freeBoxes(bytes: number): Buffer {
  if (bytes === 0) return Buffer.alloc(0);
  const boxes = Buffer.alloc(bytes, Buffer.concat([boxHeader(8, 'free')]));
  boxes.set(boxHeader(8 + (bytes % 8), 'free'), bytes - 8 - (bytes % 8));
  return boxes;
}

/** The HEIF `make` builds around `room` bytes of filling, with the room chosen so that it is exactly `bytes` long. */
function heifFilling(bytes: number, make: (room: number) => Buffer): Buffer {
  const room = bytes - make(0).length;
  const made = make(room);
  if (made.length !== bytes) throw new Error(`built ${made.length} bytes, not ${bytes}`);
  return made;
}

let origin: TestOrigin;
let emulator: HostileEmulator;
let bodies: Record<string, Buffer>;
const succeeded = new Set<string>();

beforeAll(async () => {
  bodies = Object.fromEntries(ROWS.map((row) => [row.key, row.make()]));
  bodies['jpeg/at-limit.jpg'] = progressiveJpeg(1000, 1000, 3, MAX_JPEG_SCANS);
  origin = await createTestOrigin('linear parsing', { svgPolicy: 'rasterize' });
  await Promise.all(Object.entries(bodies).map(([key, body]) => origin.putSource(key, body)));
  emulator = await startHostileEmulator('linear parsing', bodies, { svgPolicy: 'rasterize' });
}, 120_000);

/** Asks /_health over and over until `request` settles; returns the answer and each /_health's wait. */
async function healthWhile<T>(request: Promise<T>): Promise<{ answer: T; waits: number[] }> {
  let settled = false;
  const answer = request.finally(() => (settled = true));
  const waits: number[] = [];
  do {
    const start = performance.now();
    const health = await emulator.get('/_health');
    waits.push(performance.now() - start);
    expect(health.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 20));
  } while (!settled);
  return { answer: await answer, waits };
}

describe('linear parsing: worst cases at the size limits', () => {
  it.each(ROWS.map((row) => [row.name, row] as const))('%s', async (_name, row) => {
    if (row.bytes) expect(bodies[row.key]!.length).toBe(row.bytes);
    if (row.maxBytes) expect(bodies[row.key]!.length).toBeLessThan(row.maxBytes);

    let start = performance.now();
    const response = await throughHandler(origin, `/${row.key}/original`, row.expected);
    expect(performance.now() - start, 'handler').toBeLessThan(BOUND_MS);
    if (row.message) expect(response.json().message).toBe(row.message);

    start = performance.now();
    const { answer, waits } = await healthWhile(throughEmulator(emulator, `/${row.key}?w=20`, { ...row.expected, at: 'origin' }));
    expect(performance.now() - start, 'emulator').toBeLessThan(BOUND_MS);
    if (row.message) expect(JSON.parse(answer.body.toString('utf8')).message).toBe(row.message);
    expect(Math.max(...waits), `/_health waits ${waits.map(Math.round).join(', ')} ms`).toBeLessThan(HEALTH_BOUND_MS);
  });

  it(`a progressive JPEG of ${MAX_JPEG_SCANS} scans (the limit) is served`, async () => {
    const start = performance.now();
    const response = await throughHandler(origin, '/jpeg/at-limit.jpg/width=200', { status: 200 });
    expect(performance.now() - start).toBeLessThan(BOUND_MS);
    expect(await sharp(response.body).metadata()).toMatchObject({ format: 'jpeg', width: 200, height: 200 });
    const answer = await throughEmulator(emulator, '/jpeg/at-limit.jpg?w=200&format=jpeg', { status: 200 });
    expect(await sharp(answer.body).metadata()).toMatchObject({ format: 'jpeg', width: 200, height: 200 });
    succeeded.add('jpeg/at-limit.jpg/width=200,format=jpeg');
  });

  it('after them the emulator answers /_health and a normal image; its cache bucket holds only variants of successes', async () => {
    await expectEmulatorStillServing(emulator, succeeded);
  });
});
