// Signed URLs: the signature is the grammar's signUri over the canonical URI
// computed WITHOUT Accept negotiation, so it verifies at the edge for every
// browser, and for every spelling of the same request.

import { describe, expect, it } from 'vitest';
import { imageUrl, type ImageParams } from '../../lambda/client';
import { signedImageUrl, signedUri } from '../../lambda/client/sign';
import {
  DEFAULT_GRAMMAR_OPTIONS,
  SIGNATURE_LENGTH,
  canonicalRequest,
  splitQuery,
  verifySignature,
  type GrammarOptions,
} from '../../lambda/grammar';

const BASE = 'd111111abcdef8.cloudfront.net';
const SECRET = 'a-long-random-secret';
const options = DEFAULT_GRAMMAR_OPTIONS;

/** What the edge does: take `sig` out, canonicalise the rest with no Accept, verify. */
function edgeVerifies(url: string, secrets: string[], grammar: GrammarOptions = options): boolean {
  const parsed = new URL(url);
  const pairs = splitQuery(parsed.search.slice(1));
  const sig = pairs.find((pair) => pair[0] === 'sig')?.[1] ?? '';
  const uri = canonicalRequest(parsed.pathname, pairs.filter((pair) => pair[0] !== 'sig'), grammar).uri;
  return verifySignature(uri, sig, secrets);
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
