// The generated viewer-response CloudFront Function, run as the file itself
// in the cloudfront-js-2.0 sandbox the viewer-request function runs in: what
// a browser is told to keep, and what it never is (an error or a redirect
// made cacheable).

import { describe, expect, it } from 'vitest';
import { loadFunction, type Fields, type ViewerEvent } from '../../local/emulator/cloudfront-function';
import { DEFAULT_CACHE_CONTROL } from '../../lambda/origin/config';
import { browserCacheControl, DPR_HINTS_VARY, viewerResponseFunctionCode, WIDTH_HINTS_VARY } from '../../lib/viewer-response-function';
import { unsupportedSyntax } from './runtime-syntax';

const CODE = viewerResponseFunctionCode({ variantCacheControl: DEFAULT_CACHE_CONTROL, browserMaxAgeSeconds: 3600 });

/** What the viewer receives for an answer of `status` with these headers. */
async function viewerGets(status: number, headers: Record<string, string>, querystring: Fields = {}, code = CODE): Promise<Fields> {
  const fields: Fields = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, { value }]));
  const event = {
    version: '1.0',
    context: {
      distributionDomainName: 'd111111abcdef8.cloudfront.net',
      distributionId: 'EDFDVBD6EXAMPLE',
      eventType: 'viewer-response',
      requestId: 'r',
    },
    viewer: { ip: '198.51.100.11' },
    request: { method: 'GET', uri: '/photos/cat.jpg/width=640', querystring, headers: {}, cookies: {} },
    response: { statusCode: status, statusDescription: '', headers: fields, cookies: {} },
  };
  const result = (await loadFunction(code).handler(event as unknown as ViewerEvent)) as unknown as { headers: Fields };
  return result.headers;
}

