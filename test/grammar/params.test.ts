// The viewer-facing parameters of the URL contract: names and aliases,
// accepted spellings, and the 400 a user gets for anything else. Everything
// here goes through the raw query string, as a browser sends it, the
// composition parameters (fit=pad, fill, trim, crop, border) among them.

import { describe, expect, it } from 'vitest';
import {
  DEFAULT_GRAMMAR_OPTIONS,
  canonicalRequest,
  isGrammarError,
  parseCanonicalUri,
  parseViewerParams,
  splitQuery,
  type GrammarError,
  type GrammarOptions,
  type Negotiation,
  type ViewerParams,
} from '../../lambda/grammar/index';
import { CASE_OPTIONS, VIEWER_CASES } from '../support/param-cases';

const options = DEFAULT_GRAMMAR_OPTIONS;

/** What the grammar makes of a raw query string. */
function parse(query: string, opts: GrammarOptions = options): ViewerParams {
  return parseViewerParams(splitQuery(query), opts);
}

/** The grammar error a raw query string gives; fails the test if it gives none or another kind. */
function errorOf(query: string, opts: GrammarOptions = options, negotiation?: Negotiation): GrammarError {
  try {
    canonicalRequest('/cat.jpg', splitQuery(query), opts, negotiation);
  } catch (error) {
    expect(isGrammarError(error), String(error)).toBe(true);
    return error as GrammarError;
  }
  throw new Error(`expected "${query}" to be rejected`);
}

describe('parameter names and aliases', () => {
  it.each<[string, ViewerParams]>([
    ['width=640', { width: 640 }],
    ['w=640', { width: 640 }],
    ['W=640', { width: 640 }],
    ['WiDtH=640', { width: 640 }],
    ['height=480', { height: 480 }],
    ['h=480', { height: 480 }],
    ['H=480', { height: 480 }],
    ['dpr=2', { dpr: 2 }],
    ['DPR=2', { dpr: 2 }],
    ['fit=contain', { fit: 'contain' }],
    ['Fit=contain', { fit: 'contain' }],
    ['position=top', { position: 'top' }],
    ['pos=top', { position: 'top' }],
    ['gravity=top', { position: 'top' }],
    ['GRAVITY=top', { position: 'top' }],
    ['enlarge=true', { enlarge: true }],
    ['ENLARGE=true', { enlarge: true }],
    ['format=webp', { format: 'webp' }],
    ['fm=webp', { format: 'webp' }],
    ['f=webp', { format: 'webp' }],
    ['FM=webp', { format: 'webp' }],
    ['quality=70', { quality: 70 }],
    ['q=70', { quality: 70 }],
    ['Q=70', { quality: 70 }],
    ['background=ff0000', { background: 'ff0000' }],
    ['bg=ff0000', { background: 'ff0000' }],
    ['BG=ff0000', { background: 'ff0000' }],
    ['blur=2', { blur: 2 }],
    ['sharpen=1.5', { sharpen: 1.5 }],
    ['grayscale=1', { grayscale: true }],
    ['greyscale=1', { grayscale: true }],
    ['GreyScale=1', { grayscale: true }],
    ['rotate=90', { rotate: 90 }],
    ['flip=1', { flip: true }],
    ['flop=1', { flop: true }],
    ['wid%74h=640', { width: 640 }],
  ])('%s', (query, expected) => {
    expect(parse(query)).toEqual(expected);
  });

  it('reads every parameter of one query', () => {
    expect(
      parse('w=640&h=480&dpr=2&fit=contain&pos=top&enlarge=1&fm=png&q=90&bg=000&blur=1&sharpen=2&greyscale=1&rotate=180&flip=1&flop=0'),
    ).toEqual({
      width: 640,
      height: 480,
      dpr: 2,
      fit: 'contain',
      position: 'top',
      enlarge: true,
      format: 'png',
      quality: 90,
      background: '000000',
      blur: 1,
      sharpen: 2,
      grayscale: true,
      rotate: 180,
      flip: true,
      flop: false,
    });
  });
});

