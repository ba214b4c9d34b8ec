// max_bytes through the real handler and its transform child on LocalStack:
// a lossy output is at most the cap whenever a quality tried reaches it (the
// quality asked, 1, and two between), in at most four encodes; a cap no
// quality reaches (1 byte) is a 422 naming how small it came, with nothing
// stored; the canonical form keeps the cap only where a quality can meet it.

import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalRequest, canonicalUri, DEFAULT_GRAMMAR_OPTIONS, parseCanonicalUri, splitQuery } from '../../lambda/grammar';
import { DEFAULT_LIMITS } from '../../lambda/origin/config';
import { transform } from '../../lambda/origin/image/transform';
import { MAX_BYTES_ENCODES } from '../../lambda/origin/image/steps';
import { facePhotos } from '../support/face-photos';
import { grainyScenePng } from '../support/images';
import { createTestOrigin, type TestOrigin } from '../support/origin';

let origin: TestOrigin;
let photo: Buffer;
const UNBOUNDED = { memoryBytes: Number.MAX_SAFE_INTEGER, seconds: Number.MAX_SAFE_INTEGER };

beforeAll(async () => {
  origin = await createTestOrigin('max bytes');
  // A real photo where one can be had, else a grainy scene: either has detail to spend bytes on.
  photo = facePhotos()?.read('coffee.png') ?? (await grainyScenePng(600, 400));
  await origin.putSource('photo.png', photo);
});

const uriOf = (key: string, query: string) => canonicalRequest(`/${key}`, splitQuery(query), DEFAULT_GRAMMAR_OPTIONS, {}).uri;

describe('max_bytes', () => {
  const cases = (['jpeg', 'webp', 'avif'] as const).flatMap((format) => [4_000, 9_000, 20_000].map((cap) => ({ format, cap })));

  it.for(cases)('$format within $cap bytes: at most the cap, as good as the qualities tried allow', async ({ format, cap }) => {
    const answer = await origin.request(uriOf('photo.png', `width=400&max_bytes=${cap}&format=${format}`));
    if (answer.status === 422) {
      // No quality reached it: the smallest tried says how far off it was.
      expect(answer.json()).toMatchObject({ error: 'max_bytes_unreachable' });
      expect(Number(/is (\d+) bytes at quality 1/.exec(answer.json().message)![1])).toBeGreaterThan(cap);
      return;
    }
    expect(answer.status).toBe(200);
    expect(answer.body.length).toBeLessThanOrEqual(cap);
    expect((await sharp(answer.body).metadata()).width).toBe(400);
    // Under the cap at a quality below the default one (the default alone is larger), found in at most four encodes.
    const uncapped = await origin.request(uriOf('photo.png', `width=400&format=${format}`));
    const made = await transform(
      photo,
      parseCanonicalUri(uriOf('photo.png', `width=400&max_bytes=${cap}&format=${format}`), DEFAULT_GRAMMAR_OPTIONS).ops,
      DEFAULT_LIMITS,
      UNBOUNDED,
    );
    expect(made.body.equals(answer.body)).toBe(true);
    if (uncapped.body.length <= cap) expect(made.encodes).toBe(1);
    else expect(made.encodes).toBeGreaterThan(1);
    expect(made.encodes).toBeLessThanOrEqual(MAX_BYTES_ENCODES);
  });

  it('keeps every frame of an animation and its timing', async () => {
    const frames = await sharp({
      create: { width: 64, height: 192, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 50 } },
    })
      .raw()
      .toBuffer();
    const gif = await sharp(frames, { raw: { width: 64, height: 192, channels: 3, pageHeight: 64 } })
      .gif({ delay: [40, 90, 250], loop: 3 })
      .toBuffer();
    await origin.putSource('frames.gif', gif);
    const uncapped = await origin.request(uriOf('frames.gif', 'format=webp'));
    const answer = await origin.request(uriOf('frames.gif', `max_bytes=${Math.floor(uncapped.body.length / 2)}&format=webp`));
    expect(answer.status).toBe(200);
    expect(answer.body.length).toBeLessThanOrEqual(uncapped.body.length / 2);
    const meta = await sharp(answer.body).metadata();
    expect({ pages: meta.pages, delay: meta.delay, loop: meta.loop }).toEqual({ pages: 3, delay: [40, 90, 250], loop: 3 });
  });

  it('answers a 1-byte cap with a 422 that says how small the output came, and stores nothing', async () => {
    const before = await origin.cachedKeys();
    const answer = await origin.request(uriOf('photo.png', 'width=200&max_bytes=1&format=jpeg'));
    expect(answer.status).toBe(422);
    expect(answer.json()).toMatchObject({ error: 'max_bytes_unreachable' });
    expect(answer.json().message).toMatch(
      /^This output is \d+ bytes at quality 1, over the 1 max_bytes allows; ask for a smaller size or more bytes\.$/,
    );
    expect(await origin.cachedKeys()).toEqual(before);
  });

  it('is kept in the canonical URI for lossy and negotiated formats, under mb too, and dropped where no quality can meet it', () => {
    expect(uriOf('a.jpg', 'mb=5000&format=webp')).toBe(canonicalUri('a.jpg', { max_bytes: 5000, format: 'webp' }));
    expect(uriOf('a.jpg', 'max_bytes=5000')).toBe('/a.jpg/max_bytes=5000');
    expect(uriOf('a.jpg', 'max_bytes=5000&format=png')).toBe('/a.jpg/format=png');
    expect(uriOf('a.jpg', 'max_bytes=5000&format=gif')).toBe('/a.jpg/format=gif');
    expect(() => uriOf('a.jpg', 'max_bytes=0')).toThrow('Invalid max_bytes "0": expected an integer from 1 to 100000000.');
  });
});
