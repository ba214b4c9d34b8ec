// The query-shaped dialects (imgix, Cloudflare) as data: a rule book says,
// for each of the dialect's parameters, which native pairs each value
// becomes, and the translator only reads the dialect's parameters and hands
// them to `translateByRules`. The book is in the function's store, so a
// dialect's meaning costs the edge function no code (CloudFront's 10 KB).
// Plain code for the edge (cloudfront-js-2.0: no classes, spread or
// destructuring).
//
// A rule is `[value, output, ...conditions]`, tried in order; the first whose
// value pattern matches the value and whose conditions hold is the
// parameter's meaning:
// - `value`: a pattern the whole value matches, letter case ignored.
//   `$0` is the value, `$1`... its groups, then the groups of each condition.
// - a condition, `name=pattern`: the whole value of another parameter
//   (empty when it is absent) matches the pattern.
// - `output`: native pairs, `width=$0&enlarge=1`, `$n` replaced by groups
//   (never read as pairs: a value holding `&` stays one value); or `!reason`,
//   the dialect's refusal for that reason (`why`); or empty, nothing. A value
//   `f($n)` or `f($n,a)` is a reading of a group (READINGS), which the
//   pattern has already checked.
// A value matching no rule is refused. A parameter without rules is ignored,
// or refused when its name matches the book's `refused`.

import { hasOwn } from '../../grammar/canonical';
import { grammarError, type GrammarError } from '../../grammar/errors';

/** Name/value pairs, in order: a query's, or what a dialect says in ours. */
export type Pairs = [string, string][];

/** `[value pattern, output, ...conditions]` (see above). */
export type Rule = string[];

export interface RuleBook {
  /** The dialect's name, which starts each of its refusals. */
  title: string;
  /** Why a refusal refuses, by reason (`unsupported` when none is given); `$n` are the rule's groups. */
  why: { [reason: string]: string };
  /** Other spellings of parameters, as their main names. */
  spellings: { [spelling: string]: string };
  /** Each parameter's rules, by main name. */
  rules: { [name: string]: Rule[] };
  /** Names without rules that are refused (a pattern): the dialect defines them and we lack them. The others are ignored. */
  refused: string;
  /** Values of parameters a URL leaves out, as the dialect reads them (`fit=clip`). */
  defaults: { [name: string]: string };
  /** A parameter whose value is a comma-separated list that may repeat; each item is read alone (imgix's `auto`). */
  list?: string;
}

/** Longest value quoted back, so an absurd one cannot bloat a response. */
const QUOTED = 40;

/** The book's refusal: `imgix fit=facearea: not supported.`, naming the dialect, the parameter as written and why. */
export const refusal = (book: RuleBook, name: string, value: string, reason?: string, groups?: string[]): GrammarError =>
  grammarError(
    'invalid_parameter',
    book.title +
      ' ' +
      (name + '=' + value).slice(0, QUOTED) +
      ': ' +
      (book.why[reason || 'unsupported'] as string).replace(/\$(\d)/g, (_whole, n: string) => (groups || [])[+n] || '') +
      '.',
  );

/** The readings a rule's output may call on a group its pattern has checked, by name. */
const READINGS: { [name: string]: (value: string, a: string) => string } = {
  // An offset from -100 to 100 (0 unchanged) as our factor from 0 to 2 (1 unchanged).
  factor: (value) => String((100 + +value) / 100),
  // A blur radius over `a` per sigma, as our sigma: one decimal, at least 0.3.
  sigma: (value, a) => String(Math.max(3, Math.round((+value * 10) / +a)) / 10),
};

/**
 * Rules that read a hex colour as our `name` (`rgb`, `rrggbb` or `rrggbbaa`),
 * from `#`-less or `#` hex of 3, 4, 6 or 8 digits, given `conditions`;
 * `argb` says the alpha comes first (imgix) rather than last (CSS,
 * Cloudflare). For a dialect's book: code that the edge's bundle leaves out.
 */