describe('value spellings are normalised', () => {
  it.each<[string, ViewerParams]>([
    ['width=0640', { width: 640 }],
    ['h=000000480', { height: 480 }],
    ['q=075', { quality: 75 }],
    ['format=jpg', { format: 'jpeg' }],
    ['format=JPG', { format: 'jpeg' }],
    ['fm=Jpeg', { format: 'jpeg' }],
    ['f=AUTO', { format: 'auto' }],
    ['fit=CONTAIN', { fit: 'contain' }],
    ['pos=Top-Left', { position: 'top-left' }],
    ['enlarge=true', { enlarge: true }],
    ['enlarge=TRUE', { enlarge: true }],
    ['enlarge=1', { enlarge: true }],
    ['enlarge=false', { enlarge: false }],
    ['enlarge=False', { enlarge: false }],
    ['enlarge=0', { enlarge: false }],
    ['flip=true', { flip: true }],
    ['grayscale=0', { grayscale: false }],
    ['bg=FFF', { background: 'ffffff' }],
    ['bg=a1C', { background: 'aa11cc' }],
    ['bg=%23abc', { background: 'aabbcc' }],
    ['bg=%23ABCDEF', { background: 'abcdef' }],
    ['bg=AABBCC80', { background: 'aabbcc80' }],
    ['bg=aabbccFF', { background: 'aabbcc' }],
    ['bg=aabbcc00', { background: 'aabbcc00' }],
    ['dpr=1.50', { dpr: 1.5 }],
    ['dpr=2.0', { dpr: 2 }],
    ['dpr=01.5', { dpr: 1.5 }],
    ['blur=.5', { blur: 0.5 }],
    ['blur=0.50', { blur: 0.5 }],
    ['sharpen=10.0', { sharpen: 10 }],
    ['rotate=270', { rotate: 270 }],
  ])('%s', (query, expected) => {
    expect(parse(query)).toEqual(expected);
  });

  it('shows normalised values in the canonical URI', () => {
    expect(canonicalRequest('/cat.jpg', splitQuery('W=0640&ENLARGE=TRUE&BG=%23ABC&FM=JPG&Q=070'), options).uri).toBe(
      '/cat.jpg/width=640,enlarge=1,background=aabbcc,quality=70,format=jpeg',
    );
  });
});

describe('boundaries', () => {
  it.each<[string, ViewerParams]>([
    ['width=1', { width: 1 }],
    ['width=8192', { width: 8192 }],
    ['height=1', { height: 1 }],
    ['height=8192', { height: 8192 }],
    ['dpr=1', { dpr: 1 }],
    ['dpr=1.1', { dpr: 1.1 }],
    ['dpr=4', { dpr: 4 }],
    ['quality=1', { quality: 1 }],
    ['quality=100', { quality: 100 }],
    ['blur=0.3', { blur: 0.3 }],
    ['blur=100', { blur: 100 }],
    ['sharpen=0.5', { sharpen: 0.5 }],
    ['sharpen=10', { sharpen: 10 }],
    ['rotate=180', { rotate: 180 }],
  ])('accepts %s', (query, expected) => {
    expect(parse(query)).toEqual(expected);
  });

  it('accepts rotate=0 (a no-op the canonical form drops)', () => {
    expect(parse('rotate=0')).toEqual({ rotate: 0 });
  });
});

const INTEGER_WIDTH = 'an integer from 1 to 8192';
const FORMATS = 'one of auto, jpeg, jpg, png, webp, avif, gif, json';
const POSITIONS = 'one of center, top, right, bottom, left, top-left, top-right, bottom-left, bottom-right, entropy, attention, face, auto';
const BOOLEAN = 'true, false, 1 or 0';
const COLOUR = 'a hex colour rgb, rrggbb or rrggbbaa';

