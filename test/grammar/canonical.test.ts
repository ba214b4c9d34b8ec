// The canonical form of the URL contract: one URI per image, which is both
// the CloudFront cache key and the variant's key in the cache bucket; and the
// source-key encoding inside it.

import { describe, expect, it } from 'vitest';
import {
  DEFAULT_GRAMMAR_OPTIONS,
  MAX_KEY_BYTES,
  canonicalRequest,
  decodeKeyPath,
  encodeKeyPath,
  isGrammarError,
  parseCanonicalUri,
  presetRefusal,
  splitQuery,
  viewerQuery,
  type GrammarError,
  type GrammarOptions,
  type Negotiation,
  type Ops,
} from '../../lambda/grammar/index';

const options = DEFAULT_GRAMMAR_OPTIONS;

/** The canonical URI the edge rewrites `GET <path>?<query>` to. */
function uriOf(query: string, negotiation: Negotiation = {}, opts: GrammarOptions = options, path = '/cat.jpg'): string {
  return canonicalRequest(path, splitQuery(query), opts, negotiation).uri;
}

function grammarErrorOf(run: () => unknown): GrammarError {
  try {
    run();
  } catch (error) {
    expect(isGrammarError(error), String(error)).toBe(true);
    return error as GrammarError;
  }
  throw new Error('expected a grammar error');
}

const CHROME_ACCEPT = 'image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8';
const SAFARI_ACCEPT =
  'image/webp,image/avif,image/jxl,image/heic,image/heic-sequence,video/*;q=0.8,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5';
const OLD_FIREFOX_ACCEPT = 'image/webp,*/*';
const PLAIN_ACCEPT = 'image/png,image/*;q=0.8,*/*;q=0.5';

describe('canonical URI shape', () => {
  it.each<[string, string]>([
    ['', '/cat.jpg/original'],
    ['utm_source=x', '/cat.jpg/original'],
    ['w=640', '/cat.jpg/width=640'],
    ['h=480&w=640', '/cat.jpg/width=640,height=480'],
    [
      'format=webp&q=70&bg=fff&sharpen=1&blur=2&greyscale=1&flop=1&flip=1&rotate=90&enlarge=1&pos=top&fit=contain&h=480&w=640',
      '/cat.jpg/width=640,height=480,fit=contain,position=top,enlarge=1,rotate=90,flip=1,flop=1,grayscale=1,blur=2,sharpen=1,background=ffffff,quality=70,format=webp',
    ],
    ['blur=0.5&sharpen=.5', '/cat.jpg/blur=0.5,sharpen=0.5'],
    ['bg=%2380808080', '/cat.jpg/background=80808080'],
  ])('?%s -> %s', (query, uri) => {
    expect(uriOf(query)).toBe(uri);
  });

  it('keeps the key levels and reports the decoded key and ops', () => {
    expect(canonicalRequest('/photos/2024/cat.jpg', splitQuery('w=640&fm=png'), options)).toEqual({
      key: 'photos/2024/cat.jpg',
      ops: { width: 640, format: 'png' },
      uri: '/photos/2024/cat.jpg/width=640,format=png',
    });
  });
});

