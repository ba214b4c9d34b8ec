// Property-based tests over hostile viewer requests (paths and queries of
// escapes, control characters, lone surrogates, prototype names, overlong
// and malformed UTF-8, values around every limit, 1 KB keys), under several
// deployments (sizes, presets, presets-only, watermarks, a tiny maxDimension):
//
// - the grammar never throws anything but its own GrammarError;
// - canonicalisation is idempotent: a canonical request's URI parses back to
//   itself, and re-canonicalising its ops gives it again;
// - the generated edge function canonicalises, refuses and forwards exactly as
//   the one generated before the sizes and presets moved from its code to its
//   KeyValueStore (test/edge/before-store holds those files), for queries that
//   name only what those files know (BEFORE_STORE_UNKNOWN lists what came after);
// - the generated edge function file and the origin handler agree: every
//   request the edge rewrites, the handler's parseCanonicalUri accepts with
//   the same key and ops (and the real handler never answers it 400); every
//   request the edge refuses, the grammar refuses with the same code.
//
// test/grammar/properties.test.ts has the same first two properties over
// valid meanings and 40-character token strings with the default options,
// and test/edge/viewer-request.test.ts the edge-vs-grammar agreement over
// mostly valid requests; these extend both to hostile input, long input and
// other deployments, and add the edge-to-handler leg.

import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  canonicalRequest,
  encodeKeyPath,
  isGrammarError,
  parseCanonicalUri,
  POSITIONS,
  PRESET_SPELLINGS,
  signUri,
  splitQuery,
  viewerQuery,
  type CanonicalRequest,
  type GrammarOptions,
  type Negotiation,
} from '../../lambda/grammar/index';
import { SIGNING_SECRETS_KEY } from '../../lambda/edge/store';
import {
  forwardedQuery,
  isResponse,
  loadFunction,
  viewerEvent,
  type FunctionResult,
  type LoadedFunction,
} from '../../local/emulator/cloudfront-function';
import { KVS_ID, loadEdge } from '../edge/fixtures';
import { CASE_OPTIONS, KNOWN_SPELLINGS, SAMPLE_PAIRS } from '../support/param-cases';
import { createTestOrigin, type TestOrigin } from '../support/origin';

// ------------------------------------------------------------------ deployments

const SIZES = [16, 32, 48, 64, 96, 128, 256, 384, 640, 750, 828, 1080, 1200, 1920, 2048, 3840];
const PRESETS = {
  thumb: { width: '256', height: '256', fit: 'contain', background: 'fff' },
  hero: { width: '1920', quality: '70' },
  og: { width: '1200', height: '640', format: 'jpeg', quality: '85' },
  mono: { width: '640', grayscale: 'true', blur: '2', position: 'attention' },
};

interface Deployment {
  label: string;
  grammar: GrammarOptions;
  avif: boolean;
  /** The function generated for this deployment before its sizes and presets moved to the KeyValueStore (test/edge/before-store). */
  before: string;
  /** Whether `before` was generated with signing on. */
  signed: boolean;
}

const DEPLOYMENTS: Deployment[] = [
  {
    label: 'sizes and presets',
    grammar: { maxDimension: 4096, sizes: SIZES, presets: PRESETS },
    avif: true,
    before: 'sizes-presets-signing',
    signed: true,
  },
  {
    label: 'any size, watermarks',
    grammar: { maxDimension: 8192, watermarks: CASE_OPTIONS.watermarks },
    avif: true,
    before: 'any-size',
    signed: false,
  },
  {
    label: 'presets only, no AVIF',
    grammar: { maxDimension: 2048, sizes: SIZES, presets: PRESETS, presetsOnly: true },
    avif: false,
    before: 'presets-only-no-avif',
    signed: false,
  },
  { label: 'maxDimension 100', grammar: { maxDimension: 100 }, avif: true, before: 'max-dimension-100', signed: false },
];

const SECRET = 'fuzz-secret';

/**
 * What the origin is configured with: the largest dimension. Not the presets
 * (a canonical URI holds their expansion), nor the sizes: the edge reads them
 * from its store, which a deploy updates at another moment than the origin.
 */
