// The dialect functions as deployed: the generated files for DIT's base64 JSON
// requests and its Thumbor paths, run in the CloudFront sandbox on the store a
// deploy writes. DIT's documented examples reach the canonical URI of the
// native URL for the same image (so the same cache entry, variant and purge);
// what we cannot honour is a 400 naming DIT's operation; signatures made by
// DIT's and Thumbor's documented algorithms verify, anything else is a 403;
// hostile requests are refused in bounded, linear work.

import { beforeAll, describe, expect, it } from 'vitest';
import { viewerRequestFunctionCode } from '../../lib/edge-function';
import { forwardedQuery, isResponse, viewerEvent, type LoadedFunction } from '../../local/emulator/cloudfront-function';
import { DIALECT_REQUEST, MAX_DIALECT_REQUEST } from '../../lambda/grammar';
import { DIT_CASES, ditRequest, type DialectCase } from '../support/dialect-cases';
import { CHROMIUM_ACCEPT, loadEdge } from './fixtures';
import { ditSignature, expires, OLD_SECRET, SECRET, thumborHash } from './dialect-signers';
import { answer, settings } from './dialect-harness';

const functions: { [grammar: string]: LoadedFunction } = {};
const signed: { [grammar: string]: LoadedFunction } = {};
beforeAll(() => {
  for (const grammar of ['native', 'dit-json', 'thumbor', 'imgix', 'cloudflare'] as const) {
    functions[grammar] = loadEdge(settings(grammar));
    signed[grammar] = loadEdge(settings(grammar, true), `${SECRET}\n${OLD_SECRET}`);
  }
});

const name = (test: DialectCase) => `${test.path.slice(0, 70)}${test.query ? '?' + test.query : ''} (${test.source})`;

describe("DIT's documented examples", () => {
  for (const test of DIT_CASES.filter((example) => example.native)) {
    it(`${name(test)} is the native ${test.native!.path}?${test.native!.query}`, async () => {
      const dialect = await answer(functions[test.grammar]!, test.path, test.query);
      const native = await answer(functions.native!, test.native!.path, test.native!.query);
      expect(dialect).toEqual({ status: 200, uri: test.native!.canonical });
      expect(native).toEqual(dialect);
      // And for a browser that negotiates AVIF: the same negotiation.
      const negotiated = await answer(functions[test.grammar]!, test.path, test.query, CHROMIUM_ACCEPT);
      expect(negotiated).toEqual(await answer(functions.native!, test.native!.path, test.native!.query, CHROMIUM_ACCEPT));
    });
  }
  for (const test of DIT_CASES.filter((example) => example.refused)) {
    it(`${name(test)} is refused, naming DIT's operation`, async () => {
      const refused = await answer(functions[test.grammar]!, test.path, test.query);
      expect(refused.status).toBe(test.refused!.status);
      expect(refused.message).toMatch(test.refused!.message);
    });
  }
});

describe('the query beside a DIT request', () => {
  it("refuses, naming it, a native parameter whose reader DIT's functions leave out (a crop region, border, focal point, dpr, format=json, a text)", async () => {
    for (const [query, named] of [
      ['crop=0,0,0.5,0.5', 'crop'],
      ['text=Hello', 'text'],
      ['text-size=40', 'text-size'],
      ['border=4,000', 'border'],
      ['FP=0.5,0.5', 'fp'],
      ['width=300&dpr=2', 'dpr'],
      ['format=json', 'format=json'],
      ['fm=JSON', 'fm=json'],
    ]) {
      for (const [grammar, path] of [
        ['thumbor', '/fit-in/300x200/photos/cat.jpg'],
        ['dit-json', ditRequest({ key: 'photos/cat.jpg' })],
      ] as const) {
        expect(await answer(functions[grammar]!, path, query), `${grammar} ${query}`).toEqual({
          status: 400,
          message: `DIT ${named}: not supported here.`,
        });
      }
    }
    // Nor is metadata asked in DIT's own words.
    expect(await answer(functions['dit-json']!, ditRequest({ key: 'a.jpg', edits: { toFormat: 'json' } }))).toEqual({
      status: 400,
      message: 'DIT format=json: not supported here.',
    });
    expect((await answer(functions.thumbor!, '/filters:format(json)/a.jpg')).status).toBe(400);
  });

  it("reads the native parameters it does read as a native URL's, a watermark's version among them", async () => {
    expect(await answer(functions.thumbor!, '/photos/cat.jpg', 'w=300&wm=logo&q=70')).toEqual({
      status: 200,
      uri: '/photos/cat.jpg/width=300,watermark=logo.1a2b3c4d,quality=70',
    });
  });
});

