// One reader for every parameter's value, driven by the parameter's rule in
// params.ts: its kind, bounds and choices. A value the rule does not allow is
// refused with one message shape composed from the same rule, naming the
// parameter, the value and what is allowed, e.g.
// `Invalid width "abc": expected an integer from 1 to 8192.`

import { grammarError, type GrammarError } from './errors';
import type { GrammarOptions } from './params';

/** Longest value quoted back in a message, so an absurd value cannot bloat a response. */
const MAX_QUOTED = 40;

export const invalidParameter = (name: string, value: string, expected: string): GrammarError =>
  grammarError('invalid_parameter', `Invalid ${name} "${value.length > MAX_QUOTED ? value.slice(0, MAX_QUOTED) + '…' : value}": expected ${expected}.`);

/**
 * How a value is written: what it reads as (undefined, or NaN for a number,
 * when the rule does not allow it) and what a refusal says is allowed.
 */
export interface Kind {
  read(rule: ValueRule, name: string, raw: string, options: GrammarOptions): Value | undefined;
  /** Absent for a kind whose reader throws its own refusals or none. */
  allowed?(rule: ValueRule, options: GrammarOptions): string;
}

/** What one parameter's values may be. */
export interface ValueRule {
  kind: Kind;
  /** INTEGER, NUMBER: the bounds; without `high`, the deployment's maxDimension. */
  low?: number;
  high?: number;
  /** CHOICE: the values allowed, lower-case (numbers: integers written with any leading zeros). */
  choices?: readonly (string | number)[];
  /** Whether `auto`, in any letter case, is allowed beside what the kind reads. */
  auto?: boolean;
  /** The value of the parameter given empty (`trim` alone). */
  bare?: number;
}

export type Value = string | number | boolean;

/** Reads one value of the parameter `name` under its rule; throws the refusal naming the parameter, the value and what is allowed. */
export const readValue = (rule: ValueRule, name: string, raw: string, options: GrammarOptions): Value => {
  if (rule.auto && raw.toLowerCase() === 'auto') return 'auto';
  if (raw === '' && rule.bare != null) return rule.bare;
  const value = rule.kind.read(rule, name, raw, options);
  // NaN !== NaN: a number out of bounds is refused too.
  if (value == null || value !== value) throw invalidParameter(name, raw, (rule.kind.allowed as Required<Kind>['allowed'])(rule, options));
  return value;
};

const high = (rule: ValueRule, options: GrammarOptions) => (rule.high == null ? options.maxDimension : rule.high);

/** A number written as `pattern` allows, from `low` to `high`; `words` say what it is. */
const bounded = (pattern: RegExp, words: string, after: string): Kind => ({
  read: (rule, _name, raw, options) => {
    const value = pattern.test(raw) ? +raw : NaN;
    return value >= (rule.low as number) && value <= high(rule, options) ? value : NaN;
  },
  allowed: (rule, options) => `${words} from ${rule.low} to ${high(rule, options)}${after}`,
});

const DIGITS = /^\d{1,9}$/;

export const INTEGER = bounded(DIGITS, 'an integer', '');
/** A decimal with at most one significant digit after the point: `1.5`, `1.50`, `2`, `.3`. */
export const NUMBER = bounded(/^(?=\.?\d)\d{0,4}(\.\d?0*)?$/, 'a number', ' with at most one decimal');
/** A factor with at most two significant decimals: `1.25`, `0.5`, `2`. */
export const FACTOR = bounded(/^(?=\.?\d)\d{0,4}(\.\d{0,2}0*)?$/, 'a number', ' with at most two decimals');

/** Choices that are other spellings of another choice. */
const SYNONYMS: { [spelling: string]: string } = { pad: 'contain', jpg: 'jpeg' };