const originOptions = (grammar: GrammarOptions): GrammarOptions => ({ maxDimension: grammar.maxDimension });

// ------------------------------------------------------------------ hostile requests

const TOKENS = [
  '..',
  '.',
  '%2e',
  '%2E%2e',
  '.%2E',
  '%2F',
  '%2f',
  '%252F',
  '%252E',
  '%25',
  '%00',
  '%01',
  '%09',
  '%0A',
  '%0D%0A',
  '%1B',
  '%1F',
  '%7F',
  '%C2%85',
  '%C3%A9',
  '%c3%a9',
  '%C3%28',
  '%ED%A0%80',
  '%ED%B0%80',
  '%C0%AE',
  '%E0%80%AE',
  '%EF%BC%8E',
  '%F0%9F%98%80',
  '%F4%90%80%80',
  '%FF',
  '%',
  '%Z',
  '%4',
  '%%',
  '+',
  '=',
  '&',
  ',',
  ';',
  ':',
  '@',
  '~',
  '!',
  '*',
  "'",
  '(',
  ')',
  '[',
  ']',
  '\\',
  '%5C',
  '%20',
  'original',
  'width=10',
  'format=json',
  'w',
  'constructor',
  '__proto__',
  'prototype',
  '\u0000',
  '\n',
  '\uD800',
  '\uDFFF',
  '\uFEFF',
  '\u202E',
];

const unit = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...TOKENS) },
  { weight: 6, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 3 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
);

const segment = fc.oneof(
  { weight: 3, arbitrary: fc.stringMatching(/^[A-Za-z0-9._~-]{1,10}$/).filter((text) => text !== '.' && text !== '..') },
  { weight: 1, arbitrary: fc.constantFrom('caf%C3%A9', 'a%20b', 'a+b', '%E6%97%A5%E6%9C%AC', '%F0%9F%98%80', '%25', '%2B', "it's(1)") },
  { weight: 3, arbitrary: fc.string({ unit, maxLength: 8 }) },
);

const path = fc.oneof(
  { weight: 10, arbitrary: fc.array(segment, { minLength: 1, maxLength: 5 }).map((segments) => '/' + segments.join('/')) },
  { weight: 2, arbitrary: fc.constantFrom('/photos/cat.jpg', '/a%20b/c+d.png', '/caf%C3%A9/x.webp', '/x') },
  // Around S3's 1024-byte key limit, in 1-, 2- and 3-byte characters.
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 1015, max: 1030 }), fc.constantFrom(['k', 1], ['%C3%A9', 2], ['%E3%81%82', 3]))
      .map(([bytes, [c, size]]) => '/' + (c as string).repeat(Math.ceil(bytes / (size as number)))),
  },
  { weight: 1, arbitrary: fc.string({ unit, minLength: 100, maxLength: 600 }).map((text) => '/' + text) },
);

