// Signed URLs: the signature is the grammar's signUri over the canonical URI
// computed WITHOUT Accept negotiation, so it verifies at the edge for every
// browser, and for every spelling of the same request.

import { describe, expect, it } from 'vitest';
import { imageUrl, withSignature, type ImageParams } from '../../lambda/client';
import { signedImageUrl, signedPrefix, signedUri } from '../../lambda/client/sign';
import {
  DEFAULT_GRAMMAR_OPTIONS,
  SIGNATURE_LENGTH,
  canonicalRequest,
  signatureParams,
  signedText,
  splitQuery,
  verifySignature,
  type GrammarOptions,
} from '../../lambda/grammar';

const BASE = 'd111111abcdef8.cloudfront.net';
const SECRET = 'a-long-random-secret';
const options = DEFAULT_GRAMMAR_OPTIONS;

/** What the edge does, but for the clock: read the signature's parameters, canonicalise the rest with no Accept, verify. */
function edgeVerifies(url: string, secrets: string[], grammar: GrammarOptions = options): boolean {
  const parsed = new URL(url);
  const pairs = splitQuery(parsed.search.slice(1));
  const signature = signatureParams(pairs);
  const request = canonicalRequest(parsed.pathname, pairs, grammar);
  const text = signedText(request.key, request.ops, signature);
  return text !== undefined && verifySignature(text, signature.sig ?? '', secrets);
}

describe('signedImageUrl', () => {
  it('appends a sig that the edge verifies', () => {
    const url = signedImageUrl(BASE, 'photos/cat.jpg', { width: 640, format: 'auto' }, SECRET);
    expect(url).toMatch(new RegExp(`^https://${BASE}/photos/cat\\.jpg\\?width=640&sig=[A-Za-z0-9_-]{${SIGNATURE_LENGTH}}$`));
    expect(edgeVerifies(url, [SECRET])).toBe(true);
    expect(edgeVerifies(url, ['another-secret', SECRET])).toBe(true); // rotation: any active secret
    expect(edgeVerifies(url, ['another-secret'])).toBe(false);
  });

  it('signs the canonical URI before format=auto is negotiated', () => {
    expect(signedUri('photos/cat.jpg', { width: 640 })).toBe('/photos/cat.jpg/width=640');
    expect(signedUri('photos/cat.jpg', { w: 320, dpr: 2, fm: 'jpg' } as ImageParams)).toBe('/photos/cat.jpg/width=640,format=jpeg');
  });

  it('is ?sig=... alone when there are no parameters, and verifies', () => {
    const url = signedImageUrl(BASE, 'a.jpg', {}, SECRET);
    expect(url).toMatch(/^https:\/\/d111111abcdef8\.cloudfront\.net\/a\.jpg\?sig=[A-Za-z0-9_-]+$/);
    expect(edgeVerifies(url, [SECRET])).toBe(true);
  });

  it('gives identical URLs for equivalent calls, and the signature covers other spellings too', () => {
    const a = signedImageUrl(BASE, 'k.jpg', { w: 320, dpr: 2, q: 75 } as ImageParams, SECRET);
    const b = signedImageUrl(BASE, 'k.jpg', { quality: 75, width: 640 }, SECRET);
    expect(a).toBe(b);
    const sig = new URL(a).searchParams.get('sig');
    // A viewer spelling the same request differently, with the same signature, still passes.
    expect(edgeVerifies(`https://${BASE}/k.jpg?Q=075&W=640&fit=cover&sig=${sig}`, [SECRET])).toBe(true);
    // A different request does not.
    expect(edgeVerifies(`https://${BASE}/k.jpg?q=75&w=641&sig=${sig}`, [SECRET])).toBe(false);
  });

  it('signs keys that need encoding', () => {
    for (const key of ['photos/my cat+1 100%#é.jpg', "日本/(1)!*'~.png", 'a/b/c d/e.gif']) {
      const url = signedImageUrl(BASE, key, { width: 100 }, SECRET);
      expect(url.startsWith(imageUrl(BASE, key, { width: 100 }) + '&sig=')).toBe(true);
      expect(edgeVerifies(url, [SECRET]), key).toBe(true);
    }
  });

  it('signs a preset by its expansion, so it needs the definitions', () => {
    const grammar: GrammarOptions = { ...options, presets: { thumb: { width: '200', height: '200' } }, presetsOnly: true };
    const url = signedImageUrl(BASE, 'a.jpg', { preset: 'thumb' }, SECRET, grammar);
    expect(url).toMatch(/\?preset=thumb&sig=/);
    expect(signedUri('a.jpg', { preset: 'thumb' }, grammar)).toBe('/a.jpg/width=200,height=200');
    expect(edgeVerifies(url, [SECRET], grammar)).toBe(true);
    expect(() => signedImageUrl(BASE, 'a.jpg', { preset: 'thumb' }, SECRET)).toThrow(/needs options\.presets/);
  });

  it('refuses an empty secret and bad parameters', () => {
    expect(() => signedImageUrl(BASE, 'a.jpg', {}, '')).toThrow('signedImageUrl needs the signing secret.');
    expect(() => signedImageUrl(BASE, 'a.jpg', { width: -1 }, SECRET)).toThrow('Invalid width "-1": expected an integer from 1 to 8192.');
  });
});