describe("a JSON request's format qualities", () => {
  it("count for the output's format wherever toFormat stands, else the first given", async () => {
    const late = ditRequest({ key: 'a.jpg', edits: { jpeg: { quality: 90 }, webp: { quality: 60 }, toFormat: 'webp' } });
    expect(await answer(functions['dit-json']!, late)).toEqual({ status: 200, uri: '/a.jpg/quality=60,format=webp' });
    const none = ditRequest({ key: 'a.jpg', edits: { avif: { quality: 40 }, jpeg: { quality: 90 } } });
    expect(await answer(functions['dit-json']!, none)).toMatchObject({ status: 200, uri: expect.stringContaining('quality=40') });
    const other = ditRequest({ key: 'a.jpg', edits: { jpeg: { quality: 90 }, toFormat: 'png' } });
    expect(await answer(functions['dit-json']!, other)).toEqual({ status: 200, uri: '/a.jpg/format=png' });
  });
});

describe('buckets', () => {
  it("refuses, as DIT does, with a 403, a bucket that is not one of the deployment's, without naming those that are", async () => {
    const refused = await answer(functions['dit-json']!, ditRequest({ bucket: 'someone-elses', key: 'a.jpg' }));
    expect(refused).toEqual({ status: 403, message: 'This request names a bucket this deployment does not serve.' });
    expect(await answer(functions.thumbor!, '/s3:someone-elses/a.jpg')).toEqual(refused);
    expect(await answer(functions.thumbor!, '/filters:rotate(90)/s3:someone-elses/filters:grayscale()/a.jpg')).toEqual(refused);
  });

  it("refuses an overlay from a bucket that is not one of the deployment's, and serves one from one that is", async () => {
    const overlay = (bucket: string) => ditRequest({ key: 'a.jpg', edits: { overlayWith: { bucket, key: 'brand/logo.png' } } });
    expect(await answer(functions['dit-json']!, overlay('someone-elses'))).toMatchObject({ status: 403 });
    expect(await answer(functions.thumbor!, '/filters:watermark(someone-elses,brand/logo.png)/a.jpg')).toMatchObject({ status: 403 });
    const served = { status: 200, uri: '/a.jpg/watermark=logo.1a2b3c4d' };
    expect(await answer(functions['dit-json']!, overlay('my-archive'))).toEqual(served);
    expect(await answer(functions.thumbor!, '/filters:watermark(my-archive,brand/logo.png)/a.jpg')).toEqual(served);
    expect(await answer(functions.thumbor!, '/filters:watermark(logo.png)/a.jpg')).toEqual(served);
  });

  it('reads the map only when a request names a bucket', async () => {
    const fn = functions['dit-json']!;
    const before = fn.kvs.keysRead.length;
    await answer(fn, ditRequest({ key: 'a.jpg' }));
    expect(fn.kvs.keysRead.slice(before)).not.toContain('buckets');
  });
});

