// Thumbor's own URL and signature vectors, and its libraries', through the
// generated Thumbor function of a `dit` deployment (the table:
// thumbor-conformance.ts). A row whose answer changes class fails: a SAME URL
// must reach the native URL's canonical URI, a REFUSED one its 400, a
// DEVIATION exactly what the row says (its reason documented in
// docs/migrating.md); a signature must be the one the source expects, verify
// in the signing function, and fail with one byte changed.

import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LoadedFunction } from '../../../local/emulator/cloudfront-function';
import { parseSecrets } from '../../../lambda/edge/viewer-request';
import { thumbor } from '../../../lambda/edge/dialects/thumbor';
import { thumborHash } from '../dialect-signers';
import { answer, edgeFunction } from '../dialect-harness';
import { SIGNATURE_ROWS, URL_ROWS, type ThumborSignatureRow, type ThumborUrlRow } from './thumbor-conformance';

const split = (url: string): [string, string] => [url.split('?')[0]!, url.split('?').slice(1).join('?')];

let open: LoadedFunction;
let native: LoadedFunction;
/** The signing Thumbor function, by the one secret in its store. */
const signing: { [secret: string]: LoadedFunction } = {};
beforeAll(() => {
  open = edgeFunction('thumbor');
  native = edgeFunction('native');
  for (const secret of new Set(SIGNATURE_ROWS.map((row) => row.secret))) signing[secret] = edgeFunction('thumbor', secret);
});

/** A source without its note, for a test's name. */
const short = (source: string) => source.split(' (')[0]!.split(',')[0]!;

const classOf = (row: ThumborUrlRow) => (row.same ? 'SAME' : row.refused ? 'REFUSED' : 'DEVIATION');

describe("Thumbor's URL vectors", () => {
  it('give each row one class, and each path one row', () => {
    for (const row of URL_ROWS) expect([row.same, row.refused, row.deviation].filter(Boolean), row.path).toHaveLength(1);
    expect(new Set(URL_ROWS.map((row) => row.path)).size).toBe(URL_ROWS.length);
  });

  for (const row of URL_ROWS) {
    const title = `${classOf(row)} ${row.path} (${short(row.source)})`;
    if (row.same) {
      it(`${title} is the native ${row.same}`, async () => {
        const expected = await answer(native, ...split(row.same!));
        expect(expected.status, 'the native URL').toBe(200);
        expect(await answer(open, ...split(row.path))).toEqual(expected);
      });
    } else if (row.refused) {
      it(`${title} is refused, naming what we lack`, async () => {
        const refused = await answer(open, ...split(row.path));
        expect(refused.status).toBe(row.refused!.status);
        expect(refused.message).toMatch(row.refused!.message);
      });
    } else {
      it(`${title} is answered as documented`, async () => {
        expect(await answer(open, ...split(row.path))).toEqual(row.deviation!.answer);
        const { signed } = row.deviation!;
        if (signed) expect((await answer(Object.values(signing)[0]!, ...split(row.path))).status, 'signing').toBe(signed);
      });
    }
  }
});

describe('the deviations', () => {
  // Compared with white space collapsed: the document wraps its lines.
  const flat = (text: string) => text.replace(/\s+/g, ' ');
  const docs = flat(readFileSync(new URL('../../../docs/migrating.md', import.meta.url), 'utf8'));

  it('are each documented, with the command that runs this table', () => {
    for (const row of URL_ROWS.filter((url) => url.deviation)) expect(docs, row.path).toContain(flat(row.deviation!.reason));
    expect(docs).toContain('npx vitest run test/edge/dialects/thumbor-conformance.test.ts');
  });
});

/** `text` with its character at `at` (from the end, when negative) changed to another of the base64url alphabet. */
const changed = (text: string, at: number): string => {
  const index = at < 0 ? text.length + at : at;
  return text.slice(0, index) + (text[index] === 'A' ? 'B' : 'A') + text.slice(index + 1);
};

const signedUrl = (row: ThumborSignatureRow) => `/${row.hmac}/${row.signed}`;
/** The URL with one byte changed: in the HMAC, or the path's first (its last may be the key's extension, which the translation reads first). */
const tampered = (row: ThumborSignatureRow) => [`/${changed(row.hmac, 0)}/${row.signed}`, `/${row.hmac}/${changed(row.signed, 0)}`];

describe("Thumbor's and its libraries' signature vectors", () => {
  for (const row of SIGNATURE_ROWS) {
    const title = `${row.hmac} of ${row.signed} under '${row.secret}' (${short(row.source)})`;

    it(`${title}: our test signer gives it, and the secret can be stored`, () => {
      expect(thumborHash(row.signed, row.secret)).toBe(row.hmac);
      // The store's value is split at newlines and commas and trimmed: a secret holding them could not be used.
      expect(parseSecrets(row.secret)).toEqual([row.secret]);
    });

    it(`${title}: the dialect verifies it, and refuses it with one byte changed`, () => {
      const check = (uri: string) => thumbor.verify({ uri, pairs: [] }, [row.secret], Date.now() / 1000);
      expect(check(signedUrl(row))).toBe('valid');
      for (const url of tampered(row)) expect(check(url), url).toBe('badSignature');
    });

    if (!row.refused) {
      it(`${title}: the signing function serves it (200) and refuses it with one byte changed (403)`, async () => {
        const unsigned = await answer(open, '/' + row.signed);
        expect(unsigned.status).toBe(200);
        expect(await answer(signing[row.secret]!, signedUrl(row))).toEqual(unsigned);
        for (const url of tampered(row)) expect((await answer(signing[row.secret]!, url)).status, url).toBe(403);
      });
    } else {
      // Signed, its path is refused (400). With a byte changed, it is refused too: 400 where the translation
      // refuses it before the signature is checked, 403 where the native grammar would (after the check).
      it(`${title}: the signing function refuses its path (400), and serves nothing with one byte changed`, async () => {
        const refused = await answer(signing[row.secret]!, signedUrl(row));
        expect(refused.status).toBe(400);
        expect(refused.message).toMatch(row.refused!);
        for (const url of tampered(row)) expect([400, 403], url).toContain((await answer(signing[row.secret]!, url)).status);
      });
    }
  }
});
