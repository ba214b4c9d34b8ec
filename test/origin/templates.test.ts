// Card templates end to end on a signing deployment: the emulator runs the
// generated edge function, the real origin handler and LocalStack S3. A card
// is 1200x630, its photo fills its slot and its title's pixels lie in its
// box; an unsigned or altered fill is a 403; each bad fill a precise 4xx,
// with no variant written; a changed template makes a new key.

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardParams } from '../../lambda/client/url';
import { signedImageUrl } from '../../lambda/client/sign';
import { canonicalRequest } from '../../lambda/grammar';
import { startEmulator, type RunningEmulator } from '../../local/emulator/start';
import { checkTemplates, templateVersions } from '../../lib/templates';
import { isNear, pixelAt } from '../support/images';
import { createTestBuckets, listKeys, testS3Client, type TestBuckets } from '../support/s3';

const SECRET = 'card-secret';
const BACKGROUND = { r: 0x10, g: 0x18, b: 0x28 };
const ORANGE = { r: 230, g: 120, b: 40 };
const GREEN = { r: 40, g: 160, b: 90 };

/** An Open Graph card: the photo on the left half, the title on the right, an optional tag beneath it. */
const TEMPLATES = {
  og: {
    width: 1200,
    height: 630,
    background: '#101828',
    slots: {
      photo: { kind: 'image', box: [0, 0, 600, 630], position: 'attention' },
      title: { kind: 'text', box: [640, 60, 520, 400], font: 'sans-bold', size: [32, 96], colour: '#ffffff', maxLength: 80 },
      tag: { kind: 'text', box: [640, 500, 520, 80], font: 'sans', size: [20, 40], colour: '#f5c518', maxLength: 30, required: false },
    },
  },
  duo: {
    width: 800,
    height: 400,
    background: '#ffffff',
    slots: {
      left: { kind: 'image', box: [0, 0, 400, 400] },
      right: { kind: 'image', box: [400, 0, 400, 400], fit: 'contain' },
    },
  },
};

const s3 = testS3Client();
let buckets: TestBuckets;
let emulator: RunningEmulator;
let folder: string;

/** A photo whose left half is orange and right half green, larger than its slot. */
const photo = () =>
  sharp({ create: { width: 1600, height: 1000, channels: 3, background: ORANGE } })
    .composite([{ input: { create: { width: 800, height: 1000, channels: 3, background: GREEN } }, left: 800, top: 0 }])
    .jpeg({ quality: 95 })
    .toBuffer();

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'templates-'));
  await mkdir(join(folder, 'photos'));
  await writeFile(join(folder, 'photos', 'beach.jpg'), await photo());
  buckets = await createTestBuckets('templates');
  emulator = await startEmulator({
    s3,
    port: 0,
    images: folder,
    edgeCache: false,
    signingSecret: SECRET,
    buckets: { source: buckets.sourceBucket, cache: buckets.cacheBucket },
    context: { templates: TEMPLATES },
    log: () => {},
  });
}, 90_000);

afterAll(async () => {
  await emulator?.close();
  await buckets?.cleanup();
  await rm(folder, { recursive: true, force: true });
});

const signed = (key: string, template: string, fills: Record<string, string>, extra = {}) =>
  signedImageUrl(emulator.url, key, cardParams(template, fills, extra), SECRET);

async function get(url: string, accept = 'image/webp,*/*') {
  const response = await fetch(url, { headers: { accept } });
  return { status: response.status, type: response.headers.get('content-type'), body: Buffer.from(await response.arrayBuffer()) };
}

/** Pixels of `body` in a region near `colour`, out of those sampled every `step` pixels. */
async function share(
  body: Buffer,
  [x, y, width, height]: number[],
  test: (pixel: { r: number; g: number; b: number }) => boolean,
  step = 10,
) {
  const { data, info } = await sharp(body).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  let hits = 0;
  let all = 0;
  for (let row = y!; row < y! + height!; row += step)
    for (let column = x!; column < x! + width!; column += step) {
      const at = (row * info.width + column) * 3;
      all += 1;
      if (test({ r: data[at]!, g: data[at + 1]!, b: data[at + 2]! })) hits += 1;
    }
  return hits / all;
}