describe('the file', () => {
  it('uses only cloudfront-js-2.0 syntax, imports nothing, and is tiny', () => {
    expect(unsupportedSyntax(CODE)).toEqual([]);
    expect(CODE).not.toMatch(/\bimport\b|\brequire\(/);
    expect(Buffer.byteLength(CODE)).toBeLessThan(2048);
  });
});

describe('what a viewer receives', () => {
  it.each([200, 206, 304])("a variant (%i): the browser lifetime, without CloudFront's Age, the rest untouched", async (status) => {
    const headers = await viewerGets(status, {
      'cache-control': DEFAULT_CACHE_CONTROL,
      age: '86400',
      etag: '"abc"',
      'content-type': 'image/avif',
    });
    expect(headers).toEqual({
      'cache-control': { value: 'public, max-age=3600' },
      etag: { value: '"abc"' },
      'content-type': { value: 'image/avif' },
    });
  });

  it.each([
    [302, 'no-store', 'the redirect to a large stored variant'],
    [404, 'public, max-age=10', 'a client error'],
    [500, 'no-store', 'a server error'],
    [503, 'no-store', 'storage unavailable'],
    [200, 'public, max-age=10', 'any other 200 (not a variant by its header)'],
  ])("%i with %j (%s) keeps the origin's header and Age", async (status, cacheControl) => {
    const headers = await viewerGets(status, { 'cache-control': cacheControl, age: '5' });
    expect(headers).toEqual({ 'cache-control': { value: cacheControl }, age: { value: '5' } });
  });

  it('a response without Cache-Control stays without one', async () => {
    expect(await viewerGets(200, { etag: '"x"' })).toEqual({ etag: { value: '"x"' } });
  });
});

describe('a URL that expires', () => {
  const variant = { 'cache-control': DEFAULT_CACHE_CONTROL };
  const inSeconds = (offset: number) => ({ value: String(Math.floor(Date.now() / 1000) + offset) });
  const maxAge = (headers: Fields) => Number(/^public, max-age=(\d+)$/.exec(headers['cache-control']!.value)?.[1]);

  it.each([200, 304])('is kept (%i) only for the seconds it has left, when fewer than the browser lifetime', async (status) => {
    const left = maxAge(await viewerGets(status, variant, { w: { value: '640' }, exp: inSeconds(600), sig: { value: 'x' } }));
    // The seconds left, give or take the one the test takes to run.
    expect(left).toBeGreaterThanOrEqual(598);
    expect(left).toBeLessThanOrEqual(600);
    expect(maxAge(await viewerGets(status, variant, { EXP: inSeconds(60) }))).toBeLessThanOrEqual(60);
  });

  it('is kept for the browser lifetime when it lives longer, and a URL without exp too', async () => {
    for (const query of [{ exp: inSeconds(86_400) }, { exp: { value: '9999999999' } }, {}, { expires: inSeconds(10) }] as Fields[]) {
      expect((await viewerGets(200, variant, query))['cache-control']).toEqual({ value: 'public, max-age=3600' });
    }
  });

  it('is kept by nobody once its time is up, and never longer than browserMaxAge 0 allows', async () => {
    expect((await viewerGets(200, variant, { exp: inSeconds(0) }))['cache-control']).toEqual({ value: 'public, no-cache' });
    const none = viewerResponseFunctionCode({ variantCacheControl: DEFAULT_CACHE_CONTROL, browserMaxAgeSeconds: 0 });
    expect((await viewerGets(200, variant, { exp: inSeconds(600) }, none))['cache-control']).toEqual({ value: 'public, no-cache' });
  });

  it('leaves errors and redirects as the origin sent them', async () => {
    expect(await viewerGets(302, { 'cache-control': 'no-store' }, { exp: inSeconds(600) })).toEqual({
      'cache-control': { value: 'no-store' },
    });
  });
});

describe('browserCacheControl', () => {
  it('is a max-age for browsers and proxies alike (no s-maxage: proxies must not keep it longer), no-cache for 0', () => {
    expect(browserCacheControl(86400)).toBe('public, max-age=86400');
    expect(browserCacheControl(0)).toBe('public, no-cache');
  });
});

describe('Vary on client hints', () => {
  const VARIANT = { 'cache-control': DEFAULT_CACHE_CONTROL, 'content-type': 'image/avif' };

  /** The Vary a viewer receives for a 200 answered to a request with this query. */
  async function varyFor(querystring: Fields, headers: Record<string, string> = VARIANT): Promise<string | undefined> {
    const fields: Fields = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, { value }]));
    const event = {
      version: '1.0',
      context: {
        distributionDomainName: 'd111111abcdef8.cloudfront.net',
        distributionId: 'EDFDVBD6EXAMPLE',
        eventType: 'viewer-response',
        requestId: 'r',
      },
      viewer: { ip: '198.51.100.11' },
      request: { method: 'GET', uri: '/photos/cat.jpg/width=1280,accept=avif', querystring, headers: {}, cookies: {} },
      response: { statusCode: 200, statusDescription: '', headers: fields, cookies: {} },
    };
    const result = (await loadFunction(CODE).handler(event as unknown as ViewerEvent)) as unknown as { headers: Fields };
    return result.headers.vary?.value;
  }

  it('adds the width hints for width=auto, in any spelling, the query as the viewer sent it or as the edge forwards it', async () => {
    const queries: Fields[] = [
      { w: { value: 'auto' } },
      { W: { value: 'AUTO' } },
      { width: { value: 'auto' } },
      { w: { value: '%61uto' } },
      { width: { value: 'auto' }, dpr: { value: 'auto' } },
    ];
    for (const query of queries) {
      expect(await varyFor(query), JSON.stringify(query)).toBe(`Accept, ${WIDTH_HINTS_VARY}`);
    }
    expect(WIDTH_HINTS_VARY).toBe('Sec-CH-Width, Sec-CH-Viewport-Width, Sec-CH-DPR, Save-Data');
  });

  it('adds only the DPR and Save-Data for dpr=auto beside an explicit width', async () => {
    expect(await varyFor({ width: { value: '640' }, dpr: { value: 'auto' } })).toBe(`Accept, ${DPR_HINTS_VARY}`);
    expect(DPR_HINTS_VARY).toBe('Sec-CH-DPR, Save-Data');
  });

  it("keeps a Vary already there (the origin's), and reads a repeated parameter's every value", async () => {
    expect(await varyFor({ width: { value: 'auto' } }, { ...VARIANT, vary: 'Accept' })).toBe(`Accept, ${WIDTH_HINTS_VARY}`);
    expect(await varyFor({ w: { value: '640', multiValue: [{ value: '640' }, { value: 'auto' }] } })).toBe(`Accept, ${WIDTH_HINTS_VARY}`);
  });

  it('leaves explicit URLs, and auto in other parameters, without hints', async () => {
    expect(await varyFor({})).toBeUndefined();
    expect(await varyFor({ width: { value: '640' }, format: { value: 'auto' } })).toBeUndefined();
    expect(await varyFor({ w: { value: '640' } }, { ...VARIANT, vary: 'Accept' })).toBe('Accept');
    expect(await varyFor({ w: { value: '%E0%A4' }, h: { value: 'auto' } })).toBeUndefined();
  });
});
