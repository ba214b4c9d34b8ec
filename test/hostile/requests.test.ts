// Hostile requests, table-driven: every parameter with a wrong type, out of
// range, repeated, empty, bare, or 10 KB long, and keys with `..`, empty
// segments, control characters, over-long, double-encoded, invalid UTF-8 and
// lone surrogates. Each row is one request as a viewer URL (through the
// emulator over HTTP, where the edge should answer it) and as the handler
// would see it (a Function URL path, which must be canonical), each with the
// contract's status and JSON code, its Cache-Control, its log entry, and the
// cache bucket unchanged. After the barrage the emulator still serves.
//
// The edge function's own rejection list (test/edge/viewer-request.test.ts)
// and the handler's (test/origin/errors.test.ts) have single examples of
// most kinds; the rows here are the systematic set, through both layers.

import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_KEY_BYTES } from '../../lambda/grammar/index';
import { createTestOrigin, type TestOrigin } from '../support/origin';
import { VIEWER_CASES } from '../support/param-cases';
import {
  expectEmulatorStillServing,
  startHostileEmulator,
  throughEmulator,
  throughHandler,
  OK_KEY,
  okJpeg,
  type Expected,
  type HostileEmulator,
} from './support';

interface Row {
  name: string;
  /** Path and query as a viewer sends them (percent-encoded: valid HTTP). */
  viewer: string;
  /** The Function URL path the handler is given. */
  canonical: string;
  edge: Expected & { at?: 'edge' | 'origin' };
  origin: Expected;
}

const INVALID_PARAMETER = { status: 400, code: 'invalid_parameter' } as const;
const INVALID_KEY = { status: 400, code: 'invalid_key' } as const;
const NOT_CANONICAL = { status: 400, code: 'not_canonical' } as const;
const NOT_FOUND = { status: 404, code: 'not_found' } as const;
const SERVED = { status: 200 } as const;

const TEN_KB = 10 * 1024;
const OK_PATH = '/ok/fine.jpg';

// ------------------------------------------------------------------ parameters

interface ParamSpec {
  /** Canonical name, as the handler's URI spells it. */
  name: string;
  /** How a viewer spells it here: an alias where there is one. */
  alias: string;
  valid: string;
  wrongType: string[];
  outOfRange: string[];
  /** Whether the parameter given empty, or bare, has a value (`trim` alone is trim=10). */
  emptyIsValid: boolean;
  /** The handler's answer to a value it does not read, given once. */
  badValueAtOrigin: Expected;
  /** Where a value it does not read is refused: a text's, and a card's, pass the edge (docs/text.md, docs/templates.md). */
  valueRefusedAt: 'edge' | 'origin';
}

/**
 * A watermark name the handler does not have may be one the edge knows and this function not yet
 * (they are deployed apart): it answers 503, to retry (test/origin/watermark.test.ts).
 */
const WATERMARK_UNAVAILABLE = { status: 503, code: 'watermark_unavailable' } as const;

/** Every parameter a viewer may give, from the tests' parameter table, and the preset. */
const PARAMS: ParamSpec[] = [
  ...VIEWER_CASES.map(({ name, aliases, case: { samples, wrongType, outOfRange } }) => ({
    name,
    alias: aliases[0] ?? name,
    valid: samples.find((sample) => sample !== '') as string,
    wrongType,
    outOfRange,
    emptyIsValid: samples.includes(''),
    badValueAtOrigin: /^watermark\d?$/.test(name) ? WATERMARK_UNAVAILABLE : INVALID_PARAMETER,
    // The edge reads any text; the origin refuses one too long or with a control character.
    valueRefusedAt: /^text\d?$/.test(name) ? ('origin' as const) : ('edge' as const),
  }))
    // Fills beside no template are no parameter, dropped at the edge; beside one, test/origin/templates.test.ts checks them.
    .filter(({ name }) => name !== 'fills'),
  {
    name: 'preset',
    alias: 'p',
    valid: 'thumbnail',
    wrongType: ['nope', '__proto__', 'constructor', 'toString'],
    outOfRange: [],
    emptyIsValid: false,
    badValueAtOrigin: INVALID_PARAMETER,
    valueRefusedAt: 'edge',
  },
];

const enc = encodeURIComponent;

