// Properties of the URL contract over generated requests: the canonical form
// is a fixed point, every spelling of one request meets at one canonical URI,
// viewerQuery inverts canonicalisation, and no input escapes as anything but
// a GrammarError (a 400, never a 500).

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  OVERLAY_SLOTS,
  canonicalRequest,
  decodeKeyPath,
  encodeKeyPath,
  isGrammarError,
  parseCanonicalUri,
  splitQuery,
  viewerQuery,
  type GrammarOptions,
} from '../../lambda/grammar/index';
import { anyCase, CASE_OPTIONS, tenths, VIEWER_CASES } from '../support/param-cases';

const options = CASE_OPTIONS;
const RUNS = { numRuns: 2000 };

// ---------------------------------------------------------------- spellings

/** The parameters a viewer may give, each with its values and spellings (test/support/param-cases.ts). */
const SPECS = VIEWER_CASES;

/** A request's meaning: some parameters, each with one value (as `[spec index, canonical text]`). */
type Meaning = [number, string][];

const meaning: fc.Arbitrary<Meaning> = fc
  .subarray(SPECS.map((_, i) => i))
  .chain((indexes) => fc.tuple(...indexes.map((i) => SPECS[i]!.case.value.map((text): [number, string] => [i, text]))));

/** `m` without the values that change nothing: the same request. */
const withoutNoOps = (m: Meaning): Meaning => m.filter(([i, text]) => !SPECS[i]!.case.noOps.includes(text));

/** Some parameters `m` does not give, each with one of its no-op spellings (`flip=false`, `rotate=000`). */
const noOpsBeside = (m: Meaning): fc.Arbitrary<[number, string][]> =>
  fc
    .subarray(SPECS.map((_, i) => i).filter((i) => SPECS[i]!.case.noOps.length > 0 && !m.some(([given]) => given === i)))
    .chain((indexes) =>
      fc.tuple(...indexes.map((i) => fc.constantFrom(...SPECS[i]!.case.noOps).map((text): [number, string] => [i, text]))),
    );

/** Percent-encodes every character (a legal, if odd, spelling of any query component). */
const percentEncodeAll = (text: string) =>
  Array.from(text)
    .map((c) => (c.length === 1 && c < '\u0080' ? '%' + c.charCodeAt(0).toString(16).padStart(2, '0') : encodeURIComponent(c)))
    .join('');

/** Names a viewer's query may hold that mean nothing, `accept` (which only the edge writes) among them. */
const UNKNOWN = fc.tuple(
  fc.oneof(fc.constantFrom('utm_source', 'v', 'cb', 'x', 'widths', 'constructor'), anyCase('accept')),
  fc.oneof(fc.string(), fc.constantFrom('avif', 'webp')),
);

/** One random viewer query meaning `m`: aliases, name casing, value spellings, order, escapes, unknown extras. */
const spelling = (m: Meaning): fc.Arbitrary<string> =>
  fc
    .tuple(
      fc.tuple(
        ...m.map(([i, text]) => {
          const spec = SPECS[i]!;
          return fc.record({
            name: fc.constantFrom(spec.name, ...spec.aliases).chain(anyCase),
            value: spec.case.spell(text),
            escapeAll: fc.boolean(),
          });
        }),
      ),
      fc.array(UNKNOWN, { maxLength: 2 }),
    )
    .chain(([known, unknown]) =>
      fc.shuffledSubarray(
        [
          ...known.map(({ name, value, escapeAll }) => `${name}=${escapeAll ? percentEncodeAll(value) : encodeURIComponent(value)}`),
          ...unknown.map(([name, value]) => `${name}=${encodeURIComponent(value)}`),
        ],
        { minLength: known.length + unknown.length },
      ),
    )
    .map((parts) => parts.join('&'));

/** The plainest spelling of `m`: canonical names and values, in the fixed order. */
const plainQuery = (m: Meaning) =>
  [...m]
    .sort((a, b) => a[0] - b[0])
    .map(([i, text]) => `${SPECS[i]!.name}=${text}`)
    .join('&');

// --------------------------------------------------------------------- keys

const KEY_CHARACTERS = fc.oneof(
  fc.constantFrom(' ', '+', '%', '#', '?', '&', '=', ',', ';', ':', '@', '~', "'", '(', ')', '*', '!', '.', '%2F', '%20'),
  fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
);

const segment = fc
  .string({ unit: KEY_CHARACTERS, minLength: 1, maxLength: 12 })
  .map((text) => text.replace(/[\u0000-\u001f\u007f-\u009f/]/g, '_'))
  .filter((text) => text !== '.' && text !== '..');

