// What the property and fuzz tests know of each parameter a viewer may give:
// its values and their spellings, the spellings that change nothing, a few
// valid samples and values to refuse. One entry per parameter, keyed like the
// grammar's table (lambda/grammar/params.ts): the mapped type makes tsc fail on
// a parameter without an entry, and test/grammar/param-cases.test.ts fails at
// run time. Names and aliases are read from the grammar, never listed here.
//
// The entries are the tests' own knowledge, written independently of the
// grammar's records: a no-op here that the grammar keeps in the canonical URI
// fails the canonical-form property, rather than agreeing with it.

import fc from 'fast-check';
import {
  POSITIONS,
  PRESET_SPELLINGS,
  SIGNATURE_PARAMS,
  numberedSlots,
  VIEWER_PARAMS,
  type GrammarOptions,
  type NumberedOverlayOps,
  type OverlayOps,
  type ViewerParams,
} from '../../lambda/grammar/index';

export interface ParamCase {
  /** A valid value in its plainest spelling (a canonical URI's, where it holds one), under CASE_OPTIONS. */
  value: fc.Arbitrary<string>;
  /** Spellings a viewer may use for a plain value, each meaning the same. */
  spell(text: string): fc.Arbitrary<string>;
  /** Spellings that change nothing whatever else a request says: a request with one is the request without it. */
  noOps: string[];
  /** Valid spellings a fuzzer mixes with hostile ones: the edges of the range and odd forms. */
  samples: string[];
  /** Values refused as the wrong kind of value. */
  wrongType: string[];
  /** Values of the right kind, refused for their size or range. */
  outOfRange: string[];
}

// ---------------------------------------------------------------- spellings

/** Random upper/lower case of each letter. */
export const anyCase = (text: string): fc.Arbitrary<string> =>
  fc.array(fc.boolean(), { minLength: text.length, maxLength: text.length }).map((upper) =>
    text
      .split('')
      .map((c, i) => (upper[i] ? c.toUpperCase() : c))
      .join(''),
  );

/** An integer's text with leading zeros, up to the 9 digits the grammar reads. */
const zeroPadded = (text: string): fc.Arbitrary<string> => fc.nat(9 - text.length).map((zeros) => '0'.repeat(zeros) + text);

/** `1.5` as `1.5`, `01.50`; `2` as `2.0`; `0.5` as `.5` (at most 4 integer digits, as the grammar reads). */
const decimalSpelling = (text: string): fc.Arbitrary<string> => {
  const [whole = '', fraction = ''] = text.split('.');
  return fc
    .record({ zeros: fc.nat(4 - whole.length), point: fc.boolean(), trailing: fc.nat(3), bare: fc.boolean() })
    .map(({ zeros, point, trailing, bare }) => {
      const integer = whole === '0' && fraction && bare ? '' : '0'.repeat(zeros) + whole;
      if (fraction) return `${integer}.${fraction}${'0'.repeat(trailing)}`;
      return point ? `${integer}.0${'0'.repeat(trailing)}` : integer;
    });
};

/** `0.25,1` as `.25,1.0`, `0.2500,1.`: each fraction with or without its leading zero, with trailing zeros up to four decimals. */
const fractionsSpelling = (text: string): fc.Arbitrary<string> =>
  fc
    .tuple(
      ...text.split(',').map((part) => {
        const [whole = '', fraction = ''] = part.split('.');
        return fc
          .record({ bare: fc.boolean(), point: fc.boolean(), trailing: fc.nat(4 - fraction.length) })
          .map(({ bare, point, trailing }) => {
            const decimals = fraction + '0'.repeat(trailing);
            const integer = whole === '0' && bare && decimals ? '' : whole;
            return decimals || point ? `${integer}.${decimals}` : integer;
          });
      }),
    )
    .map((parts) => parts.join(','));

const booleanSpelling = (text: string): fc.Arbitrary<string> =>
  (text === '1' ? fc.constantFrom('1', 'true') : fc.constantFrom('0', 'false')).chain(anyCase);