/** Every name that means something, and some that do not: prototype names, the edge's own `accept`. */
const NAMES = [...KNOWN_SPELLINGS, 'utm_source', '', 'constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'accept'];
const VALUES = [
  '',
  '0',
  '1',
  '2',
  '10',
  '16',
  '100',
  '101',
  '256',
  '640',
  '641',
  '3840',
  '3841',
  '4096',
  '4097',
  '8192',
  '8193',
  '0640',
  '000000001',
  '1e3',
  '-1',
  '1.5',
  '2.0',
  '.5',
  '3.9',
  '4.1',
  '0.3',
  '0.2',
  '100.0',
  'cover',
  'CONTAIN',
  'fill',
  'inside',
  'outside',
  'top-left',
  'entropy',
  'attention',
  'auto',
  'webp',
  'avif',
  'jpeg',
  'jpg',
  'png',
  'gif',
  'json',
  'svg',
  'true',
  'false',
  'TRUE',
  '1 ',
  ' 1',
  'fff',
  '%23FF000080',
  'ff0000ff',
  '90',
  '180',
  '270',
  '45',
  '090',
  'thumb',
  'hero',
  'og',
  'mono',
  'nope',
  '__proto__',
  'constructor',
  '%',
  '%zz',
  '%2531',
  '%00',
  '%E0%A4',
  '%ED%A0%80',
  '+',
  '%2B',
  '9'.repeat(12),
  'pad',
  'blur',
  '0,0,1,1',
  '0.5,0.5,0.5,0.5',
  '0.5,0.5,0.6,0.5',
  '1,0,0,1',
  '0,0,1',
  '.1,.1,.1,.1,',
  '2047',
  '2048',
  '49',
  '50',
  '10,fff',
  '10,',
  ',fff',
  '255',
  '256',
  '0.5,0.5',
  '.25,1.0000',
  '1,1.0001',
  '0.5',
  ',',
  'NaN,0',
  '0.00001,0',
];

const anyCase = (text: string) => fc.boolean().map((upper) => (upper ? text.toUpperCase() : text));

/** Valid values: each parameter's samples under each of its spellings, and the deployments' presets. */
const VALID_PAIRS = [
  ...SAMPLE_PAIRS,
  ...PRESET_SPELLINGS.flatMap((spelling) => Object.keys(PRESETS).map((name) => [spelling, name] as const)),
];
const validPair = fc.constantFrom(...VALID_PAIRS).chain(([name, value]) => anyCase(name).map((spelled) => `${spelled}=${value}`));

const hostilePair = fc
  .tuple(
    fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...NAMES).chain(anyCase) },
      { weight: 1, arbitrary: fc.string({ unit, maxLength: 4 }) },
    ),
    fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...VALUES) },
      { weight: 2, arbitrary: fc.string({ unit, maxLength: 6 }) },
      { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 500, maxLength: 2000 }) },
    ),
    fc.constantFrom('=', '=', '=', ''),
  )
  .map(([name, value, eq]) => (eq || value ? `${name}=${value}` : name));

const pair = fc.oneof({ weight: 4, arbitrary: validPair }, { weight: 1, arbitrary: hostilePair });
const query = fc
  .tuple(fc.array(pair, { maxLength: 5 }), fc.constantFrom('', '', '&', '&&'))
  .map(([pairs, extra]) => extra + pairs.join('&'));

const accept = fc.oneof(
  fc.constantFrom(
    '',
    '*/*',
    'image/webp,*/*',
    'image/avif,image/webp,image/apng,image/*,*/*;q=0.8',
    'image/avif;q=0,image/webp;q=0',
    'IMAGE/WEBP',
    'image/avif',
  ),
  fc.string({ unit, maxLength: 20 }),
);

/** Client hint headers, absent or any of them with a plausible or hostile value (for width=auto, dpr=auto). */
const HINT_VALUES = [
  '390',
  '1170',
  '0',
  '-1',
  '10000',
  '1e3',
  '2.625',
  '3',
  '99999',
  'NaN',
  '',
  ' 640',
  '390,1170',
  '9'.repeat(30),
  'on',
  'ON',
  'off',
];
const hints = fc.dictionary(
  fc.constantFrom('sec-ch-width', 'sec-ch-viewport-width', 'sec-ch-dpr', 'save-data'),
  fc.constantFrom(...HINT_VALUES),
  { maxKeys: 4 },
);

// ------------------------------------------------------------------ helpers

/** A function's result with its forwarded query in name order: CloudFront builds the origin's query from it whatever the order. */
function comparable(result: FunctionResult): unknown {
  if (isResponse(result)) {
    // The refusal of a wrong signature was reworded since (to keep the function within its size): the same 403 and code.
    const body = JSON.parse(result.body.data) as { error: string; message: string };
    return body.error === 'invalid_signature' ? { ...result, body: { ...result.body, data: body.error } } : result;
  }
  return { ...result, querystring: Object.fromEntries(Object.entries(result.querystring).sort(([x], [y]) => (x < y ? -1 : 1))) };
}

type Outcome = { request: CanonicalRequest } | { code: string };

/** The grammar's answer; anything thrown but a GrammarError fails the property. */
function grammarOutcome(grammar: GrammarOptions, p: string, q: string, negotiation: Negotiation & { accept: string }): Outcome {
  try {
    return { request: canonicalRequest(p, splitQuery(q), grammar, negotiation) };
  } catch (error) {
    if (!isGrammarError(error)) throw error;
    expect(error.message.length).toBeLessThan(200);
    return { code: error.code };
  }
}

