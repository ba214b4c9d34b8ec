// The composition parameters in the grammar: fit=pad, fill, trim, crop and
// border. Their canonical spellings, the no-ops that drop out, and the 400 a
// viewer gets for a value outside what they allow (a crop region outside the
// image among them), all through raw query strings as a browser sends them.

import { describe, expect, it } from 'vitest';
import {
  DEFAULT_GRAMMAR_OPTIONS,
  canonicalRequest,
  isGrammarError,
  parseCanonicalUri,
  splitQuery,
  type GrammarError,
  type GrammarOptions,
} from '../../lambda/grammar/index';

const uriOf = (query: string, options: GrammarOptions = DEFAULT_GRAMMAR_OPTIONS) =>
  canonicalRequest('/cat.jpg', splitQuery(query), options).uri;

function errorOf(query: string, options: GrammarOptions = DEFAULT_GRAMMAR_OPTIONS): GrammarError {
  try {
    canonicalRequest('/cat.jpg', splitQuery(query), options);
  } catch (error) {
    expect(isGrammarError(error), String(error)).toBe(true);
    return error as GrammarError;
  }
  throw new Error(`expected "${query}" to be rejected`);
}

describe('canonical spellings', () => {
  it.each([
    ['w=200&h=100&fit=pad', '/cat.jpg/width=200,height=100,fit=contain'],
    ['w=200&h=100&fit=PAD&fill=blur', '/cat.jpg/width=200,height=100,fit=contain,fill=blur'],
    ['trim', '/cat.jpg/trim=10'],
    ['trim=0', '/cat.jpg/trim=0'],
    ['trim=040', '/cat.jpg/trim=40'],
    ['crop=.1,0.2,0.50,.5000', '/cat.jpg/crop=0.1,0.2,0.5,0.5'],
    ['crop=0.3333,0,0.6667,1', '/cat.jpg/crop=0.3333,0,0.6667,1'],
    ['border=3', '/cat.jpg/border=3,000000'],
    ['border=3,%23F00', '/cat.jpg/border=3,ff0000'],
    ['border=3,ff000080', '/cat.jpg/border=3,ff000080'],
    ['border=4,fffFFfff&crop=0,0,1,0.5&trim=5&w=10', '/cat.jpg/width=10,trim=5,crop=0,0,1,0.5,border=4,ffffff'],
  ])('%s is %s', (query, uri) => {
    expect(uriOf(query)).toBe(uri);
  });

  it('a canonical URI with commas inside values parses back to itself, and to nothing else', () => {
    const uri = '/cat.jpg/width=10,trim=5,crop=0,0,1,0.5,border=4,ffffff';
    expect(parseCanonicalUri(uri, DEFAULT_GRAMMAR_OPTIONS).uri).toBe(uri);
    expect(parseCanonicalUri(uri, DEFAULT_GRAMMAR_OPTIONS).ops).toEqual({ width: 10, trim: 5, crop: '0,0,1,0.5', border: '4,ffffff' });
    for (const other of ['/cat.jpg/crop=0,0,1,.5', '/cat.jpg/border=4', '/cat.jpg/fit=pad,width=1,height=1', '/cat.jpg/crop=0,0,1,1,width=5']) {
      expect(() => parseCanonicalUri(other, DEFAULT_GRAMMAR_OPTIONS), other).toThrow();
    }
  });
});

describe('no-ops drop out', () => {
  it.each([
    ['fill=blur', 'without a box'],
    ['w=10&h=10&fill=blur', 'with cover'],
    ['w=10&h=10&fit=inside&fill=blur', 'with inside'],
    ['w=10&h=10&fit=contain&fill=background', 'the default fill'],
    ['crop=0,0,1,1', 'the whole image'],
    ['crop=0,0,1.0,1.0000', 'the whole image, spelled long'],
  ])('%s (%s)', (query) => {
    expect(uriOf(query)).not.toMatch(/fill|crop/);
  });
});

describe('values outside what is allowed are a 400 naming the parameter', () => {
  const REGION = 'x,y,width,height: fractions of the image, the region inside it';
  it.each([
    ['fill=solid', 'Invalid fill "solid": expected one of background, blur.'],
    ['trim=256', 'Invalid trim "256": expected an integer from 0 to 255.'],
    ['trim=true', 'Invalid trim "true": expected an integer from 0 to 255.'],
    ['crop=0.5,0,0.6,1', `Invalid crop "0.5,0,0.6,1": expected ${REGION}.`],
    ['crop=0,0.9,1,0.1001', `Invalid crop "0,0.9,1,0.1001": expected ${REGION}.`],
    ['crop=0,0,0,1', `Invalid crop "0,0,0,1": expected ${REGION}.`],
    ['crop=0,0,1', `Invalid crop "0,0,1": expected ${REGION}.`],
    ['crop=0,0,1,1,1', `Invalid crop "0,0,1,1,1": expected ${REGION}.`],
    ['crop=-0.1,0,0.5,0.5', `Invalid crop "-0.1,0,0.5,0.5": expected ${REGION}.`],
    ['crop=0.00001,0,0.5,0.5', `Invalid crop "0.00001,0,0.5,0.5": expected ${REGION}.`],
    ['crop=10,20,100,100', `Invalid crop "10,20,100,100": expected ${REGION}.`],
    ['crop=', `Invalid crop "": expected ${REGION}.`],
    ['border=0', 'Invalid border "0": expected an integer from 1 to 4095.'],
    ['border=4096', 'Invalid border "4096": expected an integer from 1 to 4095.'],
    ['border=99999999999', 'Invalid border "99999999999": expected an integer from 1 to 4095.'],
    ['border=5,red', 'Invalid border "red": expected a hex colour rgb, rrggbb or rrggbbaa.'],
    ['border=5,', 'Invalid border "": expected a hex colour rgb, rrggbb or rrggbbaa.'],
  ])('%s', (query, message) => {
    const error = errorOf(query);
    expect(error.code).toBe('invalid_parameter');
    expect(error.message).toBe(message);
  });

  it("bounds the border by the deployment's maxDimension, leaving the image a pixel", () => {
    const small = { maxDimension: 100 };
    expect(uriOf('border=49', small)).toBe('/cat.jpg/border=49,000000');
    expect(errorOf('border=50', small).message).toBe('Invalid border "50": expected an integer from 1 to 49.');
  });

  it('a long hostile crop is refused in linear time', () => {
    const start = performance.now();
    expect(errorOf(`crop=${'0.'.repeat(20_000)}`).code).toBe('invalid_parameter');
    expect(errorOf(`crop=${',1'.repeat(20_000)}`).code).toBe('invalid_parameter');
    expect(performance.now() - start).toBeLessThan(1_000);
  });
});