describe('signatures', () => {
  const request = ditRequest({ bucket: 'my-images', key: 'photos/cat.jpg', edits: { resize: { width: 200 } } });

  it("verifies DIT's signature of a base64 request, with either active secret, and refuses a tampered one", async () => {
    expect(await answer(signed['dit-json']!, request, `signature=${ditSignature(request)}`)).toMatchObject({ status: 200 });
    expect(await answer(signed['dit-json']!, request, `signature=${ditSignature(request, {}, OLD_SECRET)}`)).toMatchObject({ status: 200 });
    const tampered = ditRequest({ bucket: 'my-images', key: 'photos/cat.jpg', edits: { resize: { width: 2000 } } });
    expect(await answer(signed['dit-json']!, tampered, `signature=${ditSignature(request)}`)).toEqual({
      status: 403,
      message: 'The signature is not valid for this URL.',
    });
  });

  it('refuses every other signature form with 403', async () => {
    const good = ditSignature(request);
    const forms = {
      unsigned: '',
      'wrong secret': `signature=${ditSignature(request, {}, 'not-the-secret')}`,
      'upper-case hex': `signature=${good.toUpperCase()}`,
      truncated: `signature=${good.slice(0, 32)}`,
      'given twice': `signature=${good}&signature=${good}`,
      'a parameter added after signing': `signature=${good}&format=png`,
      empty: 'signature=',
      "our own sig instead of DIT's": `sig=${good}`,
    };
    for (const [form, query] of Object.entries(forms)) {
      expect((await answer(signed['dit-json']!, request, query)).status, form).toBe(403);
    }
  });

  it('covers the other parameters, expires among them: a URL past it is refused, a malformed one never works', async () => {
    const later = expires(3600);
    const past = expires(-60);
    const query = (at: string) => `expires=${at}&signature=${ditSignature(request, { expires: at })}`;
    expect(await answer(signed['dit-json']!, request, query(later))).toMatchObject({ status: 200 });
    expect(await answer(signed['dit-json']!, request, query(past))).toEqual({ status: 403, message: 'This URL has expired.' });
    expect((await answer(signed['dit-json']!, request, query('tomorrow'))).status).toBe(403);
    const withFormat = `format=webp&signature=${ditSignature(request, { format: 'webp' })}`;
    expect(await answer(signed['dit-json']!, request, withFormat)).toMatchObject({ status: 200 });
    // Several, in any order in the URL: DIT signs them sorted.
    const several = { width: '100', format: 'webp', expires: later };
    const sent = `width=100&signature=${ditSignature(request, several)}&format=webp&expires=${later}`;
    expect(await answer(signed['dit-json']!, request, sent)).toEqual({
      status: 200,
      uri: '/photos/cat.jpg/width=100,enlarge=1,format=webp',
    });
  });

  it("verifies Thumbor's HMAC segment and DIT's signature of a Thumbor path; unsafe/ is unsigned", async () => {
    const rest = '300x200/smart/photos/cat.jpg';
    const expected = { status: 200, uri: '/photos/cat.jpg/width=300,height=200,position=face,enlarge=1' };
    expect(await answer(signed.thumbor!, `/${thumborHash(rest)}/${rest}`)).toEqual(expected);
    expect(await answer(signed.thumbor!, `/${thumborHash(rest, OLD_SECRET)}/${rest}`)).toEqual(expected);
    expect(await answer(signed.thumbor!, `/${rest}`, `signature=${ditSignature('/' + rest)}`)).toEqual(expected);
    expect((await answer(signed.thumbor!, `/${thumborHash(rest)}/301x200/smart/photos/cat.jpg`)).status).toBe(403);
    expect((await answer(signed.thumbor!, `/${thumborHash(rest, 'wrong')}/${rest}`)).status).toBe(403);
    // The HMAC covers the path only: a query beside it, which could ask for any other variant, voids it.
    expect((await answer(signed.thumbor!, `/${thumborHash(rest)}/${rest}`, 'width=4000&quality=100')).status).toBe(403);
    expect(await answer(signed.thumbor!, `/unsafe/${rest}`)).toEqual({ status: 403, message: 'This URL must be signed.' });
    // A native URL through the Thumbor function is signed DIT's way too.
    expect((await answer(signed.thumbor!, '/photos/cat.jpg', 'width=300')).status).toBe(403);
    const native = `width=300&signature=${ditSignature('/photos/cat.jpg', { width: '300' })}`;
    expect(await answer(signed.thumbor!, '/photos/cat.jpg', native)).toEqual({ status: 200, uri: '/photos/cat.jpg/width=300' });
  });

  // DIT signs its pairs decoded and joined unescaped, so a pair holding `=` or `&` could write another request's text.
  it('refuses a pair DIT could not have signed: one that spells several, or an expiry folded into a name', async () => {
    const later = expires(3600);
    const past = expires(-60);
    const forgeries: [string, string, string][] = [
      // An expired URL with its expiry folded into a name: no end date left.
      ['dit-json', request, `expires%3D${past}%26format=webp&signature=${ditSignature(request, { expires: past, format: 'webp' })}`],
      // A signed quality and width folded into one ignored name: the original served.
      [
        'dit-json',
        request,
        `format%3Dwebp%26quality%3D30%26width=100&signature=${ditSignature(request, { format: 'webp', quality: '30', width: '100' })}`,
      ],
      // Or into a value, `&` and `=` in it.
      ['dit-json', request, `format=webp%26quality%3D30&signature=${ditSignature(request, { format: 'webp', quality: '30' })}`],
      [
        'thumbor',
        '/fit-in/300x200/photos/cat.jpg',
        `expires%3D${past}%26format=webp&signature=${ditSignature('/fit-in/300x200/photos/cat.jpg', { expires: past, format: 'webp' })}`,
      ],
      // A signed watermark dropped: `wm` folded into the name of an expiry still to come.
      [
        'thumbor',
        '/photos/cat.jpg',
        `expires%3D${later}%26wm=logo&signature=${ditSignature('/photos/cat.jpg', { expires: later, wm: 'logo' })}`,
      ],
      // The query moved into the path: `%3F` decodes to the `?` that starts the signed query.
      [
        'thumbor',
        '/fit-in/300x200/photos/cat.jpg%3Fexpires=' + past,
        `signature=${ditSignature('/fit-in/300x200/photos/cat.jpg', { expires: past })}`,
      ],
      ['thumbor', '/photos/cat.jpg%3Fwm=logo', `signature=${ditSignature('/photos/cat.jpg', { wm: 'logo' })}`],
      // A name holding a `#` or a control character, which no signer writes.
      ['thumbor', '/photos/cat.jpg', `w%23=1&signature=${ditSignature('/photos/cat.jpg', { 'w#': '1' })}`],
      ['thumbor', '/photos/cat.jpg', `w%09=1&signature=${ditSignature('/photos/cat.jpg', { 'w\t': '1' })}`],
    ];
    for (const [grammar, path, query] of forgeries) {
      expect(await answer(signed[grammar]!, path, query), `${path}?${query}`).toEqual({
        status: 403,
        message: 'The signature is not valid for this URL.',
      });
    }
  });

  it('refuses a Thumbor path whose escapes cut it otherwise than the text signed', async () => {
    const rest = 'fit-in/300x200/photos/cat.jpg';
    // The decoded text is the signed one, but the path read is the key `fit-in/300x200/photos/cat.jpg`.
    for (const sent of ['/fit-in%2F300x200/photos/cat.jpg', '/%66it-in/300x200/photos/cat.jpg', '/fit-in/%33%30%30x200/photos/cat.jpg']) {
      expect((await answer(signed.thumbor!, sent, `signature=${ditSignature('/' + rest)}`)).status, sent).toBe(403);
      expect((await answer(signed.thumbor!, `/${thumborHash(rest)}${sent}`)).status, sent).toBe(403);
    }
    // A key with an escaped `%`: signed as written, it is that key; its decoded text, once more decoded, another.
    const literal = 'fit-in/300x200/photos/100%25.jpg';
    expect(await answer(signed.thumbor!, `/${thumborHash(literal)}/${literal}`)).toMatchObject({ status: 200 });
    expect((await answer(signed.thumbor!, `/${thumborHash(literal)}/fit-in/300x200/photos/100%2525.jpg`)).status).toBe(403);
    // An escaped key character is the same key: it verifies.
    const escaped = '/fit-in/300x200/photos/c%61t.jpg';
    const expected = { status: 200, uri: '/photos/cat.jpg/width=300,height=200,fit=inside,enlarge=1' };
    expect(await answer(signed.thumbor!, escaped, `signature=${ditSignature('/' + rest)}`)).toEqual(expected);
    expect(await answer(signed.thumbor!, `/${thumborHash(rest)}${escaped}`)).toEqual(expected);
  });

  it('signs over the path with a space decoded, as Thumbor and DIT saw it', async () => {
    const rest = 'fit-in/100x100/my cat.jpg';
    const sent = '/' + rest.replace(' ', '%20');
    expect(await answer(signed.thumbor!, `/${thumborHash(rest)}${sent}`)).toMatchObject({ status: 200 });
    expect(await answer(signed.thumbor!, sent, `signature=${ditSignature('/' + rest)}`)).toMatchObject({ status: 200 });
  });
});

