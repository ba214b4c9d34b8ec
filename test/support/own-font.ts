// A deployment's own font for the tests, made from a packaged one without any
// third-party file: Noto Sans JP (OFL) with its name table's "Noto" written
// "Zeta" in place (the same length, so no offset moves; FreeType does not
// check table checksums). Its family is then "Zeta Sans JP", which no packaged
// font has, and its Latin letters are drawn unlike Noto Sans'.

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fontsFolder } from '../../lambda/origin/image/text/fonts';

/** The family of the font ownFont writes by default. */
export const OWN_FAMILY = 'Zeta Sans JP';

/** The `name` table's place in a font file. */
function nameTable(font: Buffer): { offset: number; length: number } {
  for (let at = 12; at < 12 + 16 * font.readUInt16BE(4); at += 16) {
    if (font.toString('latin1', at, at + 4) === 'name') return { offset: font.readUInt32BE(at + 8), length: font.readUInt32BE(at + 12) };
  }
  throw new Error('no name table');
}

/** `font` with every "Noto" of its name table, in UTF-16BE and in one byte a character, written `word` (four letters). */
export function renamed(font: Buffer, word: string): Buffer {
  const out = Buffer.from(font);
  const { offset, length } = nameTable(out);
  const table = out.subarray(offset, offset + length);
  for (const [from, to] of [
    [Buffer.from('Noto', 'utf16le').swap16(), Buffer.from(word, 'utf16le').swap16()],
    [Buffer.from('Noto', 'latin1'), Buffer.from(word, 'latin1')],
  ] as const) {
    for (let at = table.indexOf(from); at !== -1; at = table.indexOf(from, at + 1)) to.copy(table, at);
  }
  return out;
}

/** Writes a packaged font renamed (by default Noto Sans JP, then Zeta Sans JP) into a new folder; returns its path. */
export function ownFont(packaged = 'NotoSansJP_400Regular.ttf'): string {
  const file = join(mkdtempSync(join(tmpdir(), 'own-font-')), packaged.replace('Noto', 'Zeta'));
  writeFileSync(file, renamed(readFileSync(join(fontsFolder(), packaged)), 'Zeta'));
  return file;
}
