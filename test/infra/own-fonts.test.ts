// A deployment's own fonts at synth (lib/own-fonts.ts, lib/font-file.ts): what
// the edge's store, the origin's environment and its package receive, and each
// check a deployment meets in `cdk synth`, with real font files (the packaged
// Noto fonts, one renamed: test/support/own-font.ts) and made-up headers.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DATA_FIELDS, DATA_KEY_PREFIX } from '../../lambda/edge/store';
import { fontsFolder } from '../../lambda/origin/image/text/fonts';
import { packagingCommands } from '../../lib/image-files';
import { fontFiles, FONT_LIMITS, packageFonts, type FontProps } from '../../lib/own-fonts';
import { ImageTransformerConfigError } from '../../lib/settings';
import { renamed } from '../support/own-font';
import { only, originFunction, synth } from './synth';

let folder: string;
/** Noto Sans Arabic (regular and bold) renamed Zeta Sans Arabic: a family of two faces. */
let regular: string;
let bold: string;

beforeAll(() => {
  folder = mkdtempSync(join(tmpdir(), 'own-fonts-'));
  const write = (name: string, bytes: Buffer) => {
    writeFileSync(join(folder, name), bytes);
    return join(folder, name);
  };
  const packaged = (file: string) => readFileSync(join(fontsFolder(), file));
  regular = write('ZetaSansArabic-Regular.ttf', renamed(packaged('NotoSansArabic_400Regular.ttf'), 'Zeta'));
  bold = write('ZetaSansArabic-Bold.ttf', renamed(packaged('NotoSansArabic_700Bold.ttf'), 'Zeta'));
  write('noto.ttf', packaged('NotoSans_400Regular.ttf'));
  write('logo.png', Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'));
  write('web.woff2', Buffer.concat([Buffer.from('wOF2'), Buffer.alloc(60)]));
  write('web.woff', Buffer.concat([Buffer.from('wOFF'), Buffer.alloc(60)]));
  write('family.ttc', Buffer.concat([Buffer.from('ttcf'), Buffer.alloc(60)]));
  // A font whose name table holds no record.
  const nameless = Buffer.from(packaged('NotoSansArabic_400Regular.ttf'));
  for (let at = 12; at < 12 + 16 * nameless.readUInt16BE(4); at += 16) {
    if (nameless.toString('latin1', at, at + 4) === 'name') nameless.writeUInt16BE(0, nameless.readUInt32BE(at + 8) + 2);
  }
  write('nameless.ttf', nameless);
  const huge = write('huge.ttf', Buffer.alloc(0));
  truncateSync(huge, FONT_LIMITS.fileBytes + 1);
});

/** The data's JSON the edge reads, from its parts in the store's entries. */
function edgeData(entries: Record<string, string>): Record<string, Record<string, Record<string, unknown>>> {
  const parts = Object.keys(entries)
    .filter((key) => key.startsWith(DATA_KEY_PREFIX))
    .sort((a, b) => Number(a.split(':').pop()) - Number(b.split(':').pop()));
  return JSON.parse(parts.map((key) => entries[key]).join(''));
}

describe('a deployment with its own fonts', () => {
  it("puts their names among text-font's choices in the edge's store, their faces in the origin's environment, their files in its package", () => {
    const fonts = { brand: { file: regular }, 'brand-bold': { file: bold } };
    const deployed = synth(() => ({ fonts, presets: { hero: { text: 'Hi', 'text-font': 'brand-bold' } } }));
    const params = edgeData(only(deployed, 'Custom::EdgeData')[1].Properties.Entries)[DATA_FIELDS.params as string]!;
    expect(params['text-font']).toEqual({
      [DATA_FIELDS.kind!]: 'choice',
      [DATA_FIELDS.choices!]: ['sans', 'sans-bold', 'brand', 'brand-bold'],
      [DATA_FIELDS.none!]: 'sans',
    });
    const env = originFunction(deployed).Properties.Environment.Variables;
    expect(JSON.parse(env.TEXT_FONTS)).toEqual({
      brand: { family: 'Zeta Sans Arabic', weight: '' },
      'brand-bold': { family: 'Zeta Sans Arabic', weight: 'Bold' },
    });
    const outputDir = mkdtempSync(join(tmpdir(), 'origin-package-'));
    const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
    execFileSync('sh', ['-c', packagingCommands(fontFiles(packageFonts(fonts)), outputDir, quote).join(' && ')]);
    expect(readFileSync(join(outputDir, 'text-fonts', 'brand-bold'))).toEqual(readFileSync(bold));
  });

  it('lets a card template name them, and still refuses a font that is neither packaged nor its own', () => {
    const title = (font: string) => ({
      og: {
        width: 600,
        height: 300,
        slots: { photo: { kind: 'image', box: [0, 0, 300, 300] }, title: { kind: 'text', box: [300, 0, 300, 300], font, size: [20, 40] } },
      },
    });
    expect(() => synth(() => ({ fonts: { brand: { file: regular } }, templates: title('brand') as never }))).not.toThrow();
    expect(() => synth(() => ({ fonts: { brand: { file: regular } }, templates: title('comic') as never }))).toThrow(
      'template "og": slots.title.font must be one of sans, sans-bold, brand, not "comic".',
    );
  });

  it('without any, writes no TEXT_FONTS and leaves text-font its packaged choices', () => {
    const deployed = synth(() => ({}));
    expect(originFunction(deployed).Properties.Environment.Variables.TEXT_FONTS).toBeUndefined();
    const params = edgeData(only(deployed, 'Custom::EdgeData')[1].Properties.Entries)[DATA_FIELDS.params as string]!;
    expect(params['text-font']![DATA_FIELDS.choices!]).toEqual(['sans', 'sans-bold']);
  });
});

describe('fonts are checked at synth', () => {
  const rejects = (fonts: { [name: string]: FontProps }, message: string | RegExp) => {
    expect(() => packageFonts(fonts)).toThrow(ImageTransformerConfigError);
    expect(() => packageFonts(fonts)).toThrow(message);
  };

  it('refuses a name that is no lower-case word, or one the service reads already', () => {
    rejects(
      { Brand: { file: regular } },
      'fonts: the name "Brand" must be lower-case letters, digits and -, starting with a letter, at most 32, not "Brand".',
    );
    rejects(
      { 'sans-bold': { file: regular } },
      'fonts: "sans-bold" is a name the service already reads (sans, sans-bold are the packaged fonts); choose another.',
    );
    rejects({ pad: { file: regular } }, /"pad" is a name the service already reads/);
    rejects(
      { brand: 'brand.ttf' as never },
      'fonts: "brand" must be an object with a file, e.g. {"file":"brand/Brand.ttf"}, not "brand.ttf".',
    );
  });

  it('refuses a file that is missing, too large, or no TrueType or OpenType font, saying what to do', () => {
    rejects({ brand: { file: join(folder, 'nope.ttf') } }, /font "brand": cannot read .*nope\.ttf/);
    rejects(
      { brand: { file: join(folder, 'huge.ttf') } },
      `font "brand" must be at most 20 MiB, not "${FONT_LIMITS.fileBytes + 1} bytes".`,
    );
    rejects(
      { brand: { file: join(folder, 'logo.png') } },
      /font "brand": .*logo\.png is not a TrueType or OpenType font \(\.ttf or \.otf\)\./,
    );
    rejects({ brand: { file: join(folder, 'web.woff2') } }, /web\.woff2 is a WOFF2 web font: convert it to a \.ttf or \.otf/);
    rejects({ brand: { file: join(folder, 'web.woff') } }, /web\.woff is a WOFF web font: convert it to a \.ttf or \.otf/);
    rejects(
      { brand: { file: join(folder, 'family.ttc') } },
      /family\.ttc is a font collection \(\.ttc\/\.otc\): extract the one font you want/,
    );
  });

  it("refuses a font without a family, a packaged font's family, and the same face twice", () => {
    rejects({ brand: { file: join(folder, 'nameless.ttf') } }, /nameless\.ttf is a font whose name table gives no family name\./);
    rejects(
      { brand: { file: join(folder, 'noto.ttf') } },
      `font "brand": its family "Noto Sans" is a packaged font's; a deployment's own font must have a family of its own.`,
    );
    rejects(
      { brand: { file: regular }, again: { file: regular } },
      /"brand" and "again" are the same face \(.*\), which Pango cannot tell apart; keep one\./,
    );
  });

  it('refuses more than 8 fonts, and faces past their share of the environment', () => {
    const many = Object.fromEntries(Array.from({ length: 9 }, (_, index) => [`f${index}`, { file: regular }]));
    rejects(many, 'fonts: at most 8 fonts, not 9.');
    // Eight faces of eight families, under the longest names: their JSON is past its 500 bytes.
    const arabic = readFileSync(join(fontsFolder(), 'NotoSansArabic_400Regular.ttf'));
    const long = Object.fromEntries(
      Array.from({ length: 8 }, (_, index) => {
        const file = join(folder, `long${index}.ttf`);
        writeFileSync(file, renamed(arabic, `Zet${index}`));
        return [`a-font-name-as-long-as-allowed-${index}`, { file }];
      }),
    );
    rejects(
      long,
      /^ImageTransformer: fonts: their faces take \d+ bytes of the origin's environment, over 500; use fewer fonts or shorter names\.$/,
    );
  });

  it('refuses a preset naming a font the deployment does not have', () => {
    expect(() => synth(() => ({ fonts: { brand: { file: regular } }, presets: { hero: { text: 'Hi', 'text-font': 'comic' } } }))).toThrow(
      'preset "hero" is invalid: Invalid text-font "comic": expected one of sans, sans-bold, brand.',
    );
  });
});
