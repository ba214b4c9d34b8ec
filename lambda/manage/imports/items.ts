// An import's items: a URL of a legacy server and the source key its image is
// stored at. One check (checkItem) serves the API, which refuses a request
// naming the item by its index, and the per-key function, which reports a row
// of a manifest it was given as failed. A manifest is a CSV (`url,key` per
// line) or JSON (`[{url, key}]`); S3 Batch Operations reads its own CSV,
// `bucket,key`, whose key column carries each item (batchManifest).

import { isObject } from '../../common/checks';
import { sourceKey } from '../body';
import { objectOf, type ManageConfig } from '../config';
import { ManageError } from '../errors';

export interface ImportItem {
  url: string;
  key: string;
}

/** Items a request may list; more go in a manifest (`manifestKey`). */
export const MAX_IMPORT_ITEMS = 10_000;

/** The longest key column S3 Batch Operations reads in a manifest: an item, encoded, must fit it. */
export const MAX_TASK_CHARS = 1024;

/** An item as a Batch Operations manifest's key column: its JSON, percent-encoded. */
export const taskKey = (item: Partial<Record<keyof ImportItem, unknown>>): string =>
  encodeURIComponent(JSON.stringify({ url: item.url, key: item.key }));

/** An item's text field (`items[3].url`), a refusal naming it when it is no string, missing included. */
function itemText(value: unknown, name: string): string {
  if (typeof value !== 'string') throw new ManageError('invalid_field', `The field ${JSON.stringify(name)} must be a string.`);
  return value;
}

/** `value` as an import item for `config`'s source bucket, or a ManageError naming `what` (`items[3]`, a manifest's line). */
export function checkItem(config: ManageConfig, value: unknown, what: string): ImportItem {
  if (!isObject(value)) throw new ManageError('invalid_item', `${what} must be an object {url, key}.`);
  const extra = Object.keys(value).find((name) => name !== 'url' && name !== 'key');
  if (extra !== undefined)
    throw new ManageError('invalid_item', `${what} has the field ${JSON.stringify(extra)}; an item has url and key.`);
  const url = itemText(value.url, `${what}.url`);
  const key = sourceKey(itemText(value.key, `${what}.key`), `${what}.key`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ManageError('invalid_url', `${what}.url ${JSON.stringify(url.slice(0, 200))} is not a URL.`);
  }
  if (parsed.protocol !== 'https:') throw new ManageError('invalid_url', `${what}.url must be https, not ${parsed.protocol.slice(0, -1)}.`);
  if (parsed.username || parsed.password) throw new ManageError('invalid_url', `${what}.url must not carry credentials.`);
  if (objectOf(config, key)?.bucket !== config.sourceBucket) {
    throw new ManageError('key_not_uploadable', `${what}.key ${JSON.stringify(key)} is served from another source than the source bucket.`);
  }
  if (taskKey({ url, key }).length > MAX_TASK_CHARS) {
    throw new ManageError('invalid_item', `${what} is too long: its url and key, percent-encoded, must fit ${MAX_TASK_CHARS} characters.`);
  }
  return { url, key };
}

/** The items of a request's `items`: 1 to MAX_IMPORT_ITEMS, each checked, no key twice. */
export function checkItems(config: ManageConfig, value: unknown): ImportItem[] {
  if (!Array.isArray(value)) throw new ManageError('invalid_field', 'The field "items" must be a list of {url, key}.');
  if (value.length === 0) throw new ManageError('no_items', 'The field "items" is empty; list 1 to 10000 items.');
  if (value.length > MAX_IMPORT_ITEMS) {
    throw new ManageError(
      'too_many_items',
      `The field "items" lists ${value.length} items; at most ${MAX_IMPORT_ITEMS}, or use a manifest (manifestKey).`,
    );
  }
  const seen = new Map<string, number>();
  return value.map((entry, index) => {
    const item = checkItem(config, entry, `items[${index}]`);
    const first = seen.get(item.key);
    if (first !== undefined)
      throw new ManageError('duplicate_key', `items[${index}].key ${JSON.stringify(item.key)} is items[${first}].key too.`);
    seen.set(item.key, index);
    return item;
  });
}

/** Whether a manifest's text is JSON (a list), not CSV lines. */
export const isJsonManifest = (text: string): boolean => text.trimStart().startsWith('[');

/** The row of a CSV manifest's line `url,key` (the key is all after the first comma); undefined for a blank line or the header `url,key`. */
export function csvRow(line: string): unknown {
  const trimmed = line.trim();
  if (trimmed === '' || trimmed.toLowerCase() === 'url,key') return undefined;
  const comma = trimmed.indexOf(',');
  return comma < 0 ? { url: trimmed } : { url: trimmed.slice(0, comma).trim(), key: trimmed.slice(comma + 1).trim() };
}

/**
 * The rows of a manifest, unchecked (each is checked as it is imported): a
 * JSON list of {url, key}, or CSV lines `url,key` (csvRow).
 */
export function parseManifest(text: string): unknown[] {
  if (isJsonManifest(text)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new ManageError('invalid_manifest', `The manifest is not JSON: ${(error as Error).message}.`);
    }
    if (!Array.isArray(parsed)) throw new ManageError('invalid_manifest', 'A JSON manifest must be a list of {url, key}.');
    return parsed;
  }
  return text.split(/\r?\n/).flatMap((line) => {
    const row = csvRow(line);
    return row === undefined ? [] : [row];
  });
}

/** A line of Batch Operations' CSV manifest: `bucket,<item>` (taskKey). A row that is no item is carried as it is, for the per-key function to report. */
export const batchLine = (bucket: string, row: unknown): string => `${bucket},${taskKey(isObject(row) ? row : {})}\n`;

/** Batch Operations' CSV manifest of `rows`. */
export const batchManifest = (bucket: string, rows: unknown[]): string => rows.map((row) => batchLine(bucket, row)).join('');

/** The item a Batch Operations task carries in its key, percent-encoded or not. */
export function taskItem(s3Key: string): unknown {
  try {
    return JSON.parse(s3Key.startsWith('{') ? s3Key : decodeURIComponent(s3Key));
  } catch {
    return undefined;
  }
}