describe('invalid values are a 400 naming the parameter, the value and what is allowed', () => {
  it.each<[string, string]>([
    ['width=abc', `Invalid width "abc": expected ${INTEGER_WIDTH}.`],
    ['width=0', `Invalid width "0": expected ${INTEGER_WIDTH}.`],
    ['width=8193', `Invalid width "8193": expected ${INTEGER_WIDTH}.`],
    ['width=-1', `Invalid width "-1": expected ${INTEGER_WIDTH}.`],
    ['width=640.5', `Invalid width "640.5": expected ${INTEGER_WIDTH}.`],
    ['w=640px', `Invalid width "640px": expected ${INTEGER_WIDTH}.`],
    ['w=1e3', `Invalid width "1e3": expected ${INTEGER_WIDTH}.`],
    ['w=%20640', `Invalid width " 640": expected ${INTEGER_WIDTH}.`],
    ['height=0', `Invalid height "0": expected an integer from 1 to 8192.`],
    ['h=99999', `Invalid height "99999": expected an integer from 1 to 8192.`],
    ['dpr=0.9', 'Invalid dpr "0.9": expected a number from 1 to 4 with at most one decimal.'],
    ['dpr=4.1', 'Invalid dpr "4.1": expected a number from 1 to 4 with at most one decimal.'],
    ['dpr=1.25', 'Invalid dpr "1.25": expected a number from 1 to 4 with at most one decimal.'],
    ['dpr=2x', 'Invalid dpr "2x": expected a number from 1 to 4 with at most one decimal.'],
    ['fit=stretch', 'Invalid fit "stretch": expected one of cover, contain, fill, inside, outside, pad.'],
    ['position=middle', `Invalid position "middle": expected ${POSITIONS}.`],
    ['gravity=north', `Invalid position "north": expected ${POSITIONS}.`],
    ['enlarge=yes', `Invalid enlarge "yes": expected ${BOOLEAN}.`],
    ['format=tiff', `Invalid format "tiff": expected ${FORMATS}.`],
    ['fm=svg', `Invalid format "svg": expected ${FORMATS}.`],
    ['quality=0', 'Invalid quality "0": expected an integer from 1 to 100.'],
    ['quality=101', 'Invalid quality "101": expected an integer from 1 to 100.'],
    ['q=high', 'Invalid quality "high": expected an integer from 1 to 100.'],
    ['background=red', `Invalid background "red": expected ${COLOUR}.`],
    ['bg=abcd', `Invalid background "abcd": expected ${COLOUR}.`],
    ['bg=%2312345', `Invalid background "#12345": expected ${COLOUR}.`],
    ['bg=ggg', `Invalid background "ggg": expected ${COLOUR}.`],
    ['blur=0.2', 'Invalid blur "0.2": expected a number from 0.3 to 100 with at most one decimal.'],
    ['blur=100.1', 'Invalid blur "100.1": expected a number from 0.3 to 100 with at most one decimal.'],
    ['sharpen=0.4', 'Invalid sharpen "0.4": expected a number from 0.5 to 10 with at most one decimal.'],
    ['sharpen=10.1', 'Invalid sharpen "10.1": expected a number from 0.5 to 10 with at most one decimal.'],
    ['grayscale=2', `Invalid grayscale "2": expected ${BOOLEAN}.`],
    ['greyscale=yes', `Invalid grayscale "yes": expected ${BOOLEAN}.`],
    ['rotate=45', 'Invalid rotate "45": expected one of 0, 90, 180, 270.'],
    ['rotate=-90', 'Invalid rotate "-90": expected one of 0, 90, 180, 270.'],
    ['flip=no', `Invalid flip "no": expected ${BOOLEAN}.`],
    ['flop=on', `Invalid flop "on": expected ${BOOLEAN}.`],
  ])('%s', (query, message) => {
    const error = errorOf(query);
    expect(error.code).toBe('invalid_parameter');
    expect(error.message).toBe(message);
  });

  it('rejects an invalid value even beside format=json, which drops every other op', () => {
    expect(errorOf('format=json&width=abc').message).toBe(`Invalid width "abc": expected ${INTEGER_WIDTH}.`);
  });

  it('rejects a query that is not valid percent-encoding', () => {
    for (const query of ['width=%E0%A4%A', 'w=%', 'bg=%zz', '%C3=1']) {
      expect(errorOf(query).code).toBe('invalid_parameter');
    }
  });
});