describe('hostile requests', () => {
  const refusedAt = async (grammar: string, path: string, message: RegExp) => {
    const refused = await answer(functions[grammar]!, path);
    expect(refused.status, path.slice(0, 80)).toBe(400);
    expect(refused.message).toMatch(message);
  };
  const MALFORMED = /^DIT request: not a base64-encoded JSON request/;

  it('refuses malformed base64, text that is not UTF-8, and JSON that does not parse or is no request', async () => {
    await refusedAt('dit-json', '/eyJ!!', MALFORMED);
    await refusedAt('dit-json', '/eyJr=ZXki', MALFORMED);
    await refusedAt('dit-json', '/' + Buffer.from([0x7b, 0x22, 0xff, 0xfe]).toString('base64'), MALFORMED);
    await refusedAt('dit-json', '/' + Buffer.from('{"key":').toString('base64'), MALFORMED);
    await refusedAt('dit-json', ditRequest({ edits: {} }), /^DIT key: not supported/);
    await refusedAt('dit-json', '/' + Buffer.from('{"key":null}').toString('base64'), /^DIT key/);
  });

  it('refuses nesting and size bombs before parsing them, in time linear in the request', async () => {
    const deep = '/' + Buffer.from(`{"key":"a.jpg","edits":${'['.repeat(3000)}${']'.repeat(3000)}}`).toString('base64');
    // One level deeper than any request (request, edits, resize, background).
    await refusedAt('dit-json', ditRequest({ key: 'a.jpg', edits: { resize: { background: { r: [255] } } } }), MALFORMED);
    const wide = ditRequest({ key: 'a.jpg', edits: { blur: 'x'.repeat(9000) } });
    const started = performance.now();
    await refusedAt('dit-json', deep, MALFORMED);
    await refusedAt('dit-json', wide, MALFORMED);
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('refuses unknown edit names and values of the wrong kind, naming them', async () => {
    await refusedAt('dit-json', ditRequest({ key: 'a.jpg', edits: { sepia: true } }), /^DIT edits\.sepia: not supported/);
    await refusedAt('dit-json', ditRequest({ key: 'a.jpg', edits: { resize: { kernel: 'nearest' } } }), /^DIT edits\.resize\.kernel/);
    await refusedAt('dit-json', ditRequest({ key: 'a.jpg', edits: { rotate: 45 } }), /^Invalid rotate "45"/);
    await refusedAt('dit-json', ditRequest({ key: 'a.jpg', edits: { toFormat: 'tiff' } }), /^Invalid format "tiff"/);
  });

  it("refuses a value inside an array (it has no rule), and a request's key that names a Thumbor segment", async () => {
    await refusedAt('dit-json', ditRequest({ key: 'a.jpg', edits: { rotate: [90] } }), /^DIT edits\.rotate\.0: not supported/);
    await refusedAt('dit-json', ditRequest({ key: 'a.jpg', 'fit-in': true }), /^DIT fit-in: not supported/);
    await refusedAt('dit-json', ditRequest({ key: 'a.jpg', W: 300 }), /^DIT W: not supported/);
  });

  it('refuses traversal in a key, encoded or not; an encoded slash is part of the key, never an option', async () => {
    await refusedAt('dit-json', ditRequest({ key: '../secrets/a.jpg' }), /^Invalid source key/);
    await refusedAt('thumbor', '/fit-in/100x100/..%2F..%2Fsecrets/a.jpg', /^Invalid source key: it has a "\.\." path segment/);
    await refusedAt('thumbor', '/fit-in/100x100/photos//a.jpg', /empty path segment/);
    expect(await answer(functions.thumbor!, '/fit-in%2F100x100/a.jpg')).toEqual({ status: 200, uri: '/fit-in/100x100/a.jpg/original' });
  });

  it('refuses an overlong filter list, and a filter list that never closes is part of the key', async () => {
    const filters = Array.from({ length: 25 }, () => 'grayscale()').join(':');
    await refusedAt('thumbor', `/filters:${filters}/a.jpg`, /^DIT filters: at most 24 filters/);
    const started = performance.now();
    expect(await answer(functions.thumbor!, `/filters:${'blur(1'.repeat(100)}/a.jpg`)).toMatchObject({ status: 200 });
    await refusedAt('thumbor', `/filters:${'blur(1'.repeat(2000)}/a.jpg`, /^Invalid source key: it is longer than 1024 bytes/);
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('the generated dialect functions', () => {
  it("hold DIT's code but not its rules and words, which are in the store", () => {
    for (const grammar of ['dit-json', 'thumbor'] as const) {
      const code = viewerRequestFunctionCode(settings(grammar, true));
      expect(code).not.toMatch(/northeast|not supported here|withoutEnlargement|strip_exif/);
      expect(code).toMatch(/createHmac/);
    }
    expect(viewerRequestFunctionCode(settings('native', true))).not.toMatch(/refusal|ABCDEFGHIJ/);
  });

  it("hold imgix's and Cloudflare's code but not their words and reasons, which are in the store", () => {
    expect(viewerRequestFunctionCode(settings('imgix', true))).not.toMatch(/fillmax|focalpoint|sepia|given more than once|expected -99/);
    expect(viewerRequestFunctionCode(settings('cloudflare', true))).not.toMatch(/squeeze|baseline-jpeg|onerror|expected a hex/);
  });

  it("name the dialect in a refusal of the native grammar, where every native pair is the translator's", async () => {
    expect(await answer(functions.cloudflare!, '/cdn-cgi/image/quality=low/a.jpg')).toEqual({
      status: 400,
      message: expect.stringMatching(/^cloudflare: Invalid quality "low": expected/),
    });
    expect(await answer(functions.imgix!, '/a.jpg', 'w=99999')).toEqual({
      status: 400,
      message: expect.stringMatching(/^imgix: Invalid width "99999": expected/),
    });
    // Its own refusals name it once.
    expect(await answer(functions.imgix!, '/a.jpg', 'fit=facearea')).toEqual({
      status: 400,
      message: 'imgix fit=facearea: not supported.',
    });
  });

  it("forward to the origin only the viewer's request as sent, as JSON, and none of a long one", async () => {
    const forwarded = async (fn: LoadedFunction, path: string, query = '') => {
      const result = await fn.handler(viewerEvent(path, query));
      if (isResponse(result)) throw new Error(`${path}: ${result.statusCode}`);
      return forwardedQuery(result);
    };
    // S3's own parameters never reach an origin, whoever writes them.
    const imgix = await forwarded(functions.imgix!, '/a.jpg', 'w=100&response-content-type=text%2Fhtml&s=' + 'x'.repeat(32));
    expect(imgix).toMatch(new RegExp(`^${DIALECT_REQUEST}=[^&]*$`));
    expect(JSON.parse(decodeURIComponent(imgix.split('=')[1]!))).toEqual({
      uri: '/a.jpg',
      pairs: [
        ['w', '100'],
        ['response-content-type', 'text/html'],
        ['s', 'x'.repeat(32)],
      ],
    });
    const cloudflare = await forwarded(functions.cloudflare!, '/cdn-cgi/image/width=100/a.jpg');
    expect(JSON.parse(decodeURIComponent(cloudflare.split('=')[1]!))).toEqual({ uri: '/cdn-cgi/image/width=100/a.jpg', pairs: [] });
    // Past MAX_DIALECT_REQUEST the origin's URL could pass CloudFront's 8,192 bytes: nothing is forwarded.
    const long = ditRequest({ key: 'a.jpg', edits: { resize: { width: 100 } } });
    const utm = 'utm_content=' + 'x'.repeat(MAX_DIALECT_REQUEST);
    expect(await answer(functions['dit-json']!, long, utm)).toMatchObject({ status: 200 });
    expect(await forwarded(functions['dit-json']!, long, utm)).toBe('');
    expect(await forwarded(functions['dit-json']!, long)).toMatch(new RegExp(`^${DIALECT_REQUEST}=`));
  });

  it('read no preset: a preset in a dialect URL is refused, not ignored', async () => {
    expect(await answer(functions.thumbor!, '/photos/cat.jpg', 'preset=thumb')).toEqual({
      status: 400,
      message: 'DIT preset: not supported here.',
    });
    expect(await answer(functions['dit-json']!, ditRequest({ key: 'a.jpg' }), 'p=thumb')).toMatchObject({ status: 400 });
  });
});