describe('defaults and no-ops are dropped', () => {
  it.each<[string, string]>([
    ['w=640&h=480&fit=cover', 'width=640,height=480'],
    ['w=640&fit=contain', 'width=640'],
    ['h=480&fit=fill', 'height=480'],
    ['fit=inside', 'original'],
    ['w=640&h=480&pos=center', 'width=640,height=480'],
    ['w=640&h=480&fit=fill&pos=top', 'width=640,height=480,fit=fill'],
    ['w=640&h=480&fit=inside&pos=left', 'width=640,height=480,fit=inside'],
    ['w=640&h=480&fit=outside&pos=bottom-right', 'width=640,height=480,fit=outside'],
    ['w=640&h=480&fit=contain&pos=entropy', 'width=640,height=480,fit=contain'],
    ['w=640&h=480&fit=contain&pos=attention', 'width=640,height=480,fit=contain'],
    ['w=640&h=480&fit=contain&gravity=auto', 'width=640,height=480,fit=contain'],
    ['w=640&position=auto', 'width=640'],
    ['w=640&h=480&fit=contain&gravity=face', 'width=640,height=480,fit=contain'],
    ['w=640&gravity=face', 'width=640'],
    ['w=640&pos=top', 'width=640'],
    ['enlarge=1', 'original'],
    ['w=640&enlarge=false', 'width=640'],
    ['rotate=0', 'original'],
    ['flip=false&flop=0&grayscale=FALSE', 'original'],
    ['dpr=2', 'original'],
    ['dpr=1&w=640', 'width=640'],
    ['format=auto', 'original'],
    ['q=80&format=jpeg', 'format=jpeg'],
    ['q=80&format=webp', 'format=webp'],
    ['q=50&format=avif', 'format=avif'],
    ['q=60&fm=png', 'format=png'],
    ['q=60&fm=gif', 'format=gif'],
    ['q=auto&fm=png', 'format=png'],
  ])('?%s -> %s', (query, segment) => {
    expect(uriOf(query)).toBe(`/cat.jpg/${segment}`);
  });

  it.each<[string, string]>([
    ['w=640&h=480&fit=contain&pos=top-left', 'width=640,height=480,fit=contain,position=top-left'],
    ['w=640&h=480&pos=entropy', 'width=640,height=480,position=entropy'],
    ['w=640&h=480&fit=cover&pos=attention', 'width=640,height=480,position=attention'],
    ['w=640&h=480&gravity=face', 'width=640,height=480,position=face'],
    ['w=640&h=480&gravity=auto', 'width=640,height=480,position=auto'],
    ['w=640&h=480&fit=cover&pos=AUTO', 'width=640,height=480,position=auto'],
    ['h=480&enlarge=1', 'height=480,enlarge=1'],
    ['q=80&fm=avif', 'quality=80,format=avif'],
    // Before format=auto is negotiated (what a signature covers), no quality is a known default.
    ['q=80', 'quality=80'],
    ['q=50&fm=webp', 'quality=50,format=webp'],
    ['q=70', 'quality=70'],
    // Chosen per image by the origin: a mode of its own, with its own cache key, in any letter case.
    ['q=Auto&fm=webp', 'quality=auto,format=webp'],
    ['quality=auto', 'quality=auto'],
  ])('but keeps what changes the image: ?%s -> %s', (query, segment) => {
    expect(uriOf(query)).toBe(`/cat.jpg/${segment}`);
  });
});

describe('dpr is folded into width and height', () => {
  it.each<[string, string]>([
    ['w=640&dpr=2', 'width=1280'],
    ['h=300&dpr=1.5', 'height=450'],
    ['w=640&h=480&dpr=2', 'width=1280,height=960'],
    ['w=5000&h=2500&dpr=2', 'width=8192,height=4096'],
    ['w=6000&h=1000&dpr=3', 'width=8192,height=1365'],
    ['w=8192&dpr=4', 'width=8192'],
  ])('?%s -> %s (within maxDimension, keeping the aspect ratio)', (query, segment) => {
    expect(uriOf(query)).toBe(`/cat.jpg/${segment}`);
  });

  it('clamps to a configured maxDimension', () => {
    expect(uriOf('w=1500&h=1000&dpr=2', {}, { maxDimension: 2000 })).toBe('/cat.jpg/width=2000,height=1333');
  });

  it('gives the same URI as asking for the device pixels directly', () => {
    expect(uriOf('w=320&dpr=2&fit=contain&h=200')).toBe(uriOf('w=640&h=400&fit=contain'));
  });
});

