// Signed URLs of every dialect, as each one's own signer writes them, through
// the generated functions: every fold of two pairs into one, split of one into
// two, re-encoding (escapes of any character, either case of hex digit) or
// reordering of their pairs, and any re-encoding of a Thumbor path, either
// verifies to the same variant (the same rewritten origin URI) or is refused.
// No text a signer signs is shared by two requests that mean different images.

import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { EdgeGrammar } from '../../lambda/edge/dialects/dialect';
import { signedImageUrl } from '../../lambda/client/sign';
import { isResponse, viewerEvent, type LoadedFunction } from '../../local/emulator/cloudfront-function';
import { ditRequest } from '../support/dialect-cases';
import { ditSignature, expires, SECRET, thumborHash } from './dialect-signers';
import { KVS_ID, loadEdge } from './fixtures';

const RUNS = { numRuns: 200 };
const WATERMARKS = { logo: '1a2b3c4d' };

const functions: { [grammar: string]: LoadedFunction } = {};
beforeAll(() => {
  for (const edgeGrammar of ['native', 'dit-json', 'thumbor', 'imgix'] as const) {
    const settings = {
      grammar: { maxDimension: 4096, watermarks: WATERMARKS },
      avif: true,
      signing: true,
      keyValueStoreId: KVS_ID,
      edgeGrammar,
    };
    functions[edgeGrammar] = loadEdge(settings, SECRET);
  }
});

type Pair = [string, string];
type Answered = { status: number; uri?: string };

const answer = async (grammar: EdgeGrammar, path: string, query: string): Promise<Answered> => {
  const result = await functions[grammar]!.handler(viewerEvent(path, query));
  return isResponse(result) ? { status: result.statusCode } : { status: 200, uri: result.uri };
};

/** How a component is escaped on the wire: which characters beyond those that must be, and in which case of hex digit. */
interface Spelling {
  escaped: boolean[];
  lowerHex: boolean;
}
/** The plainest spelling: only what must be escaped, in upper case. */
const spelling0: Spelling = { escaped: [false], lowerHex: false };
const spelling: fc.Arbitrary<Spelling> = fc.record({
  escaped: fc.array(fc.boolean(), { minLength: 1, maxLength: 16 }),
  lowerHex: fc.boolean(),
});