describe('expiring URLs', () => {
  const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

  it('puts exp before sig, covered by it, for a Date or Unix seconds alike', () => {
    const seconds = inAnHour();
    const url = signedImageUrl(BASE, 'photos/cat.jpg', { width: 640 }, { secret: SECRET, expires: seconds });
    expect(url).toMatch(new RegExp(`^https://${BASE}/photos/cat\\.jpg\\?width=640&exp=${seconds}&sig=[A-Za-z0-9_-]{32}$`));
    expect(signedImageUrl(BASE, 'photos/cat.jpg', { width: 640 }, { secret: SECRET, expires: new Date(seconds * 1000 + 999) })).toBe(url);
    expect(edgeVerifies(url, ['another-secret', SECRET])).toBe(true);
    expect(edgeVerifies(url.replace(`exp=${seconds}`, `exp=${seconds + 1}`), [SECRET])).toBe(false);
    // Without an expiry, the URL is what it always was.
    expect(signedImageUrl(BASE, 'a.jpg', {}, { secret: SECRET })).toBe(signedImageUrl(BASE, 'a.jpg', {}, SECRET));
  });

  it('refuses a time already past, not whole seconds, or in milliseconds by mistake', () => {
    const sign = (expires: Date | number) => signedImageUrl(BASE, 'a.jpg', {}, { secret: SECRET, expires });
    expect(() => sign(Math.floor(Date.now() / 1000) - 1)).toThrow(/already past/);
    expect(() => sign(new Date(Date.now() - 1000))).toThrow(/already past/);
    expect(() => sign(Date.now())).toThrow(/not milliseconds/);
    expect(() => sign(inAnHour() + 0.5)).toThrow(/whole Unix seconds/);
    expect(() => sign(new Date(NaN))).toThrow(/whole Unix seconds/);
    expect(() => signedImageUrl(BASE, 'a.jpg', {}, { secret: '', expires: inAnHour() })).toThrow(
      'signedImageUrl needs the signing secret.',
    );
  });

  it('leaves making exp, prefix, allow and sig to the signing helpers', () => {
    for (const name of ['exp', 'prefix', 'allow', 'SIG']) {
      expect(() => imageUrl(BASE, 'a.jpg', { [name]: '1' } as ImageParams)).toThrow(/is made by signedImageUrl or signedPrefix/);
    }
  });
});

describe('signedPrefix', () => {
  const grammar: GrammarOptions = { maxDimension: 4096, sizes: [320, 640, 1280], presets: { thumb: { width: '200', height: '200' } } };
  const expires = new Date(Date.now() + 3_600_000);

  it('signs every key under the folder, with the parameters it allows, for a page to append', () => {
    const grant = signedPrefix(
      'users/42/',
      { secret: SECRET, expires, allow: [{ width: 320 }, { w: 600 } as ImageParams, { preset: 'thumb' }] },
      grammar,
    );
    expect(grant).toMatch(/^prefix=users\/42&exp=\d{10}&allow=width%3D320\+width%3D640\+width%3D320,height%3D320&sig=[\w-]{32}$/);
    for (const [key, params] of [
      ['users/42/a.jpg', { width: 640 }],
      ['users/42/b/c d.png', { preset: 'thumb' }],
      ['users/42/x', { w: 300 }],
    ] as [string, ImageParams][]) {
      expect(edgeVerifies(withSignature(imageUrl(BASE, key, params, grammar), grant), [SECRET], grammar), key).toBe(true);
    }
    expect(edgeVerifies(withSignature(imageUrl(BASE, 'users/42/a.jpg', { width: 1280 }, grammar), grant), [SECRET], grammar)).toBe(false);
    expect(edgeVerifies(withSignature(imageUrl(BASE, 'users/420/a.jpg', { width: 640 }, grammar), grant), [SECRET], grammar)).toBe(false);
    expect(withSignature(imageUrl(BASE, 'users/42/a.jpg'), 'x=1')).toBe(`https://${BASE}/users/42/a.jpg?x=1`);
  });

  it('refuses a prefix that names no folder, an empty allow list, and presets without their definitions', () => {
    for (const prefix of ['', '/', 'users/../x', 'users//42', '/users/42']) {
      expect(() => signedPrefix(prefix, { secret: SECRET, expires }), prefix).toThrow(/Invalid source key/);
    }
    expect(() => signedPrefix('users/42', { secret: SECRET, allow: [] })).toThrow(/empty allow list/);
    expect(() => signedPrefix('users/42', { secret: SECRET, allow: [{ preset: 'thumb' }] })).toThrow(/needs options\.presets/);
    expect(() => signedPrefix('users/42', { secret: '' })).toThrow('signedPrefix needs the signing secret.');
  });
});