describe('format negotiation', () => {
  it.each<[string, string | undefined, Negotiation, string]>([
    ['Chrome', CHROME_ACCEPT, {}, 'accept=avif'],
    ['Safari', SAFARI_ACCEPT, {}, 'accept=avif'],
    ['Chrome with AVIF disabled', CHROME_ACCEPT, { avif: false }, 'accept=webp'],
    ['a WebP-only browser', OLD_FIREFOX_ACCEPT, {}, 'accept=webp'],
    ['a plain Accept', PLAIN_ACCEPT, {}, 'original'],
    ['AVIF without WebP (no fallback for the origin)', 'image/avif,*/*', {}, 'original'],
    ['*/*', '*/*', {}, 'original'],
    ['an empty Accept', '', {}, 'original'],
    ['no Accept', undefined, {}, 'original'],
  ])('format=auto for %s', (_browser, accept, extra, segment) => {
    const negotiation: Negotiation = { ...extra };
    if (accept !== undefined) negotiation.accept = accept;
    expect(uriOf('format=auto', negotiation)).toBe(`/cat.jpg/${segment}`);
    expect(uriOf('', negotiation)).toBe(`/cat.jpg/${segment}`);
  });

  it('an explicit format wins over Accept', () => {
    expect(uriOf('fm=png', { accept: CHROME_ACCEPT })).toBe('/cat.jpg/format=png');
    expect(uriOf('fm=jpg', { accept: CHROME_ACCEPT })).toBe('/cat.jpg/format=jpeg');
  });

  it('records a negotiated format as accept, an explicit one as format, so the origin can tell them apart', () => {
    expect(uriOf('w=640', { accept: CHROME_ACCEPT })).toBe('/cat.jpg/width=640,accept=avif');
    expect(uriOf('w=640&format=auto', { accept: CHROME_ACCEPT })).toBe('/cat.jpg/width=640,accept=avif');
    expect(uriOf('w=640&format=avif', { accept: CHROME_ACCEPT })).toBe('/cat.jpg/width=640,format=avif');
    expect(uriOf('w=640', { accept: OLD_FIREFOX_ACCEPT })).toBe('/cat.jpg/width=640,accept=webp');
    expect(uriOf('w=640&fm=webp', { accept: OLD_FIREFOX_ACCEPT })).toBe('/cat.jpg/width=640,format=webp');
    // An explicit format the viewer does not accept is still what it asked for.
    expect(uriOf('w=640&fm=avif', { accept: PLAIN_ACCEPT })).toBe('/cat.jpg/width=640,format=avif');
  });

  it("keeps any quality with a negotiated format: which default applies is the origin's choice", () => {
    expect(uriOf('q=50', { accept: CHROME_ACCEPT })).toBe('/cat.jpg/quality=50,accept=avif');
    expect(uriOf('q=80', { accept: OLD_FIREFOX_ACCEPT })).toBe('/cat.jpg/quality=80,accept=webp');
    expect(uriOf('q=50&fm=avif', { accept: CHROME_ACCEPT })).toBe('/cat.jpg/format=avif');
  });

  it.each([
    ['accept=avif', PLAIN_ACCEPT, '/cat.jpg/width=640'],
    ['accept=webp', CHROME_ACCEPT, '/cat.jpg/width=640,accept=avif'],
    ['ACCEPT=avif&accept=webp', OLD_FIREFOX_ACCEPT, '/cat.jpg/width=640,accept=webp'],
    ['accept=jpeg', CHROME_ACCEPT, '/cat.jpg/width=640,accept=avif'],
    ['accept=avif&fm=png', CHROME_ACCEPT, '/cat.jpg/width=640,format=png'],
  ])("ignores a viewer's ?%s like an unknown parameter: only Accept decides", (query, accept, uri) => {
    expect(uriOf(`w=640&${query}`, { accept })).toBe(uri);
  });

  const queries = [
    'w=640',
    'w=640&h=480&fit=contain&pos=top-left&bg=000',
    'w=320&dpr=2&q=50',
    'q=80&blur=3&grayscale=1',
    'rotate=90&flip=1',
    'format=json&w=10',
    'fm=png&q=90',
  ];
  it.each(queries)('Accept adds at most an accept op to the URI before negotiation: ?%s', (query) => {
    const accepts = [CHROME_ACCEPT, SAFARI_ACCEPT, OLD_FIREFOX_ACCEPT, PLAIN_ACCEPT, ''];
    const before = canonicalRequest('/cat.jpg', splitQuery(query), options);
    for (const accept of accepts) {
      for (const avif of [true, false]) {
        const negotiated = canonicalRequest('/cat.jpg', splitQuery(query), options, { accept, avif });
        const { accept: negotiatedAccept, ...rest } = negotiated.ops;
        expect(rest).toEqual(before.ops);
        if (before.ops.format) expect(negotiatedAccept).toBeUndefined();
      }
    }
  });
});