function paramRows(spec: ParamSpec): Row[] {
  const { name, alias, valid } = spec;
  const bad = (
    why: string,
    viewerQuery: string,
    canonicalOps: string,
    origin: Expected = spec.badValueAtOrigin,
    at: 'edge' | 'origin' = spec.valueRefusedAt,
  ): Row => ({
    name: `${name}: ${why}`,
    viewer: `${OK_PATH}?${viewerQuery}`,
    canonical: `${OK_PATH}/${canonicalOps}`,
    edge: { ...INVALID_PARAMETER, at },
    origin,
  });
  const rows: Row[] = [
    ...spec.wrongType.map((value) => bad(`wrong type ${JSON.stringify(value)}`, `${alias}=${enc(value)}`, `${name}=${enc(value)}`)),
    ...spec.outOfRange.map((value) => bad(`out of range ${value}`, `${alias}=${enc(value)}`, `${name}=${enc(value)}`)),
    // A repeated name is the edge's refusal, whatever the parameter.
    bad(
      'repeated with the same value',
      `${alias}=${valid}&${alias}=${valid}`,
      `${name}=${valid},${name}=${valid}`,
      INVALID_PARAMETER,
      'edge',
    ),
    ...(spec.emptyIsValid
      ? []
      : [
          bad('empty', `${alias}=`, `${name}=`),
          // A name with no `=` at all: the handler reads the last character as a separator, never as a value.
          bad('bare, with no =', alias, name, NOT_CANONICAL),
        ]),
    bad('10 KB of digits', `${alias}=${'9'.repeat(TEN_KB)}`, `${name}=${'9'.repeat(TEN_KB)}`),
    bad('10 KB of letters', `${alias}=${'a'.repeat(TEN_KB)}`, `${name}=${'a'.repeat(TEN_KB)}`),
    bad('a NUL', `${alias}=${valid}%00`, `${name}=${valid}%00`),
  ];
  if (alias !== name)
    rows.push(
      bad(
        'given by alias and by name',
        `${alias}=${valid}&${name}=${valid}`,
        `${name}=${valid},${name}=${valid}`,
        INVALID_PARAMETER,
        'edge',
      ),
    );
  return rows;
}

const PARAMETER_ROWS: Row[] = [
  ...PARAMS.flatMap(paramRows),
  {
    name: 'a CR LF header injection in a value is a 400, quoted only inside the JSON message',
    viewer: `${OK_PATH}?w=10%0D%0ASet-Cookie:%20session=evil`,
    canonical: `${OK_PATH}/width=10%0D%0ASet-Cookie:%20session=evil`,
    edge: { ...INVALID_PARAMETER, at: 'edge' },
    origin: INVALID_PARAMETER,
  },
  {
    name: 'HTML in a value is quoted only inside the JSON message',
    viewer: `${OK_PATH}?fit=${enc('<script>alert(1)</script>')}`,
    canonical: `${OK_PATH}/fit=${enc('<script>alert(1)</script>')}`,
    edge: { ...INVALID_PARAMETER, at: 'edge' },
    origin: INVALID_PARAMETER,
  },
  {
    name: 'a malformed escape in a query value',
    viewer: `${OK_PATH}?w=%E0%A4`,
    canonical: `${OK_PATH}/width=%E0%A4`,
    edge: { ...INVALID_PARAMETER, at: 'edge' },
    origin: INVALID_PARAMETER,
  },
  // Unknown names are ignored at the edge (and dropped from the cache key); the handler takes canonical URIs only.
  {
    name: 'an unknown parameter 10 KB long is ignored',
    viewer: `${OK_PATH}?utm_source=${'u'.repeat(TEN_KB)}`,
    canonical: `${OK_PATH}/utm_source=${'u'.repeat(TEN_KB)}`,
    edge: { ...SERVED, at: 'origin' },
    origin: NOT_CANONICAL,
  },
  {
    name: 'prototype names as parameters are ignored',
    viewer: `${OK_PATH}?__proto__=1&constructor=1&hasOwnProperty=1&toString=x`,
    canonical: `${OK_PATH}/__proto__=1,constructor=1`,
    edge: { ...SERVED, at: 'origin' },
    origin: NOT_CANONICAL,
  },
  {
    name: 'a NUL as a parameter name is ignored',
    viewer: `${OK_PATH}?%00=1&%01%02=%03`,
    canonical: `${OK_PATH}/%00=1`,
    edge: { ...SERVED, at: 'origin' },
    origin: NOT_CANONICAL,
  },
  {
    name: 'a 10 KB sig is ignored when signing is off',
    viewer: `${OK_PATH}?sig=${'s'.repeat(TEN_KB)}`,
    canonical: `${OK_PATH}/sig=${'s'.repeat(TEN_KB)}`,
    edge: { ...SERVED, at: 'origin' },
    origin: NOT_CANONICAL,
  },
];

