// The emulator's choice of cache behavior, as CloudFront makes it: path
// patterns matched against the path as the viewer sent it, in order, the
// default behavior last.

import { describe, expect, it } from 'vitest';
import { behaviorFor, pathPatternMatches } from '../../../local/emulator/behaviors';
import { localDeployment } from '../../../local/emulator/deployment';

describe('pathPatternMatches', () => {
  it('matches a web prefix pattern only where the raw path spells the prefix: %2F is not a slash, nor %73 an s', () => {
    expect(pathPatternMatches('/shop/*', '/shop/a.jpg')).toBe(true);
    expect(pathPatternMatches('/shop/*', '/shop/')).toBe(true);
    expect(pathPatternMatches('/shop/*', '/shop/a/b%20c.jpg')).toBe(true);
    for (const path of ['/shop%2Fa.jpg', '/shop%2fa.jpg', '/%73hop/a.jpg', '/shop', '/Shop/a.jpg', '/shopping/a.jpg', '/x/shop/a.jpg']) {
      expect(pathPatternMatches('/shop/*', path), path).toBe(false);
    }
  });

  it("reads `*` as any run of characters and `?` as one, everything else literally, with or without the pattern's leading slash", () => {
    expect(pathPatternMatches('images/*.jpg', '/images/a/b.jpg')).toBe(true);
    expect(pathPatternMatches('/images/*.jpg', '/images/a.png')).toBe(false);
    expect(pathPatternMatches('/a?c/*', '/abc/x')).toBe(true);
    expect(pathPatternMatches('/a?c/*', '/ac/x')).toBe(false);
    expect(pathPatternMatches('/a.c/*', '/abc/x')).toBe(false);
    expect(pathPatternMatches('*', '/anything%2Fat/all')).toBe(true);
  });
});

describe('behaviorFor', () => {
  // The plan of a deployment with two web origins, as `npm start -- -c webOrigins=...` would run it.
  const site = { url: 'https://shop.example.com/images/' };
  const { behaviors } = localDeployment({ webOrigins: JSON.stringify({ 'shop/': site, 'press/kit/': site }) }).plan;

  it("sends a web prefix's path to the Lambda alone, and any other spelling to the default behavior's cache bucket first", () => {
    expect(behaviorFor('/shop/a.jpg', behaviors)).toEqual({ pathPattern: '/shop/*', origins: ['lambda'], grammar: 'native' });
    expect(behaviorFor('/press/kit/a.jpg', behaviors)).toEqual({ pathPattern: '/press/kit/*', origins: ['lambda'], grammar: 'native' });
    for (const path of ['/press%2Fkit/a.jpg', '/press/kit%2Fa.jpg', '/shop%2Fa.jpg', '/a.jpg']) {
      expect(behaviorFor(path, behaviors), path).toEqual({ pathPattern: '*', origins: ['cache-bucket', 'lambda'], grammar: 'native' });
    }
  });
});

describe('behaviorFor with a dialect', () => {
  // `npm start -- --dialect dit`: DIT's base64 requests under their own pattern, Thumbor paths as the default.
  const { behaviors } = localDeployment({ dialects: 'dit' }).plan;

  it("sends DIT's base64 requests to their own function by the raw path, every other path to the Thumbor function", () => {
    const request = '/' + Buffer.from('{"key":"a.jpg"}').toString('base64');
    expect(behaviorFor(request, behaviors).grammar).toBe('dit-json');
    for (const path of ['/fit-in/300x200/a.jpg', '/a.jpg', '/%65yJrZXkiOiJhLmpwZyJ9', '/x/eyJrZXkiOiJhLmpwZyJ9']) {
      expect(behaviorFor(path, behaviors).grammar, path).toBe('thumbor');
    }
  });
});