export const hexRules = (name: string, argb: boolean, conditions: string[]): Rule[] =>
  [
    ['#?([0-9a-f]{3}|[0-9a-f]{6})', '$1'],
    ['#?([0-9a-f])([0-9a-f])([0-9a-f])([0-9a-f])', argb ? '$2$2$3$3$4$4$1$1' : '$1$1$2$2$3$3$4$4'],
    ['#?([0-9a-f]{2})([0-9a-f]{6})', argb ? '$2$1' : '$1$2'],
  ].map((form) => [form[0] as string, name + '=' + form[1]].concat(conditions));

/** The whole of `text` matched by `pattern`, letter case ignored. */
const whole = (pattern: string, text: string) => RegExp('^(?:' + pattern + ')$', 'i').exec(text);

/** `output`'s native pairs for the rule's groups. */
const written = (output: string, groups: string[]): Pairs =>
  output
    .split('&')
    .map((pair) =>
      pair
        .split('=')
        .map((side) =>
          side.replace(/^(\w+)\(\$(\d),?([\d.]*)\)|\$(\d)/g, (_call, reading: string, n: string, a: string, plain: string) =>
            reading ? (READINGS[reading] as (value: string, a: string) => string)(groups[+n]!, a) : groups[+plain] || '',
          ),
        ),
    ) as Pairs;

/** Applies the first of `rules` that holds for `value` of `name`, given the other parameters' `values`; throws when none holds. */
const applyRules = (book: RuleBook, values: { [name: string]: string }, name: string, value: string, out: Pairs): void => {
  const held = (book.rules[name] as Rule[]).some((rule) => {
    let groups = whole(rule[0] as string, value) as string[] | null;
    rule.slice(2).forEach((condition) => {
      const eq = condition.indexOf('=');
      const other = condition.slice(0, eq);
      const match = groups && whole(condition.slice(eq + 1), hasOwn(values, other) ? (values[other] as string) : '');
      groups = match && groups!.concat(match.slice(1));
    });
    const output = rule[1] as string;
    if (groups && output.charAt(0) === '!') throw refusal(book, name, value, output.slice(1), groups);
    if (groups && output) written(output, groups).forEach((pair) => out.push(pair));
    return !!groups;
  });
  if (!held) throw refusal(book, name, value);
};

/**
 * A dialect's parameters, in order, as native pairs by `book`: each name read
 * as its main spelling; a parameter with rules given twice is refused, but
 * for the book's list, whose values are joined.
 */
export const translateByRules = (book: RuleBook, pairs: Pairs): Pairs => {
  const values: { [name: string]: string } = {};
  const lacked = RegExp(book.refused);
  pairs.forEach((pair) => {
    const spelling = pair[0].toLowerCase();
    const name = hasOwn(book.spellings, spelling) ? (book.spellings[spelling] as string) : spelling;
    // A name without rules is ignored, given once or more; one we lack is refused first, whatever the others say.
    if (!hasOwn(book.rules, name)) {
      if (lacked.test(name)) throw refusal(book, pair[0], pair[1]);
    } else if (hasOwn(values, name) && name !== book.list) throw refusal(book, pair[0], pair[1], 'repeated');
    else values[name] = hasOwn(values, name) ? values[name] + ',' + pair[1] : pair[1];
  });
  Object.keys(book.defaults).forEach((name) => {
    if (!hasOwn(values, name)) values[name] = book.defaults[name] as string;
  });
  const out: Pairs = [];
  Object.keys(values).forEach((name) => {
    // A list's item given twice means it once.
    const seen: { [item: string]: string } = {};
    (name === book.list ? (values[name] as string).split(',') : [values[name] as string]).forEach((item) => {
      if (!hasOwn(seen, item)) applyRules(book, values, name, item, out);
      seen[item] = item;
    });
  });
  return out;
};