/** One of the rule's choices, in any letter case (numbers with any leading zeros); a synonym reads as what it stands for. */
export const CHOICE: Kind = {
  read: (rule, _name, raw) => {
    const choices = rule.choices as (string | number)[];
    const value = typeof choices[0] === 'number' ? (DIGITS.test(raw) ? +raw : NaN) : raw.toLowerCase();
    return choices.indexOf(value) === -1 ? undefined : SYNONYMS[value] || value;
  },
  allowed: (rule) => 'one of ' + (rule.choices as string[]).join(', '),
};

/** `false`, `true`, `0`, `1`: the odd ones are true. */
const BOOLEANS = ['false', 'true', '0', '1'];

export const BOOLEAN: Kind = {
  read: (_rule, _name, raw) => {
    const index = BOOLEANS.indexOf(raw.toLowerCase());
    return index === -1 ? undefined : index % 2 === 1;
  },
  allowed: () => 'true, false, 1 or 0',
};

/** `rgb`, `rrggbb` or `rrggbbaa` hex, optionally with `#`; reads as `rrggbb` or `rrggbbaa`, lower-case. */
export const COLOUR: Kind = {
  read: (_rule, _name, raw) => {
    const hex = raw.replace(/^#/, '').toLowerCase();
    if (!/^([0-9a-f]{3}){1,2}$|^[0-9a-f]{8}$/.test(hex)) return undefined;
    // An opaque alpha says nothing: `rrggbbff` is `rrggbb`.
    return hex.length === 3 ? hex.replace(/(.)/g, '$1$1') : hex.slice(6) === 'ff' ? hex.slice(0, 6) : hex;
  },
  allowed: () => 'a hex colour rgb, rrggbb or rrggbbaa',
};

/** Fractions of the image are counted in ten-thousandths, so that sums are exact. */
const PARTS = 10000;

/**
 * `names.length` comma-separated fractions of the image (`names`), at most
 * four decimals, that `inside` accepts in ten-thousandths (`rule` says how);
 * reads them canonical.
 */
const fractions = (names: string, rule: string, inside: (parts: number[]) => boolean): Kind => ({
  read: (_rule, _name, raw) => {
    const parts = raw.split(',').map((part) => (/^(?=\.?\d)\d?(\.\d{0,4})?$/.test(part) ? Math.round(+part * PARTS) : NaN));
    return parts.length === names.split(',').length && inside(parts) ? parts.map((part) => part / PARTS).join(',') : undefined;
  },
  allowed: () => names + ': fractions of the image' + rule,
});

/** `x,y,width,height`: a region inside the image. */
export const REGION = fractions('x,y,width,height', ', the region inside it', (p) => p[2]! > 0 && p[3]! > 0 && p[0]! + p[2]! <= PARTS && p[1]! + p[3]! <= PARTS);

/** `x,y`: a point of the image. */
export const POINT = fractions('x,y', '', (parts) => parts.every((part) => part <= PARTS));

/** `<width>` or `<width>,<colour>` (black by default): the width leaves the image at least a pixel within maxDimension. */
export const BORDER: Kind = {
  read: (_rule, name, raw, options) => {
    const comma = raw.indexOf(',');
    const width = readValue({ kind: INTEGER, low: 1, high: (options.maxDimension - 1) >> 1 }, name, comma === -1 ? raw : raw.slice(0, comma), options);
    // Each part is refused by its own kind.
    return width + ',' + readValue({ kind: COLOUR }, name, comma === -1 ? '000' : raw.slice(comma + 1), options);
  },
};

/**
 * A name the deployment defines (a watermark's: `logo`, or `logo.1a2b3c4d`
 * with its version in a canonical URI), lower-case. It is checked where the
 * names are known: at the edge in its store (canonical.ts), at the origin in
 * its definitions.
 */
export const NAME: Kind = { read: (_rule, _name, raw) => raw.toLowerCase() };

/** What a parameter that names one of the deployment's `what` expects: `one of a, b`, or none if it defines none. */
export const oneOf = (names: string, what: string) => 'one of ' + (names || '(no ' + what + ' are defined)');