// ------------------------------------------------------------------ keys

/** A key row: the viewer path, and the same path with an ops segment for the handler. */
const key = (name: string, path: string, edge: Row['edge'], origin: Expected = edge): Row => ({
  name,
  viewer: path,
  canonical: `${path}/original`,
  edge,
  origin,
});
const refusedKey = (name: string, path: string) => key(name, path, { ...INVALID_KEY, at: 'edge' });
const missingKey = (name: string, path: string) => key(name, path, { ...NOT_FOUND, at: 'origin' });

const KEY_ROWS: Row[] = [
  refusedKey('a .. segment', '/ok/../ok/fine.jpg'),
  refusedKey('a .. segment, encoded upper-case', '/ok/%2E%2E/fine.jpg'),
  refusedKey('a .. segment, half encoded', '/ok/.%2e/fine.jpg'),
  refusedKey('.. and a slash encoded inside one segment', '/ok/%2e%2e%2fsecret.jpg'),
  refusedKey('a trailing .. segment', '/ok/fine.jpg/..'),
  refusedKey('overlong UTF-8 dots (%C0%AE)', '/%C0%AE%C0%AE/ok/fine.jpg'),
  refusedKey('an empty segment', '/ok//fine.jpg'),
  refusedKey('an empty last segment', '/ok/fine.jpg/'),
  refusedKey('an encoded slash making an empty segment', '/ok/%2Ffine.jpg'),
  refusedKey('a NUL', '/ok/fine.jpg%00.png'),
  refusedKey('SOH', '/ok/%01fine.jpg'),
  refusedKey('a tab', '/ok/fine%09.jpg'),
  refusedKey('CR LF', '/ok/fine.jpg%0D%0AX-Injected:%201'),
  refusedKey('ESC (a terminal escape)', '/ok/%1B%5B31mfine.jpg'),
  refusedKey('US (0x1F)', '/ok/%1F.jpg'),
  refusedKey('DEL', '/ok/%7F.jpg'),
  // C1 controls reached S3 before c911db7.
  refusedKey('a C1 control, NEL (U+0085)', '/ok/%C2%85.jpg'),
  refusedKey('a C1 control, CSI (U+009B)', '/ok/%C2%9B31mfine.jpg'),
  // The emulator read these as a host before 042b180 (the playground page, or a 502).
  refusedKey('a path starting with //', '//evil.jpg'),
  refusedKey('a path starting with //[', '//[x/evil.jpg'),
  refusedKey(`${MAX_KEY_BYTES + 2} bytes of 2-byte letters`, '/' + '%C3%A9'.repeat((MAX_KEY_BYTES + 2) / 2)),
  refusedKey(`${MAX_KEY_BYTES + 2} bytes of 3-byte letters`, '/' + '%E3%81%82'.repeat(Math.ceil((MAX_KEY_BYTES + 1) / 3))),
  refusedKey('10 KB', '/' + 'k'.repeat(TEN_KB)),
  refusedKey('invalid UTF-8 (%C3%28)', '/ok/%C3%28.jpg'),
  refusedKey('invalid UTF-8 (%FF)', '/ok/%FF.jpg'),
  refusedKey('a cut UTF-8 sequence (%E2%82)', '/ok/%E2%82.jpg'),
  refusedKey('a malformed escape (%G1)', '/ok/%G1.jpg'),
  refusedKey('a lone % at the end', '/ok/fine.jpg%'),
  refusedKey('a lone high surrogate, encoded', '/ok/%ED%A0%80.jpg'),
  refusedKey('a lone low surrogate, encoded', '/ok/%ED%B0%80.jpg'),
  // Valid keys that merely look dangerous: looked up literally, found nowhere.
  missingKey(`exactly ${MAX_KEY_BYTES} bytes`, '/' + '%C3%A9'.repeat(MAX_KEY_BYTES / 2)),
  missingKey('double-encoded .. (%252E%252E): the literal text %2E%2E', '/ok/%252E%252E/ok/fine.jpg'),
  missingKey('a double-encoded slash (%252F)', '/ok%252Ffine.jpg'),
  missingKey('full-width dots: not folded into ..', '/ok/%EF%BC%8E%EF%BC%8E/fine.jpg'),
  missingKey('backslashes: not separators', '/ok/..%5C..%5Cetc%5Cpasswd'),
  missingKey('an encoded ? in the key', '/ok/fine.jpg%3Fw%3D10'),
  {
    name: 'a path under the source that looks like a variant',
    viewer: '/ok/fine.jpg/width=10',
    canonical: '/ok/fine.jpg/width%3D10/original',
    edge: { ...NOT_FOUND, at: 'origin' },
    origin: NOT_FOUND,
  },
  missingKey('300 segments', '/' + Array.from({ length: 300 }, () => 'a').join('/')),
  // One key, one URL: an encoded slash names the same key, and the handler wants the canonical spelling.
  key('an encoded slash is the same key', '/ok%2Ffine.jpg', { ...SERVED, at: 'origin' }, NOT_CANONICAL),
];