describe('empty values', () => {
  /** Every spelling of every parameter that has no value when given empty (`trim` alone is trim=10). */
  const names = VIEWER_CASES.filter((one) => !one.case.samples.includes('')).flatMap(({ name, aliases }) => [name, ...aliases]);

  it.each(names)('%s= is a 400', (name) => {
    // Negotiated, as at the edge: a watermark's or template's name is checked when its version is added (a
    // deployment with templates: one without leaves their names to its origin).
    const error = errorOf(`${name}=`, CASE_OPTIONS, { accept: '' });
    expect(error.code).toBe('invalid_parameter');
    expect(error.message).toMatch(/^Invalid [a-z0-9_-]+ "": expected .+\.$/);
  });

  it.each(['grayscale', 'flip', 'width'])('a bare %s (no "=") is a 400 too', (name) => {
    expect(errorOf(`w=10&${name}`).code).toBe('invalid_parameter');
  });
});

describe('a parameter given twice', () => {
  it.each([
    'width=640&width=640',
    'width=640&width=320',
    'w=640&width=640',
    'W=640&w=640',
    'gravity=top&pos=top',
    'position=top&gravity=left',
    'fm=png&f=png',
    'format=auto&fm=webp',
    'greyscale=1&grayscale=1',
    'q=80&quality=80',
    'bg=fff&background=ffffff',
    'flip=0&flip=1',
  ])('%s is a 400', (query) => {
    const error = errorOf(query);
    expect(error.code).toBe('invalid_parameter');
    expect(error.message).toMatch(/given more than once/);
  });

  it('names the canonical parameter in the message', () => {
    expect(errorOf('w=640&WIDTH=320').message).toBe('Invalid width "320": expected a single value (width is given more than once).');
  });

  it('is fine for unknown parameters', () => {
    expect(parse('utm=1&utm=2&w=10')).toEqual({ width: 10 });
  });
});

describe('unknown parameters', () => {
  it.each(['utm_source=newsletter', 'v=3', 'constructor=1', '__proto__=1', 'toString=x', 'widths=4', '=5', 'cb', 'x=%20'])(
    'ignores %s',
    (query) => {
      expect(parse(query)).toEqual({});
      expect(canonicalRequest('/cat.jpg', splitQuery(query), options).uri).toBe('/cat.jpg/original');
    },
  );

  it('keeps the known parameters beside them', () => {
    expect(canonicalRequest('/cat.jpg', splitQuery('a=1&w=640&constructor=b&fm=png'), options).uri).toBe('/cat.jpg/width=640,format=png');
  });

  it.each(['accept=avif', 'accept=webp', 'ACCEPT=webp', 'accept=jpeg', 'accept=avif&accept=webp'])(
    'ignores %s: accept is written by the edge only, from the Accept header',
    (query) => {
      expect(parse(query)).toEqual({});
      expect(parse(query, { maxDimension: 100, presets: { a: { width: '10' } }, presetsOnly: true })).toEqual({});
      expect(canonicalRequest('/cat.jpg', splitQuery(query), options).uri).toBe('/cat.jpg/original');
    },
  );
});

describe('messages stay short', () => {
  it.each(['width', 'fit', 'bg', 'blur', 'format'])('truncates a long %s value', (name) => {
    const value = 'x'.repeat(39) + 'yz'.repeat(5000);
    const error = errorOf(`${name}=${value}`);
    expect(error.code).toBe('invalid_parameter');
    expect(error.message).toContain(`"${'x'.repeat(39)}y…"`);
    expect(error.message).not.toContain('yz');
    expect(error.message.length).toBeLessThan(200);
  });

  it('truncates a long malformed query component', () => {
    const error = errorOf('w=' + '%zz'.repeat(1000));
    expect(error.message.length).toBeLessThan(200);
  });
});

