// Text drawn by the transform (lambda/origin/image/steps/text.ts), with the
// packaged fonts the test setup caches: what a browser would decode, compared
// pixel for pixel with the same font drawn directly by sharp; markup drawn as
// written; placement, pads, the border, wrapping, every output format, an
// animation's first frame; and each limit a 400 when the step is priced.

import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { canonicalRequest, DEFAULT_GRAMMAR_OPTIONS, parseCanonicalUri, splitQuery, type Ops } from '../../lambda/grammar';
import { DEFAULT_LIMITS } from '../../lambda/origin/config';
import { budgetFor } from '../../lambda/origin/image/budget';
import { escapeMarkup } from '../../lambda/origin/image/text/render';
import { transform } from '../../lambda/origin/image/transform';
import { animatedGif } from '../support/images';
import { drawnDirectly, inkBox, inkOnly } from '../support/text';

/** The ops a viewer's query makes, through the canonical URI the origin parses. */
const opsOf = (query: string): Ops =>
  parseCanonicalUri(canonicalRequest('/k', splitQuery(query), DEFAULT_GRAMMAR_OPTIONS).uri, DEFAULT_GRAMMAR_OPTIONS).ops;
const run = (bytes: Buffer, query: string) =>
  transform(bytes, opsOf(query), DEFAULT_LIMITS, budgetFor(DEFAULT_LIMITS.memorySizeMb, DEFAULT_LIMITS.timeBudgetMs, bytes.length));

const white = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#ffffff' } })
    .png()
    .toBuffer();

/** Black text's coverage on white, read back from an output: 255 less the red channel. */
async function inkOf(image: Buffer) {
  const { data, info } = await sharp(image).removeAlpha().extractChannel(0).negate().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

describe('text through the transform', () => {
  const cases = [
    ['Latin', 'Pack my box with five dozen', 'NotoSans_400Regular.ttf', 'Noto Sans'],
    ['Korean', '키스의 고유조건은', 'NotoSansKR_400Regular.ttf', 'Noto Sans KR'],
    ['Japanese', 'あめつちほしそら', 'NotoSansJP_400Regular.ttf', 'Noto Sans JP'],
    ['Arabic', 'صِف خلق خود كمثل', 'NotoSansArabic_400Regular.ttf', 'Noto Sans Arabic'],
  ] as const;

  it.each(cases)('%s, black on white in a PNG, is the font drawn directly, pixel for pixel', async (_script, text, file, family) => {
    const out = await run(await white(700, 160), `text=${encodeURIComponent(text)}&text-size=40&format=png`);
    const ours = await inkOnly(await inkOf(out.body));
    const theirs = await drawnDirectly(text, file, family);
    expect([ours.width, ours.height]).toEqual([theirs.width, theirs.height]);
    // Black at alpha a over white is 255 - a, rounded once.
    const off = ours.data.reduce((most, value, i) => Math.max(most, Math.abs(value - theirs.data[i]!)), 0);
    expect(off).toBeLessThanOrEqual(1);
  });

  it('draws markup as written: `<b>x<i>&amp;<span foreground="red">` is its escaped literal (a "/" is refused below)', async () => {
    const markup = '<b>x<i>&amp;<span foreground="red">';
    const out = await run(await white(900, 100), `text=${encodeURIComponent(markup)}&text-size=40&format=png`);
    const ours = await inkOnly(await inkOf(out.body));
    const literal = await drawnDirectly(escapeMarkup(markup), 'NotoSans_400Regular.ttf', 'Noto Sans');
    expect([ours.width, ours.height]).toEqual([literal.width, literal.height]);
  });

  it('places the box at its position, its pad from the edges, inside a border', async () => {
    const query = 'text=Hi&text-size=40&text-position=bottom-right&text-pad=12&border=6,ff0000&format=png';
    const out = await run(await white(200, 120), query);
    const coverage = await inkOf(out.body);
    expect([coverage.width, coverage.height]).toEqual([212, 132]);
    // The border is red (negated red 0: no ink); the text ends within 12 px of the image inside it.
    const inside = await sharp(out.body).extract({ left: 6, top: 6, width: 200, height: 120 }).png().toBuffer();
    const box = inkBox(await inkOf(inside));
    expect(box.left + box.width).toBeGreaterThan(200 - 12 - 6);
    expect(box.left + box.width).toBeLessThanOrEqual(200 - 12);
    expect(box.top + box.height).toBeLessThanOrEqual(120 - 12);
    expect(box.top).toBeGreaterThan(50);
  });

  it('wraps a long text within the image, and within text-width when given', async () => {
    const text = encodeURIComponent('The quick brown fox jumps over the lazy dog');
    const within = inkBox(await inkOf((await run(await white(300, 400), `text=${text}&text-size=30&format=png`)).body));
    expect(within.width).toBeLessThanOrEqual(300);
    expect(within.height).toBeGreaterThan(60);
    const narrower = inkBox(await inkOf((await run(await white(300, 400), `text=${text}&text-size=30&text-width=150&format=png`)).body));
    expect(narrower.width).toBeLessThanOrEqual(150);
    expect(narrower.height).toBeGreaterThan(within.height);
  });

  it.each(['jpeg', 'webp', 'avif', 'gif', 'png'])('draws it in %s', async (format) => {
    const out = await run(await white(240, 100), `text=HH&text-size=60&text-color=000&format=${format}`);
    const box = inkBox(await inkOf(out.body));
    // Centred: the ink's middle near the image's, whatever the codec's ringing.
    const { data, info } = await sharp(out.body)
      .removeAlpha()
      .extractChannel(0)
      .negate()
      .threshold(128)
      .raw()
      .toBuffer({ resolveWithObject: true });
    const solid = inkBox({ data, width: info.width, height: info.height });
    expect(Math.abs(solid.left + solid.width / 2 - 120)).toBeLessThan(6);
    expect(Math.abs(solid.top + solid.height / 2 - 50)).toBeLessThan(10);
    expect(box.width).toBeGreaterThan(40);
  });

  it("draws on an animation's first frame, which is the output", async () => {
    const out = await run(await animatedGif(3, 80, 60), 'text=A&text-size=30&format=gif');
    expect((await sharp(out.body).metadata()).pages ?? 1).toBe(1);
  });

  it('refuses each limit with a 400 naming it, when the step is priced', async () => {
    const refusals: [string, RegExp][] = [
      [`text=${'x'.repeat(201)}`, /201 characters, over the limit of 200/],
      ['text=a%07b', /control character/],
      [`text=${'W'.repeat(190)}&text-size=400`, /over the limit of 8000000/],
      [`text=${Array(21).fill('a').join('%0A')}`, /21 lines \(predicted\), over the limit of 20/],
      ['text=50%2F50', /contains a "\/", which a variant's key cannot hold/],
    ];
    for (const [query, message] of refusals) {
      const refusal = run(await white(50, 50), query);
      await expect(refusal).rejects.toThrow(message);
      await expect(refusal).rejects.toMatchObject({ status: 400, code: 'invalid_parameter' });
    }
  });
});
