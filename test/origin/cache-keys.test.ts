// The cache bucket's key layout. A deployed bucket holds these keys (variants
// the cache-bucket origin serves, remembered failures, AVIF claims, web
// variants), so each is pinned here as written: a change to the layout fails
// this test before it strands a bucket's objects.

import { describe, expect, it } from 'vitest';
import { canonicalUri, type Ops } from '../../lambda/grammar';
import {
  AVIF_CLAIMS_PREFIX,
  FACES_SEGMENT,
  FAILURES_PREFIX,
  avifClaimKey,
  facesKey,
  failureKey,
  isFindingsKey,
  variantKey,
  variantPrefix,
  webVariantKey,
  webVariantPrefix,
} from '../../lambda/origin/cache-keys';

const KEY = 'my photos/cat.jpg';
const OPS: Ops = { width: 160, format: 'webp' };
const URI = '/my%20photos/cat.jpg/width=160,format=webp';
/** sha256 of URI, as the keys of a deployed bucket spell it. */
const URI_SHA256 = '91e296c60a2d66ca90c77a6a05b7eb034431e469dfa2f49272cbd20d2e15f9df';

describe('the cache bucket key layout', () => {
  it('a variant is kept under its canonical URI as S3 decodes it, without the leading slash', () => {
    expect(canonicalUri(KEY, OPS)).toBe(URI);
    expect(variantKey(KEY, OPS)).toBe('my photos/cat.jpg/width=160,format=webp');
    expect(variantKey(KEY, {})).toBe('my photos/cat.jpg/original');
    expect(variantPrefix(KEY)).toBe('my photos/cat.jpg/');
  });

  it("a web source's variant is kept under the same key behind an empty first segment", () => {
    expect(webVariantKey('shop/a.jpg', OPS)).toBe('/shop/a.jpg/width=160,format=webp');
    expect(webVariantPrefix('shop/')).toBe('/shop/');
  });

  it('a remembered failure and an AVIF claim are kept under the sha256 of the URI, with no ops segment', () => {
    expect(FAILURES_PREFIX).toBe('.failures/');
    expect(AVIF_CLAIMS_PREFIX).toBe('.avif-claims/');
    expect(failureKey(URI)).toBe(`.failures/${URI_SHA256}`);
    expect(avifClaimKey(URI, 123456)).toBe(`.avif-claims/${URI_SHA256}-123456`);
  });

  it("a source's faces are kept one level below its key (as its variants), under a last segment no ops segment can be", () => {
    expect(FACES_SEGMENT).toBe('/.faces.');
    expect(facesKey(KEY, false)).toBe('my photos/cat.jpg/.faces.blazeface-back-2');
    expect(facesKey('shop/a.jpg', true)).toBe('/shop/a.jpg/.faces.blazeface-back-2');
    expect([facesKey(KEY, false), facesKey('a/.faces.x/b.jpg', true)].every(isFindingsKey)).toBe(true);
    expect(isFindingsKey(variantKey('a/.faces.x/b.jpg', OPS))).toBe(false);
  });
});