describe('maxDimension option', () => {
  const small: GrammarOptions = { maxDimension: 4000 };

  it.each(['width=4000', 'height=4000', 'w=1'])('accepts %s up to the limit', (query) => {
    expect(() => parse(query, small)).not.toThrow();
  });

  it.each<[string, string]>([
    ['width=4001', 'Invalid width "4001": expected an integer from 1 to 4000.'],
    ['h=8192', 'Invalid height "8192": expected an integer from 1 to 4000.'],
  ])('rejects %s above it, and says so', (query, message) => {
    const error = errorOf(query, small);
    expect(error.code).toBe('invalid_parameter');
    expect(error.message).toBe(message);
  });
});

// ------------------------------------------------- composition: fit=pad, fill, trim, crop, border

const uriOf = (query: string, opts: GrammarOptions = options) => canonicalRequest('/cat.jpg', splitQuery(query), opts).uri;

describe('composition: canonical spellings', () => {
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
    expect(parseCanonicalUri(uri, options).uri).toBe(uri);
    expect(parseCanonicalUri(uri, options).ops).toEqual({ width: 10, trim: 5, crop: '0,0,1,0.5', border: '4,ffffff' });
    for (const other of [
      '/cat.jpg/crop=0,0,1,.5',
      '/cat.jpg/border=4',
      '/cat.jpg/fit=pad,width=1,height=1',
      '/cat.jpg/crop=0,0,1,1,width=5',
    ]) {
      expect(() => parseCanonicalUri(other, options), other).toThrow();
    }
  });
});