const RUNS = 2000;

/**
 * The names the before-store files read: every other name that now means something came after
 * them, and they ignore it. `sig` is not among them, although they read it: the property appends
 * it, so a query naming it repeats it, since then a 400 like any repeated parameter (it was a 403).
 */
const BEFORE_STORE_NAMES = [
  'width',
  'w',
  'height',
  'h',
  'dpr',
  'fit',
  'position',
  'pos',
  'gravity',
  'enlarge',
  'rotate',
  'flip',
  'flop',
  'grayscale',
  'greyscale',
  'blur',
  'sharpen',
  'background',
  'bg',
  'quality',
  'q',
  'format',
  'fm',
  'f',
  'preset',
  'p',
];
const BEFORE_STORE_UNKNOWN = KNOWN_SPELLINGS.filter((name) => !BEFORE_STORE_NAMES.includes(name));
/** The fits and positions those files know (`pad`, `face` and `auto` came later, and with each the list in a bad value's message). */
const BEFORE_STORE_FITS = ['cover', 'contain', 'fill', 'inside', 'outside'];
const BEFORE_STORE_POSITIONS: string[] = POSITIONS.filter((position) => position !== 'face' && position !== 'auto');
const BEFORE_STORE_CHOICES = new Map([
  ['fit', BEFORE_STORE_FITS],
  ['position', BEFORE_STORE_POSITIONS],
  ['pos', BEFORE_STORE_POSITIONS],
  ['gravity', BEFORE_STORE_POSITIONS],
]);
/** Spellings whose value `auto` came later (client hints, then quality=auto): those files refuse it. */
const BEFORE_STORE_NO_AUTO = ['w', 'width', 'dpr', 'q', 'quality'];

/** Whether the before-store files read `query` as the current grammar does (or refuse it alike). */
function knownBeforeStore(query: string): boolean {
  let pairs: [string, string][];
  try {
    pairs = splitQuery(query);
  } catch {
    return true; // refused alike, before any name is read
  }
  return pairs.every(([name, value]) => {
    const spelled = name.toLowerCase();
    return (
      !BEFORE_STORE_UNKNOWN.includes(spelled) &&
      (BEFORE_STORE_CHOICES.get(spelled)?.includes(value.toLowerCase()) ?? true) &&
      !(BEFORE_STORE_NO_AUTO.includes(spelled) && value.toLowerCase() === 'auto')
    );
  });
}

let functions: LoadedFunction[];
let origin: TestOrigin;

beforeAll(async () => {
  functions = DEPLOYMENTS.map((deployment) =>
    loadEdge({ grammar: deployment.grammar, avif: deployment.avif, signing: false, keyValueStoreId: KVS_ID }),
  );
  origin = await createTestOrigin('hostile fuzz'); // empty: every accepted request is a 404, never a 400
});

// ------------------------------------------------------------------ properties

