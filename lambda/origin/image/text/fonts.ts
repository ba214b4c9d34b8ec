// The fonts text is drawn with: the ones packaged with the origin, and a
// deployment's own (its `fonts` setting, packaged beside them: the render adds
// each file when it is first named), never the machine's, so that the
// emulator and Lambda draw the same pixels. Pango finds
// fonts through fontconfig, which reads the file FONTCONFIG_FILE names when it
// first starts: this module writes one that lists the packaged folder alone
// and names it before any text (or an SVG's text) is drawn in the process.
// In Lambda the fonts sit in `fonts/` beside the bundle's entry, where the
// construct's bundling writes them (lib/fonts.ts fetches them at synth); in a
// checkout (tests, the emulator) TEXT_FONTS_DIR names the cached copy.

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The packaged fonts' folder, in the bundle (beside its entry) and in the cache. */
export const FONTS_FOLDER = 'fonts';

/** The environment variable that names the fonts' folder, overriding the bundle's. */
export const TEXT_FONTS_ENV = 'TEXT_FONTS_DIR';

/**
 * The packaged font files: Noto Sans for Latin, Greek and Cyrillic (its bold
 * for `sans-bold`), and the scripts it lacks, which fontconfig falls back to
 * among these files alone. Emoji are drawn from Noto Emoji, in one colour: the text's.
 */
export const FONT_FILES = [
  'NotoSans_400Regular.ttf',
  'NotoSans_700Bold.ttf',
  'NotoSansKR_400Regular.ttf',
  'NotoSansJP_400Regular.ttf',
  'NotoSansSC_400Regular.ttf',
  'NotoSansArabic_400Regular.ttf',
  'NotoSansArabic_700Bold.ttf',
  'NotoEmoji_400Regular.ttf',
] as const;

/**
 * A font as Pango names it: a family and a weight (Pango's word, e.g. `Bold`;
 * empty: regular), a slant (`Italic`, `Oblique`; absent: upright), and for a
 * deployment's own font its file, which the render adds to the fonts known.
 */
export interface FontFace {
  family: string;
  weight: string;
  style?: string;
  file?: string;
}

/** The font names a request may give (`text-font`) with the packaged fonts, to their face. */
export const NAMED_FONTS: { readonly [name: string]: FontFace } = {
  sans: { family: 'Noto Sans', weight: '' },
  'sans-bold': { family: 'Noto Sans', weight: 'Bold' },
};

/** A deployment's own fonts (the `fonts` setting) by the name a request gives, to their face and file. */
export type DeploymentFonts = { readonly [name: string]: FontFace };

/** The folder of the origin's package that holds a deployment's own fonts, each named by its name. */
export const DEPLOYMENT_FONTS_FOLDER = 'text-fonts';

/** The families of the packaged fonts: a deployment's own font may take none of them, or Pango could not tell the two apart. */
export const PACKAGED_FAMILIES = ['Noto Sans', 'Noto Sans KR', 'Noto Sans JP', 'Noto Sans SC', 'Noto Sans Arabic', 'Noto Emoji'];

/** The face `name` stands for, among the packaged fonts and `fonts`. */
export const faceOf = (name: string, fonts: DeploymentFonts = {}): FontFace | undefined =>
  Object.hasOwn(NAMED_FONTS, name) ? NAMED_FONTS[name] : Object.hasOwn(fonts, name) ? fonts[name] : undefined;

/**
 * The families tried, in order, after the named font: the CJK fonts share
 * code points (kana, Han) and draw them differently, so the one of the text's
 * language comes first (Hangul: Korean; kana: Japanese; Han alone: Chinese).
 */
export function fallbackFamilies(text: string): string[] {
  const first = /[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]/.test(text)
    ? 'Noto Sans KR'
    : /[\u3040-\u30ff\u31f0-\u31ff]/.test(text)
      ? 'Noto Sans JP'
      : 'Noto Sans SC';
  const cjk = ['Noto Sans KR', 'Noto Sans JP', 'Noto Sans SC'].filter((family) => family !== first);
  return [first, ...cjk, 'Noto Sans Arabic', 'Noto Emoji'];
}

/**
 * This module's file: in Lambda, the CommonJS bundle (where esbuild leaves
 * `import.meta` empty), so the bundle's entry; from the sources, the ES module itself.
 */
const THIS_FILE = typeof __filename === 'string' ? __filename : fileURLToPath(import.meta.url);

/** The fonts' folder: TEXT_FONTS_DIR when set, else the one beside the bundle's entry. */
export const fontsFolder = (): string => process.env[TEXT_FONTS_ENV] || join(dirname(THIS_FILE), FONTS_FOLDER);

/** Escapes `text` for fontconfig's XML. */
const xml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A fontconfig configuration that knows `folders`' fonts and no other, its cache in `cache`. */
function fontconfigFile(folders: string[], cache: string): string {
  return `<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
${folders.map((folder) => `  <dir>${xml(folder)}</dir>\n`).join('')}  <cachedir>${xml(cache)}</cachedir>
</fontconfig>
`;
}

/**
 * In Lambda, the package's folder of the deployment's own fonts, when it has
 * some: listed from the start, every one of them is known to the process
 * before any text, so a character no packaged font has is drawn alike
 * whichever text came first. Elsewhere (tests, the emulator) none: the render
 * adds a font's file where it is, when a text first names it.
 */
const deploymentFontsFolder = (): string[] => {
  const root = process.env.LAMBDA_TASK_ROOT;
  const folder = root && join(root, DEPLOYMENT_FONTS_FOLDER);
  return folder && existsSync(folder) ? [folder] : [];
};

/** The folder the configuration was written for, once written. */
let configured: string | undefined;

/**
 * Writes the private fontconfig configuration (under the temporary folder,
 * the only one Lambda lets a function write) and names it in FONTCONFIG_FILE,
 * once per process: fontconfig reads it when Pango first needs a font, and
 * never again, so this runs when the pipeline is loaded, before any text.
 * Returns the fonts' folder.
 */
export function useOwnFonts(): string {
  if (configured) return configured;
  const folder = fontsFolder();
  const home = join(tmpdir(), `edge-image-transformer-fontconfig-${process.getuid?.() ?? 0}`);
  mkdirSync(join(home, 'cache'), { recursive: true });
  // One file per process: another process writing its own never shows this one a half-written file.
  const file = join(home, `fonts-${process.pid}.conf`);
  writeFileSync(file, fontconfigFile([folder, ...deploymentFontsFolder()], join(home, 'cache')));
  process.env.FONTCONFIG_FILE = file;
  configured = folder;
  return folder;
}

/** The packaged font files missing from `folder` (none: text can be drawn). */
export const missingFonts = (folder: string): string[] => FONT_FILES.filter((file) => !existsSync(join(folder, file)));
