// What the viewer-request function reads from its KeyValueStore. The
// operator's signing secrets live under one key that a deploy never touches;
// the deployment's data and presets live under keys the construct writes on
// every deploy (lambda/edge-data). They are kept out of the function's code
// so that its size does not grow with them.
//
// The data (EdgeData: the grammar's parameters and words, the sizes and the
// watermarks) is read on every request, as JSON cut into values of at most
// 1 KB under keys that carry its hash. The generated function names the keys
// of its own data, so it never reads another deploy's: while CloudFront
// replaces the function, the previous one still finds its own data, which
// the next deploy deletes (lambda/edge-data).

import crypto from 'crypto';
import { GRAMMAR_DATA, storedRecords, type GrammarData, type GrammarOptions, type HdrMode } from '../grammar/index';

/** The active signing secrets, put in by the operator. */
export const SIGNING_SECRETS_KEY = 'signing-secrets';
/** Every preset's name, comma-separated, for the message that refuses an unknown one. */
export const PRESET_NAMES_KEY = 'presets';
/** Followed by a preset's name; the value is its parameters as JSON: `{"width":"200","fit":"cover"}`. */
export const PRESET_KEY_PREFIX = 'preset:';
/** The deployment's buckets a dialect's request may name, as JSON: bucket name to the key prefix it serves (`""` for the default source bucket). */
export const BUCKETS_KEY = 'buckets';
/** Followed by the data's hash, a colon and a part's number: `data:1a2b3c4d5e:0`. */
export const DATA_KEY_PREFIX = 'data:';
/** Keys a deploy wrote before the data held the sizes and watermarks; the next deploy deletes them. */
const FORMER_KEYS = ['sizes', 'watermarks'];

/** The fixed parts of a response the function answers itself (a refusal): data, so not code. */
export interface RefusalData {
  /** Its headers, in the shape CloudFront's response object has them. */
  refusalHeaders: { [name: string]: { value: string } };
  /** The status description of each status the function answers with. */
  statusTexts: { [status: number]: string };
}

/** What the function reads on every request: the grammar's data, a refusal's fixed parts, and the deployment's sizes and watermarks. */
export interface EdgeData extends GrammarData, RefusalData {
  sizes?: number[];
  watermarks?: { [name: string]: string };
  /** The deployment's card templates, name to version. */
  templates?: { [name: string]: string };
  /** The deployment's `hdr` default, when it has one. */
  hdr?: HdrMode;
  /** A dialect function's own data (its names and words), which its module reads (Dialect.useData). */
  dialect?: object;
}

const REFUSAL_DATA: RefusalData = {
  refusalHeaders: {
    'content-type': { value: 'application/json' },
    // A client error: cacheable briefly, like the origin's own 4xx.
    'cache-control': { value: 'public, max-age=10' },
    'x-content-type-options': { value: 'nosniff' },
  },
  statusTexts: { 400: 'Bad Request', 403: 'Forbidden' },
};

/**
 * The short names the data's fields have in the store, and in the function's
 * code, whose bundler renames them so (lib/edge-function.ts): a smaller value
 * to read, and shorter code.
 */
export const DATA_FIELDS: { [field: string]: string } = {
  params: 'p',
  words: 'w',
  sizes: 's',
  watermarks: 'm',
  templates: 'v',
  aliases: 'a',
  kind: 'k',
  low: 'l',
  high: 'h',
  choices: 'c',
  none: 'n',
  auto: 'u',
  bare: 'b',
  canonicalOnly: 'o',
  patterns: 'g',
  booleans: 'i',
  synonyms: 'j',
  cropStrategies: 'e',
  defaultQuality: 'q',
  autoWidths: 'x',
  autoWidth: 'y',
  saveDataQuality: 'z',
  refusalHeaders: 'r',
  statusTexts: 't',
  dialect: 'd',
  // A dialect's data: the fields of DIT's (DitData) and of imgix's and Cloudflare's books (Book).
  rules: 'R',
  values: 'V',
  why: 'W',
  refused: 'F',
  path: 'P',
  groups: 'G',
  title: 'T',
  spellings: 'S',
  defaults: 'D',
  list: 'L',
};

/** `record` with its fields under their DATA_FIELDS names. */
const shortNames = (record: object): { [field: string]: unknown } => {
  const renamed: { [field: string]: unknown } = {};
  Object.keys(record).forEach((field) => {
    renamed[DATA_FIELDS[field] || field] = (record as { [field: string]: unknown })[field];
  });
  return renamed;
};

/** A dialect's data (Dialect.useData) as its function reads it: its fields under their short names. */
export const dialectStoreForm = (dialect: object): object => shortNames(dialect);

/** The data as the function reads it: its own fields, each parameter's and the dialect's under their short names (not the parameters' or watermarks' names). */
export function storeForm(data: EdgeData): object {
  const params: { [name: string]: unknown } = {};
  Object.keys(data.params).forEach((name) => {
    params[name] = shortNames(data.params[name] as object);
  });
  return shortNames({ ...data, params, ...(data.dialect ? { dialect: dialectStoreForm(data.dialect) } : {}) });
}

/** CloudFront's limits on a key and a value, in UTF-8 bytes. */
export const MAX_STORE_KEY_BYTES = 512;
export const MAX_STORE_VALUE_BYTES = 1024;

/**
 * Whether a key is one a deploy wrote for a function it may be replacing: no
 * function it publishes reads it, so it is kept for one deploy more.
 */
export function isVersionedKey(key: string): boolean {
  return key.indexOf(DATA_KEY_PREFIX) === 0 || FORMER_KEYS.indexOf(key) !== -1;
}