describe.each(DEPLOYMENTS.map((deployment, i) => [deployment.label, deployment, i] as const))('%s', (_label, deployment, index) => {
  it('the grammar throws only GrammarErrors, for any path, query and Accept, and for any would-be canonical URI', () => {
    fc.assert(
      fc.property(path, query, accept, (p, q, a) => {
        grammarOutcome(deployment.grammar, p, q, { accept: a, avif: deployment.avif });
        for (const uri of [p, `${p}/${q}`, `${p}/${q.replace(/&/g, ',')}`]) {
          try {
            parseCanonicalUri(uri, originOptions(deployment.grammar));
          } catch (error) {
            if (!isGrammarError(error)) throw error;
          }
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('canonicalisation is idempotent: the URI parses back to itself, and its ops canonicalise to it again', () => {
    const reparse: GrammarOptions = { ...deployment.grammar, presetsOnly: false };
    fc.assert(
      fc.property(path, query, accept, (p, q, a) => {
        const negotiation = { accept: a, avif: deployment.avif };
        const outcome = grammarOutcome(deployment.grammar, p, q, negotiation);
        if (!('request' in outcome)) return;
        const { request } = outcome;
        const parsed = parseCanonicalUri(request.uri, originOptions(deployment.grammar));
        expect(parsed).toEqual(request);
        const again = canonicalRequest(encodeKeyPath(request.key), splitQuery(viewerQuery(request.ops)), reparse, negotiation);
        expect(again.uri).toBe(request.uri);
        expect(canonicalRequest(encodeKeyPath(again.key), splitQuery(viewerQuery(again.ops)), reparse, negotiation).uri).toBe(request.uri);
      }),
      { numRuns: RUNS },
    );
  });

  it('the generated edge function and the handler agree: rewritten means parsed alike, refused means refused alike', async () => {
    let rewritten = 0;
    await fc.assert(
      fc.asyncProperty(path, query, accept, hints, async (p, q, a, h) => {
        const result = await functions[index]!.handler(viewerEvent(p, q, { headers: { ...h, ...(a ? { accept: a } : {}) } }));
        const grammar = grammarOutcome(deployment.grammar, p, q, { accept: a, avif: deployment.avif, header: (name) => h[name] });
        if (isResponse(result)) {
          expect(result.statusCode).toBe(400);
          expect(grammar).toEqual({ code: JSON.parse(result.body.data).error });
          return;
        }
        rewritten++;
        const parsed = parseCanonicalUri(result.uri, originOptions(deployment.grammar));
        expect(parsed.uri).toBe(result.uri);
        expect('request' in grammar && grammar.request).toEqual(parsed);
      }),
      { numRuns: RUNS },
    );
    // Both sides of the agreement are exercised: many requests get through, many do not.
    expect(rewritten).toBeGreaterThan(RUNS * 0.05);
    expect(rewritten).toBeLessThan(RUNS * 0.95);
  });

  it('the function canonicalises exactly as it did with the sizes and presets in its code', async () => {
    const before = loadFunction(readFileSync(new URL(`../edge/before-store/${deployment.before}.js`, import.meta.url), 'utf8'), {
      [SIGNING_SECRETS_KEY]: SECRET,
    });
    const after = loadEdge(
      { grammar: deployment.grammar, avif: deployment.avif, signing: deployment.signed, keyValueStoreId: KVS_ID },
      SECRET,
    );
    await fc.assert(
      fc.asyncProperty(path, query, accept, fc.boolean(), async (p, q, a, signIt) => {
        if (!knownBeforeStore(q)) return;
        let signed = q;
        if (deployment.signed) {
          const grammar = grammarOutcome(deployment.grammar, p, q, { accept: '', avif: deployment.avif });
          const sig = signIt && 'request' in grammar ? signUri(grammar.request.uri, SECRET) : 'not-a-signature';
          signed = `${q}&sig=${sig}`;
        }
        const event = () => viewerEvent(p, signed, a ? { headers: { accept: a } } : {});
        expect(comparable(await after.handler(event()))).toEqual(comparable(await before.handler(event())));
      }),
      { numRuns: RUNS },
    );
  });
});

it('the real handler never answers 400 to a request the edge rewrote (it answers 404: no such source)', async () => {
  const deployment = DEPLOYMENTS[0]!;
  const edge = functions[0]!;
  let rewritten = 0;
  await fc.assert(
    fc.asyncProperty(path, query, accept, async (p, q, a) => {
      const result = await edge.handler(viewerEvent(p, q, a ? { headers: { accept: a } } : {}));
      if (isResponse(result)) return;
      rewritten++;
      const at = origin.logs.length;
      const forwarded = forwardedQuery(result);
      const response = await origin.request(result.uri + (forwarded ? `?${forwarded}` : ''));
      expect(response.status, `${p}?${q} → ${result.uri}: ${response.body.toString('utf8')}`).toBe(404);
      expect(origin.logs.slice(at)).toMatchObject([{ code: 'not_found', status: 404, uri: result.uri }]);
    }),
    { numRuns: 600 },
  );
  // The arbitraries are hostile, but not so hostile that nothing gets through.
  expect(rewritten).toBeGreaterThan(100);
  expect(deployment.grammar.sizes).toBeDefined();
});
