// Value parsers shared by the parameters. Each either returns the parsed value
// or throws one uniform message naming the parameter, the value and what is
// allowed, e.g. `Invalid width "abc": expected an integer from 1 to 8192.`

import { grammarError, type GrammarError } from './errors';
import type { GrammarOptions, ValueParser } from './params';

/** Longest value quoted back in a message, so an absurd value cannot bloat a response. */
const MAX_QUOTED = 40;

export function invalidParameter(name: string, value: string, expected: string): GrammarError {
  const quoted = value.length > MAX_QUOTED ? value.slice(0, MAX_QUOTED) + '…' : value;
  return grammarError('invalid_parameter', `Invalid ${name} "${quoted}": expected ${expected}.`);
}

/** A number written as `pattern` allows, from `min` to `max`; `kind` words what is expected. */
function number(pattern: RegExp, kind: string, min: number, max?: number): ValueParser {
  return (name, raw, options) => {
    const top = max === undefined ? options.maxDimension : max;
    const value = pattern.test(raw) ? Number(raw) : NaN;
    if (!(value >= min && value <= top)) throw invalidParameter(name, raw, `${kind} from ${min} to ${top}${kind === 'a number' ? ' with at most one decimal' : ''}`);
    return value;
  };
}

/** An integer from `min` to `max`; without `max`, to the deployment's maxDimension. */
export const integer = (min: number, max?: number) => number(/^\d{1,9}$/, 'an integer', min, max);

/** A decimal with at most one significant digit after the point: `1.5`, `1.50`, `2`, `.3`. */
export const decimal = (min: number, max: number) => number(/^(?=\.?\d)\d{0,4}(\.\d?0*)?$/, 'a number', min, max);

export const boolean: ValueParser = (name, raw) => {
  const index = ['false', 'true', '0', '1'].indexOf(raw.toLowerCase());
  if (index === -1) throw invalidParameter(name, raw, 'true, false, 1 or 0');
  return index % 2 === 1;
};

/** One of `allowed`, in any letter case; returns it lower-case. */
export function choice<T extends string>(allowed: readonly T[]): (name: string, raw: string, options: GrammarOptions) => T {
  return (name, raw) => {
    const value = raw.toLowerCase() as T;
    if (allowed.indexOf(value) === -1) throw invalidParameter(name, raw, `one of ${allowed.join(', ')}`);
    return value;
  };
}

/** `rgb`, `rrggbb` or `rrggbbaa` hex, optionally with `#`; returns `rrggbb` or `rrggbbaa`, lower-case. */
export const colour: ValueParser = (name, raw) => {
  const hex = raw.replace(/^#/, '').toLowerCase();
  if (!/^([0-9a-f]{3}){1,2}$|^[0-9a-f]{8}$/.test(hex)) throw invalidParameter(name, raw, 'a hex colour rgb, rrggbb or rrggbbaa');
  // An opaque alpha says nothing: `rrggbbff` is `rrggbb`.
  return hex.length === 3 ? hex.replace(/(.)/g, '$1$1') : hex.slice(6) === 'ff' ? hex.slice(0, 6) : hex;
};

/** Fractions of the image are counted in ten-thousandths, so that sums are exact. */
const PARTS = 10000;

/**
 * `count` comma-separated fractions of the image (`names`), at most four
 * decimals, that `inside` accepts in ten-thousandths (`rule` says how); returns them canonical.
 */
const fractions = (count: number, names: string, rule: string, inside: (parts: number[]) => boolean): ValueParser => (name, raw) => {
  const parts = raw.split(',').map((part) => (/^(?=\.?\d)\d?(\.\d{0,4})?$/.test(part) ? Math.round(+part * PARTS) : NaN));
  if (!(parts.length === count && inside(parts))) throw invalidParameter(name, raw, names + ': fractions of the image' + rule);
  return parts.map((part) => part / PARTS).join(',');
};

/** `x,y,width,height`: a region inside the image. */
export const region = fractions(4, 'x,y,width,height', ', the region inside it', (p) => p[2]! > 0 && p[3]! > 0 && p[0]! + p[2]! <= PARTS && p[1]! + p[3]! <= PARTS);

/** `x,y`: a point of the image. */
export const point = fractions(2, 'x,y', '', (parts) => parts.every((part) => part <= PARTS));

/** `<width>` or `<width>,<colour>` (black by default): the width leaves the image at least a pixel within maxDimension. */
export const border: ValueParser = (name, raw, options) => {
  const comma = raw.indexOf(',');
  const width = integer(1, (options.maxDimension - 1) >> 1)(name, comma === -1 ? raw : raw.slice(0, comma), options);
  return width + ',' + colour(name, comma === -1 ? '000' : raw.slice(comma + 1), options);
};

/**
 * A watermark's name, lower-case (`logo`), with its version in a canonical URI
 * (`logo.1a2b3c4d`). Only the deployment's names are accepted: the edge looks
 * the name up to version it (canonical.ts), and the origin to draw it.
 */
export const watermark: ValueParser = (_name, raw) => raw.toLowerCase();

/** What a parameter that names one of the deployment's `what` expects: `one of a, b`, or none if it defines none. */
export const oneOf = (names: string, what: string) => 'one of ' + (names || '(no ' + what + ' are defined)');
