// The property and fuzz tests' table of parameters (test/support/param-cases.ts)
// covers every parameter a viewer may give, and says true things of each: a
// parameter added to the grammar without an entry fails here, rather than
// being silently left out of the generated requests.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalRequest, isGrammarError, splitQuery, VIEWER_PARAMS } from '../../lambda/grammar/index';
import { CASE_OPTIONS, PARAM_CASES, VIEWER_CASES } from '../support/param-cases';

/** The canonical URI, negotiated (which checks a watermark's name) for a viewer that accepts neither AVIF nor WebP. */
const uriOf = (query: string) => canonicalRequest('/k', splitQuery(query), CASE_OPTIONS, { accept: '' }).uri;

function refusalOf(query: string): string {
  try {
    return `accepted as ${uriOf(query)}`;
  } catch (error) {
    return isGrammarError(error) ? error.code : String(error);
  }
}

it('has an entry for every parameter a viewer may give, and for nothing else', () => {
  expect(Object.keys(PARAM_CASES)).toEqual(VIEWER_PARAMS.map((param) => param.name));
});

describe.each(VIEWER_CASES.map((one) => [one.name, one] as const))('%s', (name, { aliases, case: entry }) => {
  it('its values and their spellings are accepted, each spelling as its value', () => {
    fc.assert(
      fc.property(
        entry.value.chain((text) => fc.tuple(fc.constant(text), entry.spell(text), fc.constantFrom(name, ...aliases))),
        ([text, spelled, spelling]) => {
          expect(uriOf(`${spelling}=${encodeURIComponent(spelled)}`)).toBe(uriOf(`${name}=${encodeURIComponent(text)}`));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('its samples are accepted under each of its spellings', () => {
    for (const spelling of [name, ...aliases]) {
      for (const value of entry.samples) expect(refusalOf(`${spelling}=${value}`)).toMatch(/^accepted/);
    }
  });

  it('its values of the wrong type or out of range are refused as invalid', () => {
    for (const value of [...entry.wrongType, ...entry.outOfRange]) {
      expect(refusalOf(`${name}=${encodeURIComponent(value)}`), value).toBe('invalid_parameter');
    }
  });

  if (entry.noOps.length > 0) {
    it('its no-ops give the original', () => {
      for (const value of entry.noOps) expect(uriOf(`${name}=${value}`)).toBe('/k/original');
    });
  }
});
