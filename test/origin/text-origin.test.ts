// A text through the real handler on LocalStack, as the edge rewrites a
// viewer's request: drawn with a watermark and a border, its variant kept
// under the key S3 decodes the canonical URI to, and a text over the limits a
// 400 that writes no variant.

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalRequest, splitQuery, type GrammarOptions } from '../../lambda/grammar';
import { checkedPlacement, watermarkVersion } from '../../lambda/origin/watermarks';
import { isNear, pixelAt } from '../support/images';
import { createTestOrigin, type TestOrigin } from '../support/origin';

const WHITE = { r: 255, g: 255, b: 255 };
const RED = { r: 255, g: 0, b: 0 };
const BLACK = { r: 0, g: 0, b: 0 };

let origin: TestOrigin;
let grammar: GrammarOptions;

beforeAll(async () => {
  const folder = await mkdtemp(join(tmpdir(), 'text-'));
  const mark = await sharp({ create: { width: 40, height: 40, channels: 3, background: RED } })
    .png()
    .toBuffer();
  const placement = checkedPlacement('logo', { position: 'top-left', margin: 0, size: 0.1 });
  const file = join(folder, 'logo.png');
  await writeFile(file, mark);
  const version = watermarkVersion(mark, placement);
  grammar = { maxDimension: 8192, watermarks: { logo: version } };
  origin = await createTestOrigin('text', { watermarkDefinitions: { logo: { ...placement, file, version } } });
  await origin.putSource(
    'card.png',
    await sharp({ create: { width: 400, height: 200, channels: 3, background: WHITE } })
      .png()
      .toBuffer(),
  );
});

/** The canonical URI the edge makes of a viewer's query. */
const edgeUri = (key: string, query: string) => canonicalRequest(`/${key}`, splitQuery(query), grammar, { accept: '' }).uri;

describe('a text through the handler', () => {
  it('is drawn over the watermark, inside the border, and kept under the decoded key', async () => {
    const text = 'Sale, 50% off = €20 / 안녕';
    const uri = edgeUri(
      'card.png',
      `text=${encodeURIComponent(text)}&text-size=60&text-position=top-left&wm=logo&border=5,000000&format=png`,
    );
    expect(uri).toContain(`text=${encodeURIComponent(text)}`);
    const response = await origin.request(uri);
    expect(response.status, response.body.toString('utf8', 0, 200)).toBe(200);
    const meta = await sharp(response.body).metadata();
    expect([meta.width, meta.height]).toEqual([410, 210]);
    // The watermark's red square sits in the top-left corner, inside the border; the text's black ink is drawn over it.
    expect(isNear(await pixelAt(response.body, 2, 2), BLACK, 10)).toBe(true);
    const { data, info } = await sharp(response.body)
      .extract({ left: 5, top: 5, width: 40, height: 40 })
      .raw()
      .toBuffer({ resolveWithObject: true });
    const pixels = [...Array(40 * 40).keys()].map((i) => [data[i * info.channels]!, data[i * info.channels + 1]!] as const);
    expect(pixels.some(([r, g]) => r > 200 && g < 50)).toBe(true);
    expect(pixels.some(([r]) => r < 50)).toBe(true);
    // S3 decodes the canonical URI into the variant's key.
    expect(await origin.cachedKeys()).toContain(decodeURIComponent(uri.slice(1)));
  });

  it('refuses a text over the limits with a 400 naming the limit, and keeps no variant', async () => {
    const before = await origin.cachedKeys();
    const response = await origin.request(edgeUri('card.png', `text=${'x'.repeat(201)}&format=png`));
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body.toString('utf8'))).toEqual({
      error: 'invalid_parameter',
      message: 'The text has 201 characters, over the limit of 200.',
    });
    expect(await origin.cachedKeys()).toEqual(before);
  });

  it('draws in its colour, in the middle by default', async () => {
    const response = await origin.request(edgeUri('card.png', 'text=%E2%96%A0&text-size=100&text-color=f00&format=png'));
    expect(response.status).toBe(200);
    expect(isNear(await pixelAt(response.body, 200, 100), RED, 10)).toBe(true);
    expect(isNear(await pixelAt(response.body, 5, 5), WHITE, 10)).toBe(true);
  });
});
