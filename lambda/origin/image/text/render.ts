// Text drawn to pixels: the one render that the text step (steps/text.ts) and
// the card templates call. A viewer's text is text: it is escaped for Pango's
// markup, so `<b>` and `&amp;` are drawn as written, never read as markup.
// Pango and HarfBuzz shape it and lay it out (right to left for Arabic),
// with the packaged fonts and the deployment's own alone (fonts.ts). The
// render is bounded before it starts: its area is predicted from the size,
// the characters and the lines, and refused over TEXT_LIMITS, each refusal a
// 400 naming the limit.

import sharp from 'sharp';
import { HttpError } from '../../errors';
import type { Price, Rgba } from '../steps/context';
import { faceOf, fallbackFamilies, missingFonts, NAMED_FONTS, useOwnFonts, type DeploymentFonts, type FontFace } from './fonts';

export type TextAlign = 'left' | 'centre' | 'right';

/** What to draw. */
export interface TextSpec {
  /** The text as given: `\n` breaks a line; no other control character is allowed. */
  text: string;
  /** A named font: a packaged one (NAMED_FONTS), or one of `fonts`. */
  font: string;
  /** The deployment's own fonts (its `fonts` setting), beside the packaged ones. */
  fonts?: DeploymentFonts;
  /** The font's size in pixels (its em). */
  size: number;
  colour: Rgba;
  /** The lines' alignment within the text's box. */
  align: TextAlign;
  /** Wraps lines at this width in pixels (between words, within a word too long alone); absent: lines as given. */
  width?: number;
  /** The distance between lines' baselines, as a multiple of the font's own (default 1). */
  lineHeight?: number;
  /** A soft dark shadow this many pixels below and to the right (blurred over as many); absent or 0: none. */
  shadow?: number;
}

/** The text drawn: unpremultiplied 8-bit RGBA, transparent around the glyphs; `channels` is sharp's raw input's. */
export interface RenderedText {
  data: Buffer;
  width: number;
  height: number;
  channels: 4;
}

/** The bounds of one render: each exceeded is a 400 naming it (TextLimitError). */
export const TEXT_LIMITS = {
  /** Characters (Unicode code points, line breaks included): at most 800 bytes of a variant's key, which S3 caps at 1,024. */
  characters: 200,
  /** Lines, as given and as wrapped (predicted). */
  lines: 20,
  /** Font size in pixels. */
  minSize: 4,
  maxSize: 512,
  /** A shadow's offset in pixels. */
  maxShadow: 64,
  /** Line height, a multiple of the font's. */
  minLineHeight: 0.5,
  maxLineHeight: 3,
  /** The predicted area of the render in pixels (predictedBox). */
  area: 8_000_000,
} as const;

export type TextLimit = keyof typeof TEXT_LIMITS;

/** A spec beyond TEXT_LIMITS, or not drawable: a 400 whose message names the limit. */
export class TextLimitError extends HttpError {
  constructor(
    readonly limit: TextLimit | 'font' | 'control' | 'slash',
    message: string,
  ) {
    super('invalid_parameter', message);
  }
}

/**
 * What a render's size is predicted from, per font size, measured with the
 * packaged fonts: a character at most NARROW em across (Noto Sans' widest
 * letters are under 1 em, a missing glyph's box 1.2), WIDE when wide (CJK,
 * Hangul, emoji: at most 1.3), VAST for the few far wider (Arabic's ligature
 * ﷽ is 9.7 em, the three-em dash 2.8); a line at most LINE em high (Noto's
 * CJK and Arabic fonts' natural line is under 1.5 em).
 */
const EM = { narrow: 1.2, wide: 1.3, vast: 10, line: 1.5, wrapNarrow: 0.6 } as const;

/** Code points drawn about 1 em wide or more: Hangul, CJK, kana, full-width forms, emoji and other symbols past the BMP. */
const WIDE =
  /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]|[\ud800-\udbff]/;

/** Code points drawn several em wide: the two- and three-em dashes, Arabic's widest ligatures (ﷺ ﷻ ﷽). */
const VAST = /[\u2e3a\u2e3b\ufdfa\ufdfb\ufdfd]/;

/** Control characters other than a line break, which Pango would draw as boxes or drop. */
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

const refuse = (limit: TextLimit, message: string): never => {
  throw new TextLimitError(limit, message);
};

/** The text's lines as given, each as its characters (code points). */
const linesOf = (text: string) => text.split('\n').map((line) => [...line]);

/** A line's width in em: an upper bound (`narrow` at its most), or the usual width of its letters, for wrapping's estimate. */
const emWidth = (characters: string[], narrow: number) =>
  characters.reduce((sum, character) => sum + (VAST.test(character) ? EM.vast : WIDE.test(character) ? EM.wide : narrow), 0);

