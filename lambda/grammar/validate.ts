// One reader for every parameter's value, driven by the parameter's rule in
// params.ts: its kind, bounds and choices. A value the rule does not allow is
// refused with one message shape, naming the parameter, the value and what is
// allowed, e.g. `Invalid width "abc": expected an integer from 1 to 8192.`
//
// A rule and the words of every refusal are data (WORDS): the origin reads
// them from this code, the edge function from its KeyValueStore, so that its
// code holds only the readers (lambda/edge/viewer-request.ts).

import { grammarError, type GrammarError } from './errors';
import { withFontChoices } from './fonts';
import type { GrammarOptions } from './params';

/**
 * The words of the grammar's refusals, `$0`, `$1`... standing for what the
 * refusal names. A kind's word says what its values may be, with `$0` and
 * `$1` the bounds and `$2` the choices.
 */
export const WORDS = {
  invalid: 'Invalid $0 "$1": expected $2.',
  integer: 'an integer from $0 to $1',
  number: 'a number from $0 to $1 with at most one decimal',
  factor: 'a number from $0 to $1 with at most two decimals',
  choice: 'one of $2',
  boolean: 'true, false, 1 or 0',
  colour: 'a hex colour rgb, rrggbb or rrggbbaa',
  text: 'no text (this URL form draws none)',
  region: 'x,y,width,height: fractions of the image, the region inside it',
  point: 'x,y: fractions of the image',
  presets: 'one of (no presets are defined)',
  watermarks: 'one of (no watermarks are defined)',
  templates: 'one of (no templates are defined)',
  repeated: 'a single value ($0 is given more than once)',
  presetsOnly: 'no parameter but preset (this deployment serves presets only)',
  largest: 'at most $0, the largest allowed size',
  query: 'Invalid query string: "$0" is not valid percent-encoded UTF-8.',
  key: 'Invalid source key: $0.',
  emptyKey: 'it is empty',
  control: 'it contains a control character',
  unicode: 'it is not valid Unicode',
  long: 'it is longer than $0 bytes',
  segment: 'it has a "$0" path segment',
  emptySegment: 'it has an empty path segment',
  escape: 'it is not valid percent-encoded UTF-8',
  unsigned: 'This URL must be signed.',
  expired: 'This URL has expired.',
  badSignature: 'The signature is not valid for this URL.',
  bucket: 'This request names a bucket this deployment does not serve.',
};

export type Word = keyof typeof WORDS;
export type Words = { [word in Word]: string };

/** The ways a number may be written: a kind's value, or a fraction of the image (region, point). */
type NumberForm = 'integer' | 'number' | 'factor' | 'fraction';

/**
 * What the readers read besides a parameter's rule: the words of refusals,
 * each number kind's pattern, the spellings of a boolean and the choices
 * that are other spellings of another. Data, like the rules.
 */
export interface ReaderData {
  words: Words;
  patterns: { [kind in NumberForm]: string };
  /** `false`, `true`, `0`, `1`: the odd ones are true. */
  booleans: string[];
  synonyms: { [spelling: string]: string };
}

export const NUMBER_PATTERNS: ReaderData['patterns'] = {
  integer: '^\\d{1,9}$',
  // A decimal with at most one significant digit after the point: `1.5`, `1.50`, `2`, `.3`.
  number: '^(?=\\.?\\d)\\d{0,4}(\\.\\d?0*)?$',
  // A factor with at most two significant decimals: `1.25`, `0.5`, `2`.
  factor: '^(?=\\.?\\d)\\d{0,4}(\\.\\d{0,2}0*)?$',
  // At most four decimals.
  fraction: '^(?=\\.?\\d)\\d?(\\.\\d{0,4})?$',
};
export const BOOLEANS = ['false', 'true', '0', '1'];
export const SYNONYMS = { pad: 'contain', jpg: 'jpeg' };

let readerData: ReaderData;

/** Makes `data` what the readers read: this code's grammar data (params.ts), or at the edge its store's. */
export const useReaderData = (data: ReaderData): void => {
  readerData = data;
};

