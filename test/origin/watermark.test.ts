// Watermarks through the real handler on LocalStack: where the watermark
// lands, how opaque it is, what a prefix that requires one does, and what an
// origin that does not have the version a URI names answers.

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkedPlacement, watermarkVersion, type WatermarkDefinition, type WatermarkPlacement } from '../../lambda/origin/watermarks';
import { animatedGif, isNear, pixelAt } from '../support/images';
import { createTestOrigin, type TestOrigin } from '../support/origin';

const BLUE = { r: 20, g: 60, b: 220 };
const RED = { r: 255, g: 0, b: 0 };
const BLACK = { r: 0, g: 0, b: 0 };

let origin: TestOrigin;
let definitions: Record<string, WatermarkDefinition>;

const solid = (width: number, height: number, colour: typeof RED) =>
  sharp({ create: { width, height, channels: 3, background: colour } })
    .png()
    .toBuffer();

/** A watermark file and its definition, as the construct packages it. */
async function watermark(folder: string, name: string, bytes: Buffer, given: Partial<WatermarkPlacement>): Promise<WatermarkDefinition> {
  const placement = checkedPlacement(name, given);
  const file = join(folder, `${name}.png`);
  await writeFile(file, bytes);
  return { ...placement, file, version: watermarkVersion(bytes, placement) };
}

const uri = (key: string, ops: string, name = 'corner') =>
  `/${key}/${ops.replace('WM', `watermark=${name}.${definitions[name]?.version}`)}`;

beforeAll(async () => {
  const folder = await mkdtemp(join(tmpdir(), 'watermarks-'));
  definitions = {
    // 100x50 red, at the bottom right, 5% of the shorter side from the edges, a quarter of the width.
    corner: await watermark(folder, 'corner', await solid(100, 50, RED), { margin: 0.05, size: 0.25 }),
    half: await watermark(folder, 'half', await solid(100, 50, RED), { position: 'top-left', margin: 0, size: 0.25, opacity: 0.5 }),
    // Far larger than most outputs: it is scaled down to fit inside them.
    huge: await watermark(folder, 'huge', await solid(1000, 1000, RED), { position: 'center', margin: 0.1, size: 1 }),
  };
  origin = await createTestOrigin('watermark', { watermarkDefinitions: definitions, requireWatermark: { 'users/': 'corner' } });
  const photo = await sharp({ create: { width: 400, height: 300, channels: 3, background: BLUE } })
    .jpeg()
    .toBuffer();
  await Promise.all([
    origin.putSource('photo.jpg', photo),
    origin.putSource('users/42/me.jpg', photo),
    origin.putSource('anim.gif', await animatedGif(3, 80, 60)),
  ]);
});

async function image(requestUri: string) {
  const response = await origin.request(requestUri);
  expect(response.status, response.body.toString('utf8', 0, 200)).toBe(200);
  return { body: response.body, meta: await sharp(response.body).metadata() };
}

