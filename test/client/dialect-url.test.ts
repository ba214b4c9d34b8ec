// The URL helper in imgix's, Cloudflare's and DIT's words: for a staged move,
// an emitted URL is read back by the edge's dialect to the same canonical URI
// as imageUrl's native URL for the same parameters (DIT's translators given
// their data as the edge function is, from its store); what a dialect cannot
// say throws, naming the dialect; a signed DIT URL verifies as the edge
// verifies it.

import { beforeEach, describe, expect, it } from 'vitest';
import { dialectImageUrl, imageUrl, type ImageParams, type UrlDialect } from '../../lambda/client/index';
import { signedDitImageUrl } from '../../lambda/client/sign';
import { cloudflare } from '../../lambda/edge/dialects/cloudflare';
import type { Dialect } from '../../lambda/edge/dialects/dialect';
import { dialectModule } from '../../lambda/edge/dialects/index';
import { ditJson } from '../../lambda/edge/dialects/dit-json';
import { imgix } from '../../lambda/edge/dialects/imgix';
import { thumbor } from '../../lambda/edge/dialects/thumbor';
import { splitQuery } from '../../lambda/grammar/index';
import { dialectCanonicalUri, nativeCanonicalUri } from '../edge/dialects/examples';

const BASE = 'https://images.example.com';
const DIALECTS: { [dialect in UrlDialect]: Dialect } = { imgix, cloudflare, 'dit-json': ditJson, thumbor };
const local = (url: string) => url.slice(BASE.length);
const SECRET = 'dit-secret-0123456789';
const OTHER_SECRET = 'another-secret';

/** How the edge's translator of `dialect` checks the signature of `url` (a full URL or its path and query). */
const verified = (dialect: UrlDialect, url: string, secrets: string[], now = Date.now() / 1000) => {
  const [path, query] = (url.startsWith(BASE) ? local(url) : url).split('?') as [string, string | undefined];
  return DIALECTS[dialect].verify({ uri: path, pairs: splitQuery(query || '') }, secrets, now);
};

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
  { width: 300, height: 200, enlarge: true, position: 'auto' },
  { width: 300, height: 200, enlarge: true, position: 'top' },
  { width: 300, height: 200, enlarge: true, fp: '0.25,0.75' },
  { width: 300, height: 200, fit: 'contain', enlarge: true, background: 'ff000080' },
  { width: 300, height: 200, fit: 'fill', enlarge: true },
  { width: 300, dpr: 2, format: 'jpg' },
  { rotate: 90, flip: true },
  { rotate: 270, flop: true, flip: true },
  { rotate: 180, flop: true },
  { blur: 4, brightness: 1.25, contrast: 0.5, saturation: 0 },
  { width: 640, segment: 'foreground' },
  { width: 300, height: 200, enlarge: true, segment: 'foreground', background: 'ffffff' },
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

  it('a cut-out in each word: imgix bg-remove, Cloudflare segment; DIT has none', () => {
    expect(dialectImageUrl('imgix', BASE, 'a.jpg', { width: 640, segment: 'foreground', format: 'png' })).toBe(
      BASE + '/a.jpg?w=640&fit=max&bg-remove=true&fm=png',
    );
    expect(dialectImageUrl('cloudflare', BASE, 'a.jpg', { segment: 'foreground' })).toBe(
      BASE + '/cdn-cgi/image/format=auto,segment=foreground/a.jpg',
    );
    for (const dialect of ['dit-json', 'thumbor'] as const) {
      expect(() => dialectImageUrl(dialect, BASE, 'a.jpg', { width: 640, segment: 'foreground' })).toThrow(
        `The ${dialect} dialect cannot say segment=foreground.`,
      );
    }
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

  it('the content-aware crops: auto in both, entropy in imgix only, attention in neither', () => {
    const crop = { width: 300, height: 200, enlarge: true } as const;
    expect(dialectImageUrl('imgix', BASE, 'a.jpg', { ...crop, position: 'auto' })).toContain('&crop=auto&');
    expect(dialectImageUrl('cloudflare', BASE, 'a.jpg', { ...crop, position: 'auto' })).toContain(',gravity=auto,');
    const entropy = dialectImageUrl('imgix', BASE, 'a.jpg', { ...crop, position: 'entropy' });
    expect(dialectCanonicalUri(imgix, local(entropy))).toBe(nativeCanonicalUri('/a.jpg?w=300&h=200&enlarge=1&position=entropy'));
    expect(() => dialectImageUrl('cloudflare', BASE, 'a.jpg', { ...crop, position: 'entropy' })).toThrow(
      'The cloudflare dialect cannot say position=entropy.',
    );
    for (const dialect of ['imgix', 'cloudflare'] as const) {
      expect(() => dialectImageUrl(dialect, BASE, 'a.jpg', { ...crop, position: 'attention' })).toThrow(
        `The ${dialect} dialect cannot say position=attention.`,
      );
    }
  });
});

