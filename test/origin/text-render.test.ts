// The text render (lambda/origin/image/text/render.ts) with the packaged fonts
// the test setup caches: each script's render equals the same font file drawn
// directly by sharp; Arabic is shaped and runs right to left; markup in a
// viewer's text is drawn as written; fontconfig sees our fonts and no other;
// every limit is a 400 naming it.

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { TEXT_FONTS_ENV } from '../../lambda/origin/image/text/fonts';
import { renderText, TEXT_LIMITS, TextLimitError, type TextSpec } from '../../lambda/origin/image/text/render';
import { FONTS_CACHE } from '../../lib/fonts';
import { drawnDirectly, inkOnly } from '../support/text';

const BLACK = { r: 0, g: 0, b: 0, alpha: 1 };
const spec = (text: string, more: Partial<TextSpec> = {}): TextSpec => ({
  text,
  font: 'sans',
  size: 40,
  colour: BLACK,
  align: 'left',
  ...more,
});

/** A render's alpha: the glyphs' coverage. */
const alphaOf = ({ data, width, height }: { data: Buffer; width: number; height: number }) =>
  sharp(data, { raw: { width, height, channels: 4 } })
    .extractChannel(3)
    .raw()
    .toBuffer();

async function renderedInk(text: string, more: Partial<TextSpec> = {}) {
  const rendered = await renderText(spec(text, more));
  return inkOnly({ data: await alphaOf(rendered), width: rendered.width, height: rendered.height });
}

describe('each script, drawn with its packaged font', () => {
  const cases = [
    ['Latin', 'Sphinx of black quartz', 'NotoSans_400Regular.ttf', 'Noto Sans'],
    ['Korean', '다람쥐 헌 쳇바퀴에 타고파', 'NotoSansKR_400Regular.ttf', 'Noto Sans KR'],
    ['Japanese', 'いろはにほへと 色は匂へど', 'NotoSansJP_400Regular.ttf', 'Noto Sans JP'],
    ['Chinese', '天地玄黄 宇宙洪荒', 'NotoSansSC_400Regular.ttf', 'Noto Sans SC'],
    ['Arabic', 'نص حكيم له سر قاطع', 'NotoSansArabic_400Regular.ttf', 'Noto Sans Arabic'],
    ['emoji', '😀🎉', 'NotoEmoji_400Regular.ttf', 'Noto Emoji'],
  ] as const;

  it.each(cases)('%s: the pixels equal the font file drawn directly by sharp', async (_script, text, file, family) => {
    const ours = await renderedInk(text);
    const theirs = await drawnDirectly(text, file, family);
    expect([ours.width, ours.height]).toEqual([theirs.width, theirs.height]);
    expect(ours.data.equals(theirs.data)).toBe(true);
  });

  it('Arabic is shaped (joined letters are narrower than the same letters kept apart) and runs right to left', async () => {
    const joined = await renderedInk('سلام');
    // A zero-width non-joiner between letters keeps each in its isolated form.
    const apart = await renderedInk('س\u200cل\u200ca\u200cم'.replace('a', 'ا'));
    expect(joined.width).toBeLessThan(apart.width);
    const reversed = await renderedInk([...'سلام'].reverse().join(''));
    expect(reversed.data.equals(joined.data)).toBe(false);
    // Right to left: a Latin word after the Arabic one in the text is drawn on its left.
    const mixed = await renderText(spec('سلام abc', { font: 'sans' }));
    const latinAlone = await renderedInk('abc');
    const alpha = await alphaOf(mixed);
    const columnsWithInk = (from: number, to: number) => {
      let ink = 0;
      for (let y = 0; y < mixed.height; y++) for (let x = from; x < to; x++) ink += alpha[y * mixed.width + x]! > 0 ? 1 : 0;
      return ink;
    };
    // The Arabic run is a paragraph in its own direction: `abc` comes first from the left, within its own width.
    expect(columnsWithInk(0, latinAlone.width)).toBeGreaterThan(0);
    expect(mixed.width).toBeGreaterThan(joined.width + latinAlone.width);
  });
});