const utf8Bytes = (text: string) => Buffer.byteLength(text, 'utf8');

const key: fc.Arbitrary<string> = fc
  .array(segment, { minLength: 1, maxLength: 5 })
  .map((segments) => segments.join('/'))
  .filter((k) => utf8Bytes(k) <= 1024);

const ACCEPTS = fc.constantFrom(
  '',
  '*/*',
  'image/webp,*/*',
  'image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8',
  'image/png,image/*;q=0.8,*/*;q=0.5',
  'image/avif,*/*',
);
const negotiation = fc.record({ accept: ACCEPTS, avif: fc.boolean() });

// --------------------------------------------------------------- properties

describe('properties', () => {
  it('keys round-trip through their RFC 3986 encoding', () => {
    fc.assert(
      fc.property(key, (k) => {
        const encoded = encodeKeyPath(k);
        expect(encoded).toMatch(/^(\/([A-Za-z0-9\-._~]|%[0-9A-F]{2})+)+$/);
        expect(decodeKeyPath(encoded)).toBe(k);
      }),
      RUNS,
    );
  });

  it('(a) canonicalisation is idempotent: a canonical URI parses back to itself and its ops', () => {
    fc.assert(
      fc.property(key, meaning.chain(spelling), negotiation, (k, query, n) => {
        const request = canonicalRequest(encodeKeyPath(k), splitQuery(query), options, n);
        const parsed = parseCanonicalUri(request.uri, options);
        expect(parsed.uri).toBe(request.uri);
        expect(parsed.ops).toEqual(request.ops);
        expect(parsed.key).toBe(k);
      }),
      RUNS,
    );
  });

  it('(b) every spelling of one request gives one canonical URI', () => {
    fc.assert(
      fc.property(
        meaning.chain((m) => fc.tuple(fc.constant(m), spelling(m), spelling(m))),
        negotiation,
        ([m, first, second], n) => {
          const plain = canonicalRequest('/k', splitQuery(plainQuery(m)), options, n).uri;
          expect(canonicalRequest('/k', splitQuery(first), options, n).uri).toBe(plain);
          expect(canonicalRequest('/k', splitQuery(second), options, n).uri).toBe(plain);
        },
      ),
      RUNS,
    );
  });

  it('(b) a no-op spelling is no parameter: flip=0, flip=false and no flip are one request', () => {
    fc.assert(
      fc.property(
        meaning.chain((m) =>
          fc.tuple(fc.constant(m), noOpsBeside(m)).chain(([m, noOps]) => fc.tuple(fc.constant(m), spelling([...m, ...noOps]))),
        ),
        negotiation,
        ([m, spelled], n) => {
          const without = canonicalRequest('/k', splitQuery(plainQuery(withoutNoOps(m))), options, n).uri;
          expect(canonicalRequest('/k', splitQuery(spelled), options, n).uri).toBe(without);
        },
      ),
      RUNS,
    );
  });

  it('(b) every spelling of one key gives one canonical URI', () => {
    // A viewer may escape any character; the canonical URI escapes exactly the reserved ones.
    fc.assert(
      fc.property(key, fc.boolean(), (k, escapeAll) => {
        const path = escapeAll ? '/' + k.split('/').map(percentEncodeAll).join('/') : encodeKeyPath(k);
        expect(canonicalRequest(path, [], options).uri).toBe(encodeKeyPath(k) + '/original');
      }),
      RUNS,
    );
  });

  it('(c) viewerQuery(ops) canonicalises back to ops (under any Accept when ops has a format)', () => {
    fc.assert(
      fc.property(key, meaning.chain(spelling), negotiation, negotiation, (k, query, n, other) => {
        const { ops } = canonicalRequest(encodeKeyPath(k), splitQuery(query), options, n);
        const again = canonicalRequest(encodeKeyPath(k), splitQuery(viewerQuery(ops)), options, ops.format ? other : n);
        expect(again.ops).toEqual(ops);
        expect(again.key).toBe(k);
      }),
      RUNS,
    );
  });

  it("negotiation adds accept exactly when the format is not explicit, and the watermark's and template's versions, nothing else", () => {
    fc.assert(
      fc.property(key, meaning.chain(spelling), negotiation, (k, query, n) => {
        const before = canonicalRequest(encodeKeyPath(k), splitQuery(query), options).ops;
        const { accept, ...negotiated } = canonicalRequest(encodeKeyPath(k), splitQuery(query), options, n).ops;
        // Every overlay slot's watermark (`watermark`, `watermark2`...) and the template carry their versions.
        const versions: { [name: string]: { [name: string]: string } } = { template: options.templates! };
        for (const slot of OVERLAY_SLOTS) versions[`watermark${slot}`] = options.watermarks!;
        const named: { [name: string]: unknown } = { ...negotiated };
        for (const [name, names] of Object.entries(versions)) {
          const value = named[name] as string | undefined;
          if (value === undefined) continue;
          const asked = (before as { [name: string]: unknown })[name] as string;
          expect(value).toBe(`${asked}.${names[asked]}`);
          named[name] = asked;
        }
        expect(named).toEqual(before);
        expect(before.accept).toBeUndefined();
        if (before.format !== undefined) expect(accept).toBeUndefined();
        else if (!n.accept.includes('image/webp')) expect(accept).toBeUndefined();
        else expect(accept).toBe(n.avif && n.accept.includes('image/avif') ? 'avif' : 'webp');
      }),
      RUNS,
    );
  });

  it('dpr stays within maxDimension and keeps the aspect ratio', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 16, max: 8192 }).chain((max) =>
          fc.record({
            max: fc.constant(max),
            width: fc.integer({ min: 1, max }),
            height: fc.integer({ min: 1, max }),
            dpr: tenths(1, 4),
          }),
        ),
        ({ max, width, height, dpr }) => {
          const opts: GrammarOptions = { maxDimension: max };
          const { ops } = canonicalRequest('/k', splitQuery(`w=${width}&h=${height}&dpr=${dpr}`), opts);
          const w = ops.width as number;
          const h = ops.height!;
          expect(w).toBeGreaterThanOrEqual(width);
          expect(h).toBeGreaterThanOrEqual(height);
          expect(w).toBeLessThanOrEqual(max);
          expect(h).toBeLessThanOrEqual(max);
          // Each side is rounded once, so the cross products differ by at most half of each side.
          expect(Math.abs(w * height - h * width)).toBeLessThanOrEqual((width + height) / 2);
          // dpr is an upper bound on the scale, reached unless a side hits maxDimension.
          if (w < max && h < max) expect(w).toBe(Math.round(width * Number(dpr)));
        },
      ),
      RUNS,
    );
  });

  // ------------------------------------------------------- hostile input

  const GRAMMAR_TOKENS = fc.constantFrom(
    'w',
    'width',
    'H',
    'dpr',
    'fit',
    'pos',
    'format',
    'fm',
    'q',
    'bg',
    'blur',
    'rotate',
    'flip',
    'original',
    'accept',
    'avif',
    'webp',
    'constructor',
    '__proto__',
    '=',
    '&',
    ',',
    '/',
    '//',
    '.',
    '..',
    '%',
    '%2',
    '%25',
    '%2F',
    '%E0%A4',
    '%C3%A9',
    '%00',
    '+',
    '#',
    '?',
    '0',
    '1',
    '8193',
    '1.5',
    '.',
    'true',
    'json',
    'auto',
    ' ',
    '\uD800',
    '\uDC00',
    '\u0000',
  );
  const hostile = fc.string({
    unit: fc.oneof(
      GRAMMAR_TOKENS,
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
      fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)),
    ),
    maxLength: 40,
  });

  /** Runs `action`; a thrown error must be a GrammarError with a short message. */
  function returnsOrGrammarError(action: () => unknown) {
    try {
      action();
    } catch (error) {
      expect(isGrammarError(error), String(error)).toBe(true);
      expect((error as Error).message.length).toBeLessThan(200);
    }
  }

  it('(d) any path and query either canonicalise or throw a GrammarError', () => {
    fc.assert(
      fc.property(hostile, hostile, negotiation, (path, query, n) => {
        returnsOrGrammarError(() => canonicalRequest(path, splitQuery(query), options, n));
        returnsOrGrammarError(() => canonicalRequest('/' + path, splitQuery(query), options, n));
      }),
      RUNS,
    );
  });

  it('(d) any string either parses as a canonical URI or throws a GrammarError', () => {
    fc.assert(
      fc.property(hostile, hostile, (path, ops) => {
        returnsOrGrammarError(() => parseCanonicalUri(`/${path}/${ops}`, options));
        returnsOrGrammarError(() => parseCanonicalUri(path, options));
      }),
      RUNS,
    );
  });

  it('(d) a key that decodes is always valid and re-encodes canonically', () => {
    fc.assert(
      fc.property(hostile, (path) => {
        let k: string;
        try {
          k = decodeKeyPath('/' + path);
        } catch (error) {
          expect(isGrammarError(error), String(error)).toBe(true);
          return;
        }
        expect(decodeKeyPath(encodeKeyPath(k))).toBe(k);
        expect(parseCanonicalUri(encodeKeyPath(k) + '/original', options).key).toBe(k);
      }),
      RUNS,
    );
  });
});
