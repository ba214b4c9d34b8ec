// The URL helper in imgix's and Cloudflare's words: for a staged move, an
// emitted URL is read back by the edge's dialect to the same canonical URI as
// imageUrl's native URL for the same parameters; what a dialect cannot say
// throws, naming the dialect.

import { describe, expect, it } from 'vitest';
import { dialectImageUrl, imageUrl, type ImageParams, type UrlDialect } from '../../lambda/client/index';
import { cloudflare } from '../../lambda/edge/dialects/cloudflare';
import { imgix } from '../../lambda/edge/dialects/imgix';
import { dialectCanonicalUri, nativeCanonicalUri } from '../edge/dialects/examples';

const BASE = 'https://images.example.com';
const DIALECTS = { imgix, cloudflare };
const local = (url: string) => url.slice(BASE.length);

/** Parameter sets both dialects can say, each a different path through the translation. */
const SAID_BY_BOTH: ImageParams[] = [
  {},
  { width: 640 },
  { width: 640, enlarge: true },
  { height: 480, format: 'webp', quality: 70 },
  { width: 300, height: 200, fit: 'inside' },
  { width: 300, height: 200, fit: 'inside', enlarge: true },
  { width: 300, height: 200, enlarge: true },
  { width: 300, height: 200, enlarge: true, position: 'face' },
  { width: 300, height: 200, enlarge: true, position: 'top' },
  { width: 300, height: 200, enlarge: true, fp: '0.25,0.75' },
  { width: 300, height: 200, fit: 'contain', enlarge: true, background: 'ff000080' },
  { width: 300, height: 200, fit: 'fill', enlarge: true },
  { width: 300, dpr: 2, format: 'jpg' },
  { rotate: 90, flip: true },
  { rotate: 270, flop: true, flip: true },
  { rotate: 180, flop: true },
  { blur: 4, brightness: 1.25, contrast: 0.5, saturation: 0 },
];

describe.each(['imgix', 'cloudflare'] as UrlDialect[])('dialectImageUrl(%s)', (dialect) => {
  it.each(SAID_BY_BOTH)('%o reads back as the native URL', (params) => {
    const url = dialectImageUrl(dialect, BASE, 'photos/my cat.jpg', params);
    expect(dialectCanonicalUri(DIALECTS[dialect], local(url))).toBe(nativeCanonicalUri(local(imageUrl(BASE, 'photos/my cat.jpg', params))));
  });

  it.each([
    { watermark: 'logo' },
    { width: 300, height: 200, fit: 'outside' },
    { crop: '0,0,0.5,0.5' },
    { quality: 'auto' },
    { border: '4' },
  ] as ImageParams[])('%o throws, naming the dialect', (params) => {
    expect(() => dialectImageUrl(dialect, BASE, 'a.jpg', params)).toThrow(`The ${dialect} dialect cannot say`);
  });

  it('a preset throws: its definition is the deployment’s', () => {
    expect(() => dialectImageUrl(dialect, BASE, 'a.jpg', { preset: 'thumb' })).toThrow(`The ${dialect} dialect cannot say a preset.`);
  });
});

describe('each dialect’s own words', () => {
  it('imgix: a query of its names, auto=format for our negotiation', () => {
    expect(dialectImageUrl('imgix', BASE, 'photos/my cat.jpg', { width: 640, height: 480, enlarge: true, position: 'top-left' })).toBe(
      BASE + '/photos/my%20cat.jpg?w=640&h=480&fit=crop&crop=top%2Cleft&auto=format',
    );
    expect(dialectImageUrl('imgix', BASE, 'a.jpg', { width: 640 })).toBe(BASE + '/a.jpg?w=640&fit=max&auto=format');
  });

  it('Cloudflare: options in the path, the key after them', () => {
    expect(dialectImageUrl('cloudflare', BASE, 'photos/my cat.jpg', { width: 640, height: 480, gamma: 1.5, background: 'fff' })).toBe(
      BASE + '/cdn-cgi/image/width=640,height=480,fit=crop,format=auto,gamma=1.5,background=%23ffffff/photos/my%20cat.jpg',
    );
  });

  it('what only one of them can say', () => {
    const auto = dialectImageUrl('cloudflare', BASE, 'a.jpg', { width: 'auto' });
    expect(auto).toBe(BASE + '/cdn-cgi/image/width=auto,format=auto/a.jpg');
    expect(dialectCanonicalUri(cloudflare, local(auto))).toBe(nativeCanonicalUri('/a.jpg?width=auto'));
    expect(() => dialectImageUrl('imgix', BASE, 'a.jpg', { width: 'auto' })).toThrow(
      'The imgix dialect cannot say width=auto or dpr=auto.',
    );
    const trimmed = dialectImageUrl('imgix', BASE, 'a.jpg', { trim: 10 });
    expect(dialectCanonicalUri(imgix, local(trimmed))).toBe(nativeCanonicalUri('/a.jpg?trim'));
    expect(() => dialectImageUrl('imgix', BASE, 'a.jpg', { width: 300, height: 200 })).toThrow('cover without enlarge');
    expect(dialectImageUrl('cloudflare', BASE, 'a.jpg', { width: 300, height: 200 })).toContain('fit=crop');
    expect(() => dialectImageUrl('imgix', BASE, 'a.jpg', { gamma: 1.5 })).toThrow('The imgix dialect cannot say gamma=1.5.');
    expect(() => dialectImageUrl('cloudflare', BASE, 'a.jpg', { trim: 10 })).toThrow('The cloudflare dialect cannot say trim=10.');
    expect(() => dialectImageUrl('imgix', BASE, 'a.jpg', { width: 300, height: 200, fit: 'contain', enlarge: true })).toThrow(
      'fills with white',
    );
  });
});
