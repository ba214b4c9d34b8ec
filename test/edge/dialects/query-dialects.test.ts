// imgix's and Cloudflare's URLs at the edge: their own documentation's
// examples reach the canonical URI of the native URL for the same image (so
// the same cache entry and stored variant), what we cannot do alike is a 400
// naming the dialect, imgix's signatures verify by its documented algorithm,
// and hostile input is refused in linear time.

import * as nodeCrypto from 'node:crypto';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { bundleFunction } from '../../../lib/edge-function';
import { dialectStoreForm } from '../../../lambda/edge/store';
import { DIALECT_MODULES } from '../../../lambda/edge/dialects/index';
import { cloudflare } from '../../../lambda/edge/dialects/cloudflare';
import type { Dialect } from '../../../lambda/edge/dialects/dialect';
import { imgix } from '../../../lambda/edge/dialects/imgix';
import { isGrammarError, splitQuery, type GrammarError } from '../../../lambda/grammar/index';
import { unsupportedSyntax } from '../runtime-syntax';
import { CLOUDFLARE_EXAMPLES, IMGIX_EXAMPLES, dialectCanonicalUri, nativeCanonicalUri, type DialectExample } from './examples';

function refusal(run: () => unknown): GrammarError {
  try {
    run();
  } catch (error) {
    if (isGrammarError(error)) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

/** What a run throws, from this realm or a bundle's (whose errors have their `name` and `code` renamed). */
function thrown(run: () => unknown): { message: string } {
  try {
    run();
  } catch (error) {
    return error as { message: string };
  }
  throw new Error('expected a refusal');
}

function documented(name: string, dialect: Dialect, examples: DialectExample[], bundle = false) {
  describe(`${name}: the examples of its own documentation`, () => {
    it.each(examples.filter((example) => example.native))('$url is the native $native ($source)', ({ url, native }) => {
      expect(dialectCanonicalUri(dialect, url)).toBe(nativeCanonicalUri(native!));
    });
    it.each(examples.filter((example) => example.refused))('$url is refused: $refused ($source)', ({ url, refused }) => {
      const error = thrown(() => dialectCanonicalUri(dialect, url));
      expect(error.message).toMatch(refused!);
      // A bundle's refusal carries its code under a renamed property; the edge function reads it there.
      if (!bundle || isGrammarError(error)) expect((error as GrammarError).code).toBe('invalid_parameter');
    });
  });
}

/**
 * A translator as the edge function holds it: bundled, minified and with its
 * properties renamed by lib/edge-function.ts, run with the runtime's `crypto`,
 * and given its words as the edge function gives them: read from the store's JSON, under
 * the store's short names.
 */
function bundled(name: 'imgix' | 'cloudflare'): { code: string; dialect: Dialect } {
  const code = bundleFunction(`./lambda/edge/dialects/${name}.ts`, name, {});
  const context: { crypto: typeof nodeCrypto; edge?: Dialect } = { crypto: nodeCrypto };
  runInNewContext(code, context);
  context.edge!.useData(JSON.parse(JSON.stringify(dialectStoreForm(DIALECT_MODULES[name]!.data))) as object);
  return { code, dialect: context.edge! };
}
const BUNDLED = { imgix: bundled('imgix'), cloudflare: bundled('cloudflare') };

documented('imgix', imgix, IMGIX_EXAMPLES);
documented('Cloudflare', cloudflare, CLOUDFLARE_EXAMPLES);
documented('imgix as the edge bundles it', BUNDLED.imgix.dialect, IMGIX_EXAMPLES, true);
documented('Cloudflare as the edge bundles it', BUNDLED.cloudflare.dialect, CLOUDFLARE_EXAMPLES, true);

describe('the translators as the edge bundles them', () => {
  it.each(['imgix', 'cloudflare'] as const)('%s is in the language of cloudfront-js-2.0', (name) => {
    const code = BUNDLED[name].code;
    expect(unsupportedSyntax(code)).toEqual([]);
    // With the grammar's parts it uses (its refusals, the key's decoding); the lead's generated function holds them once.
    console.log(`${name} translator bundled alone: ${code.length} bytes`);
  });
});

/** The same image asked both ways has one canonical URI. */
const same = (dialect: Dialect, url: string, native: string) => expect(dialectCanonicalUri(dialect, url)).toBe(nativeCanonicalUri(native));
const refusedWith = (dialect: Dialect, url: string) => refusal(() => dialectCanonicalUri(dialect, url)).message;

describe('imgix: meanings', () => {
  it('fits: max never enlarges, scale stretches, fill pads in white unless told a colour or blur', () => {
    same(imgix, '/a.jpg?w=300&h=200&fit=max', '/a.jpg?width=300&height=200&fit=inside');
    same(imgix, '/a.jpg?w=300&h=200&fit=scale', '/a.jpg?width=300&height=200&fit=fill&enlarge=1');
    same(imgix, '/a.jpg?w=300&h=200&fit=fill', '/a.jpg?width=300&height=200&fit=contain&enlarge=1&background=ffffff');
    same(imgix, '/a.jpg?w=300&h=200&fit=fill&fill-color=80FF0000', '/a.jpg?width=300&height=200&fit=contain&enlarge=1&background=ff000080');
    same(imgix, '/a.jpg?w=300&h=200&fit=fill&fill=blur', '/a.jpg?width=300&height=200&fit=contain&enlarge=1&fill=blur');
    same(imgix, '/a.jpg?w=300&fit=max', '/a.jpg?width=300');
    expect(refusedWith(imgix, '/a.jpg?w=300&h=200&fit=min')).toBe('imgix fit=min: not supported.');
    expect(refusedWith(imgix, '/a.jpg?w=300&h=200&fit=fill&fill-color=ff0000&bg=00ff00')).toMatch(
      /^imgix bg=00ff00: a background beside fill-color/,
    );
  });

  it('colour offsets become factors; -100 brightness or contrast, which our 0 ignores, is refused', () => {
    same(imgix, '/a.jpg?bri=-50&con=25&sat=-100', '/a.jpg?brightness=0.5&contrast=1.25&saturation=0');
    same(imgix, '/a.jpg?bri=0', '/a.jpg');
    expect(refusedWith(imgix, '/a.jpg?bri=-100')).toBe('imgix bri=-100: expected -99 to 100.');
    expect(refusedWith(imgix, '/a.jpg?con=101')).toBe('imgix con=101: expected -99 to 100.');
    expect(refusedWith(imgix, '/a.jpg?sat=lots')).toBe('imgix sat=lots: expected -99 to 100.');
  });

  it('turns, mirrors, trim, blur and formats', () => {
    same(imgix, '/a.jpg?or=6&flip=hv', '/a.jpg?rotate=90&flip=1&flop=1');
    // imgix turns the frame, then mirrors; we mirror, then turn: a quarter turn swaps the mirrors.
    same(imgix, '/a.jpg?or=90&flip=h', '/a.jpg?rotate=90&flip=1');
    same(imgix, '/a.jpg?or=270&flip=v', '/a.jpg?rotate=270&flop=1');
    same(imgix, '/a.jpg?or=180&flip=h', '/a.jpg?rotate=180&flop=1');
    same(imgix, '/a.jpg?orient=90&rot=180', '/a.jpg?rotate=270');
    expect(refusedWith(imgix, '/a.jpg?rot=45')).toMatch(/^imgix rot=45: only 0 and 180/);
    expect(refusedWith(imgix, '/a.jpg?or=2')).toBe('imgix or=2: not supported.');
    same(imgix, '/a.jpg?trim=auto', '/a.jpg?trim');
    expect(refusedWith(imgix, '/a.jpg?trim=color&trim-color=fff')).toBe('imgix trim-color=fff: not supported.');
    same(imgix, '/a.jpg?blur=200', '/a.jpg?blur=10');
    same(imgix, '/a.jpg?blur=1', '/a.jpg?blur=0.3');
    same(imgix, '/a.jpg?blur=0', '/a.jpg');
    expect(refusedWith(imgix, '/a.jpg?blur=2001')).toBe('imgix blur=2001: expected 0 to 2000.');
    same(imgix, '/a.jpg?fm=pjpg&q=70', '/a.jpg?format=jpeg&quality=70');
    same(imgix, '/a.jpg?fm=webp&auto=format', '/a.jpg?format=webp');
    expect(refusedWith(imgix, '/a.jpg?fm=json')).toBe('imgix fm=json: not supported.');
    same(imgix, '/a.jpg?bg=8F00', '/a.jpg?background=ff000088');
  });

  it('names imgix does not define are ignored as imgix ignores them; those it defines and we lack are refused', () => {
    same(imgix, '/a.jpg?w=300&utm_source=mail&ixlib=js-3.8.0&v=2', '/a.jpg?width=300&enlarge=1');
    // Given twice, a name imgix ignores is still ignored; an auto word twice counts once; an empty q is none.
    same(imgix, '/a.jpg?w=300&v=1&v=2', '/a.jpg?width=300&enlarge=1');
    same(imgix, '/a.jpg?auto=format,format&auto=compress,compress', '/a.jpg?format=auto&quality=45');
    same(imgix, '/a.jpg?auto=compress&q=', '/a.jpg?quality=45');
    expect(refusedWith(imgix, '/a.jpg?txt=Hello&txt-line=2')).toBe('imgix txt-line=2: not supported.');
    expect(refusedWith(imgix, '/a.jpg?mark64=aHR0cHM6Ly9h')).toBe('imgix mark64=aHR0cHM6Ly9h: not supported.');
    expect(refusedWith(imgix, '/a.jpg?ba=top')).toBe('imgix ba=top: not supported.');
    expect(refusedWith(imgix, '/a.jpg?w=0.5')).toMatch(/^imgix w=0\.5: sizes relative to the source/);
    expect(refusedWith(imgix, '/a.jpg?w=100&width=200')).toBe('imgix width=200: given more than once.');
  });
});

describe.each([
  ['imgix', imgix],
  ['imgix as the edge bundles it', BUNDLED.imgix.dialect],
])('%s: signatures (s), by the vectors of imgix-blueprint', (_name, dialect) => {
  const TOKEN = 'FOO123bar';
  const verify = (url: string, secrets = [TOKEN], now = 1_700_000_000) =>
    dialect.verify({ uri: url.split('?')[0]!, pairs: splitQuery(url.split('?')[1] || '') }, secrets, now);

  it.each([
    '/users/1.png?s=6797c24146142d5b40bde3141fd3600c',
    '/users/1.png?w=400&h=300&s=c7b86f666a832434dd38577e38cf86d1',
    '/users/1.png?h=300&w=400&s=1a4e48641614d1109c6a7af51be23d18',
    '/http%3A%2F%2Favatars.com%2Fjohn-smith.png?s=493a52f008c91416351f8b33d4883135',
    '/http%3A%2F%2Favatars.com%2Fjohn-smith.png?w=400&h=300&s=61ea1cc7add87653bb0695fe25f2b534',
  ])('%s verifies', (url) => {
    expect(verify(url)).toBe('valid');
    expect(verify(url, ['rotated-out', TOKEN])).toBe('valid');
  });

  it('a tampered path, query, signature or secret is invalid; none is unsigned; two are invalid', () => {
    expect(verify('/users/2.png?w=400&h=300&s=c7b86f666a832434dd38577e38cf86d1')).toBe('badSignature');
    expect(verify('/users/1.png?w=401&h=300&s=c7b86f666a832434dd38577e38cf86d1')).toBe('badSignature');
    expect(verify('/users/1.png?w=400&h=300&s=c7b86f666a832434dd38577e38cf86d2')).toBe('badSignature');
    expect(verify('/users/1.png?w=400&h=300&s=c7b86f666a832434dd38577e38cf86d1', ['FOO123baz'])).toBe('badSignature');
    expect(verify('/users/1.png?w=400&h=300&s=c7b86f666a832434dd38577e38cf86d1', [])).toBe('badSignature');
    expect(verify('/users/1.png?w=400&h=300')).toBe('unsigned');
    expect(verify('/users/1.png?s=6797c24146142d5b40bde3141fd3600c&s=6797c24146142d5b40bde3141fd3600c')).toBe('badSignature');
  });

  it('expires is covered by the signature and refused once past', () => {
    const query = 'w=100&expires=1700000100';
    const url = '/a.jpg?' + query + '&s=' + md5(TOKEN + '/a.jpg?' + query);
    expect(verify(url, [TOKEN], 1_700_000_099)).toBe('valid');
    expect(verify(url, [TOKEN], 1_700_000_100)).toBe('expired');
    expect(verify(url.replace('1700000100', '1900000000'), [TOKEN], 1_700_000_099)).toBe('badSignature');
  });

  it('a query signed with its commas as written, or escaped as imgix libraries write them, verifies', () => {
    const literal = 'auto=format,compress&w=300';
    expect(verify('/a.jpg?' + literal + '&s=' + md5(TOKEN + '/a.jpg?' + literal))).toBe('valid');
    const escaped = 'auto=format%2Ccompress&w=300';
    expect(verify('/a.jpg?' + escaped + '&s=' + md5(TOKEN + '/a.jpg?' + escaped))).toBe('valid');
  });
});

describe('Cloudflare: meanings', () => {
  it('gravity places only crops; mirrors keep their axes under a turn (Cloudflare mirrors, then turns, as we do)', () => {
    same(cloudflare, '/cdn-cgi/image/w=300,h=300,fit=pad,gravity=left/a.jpg', '/a.jpg?w=300&h=300&fit=contain&enlarge=1');
    same(cloudflare, '/cdn-cgi/image/flip=v,rotate=270/a.jpg', '/a.jpg?rotate=270&flip=1');
    same(cloudflare, '/cdn-cgi/image/flip=hv,rotate=90/a.jpg', '/a.jpg?rotate=90&flip=1&flop=1');
    same(cloudflare, '/cdn-cgi/image/flip=v,rotate=180/a.jpg', '/a.jpg?rotate=180&flip=1');
  });

  it('what changes nothing is dropped: gamma and sharpen 0, onerror=redirect, anim=true, zoom=0', () => {
    same(cloudflare, '/cdn-cgi/image/width=100,gamma=0,sharpen=0,onerror=redirect,anim=true,zoom=0/a.jpg', '/a.jpg?width=100');
    expect(refusedWith(cloudflare, '/cdn-cgi/image/anim=false/a.gif')).toBe('cloudflare anim=false: not supported.');
    expect(refusedWith(cloudflare, '/cdn-cgi/image/gravity=face,zoom=0.5/a.jpg')).toBe('cloudflare zoom=0.5: not supported.');
  });

  it('an absolute source reads as the key <host>/<path>, written plain or encoded; with a query of its own it is refused', () => {
    same(cloudflare, '/cdn-cgi/image/width=100/HTTPS://shop.example.com/a.jpg', '/shop.example.com/a.jpg?width=100');
    same(cloudflare, '/cdn-cgi/image/width=100/https:/shop.example.com/a.jpg', '/shop.example.com/a.jpg?width=100');
    same(cloudflare, '/cdn-cgi/image/width=100/https%3A%2F%2Fshop.example.com%2Fa.jpg', '/shop.example.com/a.jpg?width=100');
    expect(refusedWith(cloudflare, '/cdn-cgi/image/width=100/https://shop.example.com/a.jpg?v=2')).toMatch(/query cannot be kept/);
  });

  it('has no signature of its own', () => {
    expect(cloudflare.verify({ uri: '/cdn-cgi/image/width=100/a.jpg', pairs: [['sig', 'x']] }, ['secret'], 0)).toBe('unsigned');
  });
});

describe('hostile input', () => {
  it.each([
    [imgix, '/a/../b.jpg?w=100', 'invalid_key'],
    [imgix, '/a%2F..%2Fb.jpg?w=100', 'invalid_key'],
    [imgix, '/a/%2e%2e/b.jpg?w=100', 'invalid_key'],
    [imgix, '/a%ZZ.jpg?w=100', 'invalid_key'],
    [imgix, '/a.jpg?fit=%00', 'invalid_parameter'],
    [cloudflare, '/cdn-cgi/image/width=100/a/../b.jpg', 'invalid_key'],
    [cloudflare, '/cdn-cgi/image/width=100/a%2F..%2Fb.jpg', 'invalid_key'],
    [cloudflare, '/cdn-cgi/image/width=100//a.jpg', 'invalid_key'],
    [cloudflare, '/cdn-cgi/image/width=100', 'invalid_key'],
    [cloudflare, '/cdn-cgi/image/width=100/https://', 'invalid_key'],
    [cloudflare, '/images/a.jpg', 'invalid_key'],
    [cloudflare, '/cdn-cgi/image/width=1%ZZ/a.jpg', 'invalid_parameter'],
    [cloudflare, '/cdn-cgi/image/width=100,width=200/a.jpg', 'invalid_parameter'],
    [cloudflare, '/cdn-cgi/image/shadow=1/a.jpg', 'invalid_parameter'],
    [cloudflare, '/cdn-cgi/image/fit=cover,w=100,h=100,gravity=2x2/a.jpg', 'invalid_parameter'],
    [cloudflare, '/cdn-cgi/image/blur=251/a.jpg', 'invalid_parameter'],
    [cloudflare, '/cdn-cgi/image/' + 'width=1,'.repeat(40) + '/a.jpg', 'invalid_parameter'],
  ] as const)('%#: %s is a %s', (dialect, url, code) => {
    expect(refusal(() => dialectCanonicalUri(dialect, url)).code).toBe(code);
  });

  it('a refusal quotes at most 40 characters of what it was given', () => {
    const message = refusedWith(imgix, '/a.jpg?txt=a&txt-size=' + 'x'.repeat(10_000));
    expect(message.length).toBeLessThan(80);
  });

  /** 100 KB of `unit` (over ten times CloudFront's longest URL) between `before` and `after`. */
  const hostile = (before: string, unit: string, after: string) => before + unit.repeat(100_000 / unit.length) + after;
  it.each([
    [imgix, hostile('/a.jpg?utm=', 'x', '&w=1&mark' + '6'.repeat(1000) + '4=1')],
    [imgix, hostile('/a.jpg?crop=', 'top,', '&fit=crop')],
    [imgix, hostile('/a.jpg?', 'w=1&', '')],
    [cloudflare, hostile('/cdn-cgi/image/gravity=', '1.', 'x1y,fit=cover/a.jpg')],
    [cloudflare, hostile('/cdn-cgi/image/background=', 'f', '/a.jpg')],
    [cloudflare, hostile('/cdn-cgi/image/w=1/', 'a/', '..')],
  ] as const)('%#: 100 KB of hostile input is refused in under a second (quadratic work would take many seconds)', (dialect, url) => {
    const start = performance.now();
    expect(() => dialectCanonicalUri(dialect, url)).toThrow();
    expect(performance.now() - start).toBeLessThan(1000);
  });
});

function md5(text: string): string {
  return nodeCrypto.createHash('md5').update(text).digest('hex');
}