/** The render's predicted box before any shadow: its width, an upper bound, and its lines as given and wrapped (an estimate). */
export function predictedBox(spec: TextSpec): { width: number; height: number; lines: number } {
  const lines = linesOf(spec.text);
  const wrapped = (line: string[]) => (spec.width ? Math.max(1, Math.ceil((emWidth(line, EM.wrapNarrow) * spec.size) / spec.width)) : 1);
  const count = lines.reduce((sum, line) => sum + wrapped(line), 0);
  const widest = Math.max(...lines.map((line) => emWidth(line, EM.narrow) * spec.size));
  const width = Math.ceil(Math.max(spec.size, spec.width ? Math.min(spec.width, widest) : widest));
  // Wrapping's estimate may fall short; the area bounds the worst: every line as wide as the box.
  const height = Math.ceil(count * spec.size * EM.line * Math.max(1, spec.lineHeight ?? 1));
  return { width, height, lines: count };
}

const shadowOf = (spec: TextSpec) => Math.round(spec.shadow ?? 0);

/** The predicted area in pixels, the shadow's margins included. */
export function predictedArea(spec: TextSpec): number {
  const { width, height } = predictedBox(spec);
  const margin = 2 * shadowOf(spec);
  return (width + margin) * (height + margin);
}

/** Throws a TextLimitError for the first bound `spec` exceeds, before anything is drawn (its font is checked when it is drawn). */
export function checkText(spec: TextSpec): void {
  const { text, size } = spec;
  if (CONTROL.test(text)) throw new TextLimitError('control', 'The text contains a control character (only a line break is allowed).');
  const characters = [...text].length;
  if (characters > TEXT_LIMITS.characters)
    refuse('characters', `The text has ${characters} characters, over the limit of ${TEXT_LIMITS.characters}.`);
  if (!(size >= TEXT_LIMITS.minSize && size <= TEXT_LIMITS.maxSize)) {
    refuse('maxSize', `The text size ${size} is outside ${TEXT_LIMITS.minSize} to ${TEXT_LIMITS.maxSize} pixels.`);
  }
  const shadow = spec.shadow ?? 0;
  if (!(shadow >= 0 && shadow <= TEXT_LIMITS.maxShadow))
    refuse('maxShadow', `The text shadow ${shadow} is outside 0 to ${TEXT_LIMITS.maxShadow} pixels.`);
  const lineHeight = spec.lineHeight ?? 1;
  if (!(lineHeight >= TEXT_LIMITS.minLineHeight && lineHeight <= TEXT_LIMITS.maxLineHeight)) {
    refuse('maxLineHeight', `The line height ${lineHeight} is outside ${TEXT_LIMITS.minLineHeight} to ${TEXT_LIMITS.maxLineHeight}.`);
  }
  const { lines } = predictedBox(spec);
  if (lines > TEXT_LIMITS.lines) refuse('lines', `The text makes ${lines} lines (predicted), over the limit of ${TEXT_LIMITS.lines}.`);
  const area = predictedArea(spec);
  if (area > TEXT_LIMITS.area) {
    refuse(
      'area',
      `The text would cover ${area} pixels (predicted from its size, characters and lines), over the limit of ${TEXT_LIMITS.area}.`,
    );
  }
}

/** CPU seconds per predicted megapixel: layout, rasterising, the shadow's blur. */
const SECONDS_PER_MEGAPIXEL = 0.2;

/**
 * The fonts' first use in a process: their load, and the tables FreeType
 * keeps (a CJK font is 5 to 11 MB). Paid once by all of a request's texts.
 */
export const FONT_LOAD: Price = { seconds: 0.15, bytes: 32e6 };

/**
 * One render's price beyond the fonts' load, from its prediction: the glyph
 * mask, the RGBA image and a shadow's two layers held at once (10 bytes a pixel).
 */
export function renderPrice(spec: TextSpec): Price {
  const area = predictedArea(spec);
  return { seconds: (SECONDS_PER_MEGAPIXEL * area) / 1e6, bytes: 10 * area };
}

/** `text` escaped for Pango's markup: every markup character is drawn as itself. */
export const escapeMarkup = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');

/** The face the spec names, or a TextLimitError listing the names it may give. */
function faceOfSpec(spec: TextSpec): FontFace {
  const face = faceOf(spec.font, spec.fonts);
  if (face) return face;
  const names = [...Object.keys(NAMED_FONTS), ...Object.keys(spec.fonts ?? {})];
  throw new TextLimitError('font', `The font "${spec.font}" is not one of ${names.join(', ')}.`);
}

/**
 * Pango's description of the font, its size in points at 72 dpi (so in
 * pixels), with the fallbacks for the text's scripts: Noto Sans first after a
 * deployment's own font, for the Latin, Greek and Cyrillic it may lack.
 */