/** `text` percent-encoded as UTF-8: what a query component must escape always, any other character as `spelt` says. */
const escape = (text: string, spelt: Spelling, must = /[^A-Za-z0-9._~!$'()*,;:@/-]/): string =>
  Array.from(text)
    .map((c, i) => {
      if (!must.test(c) && !spelt.escaped[i % spelt.escaped.length]) return c;
      const hex = encodeURIComponent(c) === c ? '%' + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0') : encodeURIComponent(c);
      return spelt.lowerHex ? hex.toLowerCase() : hex;
    })
    .join('');

const query = (pairs: Pair[], spelt: Spelling) => pairs.map(([name, value]) => escape(name, spelt) + '=' + escape(value, spelt)).join('&');

/**
 * What a viewer may make of decoded pairs: the same in another order, or with
 * two of them folded into one pair's name or value, or one pair's value split
 * across two pairs of that name.
 */
const mutated = (pairs: Pair[]): fc.Arbitrary<Pair[]> => {
  const index = fc.integer({ min: 0, max: pairs.length - 1 });
  const fold = fc
    .tuple(index, index)
    .filter(([first, second]) => first !== second)
    .chain(([first, second]) => fc.constantFrom(...folds(pairs, first, second)));
  const split = index.chain((at) =>
    fc.integer({ min: 0, max: pairs[at]![1].length }).map((cut) => {
      const [name, value] = pairs[at]!;
      return [...pairs.slice(0, at), [name, value.slice(0, cut)], [name, value.slice(cut)], ...pairs.slice(at + 1)] as Pair[];
    }),
  );
  return fc.oneof(fc.shuffledSubarray(pairs, { minLength: pairs.length }), split, ...(pairs.length > 1 ? [fold] : []));
};

/**
 * The pairs at `first` and `second` folded into one, so that DIT's text of
 * them (`a=b&c=d`, when they sort together), or a canonical URI's (`a=b,c=d`),
 * is the same.
 */
const folds = (pairs: Pair[], first: number, second: number): Pair[][] => {
  const [[a, b], [c, d]] = [pairs[first]!, pairs[second]!];
  const rest = pairs.filter((_, at) => at !== first && at !== second);
  return [
    [...rest, [a, `${b}&${c}=${d}`]],
    [...rest, [`${a}=${b}&${c}`, d]],
    [...rest, [a, `${b},${c}=${d}`]],
  ];
};

/** Either the same variant or a refusal; `refusals` are the statuses a refusal may have. */
const sameOrRefused = async (grammar: EdgeGrammar, genuine: Answered, path: string, sent: string, refusals: number[]) => {
  const got = await answer(grammar, path, sent);
  if (got.status === 200) expect(got, `${path}?${sent}`).toEqual(genuine);
  else expect(refusals, `${path}?${sent}: ${got.status}`).toContain(got.status);
};

/** The parameters DIT reads beside its requests, and a watermark of ours, with values as a signer writes them. */
const DIT_QUERY: fc.Arbitrary<Pair[]> = fc
  .record(
    {
      format: fc.constantFrom('webp', 'png', 'jpeg'),
      width: fc.integer({ min: 1, max: 4000 }).map(String),
      height: fc.integer({ min: 1, max: 4000 }).map(String),
      grayscale: fc.constantFrom('true', 'false'),
      quality: fc.integer({ min: 1, max: 100 }).map(String),
      wm: fc.constant('logo'),
      expires: fc.integer({ min: 60, max: 86_400 }).map(expires),
    },
    { requiredKeys: [] },
  )
  .map((record) => Object.entries(record));

/** Keys with characters a path must escape, and some it may. */
const KEY = fc
  .array(fc.constantFrom('a', 'B', '7', ' ', '-', '_', '.', '(', ',', '=', '&', 'é', '+', '!'), { minLength: 1, maxLength: 8 })
  .map((chars) => `photos/${chars.join('')}.jpg`);

/** A DIT-signed request: its path as sent, its pairs, and the query with its signature. */
const ditSigned = (path: string, decodedPath: string, pairs: Pair[]) => ({
  path,
  pairs,
  signature: ditSignature(decodedPath, Object.fromEntries(pairs)),
});

describe("DIT's signature", () => {
  const jsonRequest = fc
    .record({ key: KEY, width: fc.integer({ min: 1, max: 2000 }), grayscale: fc.boolean() })
    .map(({ key, width, grayscale }) => ditRequest({ key, edits: { resize: { width }, grayscale } }));

  // The base64 path takes no escape (any is a 400 that no signer's URL meets), so its pairs are what varies.
  it('of a base64 request: every other spelling of its pairs verifies to the same variant or is a 403', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .tuple(jsonRequest, DIT_QUERY)
          .chain(([path, pairs]) => fc.tuple(fc.constant(ditSigned(path, path, pairs)), mutated(pairs), spelling)),
        async ([signed, sent, spelt]) => {
          const genuine = await answer('dit-json', signed.path, query([...signed.pairs, ['signature', signed.signature]], spelling0));
          expect(genuine.status).toBe(200);
          await sameOrRefused('dit-json', genuine, signed.path, query([...sent, ['signature', signed.signature]], spelt), [403]);
        },
      ),
      RUNS,
    );
  });

  const thumborPath = fc
    .record({
      key: KEY,
      fit: fc.constantFrom('', 'fit-in/', 'full-fit-in/'),
      size: fc.constantFrom('', '300x200/', '0x150/', '-100x-100/'),
      filter: fc.constantFrom('', 'filters:quality(60)/', 'filters:format(webp):grayscale()/', 'filters:fill(fff)/'),
      align: fc.constantFrom('', 'left/top/', 'smart/'),
    })
    .map(({ key, fit, size, filter, align }) => '/' + fit + size + (size ? align : '') + filter + key);

  it('of a Thumbor path: every other spelling of its path and pairs verifies to the same variant or is a 403', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .tuple(thumborPath, DIT_QUERY)
          .chain(([decodedPath, pairs]) =>
            fc.tuple(fc.constant(ditSigned(encodeURI(decodedPath), decodedPath, pairs)), mutated(pairs), spelling, spelling),
          ),
        async ([signed, sent, spelt, pathSpelt]) => {
          const genuine = await answer('thumbor', signed.path, query([...signed.pairs, ['signature', signed.signature]], spelling0));
          expect(genuine.status).toBe(200);
          const path = '/' + escape(decodeURI(signed.path).slice(1), pathSpelt, /[^A-Za-z0-9._~!$'()*,;:@/&=+-]/);
          await sameOrRefused('thumbor', genuine, path, query([...sent, ['signature', signed.signature]], spelt), [403]);
        },
      ),
      RUNS,
    );
  });
});