describe('format=json', () => {
  it('drops every other op', () => {
    expect(uriOf('format=json&w=640&h=480&fit=contain&blur=5&q=50&rotate=90&dpr=2')).toBe('/cat.jpg/format=json');
    expect(uriOf('fm=JSON', { accept: CHROME_ACCEPT })).toBe('/cat.jpg/format=json');
  });
});

describe('source keys', () => {
  it.each<[string, string]>([
    ['cat.jpg', '/cat.jpg'],
    ['photos/2024/my cat.jpg', '/photos/2024/my%20cat.jpg'],
    ['a+b.jpg', '/a%2Bb.jpg'],
    ['100%.png', '/100%25.png'],
    ['c#1.jpg', '/c%231.jpg'],
    ['a?b=c,d;e&f.png', '/a%3Fb%3Dc%2Cd%3Be%26f.png'],
    ["it's (1)!*.jpg", '/it%27s%20%281%29%21%2A.jpg'],
    ['café/été.jpg', '/caf%C3%A9/%C3%A9t%C3%A9.jpg'],
    ['日本/猫.png', '/%E6%97%A5%E6%9C%AC/%E7%8C%AB.png'],
    ['😀.png', '/%F0%9F%98%80.png'],
    ['A-Z_a~z.0-9', '/A-Z_a~z.0-9'],
    ['...', '/...'],
    ['a/.b/c.', '/a/.b/c.'],
  ])('%s is encoded as %s and round-trips', (key, encoded) => {
    expect(encodeKeyPath(key)).toBe(encoded);
    expect(encodeKeyPath(key)).toMatch(/^(\/([A-Za-z0-9\-._~]|%[0-9A-F]{2})+)+$/);
    expect(decodeKeyPath(encodeKeyPath(key))).toBe(key);
    expect(canonicalRequest(encoded, [], options).uri).toBe(`${encoded}/original`);
  });

  it.each<[string, string]>([
    ['/photos/my%20cat.jpg', 'photos/my cat.jpg'],
    ['/a+b.jpg', 'a+b.jpg'],
    ['/caf%c3%a9.jpg', 'café.jpg'],
    ['/café.jpg', 'café.jpg'],
    ['/%63at.jpg', 'cat.jpg'],
  ])('a viewer path %s names the key %s, whatever its encoding', (path, key) => {
    const request = canonicalRequest(path, [], options);
    expect(request.key).toBe(key);
    expect(request.uri).toBe(`${encodeKeyPath(key)}/original`);
  });

  it('accepts a key of exactly 1024 UTF-8 bytes', () => {
    expect(MAX_KEY_BYTES).toBe(1024);
    for (const key of ['a'.repeat(1024), 'é'.repeat(512), '😀'.repeat(256), 'x/'.repeat(511) + 'xx']) {
      expect(canonicalRequest(encodeKeyPath(key), [], options).key).toBe(key);
    }
  });

  it.each<[string, string]>([
    ['an empty key', '/'],
    ['no path at all', ''],
    ['a ".." segment', '/a/../b.jpg'],
    ['a leading ".."', '/../secret'],
    ['an encoded ".."', '/a/%2E%2E/b.jpg'],
    ['a ".." hidden by an encoded slash', '/a%2F..%2Fb.jpg'],
    ['a "." segment', '/./a.jpg'],
    ['an empty segment', '/a//b.jpg'],
    ['a leading slash in the key', '//a.jpg'],
    ['a trailing slash', '/a/'],
    ['a NUL', '/a%00b.jpg'],
    ['a newline', '/a%0Ab.jpg'],
    ['a DEL', '/a%7Fb.jpg'],
    ['a C1 control (NEL)', '/a%C2%85b.jpg'],
    ['a C1 control (CSI)', '/a%C2%9B31m.jpg'],
    ['a literal tab', '/a\tb.jpg'],
    ['a truncated escape', '/a%E0%A4%A.jpg'],
    ['a lone %', '/100%.jpg'],
    ['a bad escape', '/%zz.jpg'],
    ['a truncated UTF-8 sequence', '/caf%C3.jpg'],
    ['an overlong UTF-8 sequence', '/%C0%AF.jpg'],
    ['an unpaired surrogate', '/a\uD800.jpg'],
    ['1025 ASCII bytes', '/' + 'a'.repeat(1025)],
    ['1025 UTF-8 bytes in 513 characters', '/' + encodeURIComponent('é'.repeat(512) + 'a')],
  ])('rejects %s with invalid_key', (_what, path) => {
    const error = grammarErrorOf(() => canonicalRequest(path, [], options));
    expect(error.code).toBe('invalid_key');
    expect(error.message).toMatch(/^Invalid source key: /);
  });
});

