// The rule books that imgix's and Cloudflare's translators are (rules.ts):
// how a book reads, on a small book of its own, and that a viewer's value can
// never become more than the one native value its rule writes.

import { describe, expect, it } from 'vitest';
import { imgix } from '../../../lambda/edge/dialects/imgix';
import { translateByRules, type RuleBook } from '../../../lambda/edge/dialects/rules';
import { isGrammarError } from '../../../lambda/grammar/index';

const BOOK: RuleBook = {
  title: 'toy',
  spellings: { width: 'w' },
  refused: '^lack',
  defaults: { mode: 'plain' },
  list: 'auto',
  rules: {
    w: [
      ['\\d+', 'width=$0'],
      ['.*', '!number'],
    ],
    mode: [
      ['plain', ''],
      ['pad', 'fit=contain&background=fff', 'bg='],
      ['pad', 'fit=contain'],
    ],
    bg: [
      ['#?([0-9a-f]{6})', 'background=$1', 'mode=pad'],
      ['.*', ''],
    ],
    side: [['(top|bottom),(left|right)', 'position=$1-$2']],
    blur: [['\\d+', 'blur=sigma($0,20)']],
    bri: [['-?\\d\\d?|100', 'brightness=factor($0)']],
    auto: [
      ['format', 'format=auto'],
      ['compress', 'quality=45', 'q='],
      ['compress', ''],
    ],
    q: [['.*', 'quality=$0']],
  },
  why: { unsupported: 'not supported', repeated: 'given more than once', number: 'expected a number, not $0' },
};

const pairs = (query: string): [string, string][] =>
  query.split('&').map((pair) => pair.split('=').map(decodeURIComponent) as [string, string]);
const translated = (query: string) => translateByRules(BOOK, pairs(query));
const refusal = (query: string): string => {
  try {
    translated(query);
  } catch (error) {
    if (isGrammarError(error)) return error.message;
    throw error;
  }
  throw new Error('expected a refusal');
};

describe('a rule book', () => {
  it('writes the first rule whose pattern and conditions hold, with the groups in place', () => {
    expect(translated('w=300&side=TOP,left')).toEqual([
      ['width', '300'],
      ['position', 'TOP-left'],
    ]);
    // A condition reads another parameter, absent as empty.
    expect(translated('mode=pad')).toEqual([
      ['fit', 'contain'],
      ['background', 'fff'],
    ]);
    expect(translated('mode=pad&bg=%23102030')).toEqual([
      ['fit', 'contain'],
      ['background', '102030'],
    ]);
    expect(translated('bg=102030')).toEqual([]);
  });

  it('reads a default when the URL leaves the parameter out, and other spellings as the main name', () => {
    expect(translated('width=10')).toEqual([['width', '10']]);
    expect(refusal('w=10&width=20')).toBe('toy width=20: given more than once.');
    expect(refusal('mode=odd')).toBe('toy mode=odd: not supported.');
  });

  it("reads each item of its list alone, the list's repeats joined", () => {
    expect(translated('auto=format,compress')).toEqual([
      ['format', 'auto'],
      ['quality', '45'],
    ]);
    // In the order the names first appear: auto, then q.
    expect(translated('auto=compress&q=60&auto=format')).toEqual([
      ['format', 'auto'],
      ['quality', '60'],
    ]);
    expect(refusal('auto=format,enhance')).toBe('toy auto=enhance: not supported.');
  });

  it('computes what a pattern cannot: a blur sigma, an offset as a factor', () => {
    expect(translated('blur=200&bri=-50')).toEqual([
      ['blur', '10'],
      ['brightness', '0.5'],
    ]);
    expect(translated('blur=1')).toEqual([['blur', '0.3']]);
  });

  it('refuses a name it lacks before anything else, ignores one it does not define, and words a reason with its groups', () => {
    expect(refusal('w=abc&lackey=1')).toBe('toy lackey=1: not supported.');
    expect(translated('utm_source=mail&w=5')).toEqual([['width', '5']]);
    expect(refusal('w=abc')).toBe('toy w=abc: expected a number, not abc.');
  });

  it("never reads a viewer's value as pairs: `&` and `=` in a value stay in that one value", () => {
    // The rule for q writes the value as it is; the native grammar then refuses it as a quality.
    expect(translated('q=' + encodeURIComponent('80&watermark=logo'))).toEqual([['quality', '80&watermark=logo']]);
    expect(translated('side=' + encodeURIComponent('top,left'))).toEqual([['position', 'top-left']]);
    expect(imgix.translate({ uri: '/a.jpg', pairs: [['q', '80&fit=cover']] }).pairs).toContainEqual(['quality', '80&fit=cover']);
  });
});
