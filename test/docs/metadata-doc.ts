// What docs/url-contract.md says each metadata mode keeps, read from its
// tables: the metadata tests hold the origin to these words, and the docs
// test holds them to the origin's tables.

import { codeSpans, readDoc, tableColumn } from './markdown';

const doc = readDoc('docs/url-contract.md');
const MODES = '## Metadata';
const XMP = '### XMP properties kept';

/** The code spans of the modes table's cell for `mode`, column `column` (1: EXIF, 2: XMP, 3: IPTC). */
function modeCell(mode: string, column: number): string[] {
  const row = tableColumn(doc, MODES, 0).indexOf(`\`${mode}\``);
  if (row < 0) throw new Error(`No row for ${mode} under ${MODES}.`);
  return codeSpans(tableColumn(doc, MODES, column)[row]!);
}

/** The XMP table's rows: each namespace's prefix and URI, and the properties of each mode's column. */
export function documentedXmpNamespaces(): { prefix: string; uri: string; copyright: string[]; keep: string[] }[] {
  const [prefixes, uris, copyright, keep] = [0, 1, 2, 3].map((column) => tableColumn(doc, XMP, column).map(codeSpans));
  return prefixes!.map(([prefix], row) => ({
    prefix: prefix!,
    uri: uris![row]![0]!,
    copyright: copyright![row]!,
    keep: keep![row]!,
  }));
}

/**
 * What the docs say `mode` keeps: EXIF fields by name, XMP properties as
 * `prefix:name`, IPTC-IIM datasets as `record:dataset`.
 */
export function documentedMetadata(mode: 'none' | 'copyright' | 'keep'): { exif: string[]; xmp: string[]; iptc: string[] } {
  const dataset = (span: string) => /^\d+:\d+$/.test(span);
  const own = {
    exif: modeCell(mode, 1),
    xmp: modeCell(mode, 2).filter((span) => span.includes(':')),
    iptc: modeCell(mode, 3).filter(dataset),
  };
  if (mode !== 'keep') return own;
  // `keep`'s cells say "those of `copyright`, and ...", its XMP the table's both columns.
  const copyright = documentedMetadata('copyright');
  const xmp = documentedXmpNamespaces().flatMap(({ prefix, copyright, keep }) =>
    [...copyright, ...keep].map((name) => `${prefix}:${name}`),
  );
  return { exif: own.exif, xmp, iptc: [...copyright.iptc, ...own.iptc] };
}