describe('parseCanonicalUri', () => {
  it.each([
    '/cat.jpg/original',
    '/cat.jpg/width=640',
    '/photos/my%20cat%2B1.jpg/width=640,height=480,fit=contain,position=top-left,format=webp',
    '/a/width=640,height=480,fit=contain,position=top,enlarge=1,rotate=90,flip=1,flop=1,grayscale=1,blur=2,sharpen=1,background=ffffff,quality=70,format=webp',
    '/%E6%97%A5%E6%9C%AC/original/format=json',
    '/a/background=aabbcc80,quality=50,format=jpeg',
    '/a/blur=0.3,sharpen=10',
    '/a/accept=avif',
    '/a/width=640,quality=80,accept=webp',
    '/a/quality=50,accept=avif',
    '/a/width=640,quality=auto,accept=avif',
  ])('accepts %s', (uri) => {
    const parsed = parseCanonicalUri(uri, options);
    expect(parsed.uri).toBe(uri);
    expect(encodeKeyPath(parsed.key) + '/').toBe(uri.slice(0, uri.lastIndexOf('/') + 1));
  });

  it('returns the key and ops of the request it came from', () => {
    const request = canonicalRequest('/my%20cat.jpg', splitQuery('w=320&dpr=2&fm=avif&q=60&pos=top&h=100'), options);
    expect(parseCanonicalUri(request.uri, options)).toEqual(request);
    const negotiated = canonicalRequest('/my%20cat.jpg', splitQuery('w=320&q=60'), options, { accept: CHROME_ACCEPT });
    expect(parseCanonicalUri(negotiated.uri, options)).toEqual(negotiated);
    expect(negotiated.ops).toEqual({ width: 320, quality: 60, accept: 'avif' });
  });

  it.each<[string, string, string]>([
    ['an alias', '/cat.jpg/w=640', 'not_canonical'],
    ['an upper-case name', '/cat.jpg/WIDTH=640', 'not_canonical'],
    ['an upper-case value', '/cat.jpg/width=640,height=480,fit=CONTAIN', 'not_canonical'],
    ['upper-case ORIGINAL', '/cat.jpg/ORIGINAL', 'not_canonical'],
    ['the wrong order', '/cat.jpg/height=480,width=640', 'not_canonical'],
    ['a default spelled out', '/cat.jpg/width=640,height=480,fit=cover', 'not_canonical'],
    ['a no-op', '/cat.jpg/enlarge=1', 'not_canonical'],
    ['the default quality', '/cat.jpg/quality=80,format=jpeg', 'not_canonical'],
    ['dpr', '/cat.jpg/width=640,dpr=2', 'not_canonical'],
    ['dpr=1', '/cat.jpg/width=640,dpr=1', 'not_canonical'],
    ['format=auto', '/cat.jpg/format=auto', 'not_canonical'],
    ['format=jpg', '/cat.jpg/format=jpg', 'not_canonical'],
    ['a leading zero', '/cat.jpg/width=0640', 'not_canonical'],
    ['a boolean as true', '/cat.jpg/grayscale=true', 'not_canonical'],
    ['a short colour', '/cat.jpg/background=fff', 'not_canonical'],
    ['an upper-case colour', '/cat.jpg/background=FFFFFF', 'not_canonical'],
    ['an opaque alpha', '/cat.jpg/background=ffffffff', 'not_canonical'],
    ['a trailing zero', '/cat.jpg/blur=1.50', 'not_canonical'],
    ['an unknown op', '/cat.jpg/foo=1', 'not_canonical'],
    ['an unknown op beside a known one', '/cat.jpg/width=640,foo=1', 'not_canonical'],
    ['a trailing comma', '/cat.jpg/width=640,', 'not_canonical'],
    ['original beside ops', '/cat.jpg/original,width=640', 'not_canonical'],
    ['an empty ops segment', '/cat.jpg/', 'not_canonical'],
    ['no ops segment', '/cat.jpg', 'not_canonical'],
    ['no leading slash', 'cat.jpg/original', 'not_canonical'],
    ['a needlessly escaped key', '/ca%78.jpg/original', 'not_canonical'],
    ['lower-case hex in the key', '/caf%c3%a9.jpg/original', 'not_canonical'],
    ['a raw non-ASCII key', '/café.jpg/original', 'not_canonical'],
    ['a raw space in the key', '/my cat.jpg/original', 'not_canonical'],
    ['a literal + in the key', '/a+b.jpg/original', 'not_canonical'],
    ['an unescaped parenthesis', '/a(1).jpg/original', 'not_canonical'],
    ['a query string', '/cat.jpg/width=640?x=1', 'invalid_parameter'],
    ['an invalid value', '/cat.jpg/width=abc', 'invalid_parameter'],
    ['a repeated op', '/cat.jpg/width=640,width=640', 'invalid_parameter'],
    ['accept beside a format', '/cat.jpg/format=webp,accept=avif', 'not_canonical'],
    ['accept beside format=json', '/cat.jpg/format=json,accept=avif', 'not_canonical'],
    ['accept before another op', '/cat.jpg/accept=avif,width=640', 'not_canonical'],
    ['an upper-case accept value', '/cat.jpg/accept=AVIF', 'not_canonical'],
    ['accept=jpeg', '/cat.jpg/accept=jpeg', 'invalid_parameter'],
    ['accept=auto', '/cat.jpg/accept=auto', 'invalid_parameter'],
    ['an empty accept', '/cat.jpg/accept=', 'invalid_parameter'],
    ['an invalid key', '/a/../original', 'invalid_key'],
    ['an empty key', '//original', 'invalid_key'],
  ])('rejects %s: %s (%s)', (_what, uri, code) => {
    expect(grammarErrorOf(() => parseCanonicalUri(uri, options)).code).toBe(code);
  });

  it('applies maxDimension', () => {
    expect(grammarErrorOf(() => parseCanonicalUri('/a/width=8192', { maxDimension: 4000 })).code).toBe('invalid_parameter');
  });
});