/** `rrggbb` / `rrggbbaa` as `#RrGgBb`, `rrggbbff`, `rgb`. */
const colourSpelling = (text: string): fc.Arbitrary<string> => {
  const forms = [text];
  if (text.length === 6) {
    forms.push(text + 'ff');
    if (/^(.)\1(.)\2(.)\3$/.test(text)) forms.push(text[0]! + text[2]! + text[4]!);
  }
  return fc.tuple(fc.constantFrom(...forms).chain(anyCase), fc.boolean()).map(([hex, hash]) => (hash ? '#' + hex : hex));
};

/** `8,ff0000` as `08,#F00`; a black border's width alone. */
const borderSpelling = (text: string): fc.Arbitrary<string> => {
  const [width = '', colour = ''] = text.split(',');
  const spelled = fc.tuple(zeroPadded(width), colourSpelling(colour)).map(([w, c]) => `${w},${c}`);
  return colour === '000000' ? fc.oneof(spelled, zeroPadded(width)) : spelled;
};

// ---------------------------------------------------------------- values

/** Numbers from `min` to `max` in tenths, as the grammar writes them. */
export const tenths = (min: number, max: number) => fc.integer({ min: min * 10, max: max * 10 }).map((n) => String(n / 10));
/** Numbers from `min` to `max` in hundredths, as the grammar writes them. */
const hundredths = (min: number, max: number) => fc.integer({ min: Math.round(min * 100), max: max * 100 }).map((n) => String(n / 100));
const choice = (...values: string[]) => fc.constantFrom(...values);
const hexDigits = (n: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${n}}$`));
const integers = (min: number, max: number) => fc.integer({ min, max }).map(String);
/** Fractions of the image in ten-thousandths, written as the grammar writes them. */
const fraction = (parts: number) => String(parts / 10000);

const colour = fc.oneof(
  hexDigits(6),
  hexDigits(3).map((rgb) => rgb.replace(/(.)/g, '$1$1')),
  hexDigits(8).filter((hex) => !hex.endsWith('ff')),
);

/** A region inside the image: `x,y,width,height`, none of them empty. */
const region = fc
  .tuple(fc.integer({ min: 1, max: 10000 }), fc.integer({ min: 1, max: 10000 }))
  .chain(([width, height]) => fc.tuple(fc.nat(10000 - width), fc.nat(10000 - height), fc.constant(width), fc.constant(height)))
  .map((parts) => parts.map(fraction).join(','));

/** The watermarks the cases' deployment names. */
const WATERMARKS = { logo: '1a2b3c4d', badge: '0f0f0f0f' };
/** The card templates the cases' deployment names. */
const TEMPLATES = { og: '5e6f7a8b', banner: '01234567' };

/** Grammar options under which every case's value is valid. */
export const CASE_OPTIONS: GrammarOptions = { maxDimension: 8192, watermarks: WATERMARKS, templates: TEMPLATES };

const BOOLEAN_CASE: Omit<ParamCase, 'outOfRange' | 'wrongType'> = {
  value: choice('0', '1'),
  spell: booleanSpelling,
  noOps: ['0', 'false', 'FALSE'],
  samples: ['true', 'false', '1', '0'],
};

/** A colour adjustment's factor from 0 to 10, two decimals. */
const FACTOR_CASE: Pick<ParamCase, 'value' | 'spell'> = { value: hundredths(0, 10), spell: decimalSpelling };

const WATERMARK_CASE: ParamCase = {
  value: choice(...Object.keys(WATERMARKS)),
  spell: anyCase,
  noOps: [],
  samples: Object.keys(WATERMARKS),
  wrongType: ['nope', '__proto__'],
  outOfRange: [],
};

/** A text's cases, the first overlay slot's; numberedSlots names them for the others. */
const TEXT_CASES: { [name in Exclude<keyof OverlayOps, 'watermark'>]-?: ParamCase } = {
  text: {
    // Plain as a query writes it (the samples hold the odd characters); a text has no other spelling.
    value: fc.stringMatching(/^[A-Za-z0-9._~-]{1,40}$/),
    spell: fc.constant,
    noOps: [''],
    samples: ['', 'Hello', 'Hello%20World', '%3Cb%3Ex%3C%2Fb%3E%26amp%3B', '%EC%95%88%EB%85%95', 'a,width=5', '%F0%9F%98%80'],
    // The edge reads any text: the origin refuses one too long, or with a control character (its limits: render.ts).
    wrongType: [],
    outOfRange: [],
  },
  // Each text-* op matters beside a text only: alone, any value is the original.
  'text-size': {
    value: integers(4, 512),
    spell: zeroPadded,
    noOps: ['48', '048'],
    samples: ['4', '512'],
    wrongType: ['big', '12px'],
    outOfRange: ['3', '513'],
  },
  'text-color': {
    value: colour,
    spell: colourSpelling,
    noOps: ['000000', '000'],
    samples: ['fff', '%23FF000080'],
    wrongType: ['red'],
    outOfRange: ['ff'],
  },
  'text-font': {
    value: choice('sans', 'sans-bold'),
    spell: anyCase,
    noOps: ['sans', 'SANS'],
    samples: ['sans', 'sans-bold'],
    wrongType: [],
    outOfRange: [],
  },
  'text-align': {
    value: choice('left', 'center', 'right'),
    spell: anyCase,
    noOps: ['left'],
    samples: ['left', 'center', 'right'],
    wrongType: ['middle', 'justify'],
    outOfRange: [],
  },
  'text-position': {
    value: choice('center', 'top', 'bottom-right', 'left'),
    spell: anyCase,
    noOps: ['center'],
    samples: ['top-left', 'bottom'],
    wrongType: ['face', 'entropy', 'auto', 'middle'],
    outOfRange: [],
  },
  'text-pad': {
    value: integers(0, 4096),
    spell: zeroPadded,
    noOps: ['0', '00'],
    samples: ['0', '4096'],
    wrongType: ['1.5', 'x'],
    outOfRange: ['4097', '-1'],
  },
  'text-shadow': { value: integers(0, 64), spell: zeroPadded, noOps: ['0'], samples: ['1', '64'], wrongType: ['soft'], outOfRange: ['65'] },
  'text-width': {
    value: integers(1, 8192),
    spell: zeroPadded,
    noOps: [],
    samples: ['1', '8192'],
    wrongType: ['wide'],
    outOfRange: ['0', '8193'],
  },
};

/** Every parameter a viewer may give, in the grammar's order. */
export const PARAM_CASES: { [name in keyof ViewerParams]-?: ParamCase } = {
  width: {
    value: integers(1, 8192),
    spell: zeroPadded,
    noOps: [],
    samples: ['16', '100', '640', '0640', '3840', 'auto'],
    wrongType: ['abc', '1e3', '0x10', '10px', '+5', '5.0', ' 5', 'NaN'],
    outOfRange: ['0', '-1', '8193', '999999999', '4294967297'],
  },
  height: {
    value: integers(1, 8192),
    spell: zeroPadded,
    noOps: [],
    samples: ['16', '480', '1080'],
    wrongType: ['ten', 'Infinity', '[]'],
    outOfRange: ['0', '-8192', '10000'],
  },
  dpr: {
    value: tenths(1, 4),
    spell: decimalSpelling,
    noOps: ['1', '1.0', '01'],
    samples: ['1', '1.5', '2', '3.0', 'auto'],
    wrongType: ['two', '2x', '1,5', '1e0'],
    outOfRange: ['0', '0.9', '4.1', '5', '1.25', '10000'],
  },
  fit: {
    value: choice('cover', 'contain', 'fill', 'inside', 'outside'),
    spell: (text) => (text === 'contain' ? choice('contain', 'pad') : fc.constant(text)).chain(anyCase),
    noOps: ['cover', 'COVER'],
    samples: ['cover', 'contain', 'inside', 'outside', 'fill', 'pad'],
    wrongType: ['1', 'stretch', 'cover;drop', 'co ver'],
    outOfRange: [],
  },
  fill: {
    value: choice('background', 'blur'),
    spell: anyCase,
    noOps: ['background'],
    samples: ['blur', 'background'],
    wrongType: ['solid', '1'],
    outOfRange: [],
  },
  position: {
    value: choice(...POSITIONS),
    spell: anyCase,
    noOps: ['center', 'Center'],
    samples: ['center', 'top-left', 'entropy', 'attention'],
    wrongType: ['north', '5', 'top left', 'smart'],
    outOfRange: [],
  },
  fp: {
    value: fc.tuple(fc.nat(10000), fc.nat(10000)).map(([x, y]) => `${fraction(x)},${fraction(y)}`),
    spell: fractionsSpelling,
    noOps: [],
    samples: ['0,0', '.25,0.75', '1,1.0000', '0.3333,0.5'],
    wrongType: ['0.5', 'a,b', '0.5;0.5'],
    outOfRange: ['1.5,0', '0,1.0001', '-0.1,0'],
  },
  enlarge: { ...BOOLEAN_CASE, wrongType: ['yes', 'on', 'truthy', '2'], outOfRange: [] },
  rotate: {
    value: choice('0', '90', '180', '270'),
    spell: zeroPadded,
    noOps: ['0', '000'],
    samples: ['0', '90', '180', '270'],
    wrongType: ['ninety', '90deg', '9e1'],
    outOfRange: ['45', '360', '-90', '271', '1000000000'],
  },
  flip: { ...BOOLEAN_CASE, wrongType: ['maybe', 'null'], outOfRange: ['-1'] },
  flop: { ...BOOLEAN_CASE, wrongType: ['y'], outOfRange: ['10'] },
  trim: {
    value: integers(0, 255),
    // A bare `trim` is trim=10.
    spell: (text) => (text === '10' ? fc.oneof(zeroPadded(text), fc.constant('')) : zeroPadded(text)),
    noOps: [],
    samples: ['', '0', '10', '255'],
    wrongType: ['all', '1.5'],
    outOfRange: ['256', '-1'],
  },
  crop: {
    value: region,
    spell: fractionsSpelling,
    noOps: ['0,0,1,1', '0.0,.0,1.0000,1'],
    samples: ['0,0,1,1', '0.25,0,0.5,1', '.1,.2,.3,.4'],
    wrongType: ['0,0,1', 'a,b,c,d', '0;0;1;1'],
    outOfRange: ['0.5,0,0.6,1', '0,0,0,1', '1,0,0,1'],
  },
  segment: {
    value: choice('foreground'),
    spell: anyCase,
    noOps: [],
    samples: ['foreground', 'Foreground'],
    wrongType: ['background', '1', 'true', 'subject'],
    outOfRange: [],
  },
  grayscale: { ...BOOLEAN_CASE, wrongType: ['grey'], outOfRange: ['3'] },
  blur: {
    value: tenths(0.3, 100),
    spell: decimalSpelling,
    noOps: [],
    samples: ['0.3', '2', '100'],
    wrongType: ['soft', '2px'],
    outOfRange: ['0', '0.2', '100.1', '-1', '1.25'],
  },
  sharpen: {
    value: tenths(0.5, 10),
    spell: decimalSpelling,
    noOps: [],
    samples: ['0.5', '10'],
    wrongType: ['x'],
    outOfRange: ['0.4', '10.1', '99999'],
  },
  // Cloudflare's factors: 1 changes nothing, and a brightness or contrast of 0 is ignored as Cloudflare ignores it.
  brightness: {
    ...FACTOR_CASE,
    noOps: ['1', '1.00', '0', '0.0'],
    samples: ['0', '0.5', '1.25', '10'],
    wrongType: ['bright', '1,5', '1e0'],
    outOfRange: ['-1', '10.01', '1.255', '11'],
  },
  contrast: {
    ...FACTOR_CASE,
    noOps: ['1', '01.0', '0'],
    samples: ['0.75', '2', '9.99'],
    wrongType: ['high', '50%'],
    outOfRange: ['10.5', '0.001'],
  },
  saturation: { ...FACTOR_CASE, noOps: ['1', '1.000'], samples: ['0', '0.3', '1.8'], wrongType: ['grey', '.'], outOfRange: ['12', '-0.5'] },
  gamma: {
    value: hundredths(0.34, 3),
    spell: decimalSpelling,
    noOps: ['1', '1.0'],
    samples: ['0.34', '0.5', '2.2', '3'],
    wrongType: ['srgb', '2.2.2'],
    outOfRange: ['0', '0.33', '3.01', '-1'],
  },
  watermark: WATERMARK_CASE,
  template: {
    value: choice(...Object.keys(TEMPLATES)),
    spell: anyCase,
    noOps: [],
    samples: Object.keys(TEMPLATES),
    wrongType: ['nope', '__proto__'],
    outOfRange: [],
  },
  // The hex of a JSON object, read at the origin: the edge only lower-cases it.
  fills: {
    value: fc.integer({ min: 1, max: 40 }).chain((n) => hexDigits(2 * n)),
    spell: anyCase,
    noOps: [''],
    samples: ['7b227469746c65223a224869227d', '7B7D', ''],
    wrongType: [],
    outOfRange: [],
  },
  ...TEXT_CASES,
  ...(numberedSlots({ watermark: WATERMARK_CASE, ...TEXT_CASES }) as { [name in keyof NumberedOverlayOps]-?: ParamCase }),
  border: {
    value: fc.tuple(integers(1, 4095), colour).map(([width, hex]) => `${width},${hex}`),
    spell: borderSpelling,
    noOps: [],
    samples: ['1', '8,fff', '20,%23FF000080'],
    wrongType: ['thick', '5,red'],
    outOfRange: ['0', '4096'],
  },
  background: {
    value: colour,
    spell: colourSpelling,
    noOps: [],
    samples: ['fff', '%23FF000080', 'ff0000ff', '00000000'],
    wrongType: ['red', 'rgb(0,0,0)', '#ggg', 'transparent'],
    outOfRange: ['ff', 'ffff', 'fffff', 'fffffffff'],
  },
  quality: {
    value: integers(1, 100),
    spell: zeroPadded,
    noOps: [],
    samples: ['1', '50', '80', '100', 'auto', 'AUTO'],
    wrongType: ['high', 'max'],
    outOfRange: ['0', '101', '-1'],
  },
  max_bytes: {
    value: integers(1, 100_000_000),
    spell: zeroPadded,
    noOps: [],
    samples: ['1', '5000', '100000000'],
    wrongType: ['10kb', '1e6', '5.5'],
    outOfRange: ['0', '100000001'],
  },
  metadata: {
    value: choice('none', 'copyright', 'keep'),
    spell: anyCase,
    noOps: ['none', 'None'],
    samples: ['none', 'copyright', 'keep'],
    wrongType: ['all', '1', 'gps'],
    outOfRange: [],
  },
  hdr: {
    value: choice('keep', 'drop'),
    spell: anyCase,
    noOps: ['keep', 'KEEP'],
    samples: ['keep', 'drop'],
    wrongType: ['sdr', '1', 'false'],
    outOfRange: [],
  },
  format: {
    value: fc.oneof(
      { arbitrary: choice('auto', 'jpeg', 'png', 'webp', 'avif', 'gif'), weight: 10 },
      { arbitrary: fc.constant('json'), weight: 1 },
    ),
    spell: (text) => (text === 'jpeg' ? choice('jpeg', 'jpg') : fc.constant(text)).chain(anyCase),
    noOps: [],
    samples: ['auto', 'webp', 'avif', 'jpg', 'png', 'gif', 'json'],
    wrongType: ['svg', 'bmp', 'tiff', 'image/png', 'webp;', 'jxl'],
    outOfRange: [],
  },
};

/** Each parameter a viewer may give with its case: name and aliases from the grammar. */
export const VIEWER_CASES = VIEWER_PARAMS.map((param) => ({
  name: param.name as string,
  aliases: param.aliases,
  case: PARAM_CASES[param.name as keyof ViewerParams],
}));

/** Every name a viewer's query may use that means something: the parameters' spellings, a preset's, a signature's. */
export const KNOWN_SPELLINGS: string[] = [
  ...VIEWER_CASES.flatMap(({ name, aliases }) => [name, ...aliases]),
  ...PRESET_SPELLINGS,
  ...SIGNATURE_PARAMS,
];

/** `[spelling, value]` for every spelling of every parameter and each of its samples. */
export const SAMPLE_PAIRS: (readonly [string, string])[] = VIEWER_CASES.flatMap(({ name, aliases, case: { samples } }) =>
  [name, ...aliases].flatMap((spelling) => samples.map((value) => [spelling, value] as const)),
);