function fontDescription(spec: TextSpec, face: FontFace): string {
  const own = face.family === NAMED_FONTS.sans!.family ? [] : [NAMED_FONTS.sans!.family];
  const families = [face.family, ...own, ...fallbackFamilies(spec.text)].join(',');
  return [families, face.weight, face.style, spec.size].filter(Boolean).join(' ');
}

/** The glyphs' coverage: one 8-bit band, 255 inside a glyph. */
async function glyphMask(spec: TextSpec, face: FontFace): Promise<{ data: Buffer; width: number; height: number }> {
  const folder = useOwnFonts();
  const missing = missingFonts(folder);
  if (missing.length) throw new HttpError('internal_error', 'The text fonts are missing.', `Missing in ${folder}: ${missing.join(', ')}`);
  const lineHeight = spec.lineHeight ?? 1;
  const markup = lineHeight === 1 ? escapeMarkup(spec.text) : `<span line_height="${lineHeight}">${escapeMarkup(spec.text)}</span>`;
  const drawn = sharp({
    text: {
      text: markup,
      font: fontDescription(spec, face),
      // A deployment's own font: libvips adds its file to the fonts known once per process.
      ...(face.file ? { fontfile: face.file } : {}),
      dpi: 72,
      align: spec.align,
      wrap: 'word-char',
      ...(spec.width ? { width: spec.width } : {}),
    },
  })
    .extractChannel(0)
    .raw()
    .toBuffer({ resolveWithObject: true });
  // Within the limits a render fails only past cairo's largest surface (32,767 pixels a side): the text's fault.
  const { data, info } = await drawn.catch((error: Error) => {
    throw new TextLimitError('area', `The text is too large to draw (${error.message.split('\n')[0]}).`);
  });
  return { data, width: info.width, height: info.height };
}

/** Unpremultiplied RGBA of `colour`, its alpha the mask's coverage times the colour's. */
function coloured(mask: Buffer, colour: Rgba): Buffer {
  const out = Buffer.alloc(mask.length * 4);
  for (let i = 0; i < mask.length; i++) {
    out[4 * i] = colour.r;
    out[4 * i + 1] = colour.g;
    out[4 * i + 2] = colour.b;
    out[4 * i + 3] = Math.round((mask[i] as number) * colour.alpha);
  }
  return out;
}

/** The shadow's darkness, a fraction of the text's own opacity. */
const SHADOW_OPACITY = 0.6;

/** `text` (RGBA, `width` x `height`) over its shadow: the mask moved `offset` down and right and blurred, on a canvas `2 * offset` larger. */
async function withShadow(text: Buffer, mask: Buffer, width: number, height: number, offset: number, colour: Rgba): Promise<RenderedText> {
  const canvas = { width: width + 2 * offset, height: height + 2 * offset };
  // Blurred with sigma offset/2, the moved mask spreads about `offset` around itself: the canvas holds it.
  const shadow = await sharp(mask, { raw: { width, height, channels: 1 } })
    .extend({ top: offset, left: offset, bottom: offset, right: offset, background: 'black' })
    .blur(Math.max(0.3, offset / 2))
    .extractChannel(0)
    .raw()
    .toBuffer();
  const out = Buffer.alloc(canvas.width * canvas.height * 4);
  for (let y = 0; y < canvas.height; y++) {
    for (let x = 0; x < canvas.width; x++) {
      const at = y * canvas.width + x;
      const shade = ((shadow[at] as number) / 255) * SHADOW_OPACITY * colour.alpha;
      const ink = x < width && y < height ? (text[4 * (y * width + x) + 3] as number) / 255 : 0;
      const alpha = ink + shade * (1 - ink);
      if (alpha === 0) continue;
      // Over a black shadow, the text's colour is weighted by its own share of the alpha.
      const share = ink / alpha;
      out[4 * at] = Math.round(colour.r * share);
      out[4 * at + 1] = Math.round(colour.g * share);
      out[4 * at + 2] = Math.round(colour.b * share);
      out[4 * at + 3] = Math.round(alpha * 255);
    }
  }
  return { data: out, ...canvas, channels: 4 };
}

/**
 * Draws `spec`: checked against TEXT_LIMITS first (a TextLimitError, a 400,
 * naming the limit) and its font named, then laid out by Pango. The
 * result is as large as the text's box, its shadow's margin included.
 */
export async function renderText(spec: TextSpec): Promise<RenderedText> {
  checkText(spec);
  // The grammar refused any other font already; a card's were checked at synth.
  const mask = await glyphMask(spec, faceOfSpec(spec));
  const text = coloured(mask.data, spec.colour);
  const offset = shadowOf(spec);
  if (offset === 0) return { data: text, width: mask.width, height: mask.height, channels: 4 };
  return withShadow(text, mask.data, mask.width, mask.height, offset, spec.colour);
}

// Named before any text, or an SVG's, is drawn in this process: fontconfig reads its configuration once.
useOwnFonts();