describe('viewerQuery', () => {
  it.each<[Ops, string]>([
    [{}, ''],
    [{ width: 640, enlarge: true, format: 'webp' }, 'width=640&enlarge=1&format=webp'],
    [
      { width: 640, height: 480, fit: 'contain', position: 'top-left', background: 'aabbcc80', quality: 50, format: 'jpeg' },
      'width=640&height=480&fit=contain&position=top-left&background=aabbcc80&quality=50&format=jpeg',
    ],
    [
      { rotate: 270, flip: true, flop: true, grayscale: true, blur: 0.3, sharpen: 10, format: 'png' },
      'rotate=270&flip=1&flop=1&grayscale=1&blur=0.3&sharpen=10&format=png',
    ],
    [{ format: 'json' }, 'format=json'],
    [{ width: 640, quality: 80, accept: 'avif' }, 'width=640&quality=80'],
  ])('%o -> ?%s, which canonicalises back to the same ops', (ops, query) => {
    expect(viewerQuery(ops)).toBe(query);
    const request = canonicalRequest('/cat.jpg', splitQuery(viewerQuery(ops)), options, { accept: CHROME_ACCEPT });
    expect(request.ops).toEqual(ops.format ? ops : { ...ops, accept: 'avif' });
  });

  it('leaves accept to the edge, so it holds for the same Accept', () => {
    for (const accept of ['', OLD_FIREFOX_ACCEPT, CHROME_ACCEPT]) {
      const negotiated = canonicalRequest('/c', splitQuery('w=640&q=70'), options, { accept }).ops;
      expect(viewerQuery(negotiated)).toBe('width=640&quality=70');
      expect(canonicalRequest('/c', splitQuery(viewerQuery(negotiated)), options, { accept }).ops).toEqual(negotiated);
    }
  });
});