/** The word `word` with `args` put in for `$0`, `$1`... */
export const say = (word: Word, ...args: unknown[]): string =>
  readerData.words[word].replace(/\$(\d)/g, (_match, index) => args[index] as string);

/** Longest value quoted back in a message, so an absurd value cannot bloat a response. */
const MAX_QUOTED = 40;

export const invalidParameter = (name: string, value: string, expected: string): GrammarError =>
  grammarError('invalid_parameter', say('invalid', name, value.length > MAX_QUOTED ? value.slice(0, MAX_QUOTED) + '…' : value, expected));

/** How a value may be written: each kind's reader, named in the rules. */
export type KindName = 'integer' | 'number' | 'factor' | 'choice' | 'boolean' | 'colour' | 'region' | 'point' | 'border' | 'named' | 'text';

/**
 * Reads a value: what it reads as, or undefined (NaN for a number) when the
 * rule does not allow it, refused then in the kind's word. A kind without a
 * word (border, name) throws its own refusals or none.
 */
type Reader = (rule: ValueRule, name: string, raw: string, options: GrammarOptions) => Value | undefined;

/** What one parameter's values may be: data, which the edge reads from its store. */
export interface ValueRule {
  kind: KindName;
  /** integer, number: the bounds; without `high`, the deployment's maxDimension. */
  low?: number;
  high?: number;
  /** choice: the values allowed, lower-case (numbers: integers written with any leading zeros). */
  choices?: readonly (string | number)[];
  /** Whether `auto`, in any letter case, is allowed beside what the kind reads. */
  auto?: boolean;
  /** The value of the parameter given empty (`trim` alone). */
  bare?: number;
  /** choice: the deployment's own fonts' names are choices too (fonts.ts). */
  fonts?: boolean;
}

export type Value = string | number | boolean;

const high = (rule: ValueRule, options: GrammarOptions) => (rule.high == null ? options.maxDimension : rule.high);

/** Reads one value of the parameter `name` under its rule; throws the refusal naming the parameter, the value and what is allowed. */
export const readValue = (rule: ValueRule, name: string, raw: string, options: GrammarOptions): Value => {
  // Not in an edge function, whose stored records hold the deployment's fonts among their choices.
  if (typeof EDGE_DIALECT === 'undefined') rule = withFontChoices(rule, options);
  // Not in a dialect's function (dialect-function.ts).
  if ((typeof EDGE_HINTLESS === 'undefined' || !EDGE_HINTLESS) && rule.auto && raw.toLowerCase() === 'auto') return 'auto';
  if (raw === '' && rule.bare != null) return rule.bare;
  const value = KINDS[rule.kind](rule, name, raw, options);
  // NaN !== NaN: a number out of bounds is refused too.
  if (value == null || value !== value) {
    throw invalidParameter(name, raw, say(rule.kind as Word, rule.low, high(rule, options), rule.choices && rule.choices.join(', ')));
  }
  return value;
};

/** Whether `raw` is a number written as the pattern of `form` allows. */
const written = (form: NumberForm, raw: string) => RegExp(readerData.patterns[form]).test(raw);

/** A number written as its kind's pattern allows, from `low` to `high`. */
const bounded: Reader = (rule, _name, raw, options) => {
  const value = written(rule.kind as NumberForm, raw) ? +raw : NaN;
  return value >= (rule.low as number) && value <= high(rule, options) ? value : NaN;
};

/** Fractions of the image are counted in ten-thousandths, so that sums are exact. */
const PARTS = 10000;

/**
 * `count` comma-separated fractions of the image, at most four decimals, that
 * `inside` accepts in ten-thousandths; reads them canonical.
 */
const fractions =
  (count: number, inside: (parts: number[]) => boolean): Reader =>
  (_rule, _name, raw) => {
    const parts = raw.split(',').map((part) => (written('fraction', part) ? Math.round(+part * PARTS) : NaN));
    return parts.length === count && inside(parts) ? parts.map((part) => part / PARTS).join(',') : undefined;
  };

/** A kind a dialect's function does not read (dialect-function.ts): no value. */
const unread: Reader = () => undefined;

