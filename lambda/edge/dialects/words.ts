// What the query-shaped dialects (imgix, Cloudflare) share: their refusal,
// which names the dialect, the parameter and the value; and the readings
// both need (mirrors, colours, a blur radius as our sigma). Plain code for
// the edge (cloudfront-js-2.0: no classes, spread or destructuring).

import { hasOwn } from '../../grammar/canonical';
import { grammarError, type GrammarError } from '../../grammar/errors';

/** Longest value quoted back, so an absurd one cannot bloat a response. */
const QUOTED = 40;

/** Name/value pairs, in order: a query's, or what a dialect says in ours. */
export type Pairs = [string, string][];

/** A dialect's title and why it refuses, by reason (`unsupported` when none is given); `$0` in a reason is the refusal's detail. */
type RefusalWords = { title: string; why: { [reason: string]: string } };

/**
 * The dialect's refusal: `imgix fit=facearea: not supported.`, a 400 naming
 * the dialect, the parameter as written and why we cannot honour it, in the
 * dialect's words (`words()`, which the edge reads from its store).
 */
export const refusal =
  (words: () => RefusalWords) =>
  (name: string, value: string, reason?: string, detail?: string): GrammarError =>
    grammarError(
      'invalid_parameter',
      words().title +
        ' ' +
        (name + '=' + value).slice(0, QUOTED) +
        ': ' +
        (words().why[reason || 'unsupported'] as string).replace('$0', detail as string) +
        '.',
    );

// The grammar's, so that the bundle holds it once.
export { hasOwn };

/**
 * imgix's and Cloudflare's `flip`: `h` mirrors left-right (our flop), `v` top-bottom (our flip), `hv` both;
 * `turned` (a quarter turn made before the mirror, which we make after) swaps them.
 */
export const mirrors = (value: string, turned?: unknown): Pairs | undefined =>
  /^(h|v|hv|vh)$/.test(value)
    ? ([] as Pairs).concat(
        /h/.test(value) ? [[turned ? 'flip' : 'flop', '1']] : [],
        /v/.test(value) ? [[turned ? 'flop' : 'flip', '1']] : [],
      )
    : undefined;

/**
 * A hex colour as our `background` reads it (`rgb`, `rrggbb`, `rrggbbaa`), from
 * `#`-less or `#` hex of 3, 4, 6 or 8 digits; `argb` says the alpha comes first
 * (imgix) rather than last (CSS, Cloudflare). Undefined for anything else
 * (colour names, `rgb()`).
 */
export const hexColour = (value: string, argb: boolean): string | undefined => {
  let hex = value.replace(/^#/, '');
  if (!/^([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/i.test(hex)) return undefined;
  if (hex.length === 4) hex = hex.replace(/(.)/g, '$1$1');
  return argb && hex.length === 8 ? hex.slice(2) + hex.slice(0, 2) : hex;
};

/** `radius` (a positive number at most `most`) over `perSigma` as our blur sigma, one decimal, at least 0.3; undefined when not such a number. */
export const blurSigma = (radius: string, perSigma: number, most: number): string | undefined => {
  const value = /^\d{1,4}(\.\d+)?$/.test(radius) ? +radius : NaN;
  return value > 0 && value <= most ? String(Math.max(3, Math.round((value * 10) / perSigma)) / 10) : undefined;
};

/**
 * A table written as text, `clip=inside+ max=inside`, as an object: words as
 * text, which no bundler renames (the edge's bundle shortens property names
 * such as `auto`), and which the edge's store holds as they are. Each call is
 * annotated `@__PURE__`, so that the edge's bundle drops the tables with the
 * code's copy of the words (esbuild keeps a call it cannot prove pure).
 */
export const table = (text: string): { [word: string]: string } => {
  const words: { [word: string]: string } = {};
  text.split(' ').forEach((entry) => {
    const eq = entry.indexOf('=');
    words[entry.slice(0, eq)] = entry.slice(eq + 1);
  });
  return words;
};

/** A fit table's entry (`inside+`): our fit, and whether it enlarges (`+`). */
export const fitOf = (fits: { [fit: string]: string }, fit: string): [string, boolean] | undefined =>
  hasOwn(fits, fit) ? [(fits[fit] as string).replace('+', ''), /\+$/.test(fits[fit] as string)] : undefined;

/** A parameter's value by name; names held as text, so that the bundle's renaming of properties cannot touch them. */
export type Lookup = (name: string) => string | undefined;

/** `values` read through a Lookup. */
export const lookup =
  (values: { [name: string]: string }): Lookup =>
  (name) =>
    hasOwn(values, name) ? values[name] : undefined;
