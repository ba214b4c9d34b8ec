// Just enough Markdown for the docs tests: the lines outside code fences, the
// headings' anchors as GitHub makes them, and the rows of a section's table.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');

export function readDoc(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

/** The lines of `markdown` that are not inside a ``` fence. */
export function proseLines(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').filter((line) => {
    if (line.startsWith('```')) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const line of proseLines(markdown)) {
    const text = /^#{1,6} (.*)$/.exec(line)?.[1];
    if (text === undefined) continue;
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    let anchor = slug;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${slug}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** The first cell of each body row of the first table under `heading` (a whole heading line). */
export function firstColumn(markdown: string, heading: string): string[] {
  return tableColumn(markdown, heading, 0);
}

/** Cell `index` (from 0) of each body row of the first table under `heading`. */
export function tableColumn(markdown: string, heading: string, index: number): string[] {
  const lines = proseLines(markdown);
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`No heading "${heading}".`);
  const tableStart = lines.findIndex((line, index) => index > start && line.startsWith('|'));
  const rows: string[] = [];
  for (const line of lines.slice(tableStart + 2)) {
    if (!line.startsWith('|')) break;
    rows.push((line.split('|')[index + 1] ?? '').trim());
  }
  return rows;
}

/** The `code` spans of a cell, e.g. ["memorySize", "timeoutSeconds"] from "`memorySize`, `timeoutSeconds`". */
export function codeSpans(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map(([, code = '']) => code);
}
