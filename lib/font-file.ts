// A font file of the app read at synth, from its table directory and the few
// tables that say what it is: its kind by its first four bytes (a TrueType
// or OpenType font, or a web font or a collection this refuses), its family
// from the `name` table, its weight and slant from `OS/2`. Every read is
// bounded by the buffer: the directory and the name records are walked once
// each, by their counts.

/** What a font file says of itself: enough for Pango to select it. */
export interface FontFileFacts {
  /** The family Pango selects it by (the `name` table's family, else its typographic family). */
  family: string;
  /** OS/2's usWeightClass: 100 (thin) to 900 (black), 400 regular. */
  weightClass: number;
  /** From OS/2's fsSelection: italic, oblique, or neither. */
  slant: 'italic' | 'oblique' | '';
}

/** How the first four bytes name a file's kind: the fonts read here, and the ones refused with what to do instead. */
const SFNT_KINDS = ['\0\u0001\0\0', 'true', 'OTTO'];
const REFUSED_KINDS: { [magic: string]: string } = {
  wOFF: 'a WOFF web font: convert it to a .ttf or .otf (e.g. `fonttools ttLib.woff2 decompress` for WOFF2, or any font editor)',
  wOF2: 'a WOFF2 web font: convert it to a .ttf or .otf (e.g. `fonttools ttLib.woff2 decompress font.woff2`)',
  ttcf: 'a font collection (.ttc/.otc): extract the one font you want into its own .ttf or .otf file (e.g. with fontTools) and name that',
};

/** A table's place in the file, by its tag. */
type Tables = { [tag: string]: { offset: number; length: number } };

/** The table directory, each entry within the file; a message for anything else. */
function tableDirectory(bytes: Buffer): Tables | string {
  if (bytes.length < 12) return 'too short to be a font';
  const magic = bytes.toString('latin1', 0, 4);
  if (REFUSED_KINDS[magic]) return REFUSED_KINDS[magic] as string;
  if (!SFNT_KINDS.includes(magic)) return 'not a TrueType or OpenType font (.ttf or .otf)';
  const count = bytes.readUInt16BE(4);
  if (12 + 16 * count > bytes.length) return 'a font whose table directory runs past its end';
  const tables: Tables = {};
  for (let at = 12; at < 12 + 16 * count; at += 16) {
    const offset = bytes.readUInt32BE(at + 8);
    const length = bytes.readUInt32BE(at + 12);
    if (offset + length > bytes.length) return `a font whose ${bytes.toString('latin1', at, at + 4)} table runs past its end`;
    tables[bytes.toString('latin1', at, at + 4)] = { offset, length };
  }
  return tables;
}

/** Name ids: the family, and the typographic family a font with more than four styles names. */
const FAMILY = 1;
const TYPOGRAPHIC_FAMILY = 16;

/** A name record's text: UTF-16BE on the Unicode and Windows platforms, else one byte a character (Mac Roman's ASCII). */
function nameText(bytes: Buffer, platform: number, start: number, length: number): string {
  if (platform !== 0 && platform !== 3) return bytes.toString('latin1', start, start + length);
  const units = Buffer.from(bytes.subarray(start, start + (length & ~1)));
  return units.swap16().toString('utf16le');
}

/**
 * The `name` table's family: name id 1, else 16; Windows' US English first,
 * then any Windows, Unicode or Mac record. Undefined when it has none.
 */
function familyName(bytes: Buffer, table: { offset: number; length: number }): string | undefined {
  const { offset } = table;
  if (table.length < 6) return undefined;
  const count = bytes.readUInt16BE(offset + 2);
  const strings = offset + bytes.readUInt16BE(offset + 4);
  const found: { rank: number; text: string }[] = [];
  for (let at = offset + 6; at + 12 <= offset + table.length && at < offset + 6 + 12 * count; at += 12) {
    const [platform, , language, id, length, start] = [0, 2, 4, 6, 8, 10].map((field) => bytes.readUInt16BE(at + field)) as number[];
    if ((id !== FAMILY && id !== TYPOGRAPHIC_FAMILY) || strings + start! + length! > offset + table.length) continue;
    const preference = platform === 3 ? (language === 0x409 ? 0 : 1) : platform === 0 ? 2 : 3;
    found.push({ rank: (id === FAMILY ? 0 : 10) + preference, text: nameText(bytes, platform!, strings + start!, length!).trim() });
  }
  return found.filter((name) => name.text).sort((a, b) => a.rank - b.rank)[0]?.text;
}

/** The facts of a font file, or a message saying what it is instead (a web font, a collection, no font, no family). */
export function fontFileFacts(bytes: Buffer): FontFileFacts | string {
  const tables = tableDirectory(bytes);
  if (typeof tables === 'string') return tables;
  if (!tables.name) return 'a font without a name table';
  const family = familyName(bytes, tables.name);
  if (!family) return 'a font whose name table gives no family name';
  const os2 = tables['OS/2'];
  const weightClass = os2 && os2.length >= 6 ? bytes.readUInt16BE(os2.offset + 4) : 400;
  const selection = os2 && os2.length >= 64 ? bytes.readUInt16BE(os2.offset + 62) : 0;
  return { family, weightClass, slant: selection & 1 ? 'italic' : selection & 0x200 ? 'oblique' : '' };
}