/** Whether a key is one the deployment writes (and so may replace or delete). */
export function isDeploymentKey(key: string): boolean {
  return key === PRESET_NAMES_KEY || key === BUCKETS_KEY || key.indexOf(PRESET_KEY_PREFIX) === 0 || isVersionedKey(key);
}

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/**
 * The deployment's EdgeData: this code's grammar data (its own fonts among
 * `text-font`'s choices), a refusal's fixed parts, the sizes, watermarks and
 * `hdr` default of `grammar`, and for a
 * dialect's function the dialect's data.
 */
export function edgeData(grammar: GrammarOptions, dialect?: object): EdgeData {
  const watermarks = grammar.watermarks && Object.keys(grammar.watermarks).length > 0 ? grammar.watermarks : undefined;
  const templates = grammar.templates && Object.keys(grammar.templates).length > 0 ? grammar.templates : undefined;
  return {
    ...GRAMMAR_DATA,
    // The deployment's own fonts among the choices of the records that take them.
    params: storedRecords(GRAMMAR_DATA.params, grammar),
    ...REFUSAL_DATA,
    ...(grammar.sizes ? { sizes: grammar.sizes } : {}),
    ...(watermarks ? { watermarks } : {}),
    ...(templates ? { templates } : {}),
    ...(grammar.hdr ? { hdr: grammar.hdr } : {}),
    ...(dialect ? { dialect } : {}),
  };
}

/** The data as the store holds it: its JSON, cut into parts of at most MAX_STORE_VALUE_BYTES, and their keys. */
export function storedData(grammar: GrammarOptions, dialect?: object): { keyPrefix: string; parts: string[] } {
  const json = JSON.stringify(storeForm(edgeData(grammar, dialect)));
  const parts: string[] = [''];
  // By code points, so that no part ends inside a character.
  Array.from(json).forEach((character) => {
    if (bytes(parts[parts.length - 1] + character) > MAX_STORE_VALUE_BYTES) parts.push('');
    parts[parts.length - 1] += character;
  });
  const hash = crypto.createHash('sha256').update(json).digest('hex').slice(0, 10);
  return { keyPrefix: `${DATA_KEY_PREFIX}${hash}:`, parts };
}

/**
 * The deployment's entries for `grammar`: its data in parts (the native
 * function's, and with `dialects` each dialect function's), one per preset
 * and the list of names. Throws, naming it, for an entry over CloudFront's
 * limits. The names list is cut short (ending in `...`) when it would not fit:
 * it only words a message.
 */
export function deploymentEntries(grammar: GrammarOptions, dialects?: object[]): Record<string, string> {
  const entries: Record<string, string> = {};
  // The native function's data, and each dialect function's.
  ([undefined] as (object | undefined)[]).concat(dialects || []).forEach((dialect) => {
    const data = storedData(grammar, dialect);
    data.parts.forEach((part, index) => {
      entries[data.keyPrefix + index] = part;
    });
  });
  const presets = grammar.presets ?? {};
  const names = Object.keys(presets);
  if (names.length > 0) entries[PRESET_NAMES_KEY] = namesList(names);
  names.forEach((name) => {
    entries[PRESET_KEY_PREFIX + name] = JSON.stringify(presets[name]);
  });
  // Written with forEach, not for-of: the edge bundle includes this file, and its target lacks for-of.
  Object.keys(entries).forEach((key) => {
    const value = entries[key] as string;
    if (bytes(key) > MAX_STORE_KEY_BYTES) {
      throw new Error(
        `The KeyValueStore key "${key.slice(0, 60)}..." is ${bytes(key)} bytes, over CloudFront's ${MAX_STORE_KEY_BYTES}: shorten the preset's name.`,
      );
    }
    if (bytes(value) > MAX_STORE_VALUE_BYTES) {
      throw new Error(
        `The KeyValueStore value of "${key}" is ${bytes(value)} bytes, over CloudFront's ${MAX_STORE_VALUE_BYTES}: shorten the preset.`,
      );
    }
  });
  return entries;
}

function namesList(names: string[]): string {
  let list = names.join(', ');
  if (bytes(list) <= MAX_STORE_VALUE_BYTES) return list;
  while (bytes(list + ', ...') > MAX_STORE_VALUE_BYTES) list = list.slice(0, list.lastIndexOf(', '));
  return list + ', ...';
}

/** The longest name S3 gives a bucket. */
const MAX_BUCKET_NAME = 63;

/**
 * The entry that names the deployment's buckets for a dialect's requests (DIT
 * names a bucket in each): every bucket name to the key prefix it serves, the
 * default source bucket's being `""`. The names are CDK tokens at synth time, so
 * the value's size is checked for the longest names S3 allows.
 */
export function bucketsEntry(sourceBucket: string, sourceBuckets: Record<string, string>): Record<string, string> {
  const prefixes: Record<string, string> = {};
  prefixes[sourceBucket] = '';
  Object.keys(sourceBuckets).forEach((prefix) => {
    prefixes[sourceBuckets[prefix] as string] = prefix;
  });
  const longest = Object.keys(prefixes).reduce((sum, name) => sum + bytes(JSON.stringify(prefixes[name])) + MAX_BUCKET_NAME + 4, 2);
  if (longest > MAX_STORE_VALUE_BYTES) {
    throw new Error(
      `The buckets a dialect's request may name could take ${longest} bytes, over CloudFront's ${MAX_STORE_VALUE_BYTES} for a value.`,
    );
  }
  const entry: Record<string, string> = {};
  entry[BUCKETS_KEY] = JSON.stringify(prefixes);
  return entry;
}