/** `raw`, or a 400 when it has no UTF-8 (a lone surrogate): no canonical URI, nor the origin's query, could hold it. */
const inUnicode = (name: string, raw: string): string => {
  try {
    encodeURIComponent(raw);
  } catch {
    throw invalidParameter(name, raw, 'text in Unicode');
  }
  return raw;
};
const KINDS: { [kind in KindName]: Reader } = {
  integer: bounded,
  number: bounded,
  factor: bounded,
  /** One of the rule's choices, in any letter case (numbers with any leading zeros); a synonym reads as what it stands for. */
  choice: (rule, _name, raw) => {
    const choices = rule.choices as (string | number)[];
    const value = typeof choices[0] === 'number' ? (written('integer', raw) ? +raw : NaN) : raw.toLowerCase();
    return choices.indexOf(value) === -1 ? undefined : readerData.synonyms[value] || value;
  },
  boolean: (_rule, _name, raw) => {
    const index = readerData.booleans.indexOf(raw.toLowerCase());
    return index === -1 ? undefined : index % 2 === 1;
  },
  /** `rgb`, `rrggbb` or `rrggbbaa` hex, optionally with `#`; reads as `rrggbb` or `rrggbbaa`, lower-case. */
  colour: (_rule, _name, raw) => {
    const hex = raw.replace(/^#/, '').toLowerCase();
    if (!/^([0-9a-f]{3}){1,2}$|^[0-9a-f]{8}$/.test(hex)) return undefined;
    // An opaque alpha says nothing: `rrggbbff` is `rrggbb`.
    return hex.length === 3 ? hex.replace(/(.)/g, '$1$1') : hex.slice(6) === 'ff' ? hex.slice(0, 6) : hex;
  },
  /** `x,y,width,height`: a region inside the image. */
  region:
    typeof EDGE_DIALECT === 'undefined' || !EDGE_DIALECT
      ? fractions(4, (p) => p[2]! > 0 && p[3]! > 0 && p[0]! + p[2]! <= PARTS && p[1]! + p[3]! <= PARTS)
      : unread,
  /** `x,y`: a point of the image. */
  point: typeof EDGE_READS_FP === 'undefined' || EDGE_READS_FP ? fractions(2, (parts) => parts.every((part) => part <= PARTS)) : unread,
  /** `<width>` or `<width>,<colour>` (black by default): the width leaves the image at least a pixel within maxDimension. */
  border:
    typeof EDGE_DIALECT === 'undefined' || !EDGE_DIALECT
      ? (_rule, name, raw, options) => {
          const comma = raw.indexOf(',');
          const width = readValue(
            { kind: 'integer', low: 1, high: (options.maxDimension - 1) >> 1 },
            name,
            comma === -1 ? raw : raw.slice(0, comma),
            options,
          );
          // Each part is refused by its own kind.
          return width + ',' + readValue({ kind: 'colour' }, name, comma === -1 ? '000' : raw.slice(comma + 1), options);
        }
      : unread,
  /**
   * A name the deployment defines (a watermark's: `logo`, or `logo.1a2b3c4d`
   * with its version in a canonical URI), lower-case; or a card's fills, hex
   * (lower-case too, so that one text has one spelling). It is checked where the
   * names are known: at the edge in its store (canonical.ts), at the origin in
   * its definitions.
   */
  named: (_rule, name, raw) => inUnicode(name, raw).toLowerCase(),
  /**
   * A viewer's text, any: the origin refuses it for its length or a control
   * character (lambda/origin/image/text/render.ts), with the precise word the
   * edge has no room for. The canonical URI holds it percent-encoded (canonical.ts, opsSegment).
   */
  text: typeof EDGE_READS_TEXT === 'undefined' || EDGE_READS_TEXT ? (_rule, name, raw) => inUnicode(name, raw) : unread,
};

/** What a parameter that names one of the deployment's presets, watermarks or templates expects: `one of a, b`, or the word that none are defined. */
export const oneOf = (names: string, none: 'presets' | 'watermarks' | 'templates') => (names ? say('choice', 0, 0, names) : say(none));