describe('width=auto and dpr=auto', () => {
  const options = { maxDimension: 8192 };
  const hints = (headers: Record<string, string>) => ({ accept: '', header: (name: string) => headers[name] });

  it('stay auto before negotiation (what a signature covers), and resolve with one', () => {
    expect(canonicalRequest('/cat.jpg', splitQuery('W=Auto&dpr=AUTO&q=70'), options).uri).toBe('/cat.jpg/width=auto,quality=70');
    expect(canonicalRequest('/cat.jpg', splitQuery('w=300&dpr=auto'), options).uri).toBe('/cat.jpg/width=300,dpr=auto');
    expect(canonicalRequest('/cat.jpg', splitQuery('w=auto'), options, hints({ 'sec-ch-width': '700' })).uri).toBe('/cat.jpg/width=960');
    expect(canonicalRequest('/cat.jpg', splitQuery('w=300&dpr=auto'), options, hints({ 'sec-ch-dpr': '2' })).uri).toBe(
      '/cat.jpg/width=600',
    );
  });

  it('never stand in a canonical URI: the origin refuses them', () => {
    for (const uri of ['/cat.jpg/width=auto', '/cat.jpg/width=300,dpr=auto', '/cat.jpg/dpr=auto']) {
      expect(() => parseCanonicalUri(uri, options), uri).toThrow(/Not a canonical image URI/);
    }
  });

  it('cannot be in a preset, whose auto the viewer-response function could not see to add Vary', () => {
    const grammar = {
      maxDimension: 8192,
      presets: { hero: { w: 'auto', q: '70' }, thumb: { width: '200', dpr: 'Auto' }, ok: { width: '200', format: 'auto' } },
    };
    expect(presetRefusal('hero', grammar)).toMatch(/width=auto and dpr=auto belong in the URL beside the preset/);
    expect(presetRefusal('thumb', grammar)).toMatch(/belong in the URL/);
    expect(presetRefusal('ok', grammar)).toBeUndefined();
  });
});
