// A deployment's own font in the emulator (`npm start -c fonts=...`): the
// context's `fonts` setting, read where its file is, draws a text and a card's
// title through the generated edge function, the origin and LocalStack S3;
// an unknown font is a 400 naming every font; the URL helper, given the
// deployment's fonts, writes the name.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardParams, imageUrl } from '../../lambda/client/url';
import { startEmulator, type RunningEmulator } from '../../local/emulator/start';
import { ownFont } from '../support/own-font';
import { createTestBuckets, testS3Client, type TestBuckets } from '../support/s3';

/** The same card twice: its title in the deployment's own font, or in Noto Sans. */
const card = (font: string) => ({
  width: 600,
  height: 200,
  background: '#ffffff',
  slots: {
    photo: { kind: 'image', box: [0, 0, 200, 200] },
    title: { kind: 'text', box: [220, 20, 360, 160], font, size: [24, 48], colour: '#000000' },
  },
});

const s3 = testS3Client();
let buckets: TestBuckets;
let emulator: RunningEmulator;
let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'own-fonts-emulator-'));
  await writeFile(
    join(folder, 'white.png'),
    await sharp({ create: { width: 400, height: 200, channels: 3, background: '#ffffff' } })
      .png()
      .toBuffer(),
  );
  buckets = await createTestBuckets('own-fonts-emulator');
  emulator = await startEmulator({
    s3,
    port: 0,
    images: folder,
    edgeCache: false,
    buckets: { source: buckets.sourceBucket, cache: buckets.cacheBucket },
    context: { fonts: { zeta: { file: ownFont() } }, templates: { own: card('zeta'), noto: card('sans') } },
    log: () => {},
  });
}, 90_000);

afterAll(async () => {
  await emulator?.close();
  await buckets?.cleanup();
  await rm(folder, { recursive: true, force: true });
});

async function get(url: string) {
  const response = await fetch(url);
  return { status: response.status, body: Buffer.from(await response.arrayBuffer()) };
}

const pixels = (body: Buffer) => sharp(body).removeAlpha().raw().toBuffer();

describe("the emulator with the deployment's own font", () => {
  it('draws text-font=zeta, unlike Noto Sans, with the URL helper given the fonts', async () => {
    const url = (font: string) =>
      imageUrl(
        emulator.url,
        'white.png',
        { text: 'Sphinx of black quartz', 'text-font': font, format: 'png' },
        { maxDimension: 8192, fonts: { zeta: 1 } },
      );
    expect(url('zeta')).toContain('text-font=zeta');
    const [own, noto] = await Promise.all([get(url('zeta')), get(url('sans'))]);
    expect(own.status, own.body.toString('utf8', 0, 200)).toBe(200);
    expect(noto.status).toBe(200);
    expect((await pixels(own.body)).equals(await pixels(noto.body))).toBe(false);
  });

  it('refuses an unknown font, naming every font', async () => {
    const refused = await get(`${emulator.url}/white.png?text=Hi&text-font=comic`);
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body.toString()).message).toBe('Invalid text-font "comic": expected one of sans, sans-bold, zeta.');
  });

  it("draws a card's title in it", async () => {
    const cardUrl = (template: string) =>
      imageUrl(emulator.url, 'white.png', cardParams(template, { title: 'Sphinx of quartz' }, { format: 'png' }));
    const [own, noto] = await Promise.all([get(cardUrl('own')), get(cardUrl('noto'))]);
    expect(own.status, own.body.toString('utf8', 0, 200)).toBe(200);
    expect(noto.status).toBe(200);
    expect((await pixels(own.body)).equals(await pixels(noto.body))).toBe(false);
  });
});