describe('placement', () => {
  it('puts the watermark at its position, sized by the output width, inside the margin', async () => {
    const { body, meta } = await image(uri('photo.jpg', 'width=400,WM,format=png'));
    expect([meta.width, meta.height]).toEqual([400, 300]);
    // 100x50 (a quarter of 400), 15 px (5% of 300) from the right and bottom edges: x 285-384, y 235-284.
    expect(isNear(await pixelAt(body, 330, 260), RED, 10)).toBe(true);
    expect(isNear(await pixelAt(body, 383, 283), RED, 10)).toBe(true);
    expect(isNear(await pixelAt(body, 387, 260), BLUE, 10)).toBe(true);
    expect(isNear(await pixelAt(body, 330, 288), BLUE, 10)).toBe(true);
    expect(isNear(await pixelAt(body, 10, 10), BLUE, 10)).toBe(true);
  });

  it('scales with the output: a 200 px wide output gets a 50 px wide watermark', async () => {
    const { body } = await image(uri('photo.jpg', 'width=200,WM,format=png'));
    // 50x25, 8 px (5% of 150, rounded) in: x 142-191, y 117-141.
    expect(isNear(await pixelAt(body, 143, 118), RED, 10)).toBe(true);
    expect(isNear(await pixelAt(body, 140, 118), BLUE, 10)).toBe(true);
  });

  it('applies its opacity to the watermark alone', async () => {
    const { body } = await image(uri('photo.jpg', 'width=400,WM,format=png', 'half'));
    const mixed = await pixelAt(body, 10, 10);
    expect(isNear(mixed, { r: (255 + BLUE.r) / 2, g: BLUE.g / 2, b: BLUE.b / 2 }, 12), JSON.stringify(mixed)).toBe(true);
    expect(isNear(await pixelAt(body, 200, 200), BLUE, 10)).toBe(true);
  });

  it('shrinks a watermark larger than the output to fit inside it and its margins', async () => {
    const { body, meta } = await image(uri('photo.jpg', 'width=64,WM,format=png', 'huge'));
    expect([meta.width, meta.height]).toEqual([64, 48]);
    // 1000x1000 into 64x48 less 5 px margins: 38x38, centred.
    expect(isNear(await pixelAt(body, 32, 24), RED, 10)).toBe(true);
    expect(isNear(await pixelAt(body, 2, 24), BLUE, 12)).toBe(true);
    expect(isNear(await pixelAt(body, 32, 2), BLUE, 12)).toBe(true);
  });

  it('sits inside a border, which frames the watermarked image', async () => {
    const { body, meta } = await image(uri('photo.jpg', 'width=400,WM,border=10,000000,format=png'));
    expect([meta.width, meta.height]).toEqual([420, 320]);
    expect(isNear(await pixelAt(body, 3, 3), BLACK, 10)).toBe(true);
    // The watermark moves in by the border: x 295-394, y 245-294.
    expect(isNear(await pixelAt(body, 393, 293), RED, 10)).toBe(true);
    expect(isNear(await pixelAt(body, 397, 293), BLUE, 10)).toBe(true);
  });

  it('gives the first frame of an animation, as trim and a blurred fill do', async () => {
    const response = await origin.request(uri('anim.gif', 'width=80,WM,format=gif'));
    expect(response.status).toBe(200);
    const meta = await sharp(response.body, { animated: true }).metadata();
    expect(meta.pages ?? 1).toBe(1);
    expect(isNear(await pixelAt(response.body, 70, 52), RED, 30)).toBe(true);
  });
});

describe('refusals', () => {
  it('serves a prefix that requires a watermark only with it, saying what to add, and stores nothing for the refusal', async () => {
    const refused = await origin.request('/users/42/me.jpg/width=100');
    expect(refused.status).toBe(403);
    expect(refused.json()).toEqual({
      error: 'watermark_required',
      message: 'Images under "users/" are served only with the watermark "corner": add wm=corner to the URL.',
    });
    const other = await origin.request(uri('users/42/me.jpg', 'width=100,WM', 'half'));
    expect(other.status).toBe(403);
    expect((await origin.cachedKeys()).filter((key) => key.startsWith('users/'))).toEqual([]);

    const { body } = await image(uri('users/42/me.jpg', 'width=400,WM,format=png'));
    expect(isNear(await pixelAt(body, 330, 260), RED, 10)).toBe(true);
    // Outside the prefix, nothing is required.
    expect((await origin.request('/photo.jpg/width=100')).status).toBe(200);
  });

  it('answers a version it does not have (a deploy in progress) with a 503 to retry, storing nothing', async () => {
    const before = await origin.cachedKeys();
    for (const watermarkOp of ['watermark=corner.00000000', 'watermark=nosuch.12345678', 'watermark=corner']) {
      const response = await origin.request(`/photo.jpg/width=120,${watermarkOp}`);
      expect(response.status, watermarkOp).toBe(503);
      expect(response.json()).toMatchObject({ error: 'watermark_unavailable' });
    }
    expect(await origin.cachedKeys()).toEqual(before);
    expect((await origin.request(uri('photo.jpg', 'width=120,WM'))).status).toBe(200);
  });
});