describe("Thumbor's HMAC segment", () => {
  it('signed as written or as sent: every other spelling of its path, or a pair beside it, verifies to the same variant or is a 403', async () => {
    const thumborRest = fc
      .record({
        key: KEY,
        size: fc.constantFrom('300x200/', 'fit-in/0x150/', 'full-fit-in/-100x100/smart/'),
        filter: fc.constantFrom('', 'filters:quality(60)/', 'filters:blur(7):upscale()/'),
      })
      .map(({ key, size, filter }) => size + filter + key);
    await fc.assert(
      fc.asyncProperty(thumborRest, fc.boolean(), spelling, DIT_QUERY, async (rest, asSent, pathSpelt, pairs) => {
        const sent = encodeURI(rest);
        const path = `/${thumborHash(asSent ? sent : rest)}/${sent}`;
        const genuine = await answer('thumbor', path, '');
        expect(genuine.status).toBe(200);
        const respelt = `/${thumborHash(asSent ? sent : rest)}/${escape(rest, pathSpelt, /[^A-Za-z0-9._~!$'()*,;:@/&=+-]/)}`;
        await sameOrRefused('thumbor', genuine, respelt, '', [403]);
        await sameOrRefused('thumbor', genuine, path, query(pairs, pathSpelt), [403]);
      }),
      RUNS,
    );
  });
});

/** imgix's `s`: the MD5 of its token, the path and the query as its libraries write them (every reserved character escaped). */
const imgixSigned = (path: string, pairs: Pair[]): string => {
  const written = pairs.map(([name, value]) => encodeURIComponent(name) + '=' + encodeURIComponent(value)).join('&');
  return createHash('md5')
    .update(SECRET + path + (written ? '?' + written : ''))
    .digest('hex');
};

describe("imgix's s", () => {
  const IMGIX_QUERY: fc.Arbitrary<Pair[]> = fc
    .record(
      {
        w: fc.integer({ min: 1, max: 4000 }).map(String),
        h: fc.integer({ min: 1, max: 4000 }).map(String),
        fit: fc.constantFrom('crop', 'clip', 'max', 'fill'),
        fm: fc.constantFrom('webp', 'png', 'jpg'),
        q: fc.integer({ min: 1, max: 100 }).map(String),
        auto: fc.constantFrom('format', 'format,compress'),
        expires: fc.integer({ min: 2_000_000_000, max: 2_100_000_000 }).map(String),
      },
      { requiredKeys: ['w'] },
    )
    .map((record) => Object.entries(record));

  // imgix's translator reads a request before its signature is checked, so a fold it cannot read is its 400.
  it('every other spelling of its pairs verifies to the same variant or is refused', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .tuple(
            KEY.map(encodeURI).map((key) => '/' + key),
            IMGIX_QUERY,
          )
          .chain(([path, pairs]) => fc.tuple(fc.constant({ path, pairs }), mutated(pairs), spelling)),
        async ([{ path, pairs }, sent, spelt]) => {
          const s = imgixSigned(path, pairs);
          const genuine = await answer('imgix', path, query([...pairs, ['s', s]], spelling0));
          expect(genuine.status).toBe(200);
          await sameOrRefused('imgix', genuine, path, query([...sent, ['s', s]], spelt), [400, 403]);
        },
      ),
      RUNS,
    );
  });
});

describe('the native sig', () => {
  const NATIVE_PARAMS = fc.record(
    {
      width: fc.integer({ min: 1, max: 4000 }),
      height: fc.integer({ min: 1, max: 4000 }),
      fit: fc.constantFrom('cover', 'contain', 'inside'),
      quality: fc.integer({ min: 1, max: 100 }),
      format: fc.constantFrom('webp', 'png', 'jpeg', 'auto'),
      // A version written after its name is replaced by the deployment's.
      watermark: fc.constantFrom('logo', 'logo.v2'),
      grayscale: fc.boolean(),
      blur: fc.constantFrom(0.5, 2, 10),
    },
    { requiredKeys: [] },
  );

  // The native grammar reads a query before the signature of its canonical URI is checked: a fold it cannot read is a 400.
  it('every other spelling of its pairs verifies to the same variant or is refused', async () => {
    const options = { maxDimension: 4096, watermarks: WATERMARKS };
    await fc.assert(
      fc.asyncProperty(
        fc
          .tuple(KEY, NATIVE_PARAMS, fc.boolean())
          .map(
            ([key, params, expiring]) =>
              new URL(
                signedImageUrl(
                  'https://img.example',
                  key,
                  params,
                  expiring ? { secret: SECRET, expires: Math.floor(Date.now() / 1000) + 3600 } : SECRET,
                  options,
                ),
              ),
          )
          .chain((url) => {
            const pairs = [...url.searchParams.entries()];
            return fc.tuple(fc.constant({ path: url.pathname, pairs }), mutated(pairs), spelling);
          }),
        async ([{ path, pairs }, sent, spelt]) => {
          const genuine = await answer('native', path, query(pairs, spelling0));
          expect(genuine.status).toBe(200);
          await sameOrRefused('native', genuine, path, query(sent, spelt), [400, 403]);
        },
      ),
      RUNS,
    );
  });
});