describe("DIT's forms", () => {
  // Each edge function reads its form's rules and words from its store; these are the ones a deploy writes there.
  // The two translators share the data in use, so each test gives its own form's.
  const storeData = (dialect: 'dit-json' | 'thumbor') =>
    DIALECTS[dialect].useData!(JSON.parse(JSON.stringify(dialectModule(dialect).data)) as object);

  /** What both of DIT's forms can say, each a different rule of the translation. */
  const SAID_BY_DIT: ImageParams[] = [
    {},
    { width: 640 },
    { height: 480, enlarge: true },
    { width: 300, height: 200 },
    { width: 300, height: 200, enlarge: true },
    { width: 300, height: 200, fit: 'inside', enlarge: true },
    { width: 300, height: 200, fit: 'contain', background: 'ff000080', enlarge: true },
    { width: 300, height: 200, fit: 'fill', enlarge: true },
    { width: 300, height: 200, position: 'face', enlarge: true },
    { width: 300, dpr: 2, format: 'jpg', quality: 70 },
    { format: 'webp', quality: 55 },
    { format: 'avif' },
    { background: 'fff', format: 'png' },
    { rotate: 270, grayscale: true },
    { blur: 3.5, sharpen: 1.5 },
    { blur: 0.3, sharpen: 1.3 },
  ];

  /** What one form says and the other cannot. */
  const SAID_BY: { [dialect in 'dit-json' | 'thumbor']: ImageParams[] } = {
    'dit-json': [
      { width: 300, height: 200, fit: 'outside', enlarge: true },
      { width: 300, height: 200, position: 'top-left' },
      { width: 300, height: 200, position: 'center', enlarge: true },
      { width: 300, height: 200, position: 'bottom' },
      { width: 300, height: 200, position: 'entropy' },
      { width: 300, height: 200, position: 'attention', enlarge: true },
      { width: 300, height: 200, fit: 'contain', enlarge: true },
      { rotate: 90, flip: true, flop: true },
      { sharpen: 0.5 },
    ],
    thumbor: [{ quality: 60 }, { width: 300, format: 'gif' }],
  };
  const REFUSED_BY: { [dialect in 'dit-json' | 'thumbor']: ImageParams[] } = {
    'dit-json': [{ quality: 60 }],
    thumbor: [
      { width: 300, height: 200, fit: 'outside' },
      { width: 300, height: 200, position: 'top-left' },
      { width: 300, height: 200, position: 'entropy' },
      { width: 300, height: 200, fit: 'contain', enlarge: true },
      { flip: true },
      { flop: true },
      { sharpen: 0.5 },
    ],
  };

  describe.each(['dit-json', 'thumbor'] as const)('dialectImageUrl(%s)', (dialect) => {
    beforeEach(() => storeData(dialect));

    it.each(SAID_BY_DIT.concat(SAID_BY[dialect]))('%o reads back as the native URL', (params) => {
      const url = dialectImageUrl(dialect, BASE, 'photos/my cat.jpg', params);
      expect(dialectCanonicalUri(DIALECTS[dialect], local(url))).toBe(
        nativeCanonicalUri(local(imageUrl(BASE, 'photos/my cat.jpg', params))),
      );
    });

    it.each([
      { watermark: 'logo' },
      { width: 300, height: 200, fp: '0.5,0.5' },
      { crop: '0,0,0.5,0.5' },
      { trim: 10 },
      { quality: 'auto' },
      { width: 'auto' },
      { gamma: 1.5 },
      { metadata: 'keep' },
      { width: 300, height: 200, position: 'auto', enlarge: true },
      ...REFUSED_BY[dialect],
    ] as ImageParams[])('%o throws, naming the dialect', (params) => {
      expect(() => dialectImageUrl(dialect, BASE, 'a.jpg', params)).toThrow(`The ${dialect} dialect cannot say`);
    });

    it('a signed URL verifies with its secret, and not with another or tampered', () => {
      const url = signedDitImageUrl(dialect, BASE, 'photos/my cat.jpg', { width: 300, format: 'webp' }, SECRET);
      expect(url).toMatch(/\?signature=[0-9a-f]{64}$/);
      expect(verified(dialect, url, [OTHER_SECRET, SECRET])).toBe('valid');
      expect(verified(dialect, url, [OTHER_SECRET])).toBe('badSignature');
      const wider = signedDitImageUrl(dialect, BASE, 'photos/my cat.jpg', { width: 600, format: 'webp' }, SECRET);
      expect(verified(dialect, local(url).split('?')[0] + '?' + local(wider).split('?')[1], [SECRET])).toBe('badSignature');
    });

    it("with an expiry, DIT's expires is covered: valid until then, expired after", () => {
      const expires = Math.floor(Date.now() / 1000) + 3600;
      const url = signedDitImageUrl(dialect, BASE, 'a.jpg', { width: 300 }, { secret: SECRET, expires });
      expect(url).toMatch(/\?expires=\d{8}T\d{6}Z&signature=/);
      expect(verified(dialect, url, [SECRET])).toBe('valid');
      expect(verified(dialect, url, [SECRET], expires + 1)).toBe('expired');
      expect(dialectCanonicalUri(DIALECTS[dialect], local(url))).toBe(nativeCanonicalUri('/a.jpg?width=300'));
    });
  });

  it("dit-json: the request DIT documents, sharp's names and options", () => {
    storeData('dit-json');
    const url = dialectImageUrl('dit-json', BASE, 'photos/cat.jpg', {
      width: 300,
      height: 200,
      fit: 'contain',
      background: 'ff000080',
      position: 'top-left',
      format: 'webp',
      quality: 60,
      flop: true,
    });
    expect(url).toMatch(/^https:\/\/images\.example\.com\/eyJ[A-Za-z0-9+/]+=*$/);
    expect(JSON.parse(Buffer.from(local(url).slice(1), 'base64').toString())).toEqual({
      key: 'photos/cat.jpg',
      edits: {
        resize: {
          width: 300,
          height: 200,
          fit: 'contain',
          position: 'left top',
          background: { r: 255, g: 0, b: 0, alpha: 0.502 },
          withoutEnlargement: true,
        },
        flop: true,
        toFormat: 'webp',
        webp: { quality: 60 },
      },
    });
    const unicode = dialectImageUrl('dit-json', BASE, 'fotos/gâteau.jpg', { width: 640, height: 480, position: 'face', enlarge: true });
    expect(dialectCanonicalUri(ditJson, local(unicode))).toBe(
      nativeCanonicalUri(local(imageUrl(BASE, 'fotos/gâteau.jpg', { width: 640, height: 480, position: 'face', enlarge: true }))),
    );
    expect(() => dialectImageUrl('dit-json', BASE, 'a.jpg', { quality: 60 })).toThrow(
      "The dit-json dialect cannot say quality=60 with format=undefined (DIT's quality is one output format's).",
    );
  });

  it('thumbor: fit-in, a 0 side, filters in one segment, the key last', () => {
    expect(
      dialectImageUrl('thumbor', BASE, 'photos/my cat.jpg', { width: 300, height: 200, fit: 'inside', format: 'webp', quality: 60 }),
    ).toBe(BASE + '/fit-in/300x200/filters:no_upscale():format(webp):quality(60)/photos/my%20cat.jpg');
    expect(dialectImageUrl('thumbor', BASE, 'a.jpg', { height: 480, enlarge: true, blur: 3.5 })).toBe(
      BASE + '/0x480/filters:blur(7)/a.jpg',
    );
    expect(() => dialectImageUrl('thumbor', BASE, 'a.jpg', { flip: true })).toThrow('The thumbor dialect cannot say flip=true.');
    expect(() => dialectImageUrl('thumbor', BASE, 'a.jpg', { width: 300, height: 200, position: 'top' })).toThrow(
      'DIT ignores halign and valign',
    );
    expect(dialectImageUrl('dit-json', BASE, 'a.jpg', { width: 300, height: 200, position: 'top', flip: true })).toContain(BASE + '/eyJ');
  });

  it('thumbor: a key whose folder reads as an option throws, rather than naming another image', () => {
    for (const key of ['fit-in/a.jpg', 'left/a.jpg', '300x200/a.jpg', 'photos/100x100/a.jpg', 'filters:x/a.jpg', 'a/s3:b/c.jpg']) {
      expect(() => dialectImageUrl('thumbor', BASE, key, { width: 300 }), key).toThrow('The thumbor dialect cannot say the key');
    }
    expect(dialectImageUrl('thumbor', BASE, 'photos/left/a.jpg', { width: 300 })).toBe(
      BASE + '/300x0/filters:no_upscale()/photos/left/a.jpg',
    );
  });

  it("thumbor: Thumbor's HMAC segment, when asked for, verifies as the edge verifies it", () => {
    storeData('thumbor');
    const url = signedDitImageUrl('thumbor', BASE, 'photos/my cat.jpg', { width: 300, height: 200 }, { secret: SECRET, hmacSegment: true });
    expect(url).toMatch(/^https:\/\/images\.example\.com\/[\w-]{27}=\/300x200\/filters:no_upscale\(\)\/photos\/my%20cat\.jpg$/);
    expect(verified('thumbor', url, [SECRET])).toBe('valid');
    expect(verified('thumbor', url, [OTHER_SECRET])).toBe('badSignature');
    expect(dialectCanonicalUri(thumbor, local(url))).toBe(nativeCanonicalUri('/photos/my%20cat.jpg?width=300&height=200'));
    expect(() => signedDitImageUrl('dit-json', BASE, 'a.jpg', {}, { secret: SECRET, hmacSegment: true })).toThrow('HMAC segment');
  });
});