/** The height of the title's first line of glyphs: the rows of its box, from the first with white, while each has some. */
async function firstLineHeight(body: Buffer): Promise<number> {
  const { data, info } = await sharp(body).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const rowHasWhite = (row: number) => {
    for (let column = 640; column < 1160; column++) {
      const at = (row * info.width + column) * 3;
      if (white({ r: data[at]!, g: data[at + 1]!, b: data[at + 2]! })) return true;
    }
    return false;
  };
  let row = 60;
  while (row < 460 && !rowHasWhite(row)) row++;
  const top = row;
  while (row < 460 && rowHasWhite(row)) row++;
  return row - top;
}

const white = (pixel: { r: number; g: number; b: number }) => pixel.r > 200 && pixel.g > 200 && pixel.b > 200;

describe('a signed card', () => {
  it('is 1200x630, its photo filling its slot and its title drawn inside its box', async () => {
    const { status, type, body } = await get(
      signed('photos/beach.jpg', 'og', { title: 'Summer sale: 40% off every lens', tag: 'Ends Sunday' }),
    );
    expect(status, body.toString().slice(0, 200)).toBe(200);
    expect(type).toBe('image/webp');
    const meta = await sharp(body).metadata();
    expect([meta.width, meta.height]).toEqual([1200, 630]);
    // The photo covers its whole slot: every sample is the photo's orange or green, none the canvas.
    expect(await share(body, [2, 2, 596, 626], (pixel) => isNear(pixel, ORANGE, 30) || isNear(pixel, GREEN, 30))).toBe(1);
    // The title's white glyphs are in its box, and nowhere else right of the photo but the tag's.
    expect(await share(body, [640, 60, 520, 400], white, 3)).toBeGreaterThan(0.05);
    expect(await share(body, [600, 0, 40, 630], white, 3)).toBe(0);
    expect(await share(body, [1160, 0, 40, 630], white, 3)).toBe(0);
    expect(await share(body, [640, 0, 520, 60], white, 3)).toBe(0);
    // The tag is yellow in its own box; the canvas shows between the boxes.
    expect(await share(body, [640, 500, 520, 80], (pixel) => pixel.r > 180 && pixel.g > 150 && pixel.b < 100, 2)).toBeGreaterThan(0.01);
    expect(isNear(await pixelAt(body, 1190, 620), BACKGROUND, 12)).toBe(true);
  });

  it('is stored under its template version and fills, and a longer title is drawn smaller', async () => {
    await emulator.settled();
    const keys = (await listKeys(s3, buckets.cacheBucket)).filter((key) => key.includes('template=og.'));
    expect(keys.length).toBe(1);
    expect(keys[0]).toMatch(/^photos\/beach\.jpg\/template=og\.[0-9a-f]{8},fills=[0-9a-f]+,accept=webp$/);
    // Capitals alone, so that a line's glyphs are as high as the size makes them.
    const short = await get(signed('photos/beach.jpg', 'og', { title: 'SALE' }));
    const long = await get(signed('photos/beach.jpg', 'og', { title: 'SALE ON EVERY LENS AND EVERY BAG IN THE SHOP TODAY ONLY' }));
    expect(short.status).toBe(200);
    expect(long.status).toBe(200);
    // Each title at the largest size that fits: SALE at the range's largest (96 px: its capitals about 69 px
    // high), the long one wrapped and smaller.
    const shortLine = await firstLineHeight(short.body);
    expect(shortLine).toBeGreaterThan(60);
    expect(await firstLineHeight(long.body)).toBeLessThan(shortLine * 0.8);
  });

  it('is encoded at the quality asked, auto being the format default', async () => {
    const fills = { title: 'Quality' };
    const low = await get(signed('photos/beach.jpg', 'og', fills, { format: 'jpeg', quality: 30 }));
    const high = await get(signed('photos/beach.jpg', 'og', fills, { format: 'jpeg', quality: 95 }));
    const auto = await get(signed('photos/beach.jpg', 'og', fills, { format: 'jpeg', quality: 'auto' }));
    expect([low.status, high.status, auto.status]).toEqual([200, 200, 200]);
    expect(low.body.length).toBeLessThan(auto.body.length);
    expect(auto.body.length).toBeLessThan(high.body.length);
  });

  it('fills a second image slot from a key, contained in its box', async () => {
    const { status, body } = await get(signed('photos/beach.jpg', 'duo', { right: 'photos/beach.jpg' }, { format: 'png' }));
    expect(status, body.toString().slice(0, 200)).toBe(200);
    // Contained: the 1600x1000 photo is 400x250 in its 400x400 box, the white canvas above and below it.
    expect(isNear(await pixelAt(body, 600, 20), { r: 255, g: 255, b: 255 }, 5)).toBe(true);
    expect(isNear(await pixelAt(body, 450, 200), ORANGE, 30)).toBe(true);
    expect(isNear(await pixelAt(body, 750, 200), GREEN, 30)).toBe(true);
  });
});

