// The emulator's in-memory CloudFront cache: how long a response is kept
// (ttlSeconds), expiry against an injected clock, and invalidation paths.

import { describe, expect, it } from 'vitest';
import { EdgeCache, ttlSeconds, type CachedResponse } from '../../../local/emulator/edge-cache';

function response(status: number, cacheControl?: string): CachedResponse {
  return {
    status,
    headers: cacheControl === undefined ? {} : { 'cache-control': cacheControl },
    body: Buffer.from(`status ${status}`),
  };
}

/** A clock the test moves by hand, in milliseconds. */
function manualClock(start = 1_700_000_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

describe('ttlSeconds', () => {
  it('keeps a 200 for its max-age, and the construct default for variants (one year)', () => {
    expect(ttlSeconds(response(200, 'public, max-age=300'))).toBe(300);
    expect(ttlSeconds(response(200, 'public, max-age=31536000, immutable'))).toBe(31_536_000);
    expect(ttlSeconds(response(200, 'public,max-age=42'))).toBe(42);
  });

  it('prefers s-maxage, the shared-cache lifetime, over max-age, in either order', () => {
    expect(ttlSeconds(response(200, 'public, max-age=10, s-maxage=600'))).toBe(600);
    expect(ttlSeconds(response(200, 's-maxage=5, max-age=600'))).toBe(5);
    expect(ttlSeconds(response(200, 'public, s-maxage=0, max-age=600'))).toBe(0);
  });

  it('reads directive names case-insensitively', () => {
    expect(ttlSeconds(response(200, 'Public, Max-Age=120'))).toBe(120);
    expect(ttlSeconds(response(200, 'S-MAXAGE=30'))).toBe(30);
  });

  it('does not cache without a lifetime: no Cache-Control, or one without max-age', () => {
    expect(ttlSeconds(response(200))).toBe(0);
    expect(ttlSeconds(response(200, 'public'))).toBe(0);
    expect(ttlSeconds(response(200, 'public, immutable'))).toBe(0);
  });

  it('never caches no-store, no-cache or private responses, whatever their max-age', () => {
    expect(ttlSeconds(response(200, 'no-store'))).toBe(0);
    expect(ttlSeconds(response(200, 'public, max-age=600, no-store'))).toBe(0);
    expect(ttlSeconds(response(200, 'no-cache, max-age=600'))).toBe(0);
    expect(ttlSeconds(response(200, 'private, max-age=600'))).toBe(0);
    expect(ttlSeconds(response(200, 'max-age=600, private'))).toBe(0);
    expect(ttlSeconds(response(200, 'max-age=600,PRIVATE'))).toBe(0);
  });

  it('caps client errors at 10 seconds, and keeps a shorter lifetime as given', () => {
    expect(ttlSeconds(response(404, 'public, max-age=3600'))).toBe(10);
    expect(ttlSeconds(response(400, 'public, max-age=10'))).toBe(10);
    expect(ttlSeconds(response(403, 'public, s-maxage=86400'))).toBe(10);
    expect(ttlSeconds(response(415, 'max-age=4'))).toBe(4);
    expect(ttlSeconds(response(404, 'no-store'))).toBe(0);
    expect(ttlSeconds(response(404))).toBe(0);
  });

  it('never caches server errors', () => {
    for (const status of [500, 502, 503, 504]) {
      expect(ttlSeconds(response(status, 'public, max-age=3600'))).toBe(0);
      expect(ttlSeconds(response(status, 's-maxage=60'))).toBe(0);
    }
  });

  it('does not cache redirects or other non-200 successes (the origin marks its 302 no-store anyway)', () => {
    expect(ttlSeconds(response(302, 'no-store'))).toBe(0);
    expect(ttlSeconds(response(302, 'public, max-age=60'))).toBe(0);
    expect(ttlSeconds(response(304, 'public, max-age=60'))).toBe(0);
  });
});

describe('EdgeCache', () => {
  it("says how long a stored response has been held, in whole seconds (CloudFront's Age on a hit)", () => {
    const clock = manualClock();
    const cache = new EdgeCache(true, clock.now);
    cache.put('/a.jpg/width=1', response(200, 'public, max-age=60'));
    expect(cache.lookup('/a.jpg/width=1')?.ageSeconds).toBe(0);
    clock.advance(2_999);
    expect(cache.lookup('/a.jpg/width=1')?.ageSeconds).toBe(2);
    expect(cache.lookup('/b.jpg/width=1')).toBeUndefined();
  });

  it('returns a stored response until its lifetime is over, then forgets it', () => {
    const clock = manualClock();
    const cache = new EdgeCache(true, clock.now);
    const stored = response(200, 'max-age=60');
    cache.put('/a.jpg/width=10', stored);

    expect(cache.get('/a.jpg/width=10')).toBe(stored);
    clock.advance(59_999);
    expect(cache.get('/a.jpg/width=10')).toBe(stored);
    clock.advance(1);
    expect(cache.get('/a.jpg/width=10')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('keeps each response for its own lifetime (s-maxage first) and a client error for at most 10 s', () => {
    const clock = manualClock();
    const cache = new EdgeCache(true, clock.now);
    cache.put('/long', response(200, 'max-age=5, s-maxage=3600'));
    cache.put('/short', response(200, 'max-age=30'));
    cache.put('/missing', response(404, 'public, max-age=3600'));
    expect(cache.size).toBe(3);

    clock.advance(10_000);
    expect(cache.get('/missing')).toBeUndefined();
    expect(cache.get('/short')).toBeDefined();
    clock.advance(20_000);
    expect(cache.get('/short')).toBeUndefined();
    expect(cache.get('/long')).toBeDefined();
    clock.advance(3_600_000 - 30_000);
    expect(cache.get('/long')).toBeUndefined();
  });

  it('does not store what may not be cached', () => {
    const cache = new EdgeCache(true, manualClock().now);
    cache.put('/no-store', response(200, 'no-store'));
    cache.put('/private', response(200, 'private, max-age=600'));
    cache.put('/server-error', response(503, 'max-age=600'));
    cache.put('/redirect', response(302, 'no-store'));
    cache.put('/no-lifetime', response(200));
    expect(cache.size).toBe(0);
    expect(cache.get('/no-store')).toBeUndefined();
    expect(cache.get('/server-error')).toBeUndefined();
  });

  it('stores nothing when disabled (--no-edge-cache)', () => {
    const cache = new EdgeCache(false, manualClock().now);
    cache.put('/a.jpg/original', response(200, 'public, max-age=31536000, immutable'));
    expect(cache.get('/a.jpg/original')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('replaces an entry put again under the same URI, with a fresh lifetime', () => {
    const clock = manualClock();
    const cache = new EdgeCache(true, clock.now);
    cache.put('/a', response(200, 'max-age=10'));
    clock.advance(9_000);
    const second = response(200, 'max-age=10');
    cache.put('/a', second);
    clock.advance(9_000);
    expect(cache.get('/a')).toBe(second);
    expect(cache.size).toBe(1);
  });

  describe('invalidate', () => {
    const uris = [
      '/photos/cat.jpg/original',
      '/photos/cat.jpg/width=100',
      '/photos/cat.jpg.bak/original',
      '/photos/caterpillar.png/format=webp',
      '/photos/my%20cat.jpg/width=100',
      '/other/cat.jpg/original',
    ];

    function filled() {
      const cache = new EdgeCache(true, manualClock().now);
      for (const uri of uris) cache.put(uri, response(200, 'max-age=600'));
      return cache;
    }

    it('drops exactly the URI given when the path has no wildcard', () => {
      const cache = filled();
      expect(cache.invalidate(['/photos/cat.jpg/width=100'])).toEqual(['/photos/cat.jpg/width=100']);
      expect(cache.get('/photos/cat.jpg/width=100')).toBeUndefined();
      expect(cache.get('/photos/cat.jpg/original')).toBeDefined();
      expect(cache.size).toBe(uris.length - 1);
    });

    it('does not treat an exact path as a prefix', () => {
      const cache = filled();
      expect(cache.invalidate(['/photos/cat.jpg'])).toEqual([]);
      expect(cache.size).toBe(uris.length);
    });

    it('drops every URI that starts with a path ending in *, and reports them', () => {
      const cache = filled();
      const dropped = cache.invalidate(['/photos/cat.jpg*']);
      expect(dropped.sort()).toEqual(['/photos/cat.jpg.bak/original', '/photos/cat.jpg/original', '/photos/cat.jpg/width=100']);
      expect(cache.get('/photos/caterpillar.png/format=webp')).toBeDefined();
      expect(cache.get('/other/cat.jpg/original')).toBeDefined();
    });

    it('compares the encoded spelling, as CloudFront does', () => {
      const cache = filled();
      expect(cache.invalidate(['/photos/my%20cat.jpg*'])).toEqual(['/photos/my%20cat.jpg/width=100']);
      expect(cache.invalidate(['/photos/my cat.jpg*'])).toEqual([]);
    });

    it('takes several paths at once, and /* drops everything', () => {
      const cache = filled();
      expect(cache.invalidate(['/other/cat.jpg/original', '/photos/cater*']).sort()).toEqual([
        '/other/cat.jpg/original',
        '/photos/caterpillar.png/format=webp',
      ]);
      expect(cache.invalidate(['/*'])).toHaveLength(uris.length - 2);
      expect(cache.size).toBe(0);
    });

    it('leaves the cache usable: a dropped URI can be stored again', () => {
      const cache = filled();
      cache.invalidate(['/photos/cat.jpg*']);
      const fresh = response(200, 'max-age=600');
      cache.put('/photos/cat.jpg/original', fresh);
      expect(cache.get('/photos/cat.jpg/original')).toBe(fresh);
    });
  });
});
