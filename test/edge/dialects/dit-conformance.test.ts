// DIT's own request test cases (dit-conformance.ts) through the generated
// functions, each held to its class exactly: a SAME row reaches the native
// URL's URI, a REFUSED row is that refusal, a DEVIATION row is the answer we
// keep instead, its reason quoted in docs/migrating.md. A row whose answer
// changes class fails.
//
//   npx vitest run test/edge/dialects/dit-conformance.test.ts

import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LoadedFunction } from '../../../local/emulator/cloudfront-function';
import { SECRET } from '../dialect-signers';
import { answer, settings, type Answered } from '../dialect-harness';
import { loadEdge } from '../fixtures';
import { DEVIATIONS, DIT_CONFORMANCE, type ConformanceRow, type NativeUrl, type Refusal } from './dit-conformance';

const functions: { [name: string]: LoadedFunction } = {};
beforeAll(() => {
  for (const grammar of ['native', 'dit-json', 'thumbor'] as const) {
    functions[grammar] = loadEdge(settings(grammar));
    functions[`signed ${grammar}`] = loadEdge(settings(grammar, true), SECRET);
  }
});

const dialectAnswer = (test: ConformanceRow): Promise<Answered> =>
  answer(functions[`${test.signed ? 'signed ' : ''}${test.grammar}`]!, test.path, test.query);

/** That `answered` is the native URL's URI (and its canonical URI, when written down). */
const expectNative = async (answered: Answered, url: NativeUrl) => {
  const native = await answer(functions.native!, url.path, url.query);
  expect(native.status, `the native ${url.path}?${url.query}: ${native.message}`).toBe(200);
  expect(answered).toEqual(native);
  if (url.canonical) expect(answered.uri).toBe(url.canonical);
};

const expectRefusal = (answered: Answered, refusal: Refusal) => {
  expect(answered).toMatchObject({ status: refusal.status, message: expect.stringMatching(refusal.message) });
};

const title = (test: ConformanceRow) => `${test.source} (${test.path.slice(0, 60)}${test.query ? '?' + test.query.slice(0, 20) : ''})`;

describe("DIT v6.3.3's request cases", () => {
  describe('SAME: the native URL of the same image', () => {
    for (const test of DIT_CONFORMANCE.filter((row) => row.same)) {
      it(title(test), async () => expectNative(await dialectAnswer(test), test.same!));
    }
  });

  describe('REFUSED', () => {
    for (const test of DIT_CONFORMANCE.filter((row) => row.refused)) {
      it(`${title(test)}: ${test.refused!.why}`, async () => expectRefusal(await dialectAnswer(test), test.refused!));
    }
  });

  describe('DEVIATION: what we answer instead, on purpose', () => {
    for (const test of DIT_CONFORMANCE.filter((row) => row.deviation)) {
      it(`${title(test)}: ${test.deviation!.reason}`, async () => {
        const { answer: instead } = test.deviation!;
        const answered = await dialectAnswer(test);
        if ('path' in instead) await expectNative(answered, instead);
        else expectRefusal(answered, instead);
      });
    }
  });
});

describe('the table', () => {
  it('gives each row exactly one class, and each request once', () => {
    for (const test of DIT_CONFORMANCE) {
      expect([test.same, test.refused, test.deviation].filter(Boolean), test.source).toHaveLength(1);
    }
    const requests = DIT_CONFORMANCE.map((test) => `${test.signed} ${test.path}?${test.query}`);
    expect(requests.filter((request, i) => requests.indexOf(request) !== i)).toEqual([]);
  });

  it("quotes each deviation's reason in docs/migrating.md, with the command that runs the table", () => {
    const docs = readFileSync(new URL('../../../docs/migrating.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    for (const reason of Object.values(DEVIATIONS)) expect(docs).toContain(reason);
    expect(docs).toContain('npx vitest run test/edge/dialects/dit-conformance.test.ts');
  });
});