describe('refusals', () => {
  it('answers 403 to an unsigned card and to an altered fill', async () => {
    const unsigned = await get(`${emulator.url}/photos/beach.jpg?template=og&fills=7b227469746c65223a224869227d`);
    expect(unsigned.status).toBe(403);
    expect(JSON.parse(unsigned.body.toString())).toMatchObject({ error: 'invalid_signature' });
    const url = new URL(signed('photos/beach.jpg', 'og', { title: 'Hi' }));
    url.searchParams.set('fills', cardParams('og', { title: 'Free lenses' }).fills as string);
    const altered = await get(url.toString());
    expect(altered.status).toBe(403);
  });

  it.each([
    [
      'an unknown slot',
      { title: 'Hi', subtitle: 'x' },
      {},
      400,
      'invalid_fill',
      'The template "og" has no slot "subtitle"; its slots: photo, title, tag.',
    ],
    ['a missing required slot', { tag: 'x' }, {}, 400, 'invalid_fill', 'The template "og" needs the slot title filled.'],
    ['a text over its length', { title: 'x'.repeat(81) }, {}, 400, 'invalid_fill', 'The slot "title" takes at most 80 characters, not 81.'],
    [
      'the key slot in fills',
      { title: 'Hi', photo: 'photos/beach.jpg' },
      {},
      400,
      'invalid_fill',
      'The slot "photo" is filled by the URL\'s key, not by fills.',
    ],
    ['a width beside the template', { title: 'Hi' }, { width: 300 }, 400, 'invalid_parameter', undefined],
  ])('refuses %s', async (_case, fills, extra, status, error, message) => {
    const response = await get(signed('photos/beach.jpg', 'og', fills as Record<string, string>, extra));
    expect(response.status).toBe(status);
    const body = JSON.parse(response.body.toString()) as { error: string; message: string };
    expect(body.error).toBe(error);
    if (message) expect(body.message).toBe(message);
  });

  it('refuses an image key the deployment cannot read, naming the slot, and writes no variant', async () => {
    const response = await get(signed('photos/beach.jpg', 'duo', { right: 'photos/missing.jpg' }));
    expect(response.status).toBe(404);
    expect(JSON.parse(response.body.toString())).toMatchObject({
      error: 'not_found',
      message: 'The slot "right": No source image has this key.',
    });
    await emulator.settled();
    const keys = await listKeys(s3, buckets.cacheBucket);
    expect(keys.filter((key) => key.includes('template=duo') && key.includes(Buffer.from('missing').toString('hex')))).toEqual([]);
    expect(keys.filter((key) => key.includes(Buffer.from('subtitle').toString('hex')))).toEqual([]);
  });

  it('refuses a template the deployment does not define at the edge', async () => {
    const response = await get(signed('photos/beach.jpg', 'nope', { title: 'Hi' }));
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body.toString()).message).toBe('Invalid template "nope": expected one of og, duo.');
  });
});

describe('versions', () => {
  it('gives a changed template a new version, so its cards a new key, and keeps the signature', () => {
    const before = templateVersions(checkTemplates(TEMPLATES));
    const changed = { ...TEMPLATES, og: { ...TEMPLATES.og, background: '#000000' } };
    const after = templateVersions(checkTemplates(changed));
    expect(after.og).not.toBe(before.og);
    expect(after.duo).toBe(before.duo);
    const pairs: [string, string][] = [
      ['template', 'og'],
      ['fills', '7b227469746c65223a224869227d'],
    ];
    const uri = (templates: Record<string, string>) =>
      canonicalRequest('/photos/beach.jpg', pairs, { maxDimension: 8192, templates }, { accept: 'image/webp' }).uri;
    expect(uri(before)).toBe(`/photos/beach.jpg/template=og.${before.og},fills=7b227469746c65223a224869227d,accept=webp`);
    expect(uri(after)).not.toBe(uri(before));
    // What a signature covers names the template alone.
    expect(canonicalRequest('/photos/beach.jpg', pairs, { maxDimension: 8192, templates: after }).uri).toBe(
      '/photos/beach.jpg/template=og,fills=7b227469746c65223a224869227d',
    );
  });
});