describe("a viewer's text", () => {
  it('draws markup characters as themselves: `<b>x</b>&amp;` is as wide as its escaped literal, not as a bold x&', async () => {
    const literal = '<b>x</b>&amp;';
    const ours = await renderedInk(literal);
    const escaped = await drawnDirectly('&lt;b&gt;x&lt;/b&gt;&amp;amp;', 'NotoSans_400Regular.ttf', 'Noto Sans');
    expect(ours.width).toBe(escaped.width);
    expect(ours.data.equals(escaped.data)).toBe(true);
    const interpreted = await drawnDirectly('<b>x</b>&amp;', 'NotoSans_700Bold.ttf', 'Noto Sans');
    expect(ours.width).toBeGreaterThan(2 * interpreted.width);
  });

  it('refuses each limit with a 400 naming it', async () => {
    const refusals: [Partial<TextSpec> & { text?: string }, RegExp][] = [
      [{ text: 'x'.repeat(TEXT_LIMITS.characters + 1) }, /201 characters, over the limit of 200/],
      [
        {
          text: Array(TEXT_LIMITS.lines + 1)
            .fill('a')
            .join('\n'),
        },
        /21 lines \(predicted\), over the limit of 20/,
      ],
      [{ text: 'word '.repeat(39), width: 100 }, /lines \(predicted\), over the limit of 20/],
      [{ size: TEXT_LIMITS.maxSize + 1 }, /text size 513 is outside 4 to 512 pixels/],
      [{ size: 3 }, /text size 3 is outside/],
      [{ shadow: TEXT_LIMITS.maxShadow + 1 }, /text shadow 65 is outside 0 to 64 pixels/],
      [{ lineHeight: 4 }, /line height 4 is outside 0.5 to 3/],
      [
        { text: 'W'.repeat(190), size: 400 },
        /would cover \d+ pixels \(predicted from its size, characters and lines\), over the limit of 8000000/,
      ],
      [{ text: '\ufdfd'.repeat(40), size: 100 }, /too large to draw/],
      [{ font: 'comic' }, /font "comic" is not one of sans, sans-bold/],
      [{ text: 'a\u0007b' }, /control character \(only a line break is allowed\)/],
    ];
    for (const [given, message] of refusals) {
      const refusal = renderText(spec(given.text ?? 'Hello', given));
      await expect(refusal).rejects.toThrow(message);
      await expect(refusal).rejects.toBeInstanceOf(TextLimitError);
      await expect(refusal).rejects.toMatchObject({ status: 400, code: 'invalid_parameter' });
    }
  });
});

describe('the fonts fontconfig sees', () => {
  it('are the packaged ones in a private configuration: the folder the test setup cached, and no other', () => {
    expect(process.env[TEXT_FONTS_ENV]).toBe(FONTS_CACHE);
    const config = readFileSync(process.env.FONTCONFIG_FILE!, 'utf8');
    expect([...config.matchAll(/<dir>([^<]*)<\/dir>/g)].map((match) => match[1])).toEqual([FONTS_CACHE]);
    expect(config).not.toMatch(/<include/);
  });

  // This machine has a font with Braille (DejaVu Sans), as its own configuration shows; Lambda has none. Ours have none either.
  const { FONTCONFIG_FILE: _ours, ...machine } = process.env;
  const machineHasBraille = spawnSync('fc-list', [':charset=2801', 'family'], { encoding: 'utf8', env: machine }).stdout?.trim().length > 0;
  it.skipIf(!machineHasBraille)(
    "draws a glyph only the machine's fonts have as a missing-glyph box, like a code point no font has",
    async () => {
      const braille = await renderText(spec('\u2801'));
      const privateUse = await renderText(spec('\ue000'));
      expect([braille.width, braille.height]).toEqual([privateUse.width, privateUse.height]);
      // The box shows the code point in hex: the two boxes differ in their digits only.
      expect(braille.data.equals(privateUse.data)).toBe(false);
    },
  );

  it('draws a shadow below and to the right, in a canvas grown by twice its offset', async () => {
    const plain = await renderText(spec('Shadow'));
    const shaded = await renderText(spec('Shadow', { shadow: 6, colour: { r: 255, g: 255, b: 255, alpha: 1 } }));
    expect([shaded.width, shaded.height]).toEqual([plain.width + 12, plain.height + 12]);
    const alpha = await alphaOf(shaded);
    // The bottom-right corner's margin holds shadow only: dark, partly opaque.
    const inShadowOnly = [...Array(shaded.width * shaded.height).keys()].find((at) => {
      const x = at % shaded.width;
      const y = Math.floor(at / shaded.width);
      return x >= plain.width && y >= plain.height - 20 && y < plain.height && alpha[at]! > 40;
    });
    expect(inShadowOnly).toBeDefined();
    expect(shaded.data[4 * inShadowOnly!]).toBe(0);
  });
});
