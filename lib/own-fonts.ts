// A deployment's own fonts at synth (the `fonts` setting): each named font
// file of the app is checked (a TrueType or OpenType font with a family, not
// one of the packaged families), its face read for Pango, and the file
// packaged with the origin function under its name. The names go to the edge
// (the choices of `text-font` in its KeyValueStore) and the faces to the
// origin (TEXT_FONTS), from the one deploy.

import { mustBe } from '../lambda/common/checks';
import { SYNONYMS } from '../lambda/grammar';
import { fontsJson } from '../lambda/origin/config';
import {
  DEPLOYMENT_FONTS_FOLDER,
  NAMED_FONTS,
  PACKAGED_FAMILIES,
  type DeploymentFonts,
  type FontFace,
} from '../lambda/origin/image/text/fonts';
import { fontFileFacts, type FontFileFacts } from './font-file';
import { readAppFile, type PackagedFile } from './image-files';
import { fail } from './settings';

/** One font: a .ttf or .otf file of the app. */
export interface FontProps {
  /** The font file, relative to the working directory of `cdk synth`; at most 20 MiB. */
  readonly file: string;
}

/** A checked font: the app's file, and its face as the origin reads it (its file the package's). */
export interface PackagedFont {
  readonly name: string;
  readonly source: string;
  readonly face: FontFace;
}

/** The bounds: a font's file, their count and their bytes together (the origin's package stays far below Lambda's 250 MB). */
export const FONT_LIMITS = { fileBytes: 20 * 1024 * 1024, count: 8, totalBytes: 64 * 1024 * 1024 } as const;

/**
 * The most bytes the faces' JSON may take in the origin's environment (TEXT_FONTS):
 * Lambda allows 4 KB for all of its variables, the templates up to 2,000 and the others about 1.5 KB.
 */
export const MAX_FONTS_JSON_BYTES = 500;

/** Pango's weight words by OS/2 weight class, to the nearest hundred (400: none). */
const WEIGHTS = ['Thin', 'Ultra-Light', 'Light', '', 'Medium', 'Semi-Bold', 'Bold', 'Ultra-Bold', 'Heavy'];

/** The face Pango selects the file by: its family, and its own weight and slant (a face it lacks, Pango would pick another). */
function faceOf({ family, weightClass, slant }: FontFileFacts): FontFace {
  const weight = WEIGHTS[Math.min(8, Math.max(0, Math.round(weightClass / 100) - 1))] as string;
  return { family, weight, ...(slant ? { style: slant === 'italic' ? 'Italic' : 'Oblique' } : {}) };
}

/** The font's name: a word a URL gives, none of the packaged fonts' nor another spelling the grammar reads. */
function checkName(name: string): void {
  if (!/^[a-z][a-z0-9-]{0,31}$/.test(name))
    fail(mustBe(`fonts: the name "${name}"`, 'lower-case letters, digits and -, starting with a letter, at most 32', name));
  if (Object.hasOwn(NAMED_FONTS, name) || Object.hasOwn(SYNONYMS, name))
    fail(
      `fonts: "${name}" is a name the service already reads (${Object.keys(NAMED_FONTS).join(', ')} are the packaged fonts); choose another.`,
    );
}

/** One font checked: its file read, its kind and family. */
function packageFont(name: string, props: FontProps | undefined): PackagedFont & { bytes: number } {
  checkName(name);
  if (typeof props?.file !== 'string')
    return fail(mustBe(`fonts: "${name}"`, 'an object with a file, e.g. {"file":"brand/Brand.ttf"}', props));
  const what = `font "${name}"`;
  const { source, bytes } = readAppFile(what, props.file, FONT_LIMITS.fileBytes);
  const facts = fontFileFacts(bytes);
  if (typeof facts === 'string') return fail(`${what}: ${source} is ${facts}.`);
  const family = facts.family;
  if (PACKAGED_FAMILIES.some((packaged) => packaged.toLowerCase() === family.toLowerCase()))
    fail(`${what}: its family "${family}" is a packaged font's; a deployment's own font must have a family of its own.`);
  if (/[,\\\u0000-\u001f]/.test(family))
    fail(`${what}: its family ${JSON.stringify(family)} holds a comma or a control character, which Pango cannot select.`);
  return { name, source, face: faceOf(facts), bytes: bytes.length };
}

/** The fonts checked, in the origin's package under their names; throws naming the font and what to do. */
export function packageFonts(fonts: { [name: string]: FontProps } = {}): PackagedFont[] {
  const names = Object.keys(fonts);
  if (names.length > FONT_LIMITS.count) fail(`fonts: at most ${FONT_LIMITS.count} fonts, not ${names.length}.`);
  const packaged = names.map((name) => packageFont(name, fonts[name]));
  const total = packaged.reduce((sum, font) => sum + font.bytes, 0);
  if (total > FONT_LIMITS.totalBytes)
    fail(`fonts: their files take ${total} bytes together, over ${FONT_LIMITS.totalBytes}; use fewer or smaller ones.`);
  packaged.forEach((font, index) => {
    const twin = packaged.slice(0, index).find((other) => JSON.stringify(other.face) === JSON.stringify(font.face));
    if (twin)
      fail(
        `fonts: "${twin.name}" and "${font.name}" are the same face (${JSON.stringify(font.face)}), which Pango cannot tell apart; keep one.`,
      );
  });
  const result = packaged.map(({ name, source, face }) => ({ name, source, face }));
  const bytes = Buffer.byteLength(fontsJson(originFonts(result, 'packaged')));
  if (bytes > MAX_FONTS_JSON_BYTES)
    fail(
      `fonts: their faces take ${bytes} bytes of the origin's environment, over ${MAX_FONTS_JSON_BYTES}; use fewer fonts or shorter names.`,
    );
  return result;
}

/** The fonts as the origin reads them: each face with its file, in the function's package or where it is (locally). */
export const originFonts = (fonts: PackagedFont[], files: 'packaged' | 'source'): DeploymentFonts =>
  Object.fromEntries(
    fonts.map(({ name, source, face }) => [name, { ...face, file: files === 'packaged' ? `${DEPLOYMENT_FONTS_FOLDER}/${name}` : source }]),
  );

/** The fonts' files as the origin's package holds them. */
export const fontFiles = (fonts: PackagedFont[]): PackagedFile[] =>
  fonts.map(({ name, source }) => ({ source, file: `${DEPLOYMENT_FONTS_FOLDER}/${name}` }));