/** Only through the handler: a raw character no HTTP client may send (a Function URL path could hold it). */
const HANDLER_ONLY: [string, string, Expected][] = [
  ['a raw NUL', '/ok/fine\u0000.jpg/original', INVALID_KEY],
  ['a raw newline', '/ok/fine\n.jpg/original', INVALID_KEY],
  ['a raw lone surrogate', '/ok/\uD800.jpg/original', INVALID_KEY],
  ['a raw lone low surrogate', '/ok/\uDFFF.jpg/original', INVALID_KEY],
  ['an empty path', '', NOT_CANONICAL],
  ['a path with no ops segment', '/ok', NOT_CANONICAL],
  ['a path of slashes', '///', INVALID_KEY],
];

// ------------------------------------------------------------------ the run

let origin: TestOrigin;
let emulator: HostileEmulator;
const succeeded = new Set<string>();

beforeAll(async () => {
  origin = await createTestOrigin('hostile requests');
  await origin.putSource(OK_KEY, await okJpeg(), 'image/jpeg');
  emulator = await startHostileEmulator('hostile requests', {});
}, 60_000);

async function run(row: Row) {
  const [, answer] = await Promise.all([
    throughHandler(origin, row.canonical, row.origin),
    throughEmulator(emulator, row.viewer, row.edge),
  ]);
  if (answer.status === 200) succeeded.add(`${OK_KEY}/original`);
}

describe('hostile parameters: the contract answer at the edge (emulator) and at the handler', () => {
  it.each(PARAMETER_ROWS.map((row) => [row.name, row] as const))('%s', async (_name, row) => run(row));
});

describe('hostile keys: the contract answer at the edge (emulator) and at the handler', () => {
  it.each(KEY_ROWS.map((row) => [row.name, row] as const))('%s', async (_name, row) => run(row));

  it.each(HANDLER_ONLY)('handler only: %s', async (_name, uri, expected) => {
    await throughHandler(origin, uri, expected);
  });

  it('a double-encoded .. never reaches the object it seems to point at', async () => {
    // ok/fine.jpg exists; the literal key ok/%2E%2E/ok/fine.jpg does not.
    const answer = await emulator.get('/ok/%252E%252E/ok/fine.jpg?w=20');
    expect(answer.status).toBe(404);
  });
});

describe('after the barrage', () => {
  it('the handler still serves a normal request, and logged nothing unexpected', async () => {
    expect((await origin.request('/ok/fine.jpg/width=41')).status).toBe(200);
    expect(origin.logs.filter((entry) => entry.event === 'unexpected')).toEqual([]);
  });

  it('the emulator answers /_health and a normal image request; its cache bucket holds only variants of successes', async () => {
    await expectEmulatorStillServing(emulator, succeeded);
  });
});
