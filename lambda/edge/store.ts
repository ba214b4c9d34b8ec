// What the viewer-request function reads from its KeyValueStore. The
// operator's signing secrets live under one key that a deploy never touches;
// the deployment's sizes and presets live under keys the construct writes on
// every deploy (lambda/edge-data). They are kept out of the function's code
// so that its size does not grow with them.

import type { GrammarOptions } from '../grammar/index';

/** The active signing secrets, put in by the operator. */
export const SIGNING_SECRETS_KEY = 'signing-secrets';
/** The allowed widths and heights, ascending and comma-separated: `16,32,640`. */
export const SIZES_KEY = 'sizes';
/** Every preset's name, comma-separated, for the message that refuses an unknown one. */
export const PRESET_NAMES_KEY = 'presets';
/** The watermarks' versions by name, as JSON: `{"logo":"1a2b3c4d"}`. */
export const WATERMARKS_KEY = 'watermarks';
/** Followed by a preset's name; the value is its parameters as JSON: `{"width":"200","fit":"cover"}`. */
export const PRESET_KEY_PREFIX = 'preset:';

/** CloudFront's limits on a key and a value, in UTF-8 bytes. */
export const MAX_STORE_KEY_BYTES = 512;
export const MAX_STORE_VALUE_BYTES = 1024;

/** Whether a key is one the deployment writes (and so may replace or delete). */
export function isDeploymentKey(key: string): boolean {
  return key === SIZES_KEY || key === PRESET_NAMES_KEY || key === WATERMARKS_KEY || key.indexOf(PRESET_KEY_PREFIX) === 0;
}

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/**
 * The deployment's entries for `grammar`: one for the sizes, one per preset
 * and the list of names. Throws, naming it, for an entry over CloudFront's
 * limits. The names list is cut short (ending in `...`) when it would not fit:
 * it only words a message.
 */
export function deploymentEntries(grammar: GrammarOptions): Record<string, string> {
  const entries: Record<string, string> = {};
  if (grammar.sizes) entries[SIZES_KEY] = grammar.sizes.join(',');
  if (grammar.watermarks && Object.keys(grammar.watermarks).length > 0) entries[WATERMARKS_KEY] = JSON.stringify(grammar.watermarks);
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
      throw new Error(`The KeyValueStore key "${key.slice(0, 60)}..." is ${bytes(key)} bytes, over CloudFront's ${MAX_STORE_KEY_BYTES}: shorten the preset's name.`);
    }
    if (bytes(value) > MAX_STORE_VALUE_BYTES) {
      throw new Error(`The KeyValueStore value of "${key}" is ${bytes(value)} bytes, over CloudFront's ${MAX_STORE_VALUE_BYTES}: ${key === SIZES_KEY ? 'allow fewer sizes' : key === WATERMARKS_KEY ? 'name fewer watermarks' : 'shorten the preset'}.`);
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