describe('composition: no-ops drop out', () => {
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

describe('composition: values outside what is allowed are a 400 naming the parameter', () => {
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

// ------------------------------------------------- focal point: fp

describe('fp: the focal point of a cover crop', () => {
  it.each([
    ['w=200&h=100&fp=.25,0.750', '/cat.jpg/width=200,height=100,fp=0.25,0.75'],
    ['w=200&h=100&FP=1.0000,0', '/cat.jpg/width=200,height=100,fp=1,0'],
    ['w=200&h=100&fit=cover&fp=0.3333,0', '/cat.jpg/width=200,height=100,fp=0.3333,0'],
    // The point wins over a position or a strategy: they would place the same crop.
    ['w=200&h=100&gravity=top-left&fp=0.5,0.5', '/cat.jpg/width=200,height=100,fp=0.5,0.5'],
    ['w=200&h=100&fp=0.5,0.5&position=attention', '/cat.jpg/width=200,height=100,fp=0.5,0.5'],
    ['w=200&h=100&fp=0.5,0.5&pos=face', '/cat.jpg/width=200,height=100,fp=0.5,0.5'],
    ['w=200&h=100&fp=0.5,0.5&gravity=auto', '/cat.jpg/width=200,height=100,fp=0.5,0.5'],
    // In op order, after position.
    ['rotate=90&fp=0.1,0.9&crop=0,0,0.5,1&h=10&w=10', '/cat.jpg/width=10,height=10,fp=0.1,0.9,rotate=90,crop=0,0,0.5,1'],
    // Contain places the image with position; a focal point has nothing to crop.
    ['w=10&h=10&fit=contain&pos=left&fp=0.1,0.1', '/cat.jpg/width=10,height=10,fit=contain,position=left'],
  ])('%s is %s', (query, uri) => {
    expect(uriOf(query)).toBe(uri);
  });

  it.each([
    ['fp=0.2,0.8', 'without a box'],
    ['w=10&fp=0.2,0.8', 'with one side'],
    ['w=10&h=10&fit=contain&fp=0.2,0.8', 'with contain'],
    ['w=10&h=10&fit=pad&fill=blur&fp=0.2,0.8', 'with a blurred fill'],
    ['w=10&h=10&fit=fill&fp=0.2,0.8', 'with fill'],
    ['w=10&h=10&fit=inside&fp=0.2,0.8', 'with inside'],
    ['w=10&h=10&fit=outside&fp=0.2,0.8', 'with outside'],
    ['w=10&h=10&fp=0.2,0.8&format=json', 'with format=json'],
  ])('%s drops out (%s)', (query) => {
    expect(uriOf(query)).not.toMatch(/fp=/);
  });

  it('two spellings of one crop share one URI, and a canonical URI with fp parses back to itself only', () => {
    expect(uriOf('w=10&h=10&fp=.5,.50&pos=top')).toBe(uriOf('h=10&fp=0.5000,0.5&w=10'));
    const uri = '/cat.jpg/width=10,height=10,fp=0.25,0.75,rotate=90';
    expect(parseCanonicalUri(uri, options).ops).toEqual({ width: 10, height: 10, fp: '0.25,0.75', rotate: 90 });
    for (const other of [
      '/cat.jpg/width=10,height=10,fp=.25,0.75',
      '/cat.jpg/width=10,fp=0.25,0.75',
      '/cat.jpg/width=10,height=10,position=top,fp=0.25,0.75',
      '/cat.jpg/width=10,height=10,fp=0.25',
      '/cat.jpg/fp=0.25,0.75,width=10,height=10',
    ]) {
      expect(() => parseCanonicalUri(other, options), other).toThrow();
    }
  });

  const POINT = 'x,y: fractions of the image';
  it.each([
    ['fp=0.5', `Invalid fp "0.5": expected ${POINT}.`],
    ['fp=a,b', `Invalid fp "a,b": expected ${POINT}.`],
    ['fp=1.5,0', `Invalid fp "1.5,0": expected ${POINT}.`],
    ['fp=0,1.0001', `Invalid fp "0,1.0001": expected ${POINT}.`],
    ['fp=NaN,NaN', `Invalid fp "NaN,NaN": expected ${POINT}.`],
    ['fp=Infinity,0', `Invalid fp "Infinity,0": expected ${POINT}.`],
    ['fp=1e-1,0', `Invalid fp "1e-1,0": expected ${POINT}.`],
    ['fp=0x1,0', `Invalid fp "0x1,0": expected ${POINT}.`],
    ['fp=-0.1,0.5', `Invalid fp "-0.1,0.5": expected ${POINT}.`],
    ['fp=0.5,%200.5', `Invalid fp "0.5, 0.5": expected ${POINT}.`],
    ['fp=0.00001,0.5', `Invalid fp "0.00001,0.5": expected ${POINT}.`],
    ['fp=0.5,0.5,0.5', `Invalid fp "0.5,0.5,0.5": expected ${POINT}.`],
    ['fp=,', `Invalid fp ",": expected ${POINT}.`],
    ['fp=', `Invalid fp "": expected ${POINT}.`],
    ['fp', `Invalid fp "": expected ${POINT}.`],
    ['fp=0.1,0.1&fp=0.1,0.1', 'Invalid fp "0.1,0.1": expected a single value (fp is given more than once).'],
  ])('%s', (query, message) => {
    const error = errorOf(query);
    expect(error.code).toBe('invalid_parameter');
    expect(error.message).toBe(message);
  });

  it('a bad fp is refused even where it would not matter, as every bad value is', () => {
    expect(errorOf('w=10&fit=inside&fp=2,2').message).toBe(`Invalid fp "2,2": expected ${POINT}.`);
  });

  it('a long hostile fp is refused in linear time, and quoted back short', () => {
    const start = performance.now();
    const error = errorOf(`fp=0.${'5'.repeat(50_000)},0.5`);
    expect(error.message).toBe(`Invalid fp "0.${'5'.repeat(38)}…": expected ${POINT}.`);
    expect(errorOf(`fp=${',1'.repeat(20_000)}`).code).toBe('invalid_parameter');
    expect(performance.now() - start).toBeLessThan(1_000);
  });
});
