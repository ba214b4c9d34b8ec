// An import's manifest as the command line reads it from a file: a CSV of
// `url,key` rows (a header naming the two columns is optional and may swap
// them; fields may be quoted, with commas, doubled quotes and line breaks
// inside) or a JSON array of `{url, key}` (or `{items: [...]}`). Every item
// is checked as POST /imports checks it (an https URL, a source key, no key
// twice), and a refusal names the line or the index, so that nothing is
// sent for a manifest with a bad line.

import { sourceKey } from '../body';
import type { ImportItem } from '../api-schema';
import { ManageError } from '../errors';

export class ManifestError extends Error {
  override name = 'ManifestError';
}

interface Row {
  /** Where the row is, for a refusal: `line 4`, `items[3]`. */
  where: string;
  url: unknown;
  key: unknown;
}

/** The rows of a CSV text (RFC 4180), each with the line it starts on; blank lines are skipped. */
export function csvRows(text: string): { line: number; cells: string[] }[] {
  const rows: { line: number; cells: string[] }[] = [];
  let cells: string[] = [];
  let cell = '';
  let line = 1;
  let rowLine = 1;
  let quoted = false;
  let closed = false;
  const endRow = () => {
    cells.push(cell);
    if (cells.length > 1 || cells[0]!.trim() !== '') rows.push({ line: rowLine, cells });
    cells = [];
    cell = '';
    closed = false;
  };
  for (let index = text.charCodeAt(0) === 0xfeff ? 1 : 0; index < text.length; index++) {
    const char = text[index]!;
    if (quoted && char === '"' && text[index + 1] === '"') {
      cell += '"';
      index++;
    } else if (quoted && char === '"') {
      quoted = false;
      closed = true;
    } else if (quoted) {
      cell += char;
      if (char === '\n') line++;
    } else if (char === ',') {
      cells.push(cell);
      cell = '';
      closed = false;
    } else if (char === '\n' || (char === '\r' && text[index + 1] === '\n')) {
      if (char === '\r') index++;
      endRow();
      rowLine = ++line;
    } else if (closed) {
      throw new ManifestError(`line ${line}: ${JSON.stringify(char)} after a quoted field's closing quote.`);
    } else if (char === '"' && cell === '') {
      quoted = true;
    } else {
      cell += char;
    }
  }
  if (quoted) throw new ManifestError(`line ${rowLine}: a quoted field is not closed.`);
  if (cell !== '' || cells.length > 0) endRow();
  return rows;
}

function csvItems(text: string): Row[] {
  const rows = csvRows(text);
  const first = rows[0]?.cells.map((cell) => cell.trim().toLowerCase());
  const header = first?.length === 2 && first.includes('url') && first.includes('key') ? first : undefined;
  const [urlColumn, keyColumn] = header ? [header.indexOf('url'), header.indexOf('key')] : [0, 1];
  return rows.slice(header ? 1 : 0).map(({ line, cells }) => {
    if (cells.length !== 2) throw new ManifestError(`line ${line}: ${cells.length} fields; a row is url,key.`);
    return { where: `line ${line}`, url: cells[urlColumn]!.trim(), key: cells[keyColumn] };
  });
}

function jsonItems(text: string): Row[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ManifestError(`not JSON: ${(error as Error).message}.`);
  }
  const items = Array.isArray(parsed) ? parsed : (parsed as { items?: unknown } | null)?.items;
  if (!Array.isArray(items)) throw new ManifestError('a JSON manifest is an array of {url, key} (or {"items": [...]}).');
  return items.map((item: unknown, index) => {
    const where = `items[${index}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new ManifestError(`${where} is not an object {url, key}.`);
    const unknown = Object.keys(item).find((name) => name !== 'url' && name !== 'key');
    if (unknown !== undefined) throw new ManifestError(`${where}: the field ${JSON.stringify(unknown)} is not url or key.`);
    return { where, ...(item as { url?: unknown; key?: unknown }) } as Row;
  });
}

/** An item checked as POST /imports checks it. */
function checkItem({ where, url, key }: Row, seen: Map<string, string>): ImportItem {
  if (typeof url !== 'string' || typeof key !== 'string') throw new ManifestError(`${where}: url and key must both be strings.`);
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed?.protocol !== 'https:') throw new ManifestError(`${where}: the url ${JSON.stringify(url)} is not an https URL.`);
  try {
    sourceKey(key, `the key`);
  } catch (error) {
    if (error instanceof ManageError) throw new ManifestError(`${where}: ${error.message}`);
    throw error;
  }
  const before = seen.get(key);
  if (before !== undefined) throw new ManifestError(`${where}: the key ${JSON.stringify(key)} is already ${before}'s.`);
  seen.set(key, where);
  return { url, key };
}

/** The items of a manifest file's text; `name` says whether it is JSON (`.json`) or CSV (anything else). */
export function readManifest(name: string, text: string): ImportItem[] {
  const rows = /\.json$/i.test(name) ? jsonItems(text) : csvItems(text);
  if (rows.length === 0) throw new ManifestError('no items: the manifest is empty.');
  const seen = new Map<string, string>();
  return rows.map((row) => checkItem(row, seen));
}
