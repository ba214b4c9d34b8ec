// The front-end URL helper, checked against the edge's own grammar: every URL
// it builds canonicalises at the edge to the canonical URI the parameters
// mean (under every Accept header), equivalent calls give identical strings,
// keys with awkward characters round-trip, and bad input throws the message
// the edge would answer 400 with.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cardParams, imageOrigin, imageQuery, imageUrl, srcset, type ImageParams } from '../../lambda/client';
import {
  DEFAULT_GRAMMAR_OPTIONS,
  canonicalRequest,
  decodeKeyPath,
  encodeKeyPath,
  isGrammarError,
  splitQuery,
  type GrammarOptions,
} from '../../lambda/grammar';

const BASE = 'd111111abcdef8.cloudfront.net';
const options = DEFAULT_GRAMMAR_OPTIONS;

/** Accept headers of a plain client, a WebP-only browser and an AVIF-capable one. */
const ACCEPTS = ['', 'image/webp,*/*', 'image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8'];

/** What the edge does with a URL: its canonical URI for one Accept header. */
function atEdge(url: string, accept = '', grammar: GrammarOptions = options): string {
  const parsed = new URL(url);
  return canonicalRequest(parsed.pathname, splitQuery(parsed.search.slice(1)), grammar, { accept }).uri;
}

/** What the edge does with the parameters as a viewer would spell them, unprocessed. */
function meant(key: string, params: Record<string, unknown>, accept = '', grammar: GrammarOptions = options): string {
  const pairs = Object.entries(params)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => [name, String(value)] as [string, string]);
  return canonicalRequest(encodeKeyPath(key), pairs, grammar, { accept }).uri;
}

/** The GrammarError message `work` throws. */
function grammarMessage(work: () => unknown): string {
  try {
    work();
  } catch (error) {
    expect(isGrammarError(error), String(error)).toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected a GrammarError, and nothing was thrown');
}

describe('imageUrl', () => {
  it('builds https://<base>/<encoded key>?<canonical params>', () => {
    expect(imageUrl(BASE, 'photos/cat.jpg', { width: 640 })).toBe('https://d111111abcdef8.cloudfront.net/photos/cat.jpg?width=640');
    expect(imageUrl(BASE, 'photos/cat.jpg')).toBe('https://d111111abcdef8.cloudfront.net/photos/cat.jpg');
    expect(imageUrl('https://images.example.com/', 'a.png', { format: 'webp', quality: 70 })).toBe(
      'https://images.example.com/a.png?quality=70&format=webp',
    );
    expect(imageUrl('http://localhost:3000', 'a.png', { w: 10 } as ImageParams)).toBe('http://localhost:3000/a.png?width=10');
    // A watermark by name: the edge adds its version, which the URL never carries.
    expect(imageUrl(BASE, 'a.jpg', { watermark: 'Logo', width: 640 })).toBe(
      'https://d111111abcdef8.cloudfront.net/a.jpg?width=640&watermark=logo',
    );
  });

  it.each<[string, ImageParams, string]>([
    ['width only', { width: 640 }, '/photos/cat.jpg/width=640'],
    ['nothing', {}, '/photos/cat.jpg/original'],
    ['dpr folded into the size', { width: 320, height: 200, dpr: 2 }, '/photos/cat.jpg/width=640,height=400'],
    [
      'defaults dropped',
      { width: 300, fit: 'cover', position: 'center', rotate: 0, flip: false, grayscale: false },
      '/photos/cat.jpg/width=300',
    ],
    ['no-ops dropped (fit with one side)', { width: 300, fit: 'contain' }, '/photos/cat.jpg/width=300'],
    ['explicit format kept, jpg named jpeg', { format: 'jpg', quality: 90 }, '/photos/cat.jpg/quality=90,format=jpeg'],
    ['format=auto left for the edge', { format: 'auto', width: 10 }, '/photos/cat.jpg/width=10'],
    [
      'everything, in op order',
      {
        flop: true,
        quality: 60,
        background: '#ABC',
        blur: 1.5,
        sharpen: 2,
        grayscale: true,
        rotate: 90,
        flip: true,
        enlarge: true,
        position: 'top-left',
        fit: 'contain',
        height: 100,
        width: 200,
        format: 'png',
      },
      '/photos/cat.jpg/width=200,height=100,fit=contain,position=top-left,enlarge=1,rotate=90,flip=1,flop=1,grayscale=1,blur=1.5,sharpen=2,background=aabbcc,format=png',
    ],
    ['format=json drops the rest', { format: 'json', width: 100 }, '/photos/cat.jpg/format=json'],
    [
      'colour adjustments, trim, max_bytes and metadata, in op order',
      { metadata: 'copyright', max_bytes: 50_000, gamma: 2, saturation: 0, contrast: 0.8, brightness: 1.5, trim: 10, format: 'jpeg' },
      '/photos/cat.jpg/trim=10,brightness=1.5,contrast=0.8,saturation=0,gamma=2,max_bytes=50000,metadata=copyright,format=jpeg',
    ],
    [
      'no-op adjustments, metadata=none and a PNG max_bytes dropped',
      { brightness: 1, contrast: 0, gamma: 1, metadata: 'none', max_bytes: 1000, format: 'png' },
      '/photos/cat.jpg/format=png',
    ],
  ])('canonicalises at the edge to the expected URI: %s', (_name, params, expected) => {
    const url = imageUrl(BASE, 'photos/cat.jpg', params);
    expect(atEdge(url)).toBe(expected);
    for (const accept of ACCEPTS) expect(atEdge(url, accept)).toBe(meant('photos/cat.jpg', params as Record<string, unknown>, accept));
  });

  it("keeps quality=80 when the format is negotiated: the origin chooses the format, and AVIF's default is 50", () => {
    const url = imageUrl(BASE, 'a.jpg', { quality: 80 });
    expect(url).toBe(`https://${BASE}/a.jpg?quality=80`);
    expect(atEdge(url, ACCEPTS[2])).toBe('/a.jpg/quality=80,accept=avif');
    expect(atEdge(url, ACCEPTS[1])).toBe('/a.jpg/quality=80,accept=webp');
    // With the format fixed, it is a no-op and goes.
    expect(imageUrl(BASE, 'a.jpg', { quality: 80, format: 'webp' })).toBe(`https://${BASE}/a.jpg?format=webp`);
  });

  it('gives identical strings for equivalent calls (aliases, case, spelling, order, dpr, defaults)', () => {
    const same = (a: Record<string, unknown>, b: Record<string, unknown>) =>
      expect(imageUrl(BASE, 'k.jpg', a as ImageParams)).toBe(imageUrl(BASE, 'k.jpg', b as ImageParams));
    same({ w: 320, dpr: 2 }, { width: 640 });
    same({ W: '0640' }, { width: 640 });
    same({ fm: 'JPG' }, { format: 'jpeg' });
    same({ f: 'auto' }, {});
    same({ width: 100, height: 50, bg: '#FFF', fit: 'contain' }, { fit: 'contain', background: 'ffffff', height: 50, width: 100 });
    same({ greyscale: 'true', flip: 1 }, { grayscale: true, flip: true });
    same({ q: 75, pos: 'top', w: 10, h: 10 }, { height: 10, width: 10, position: 'top', quality: 75 });
    same({ rotate: '090', dpr: 1 }, { rotate: 90 });
    same({ blur: '1.50' }, { blur: 1.5 });
    same({ width: 100, enlarge: 'false' }, { width: 100, enlarge: undefined });
    same({ BRIGHTNESS: '1.50', mb: '01000', gamma: '.8' }, { brightness: 1.5, max_bytes: 1000, gamma: 0.8 });
    same({ saturation: 0.4, grayscale: true }, { grayscale: true });
  });

  it('canonicalises under every Accept header exactly as the parameters would (property)', () => {
    const value = <T>(...values: T[]) => fc.option(fc.constantFrom(...values), { nil: undefined });
    const params = fc.record({
      width: value(1, 99, 640, 8192),
      height: value(1, 50, 480),
      dpr: value(1, 1.5, 2, 4),
      fit: value('cover', 'contain', 'fill', 'inside', 'outside'),
      position: value('center', 'top', 'entropy', 'attention', 'bottom-right'),
      enlarge: value(true, false),
      format: value('auto', 'jpeg', 'jpg', 'png', 'webp', 'avif', 'gif', 'json'),
      quality: value(1, 50, 80, 100),
      background: value('fff', '#000000', 'ff000080', 'FFFFFFFF'),
      blur: value(0.3, 5, 100),
      sharpen: value(0.5, 10),
      grayscale: value(true, false),
      rotate: value(0, 90, 180, 270),
      flip: value(true, false),
      flop: value(true, false),
      trim: value(0, 10, 255),
      brightness: value(0, 0.5, 1, 1.25, 10),
      contrast: value(0, 1, 2.5),
      saturation: value(0, 1, 1.8),
      gamma: value(0.34, 1, 2.2),
      max_bytes: value(1, 50_000, 100_000_000),
      metadata: value('none', 'copyright', 'keep'),
    });
    const sizes = fc.option(fc.constant<number[]>([64, 320, 640, 1280, 8192]), { nil: undefined });
    fc.assert(
      fc.property(params, sizes, (p, sizeList) => {
        const grammar: GrammarOptions = { ...options, sizes: sizeList };
        const url = imageUrl(BASE, 'photos/a b.jpg', p as ImageParams, grammar);
        for (const accept of ACCEPTS) {
          expect(atEdge(url, accept, grammar)).toBe(meant('photos/a b.jpg', p, accept, grammar));
        }
        // Already canonical: building again from the URL's own parameters changes nothing.
        const again = Object.fromEntries(splitQuery(new URL(url).search.slice(1)));
        expect(imageUrl(BASE, 'photos/a b.jpg', again as ImageParams, grammar)).toBe(url);
      }),
      { numRuns: 1500 },
    );
  });

  it('round-trips keys with spaces, +, %, #, ?, non-ASCII and nested folders', () => {
    const keys = ['photos/my cat.jpg', 'a+b/c%20d.png', '100%/#1?.jpg', 'été/日本語/🐱.webp', "x/(1)!*'~&=,;:@$.gif", 'deep/a/b/c/d/e.jpg'];
    for (const key of keys) {
      const url = imageUrl(BASE, key, { width: 100 });
      const parsed = new URL(url);
      expect(parsed.hostname).toBe(BASE);
      expect(parsed.pathname).toBe(encodeKeyPath(key));
      expect(parsed.hash).toBe('');
      expect(splitQuery(parsed.search.slice(1))).toEqual([['width', '100']]);
      expect(decodeKeyPath(parsed.pathname)).toBe(key);
      expect(atEdge(url)).toBe(encodeKeyPath(key) + '/width=100');
    }
    expect(imageUrl(BASE, 'photos/my cat+1 100%#é.jpg')).toBe(`https://${BASE}/photos/my%20cat%2B1%20100%25%23%C3%A9.jpg`);
  });

  it('keeps a preset by name, with its overrides normalised', () => {
    expect(imageUrl(BASE, 'a.jpg', { preset: 'thumb' })).toBe(`https://${BASE}/a.jpg?preset=thumb`);
    expect(imageUrl(BASE, 'a.jpg', { p: 'thumb', FM: 'JPG', flip: false, w: '0100' } as ImageParams)).toBe(
      `https://${BASE}/a.jpg?preset=thumb&width=100&flip=0&format=jpeg`,
    );
    expect(imageUrl(BASE, 'a.jpg', { preset: 'hero & co' })).toBe(`https://${BASE}/a.jpg?preset=hero%20%26%20co`);

    const grammar: GrammarOptions = { ...options, presets: { thumb: { width: '200', height: '200', flip: '1' } } };
    const url = imageUrl(BASE, 'a.jpg', { preset: 'thumb', flip: false, dpr: 2 }, grammar);
    expect(url).toBe(`https://${BASE}/a.jpg?preset=thumb&dpr=2&flip=0`);
    expect(atEdge(url, '', grammar)).toBe('/a.jpg/width=400,height=400');
    expect(grammarMessage(() => imageUrl(BASE, 'a.jpg', { preset: 'huge' }, grammar))).toBe(
      'Invalid preset "huge": expected one of thumb.',
    );
  });

  it('puts a focal point on cover crops only, canonical, and checks it as the edge does', () => {
    const url = imageUrl(BASE, 'a.jpg', { width: 400, height: 400, fp: '.7,0.30', position: 'top' });
    expect(url).toBe(`https://${BASE}/a.jpg?width=400&height=400&fp=0.7%2C0.3`);
    expect(atEdge(url)).toBe('/a.jpg/width=400,height=400,fp=0.7,0.3');
    expect(imageUrl(BASE, 'a.jpg', { width: 400, height: 300, fit: 'inside', fp: '0.7,0.3' })).toBe(
      `https://${BASE}/a.jpg?width=400&height=300&fit=inside`,
    );
    expect(grammarMessage(() => imageUrl(BASE, 'a.jpg', { fp: '70%,30%' }))).toBe(
      'Invalid fp "70%,30%": expected x,y: fractions of the image.',
    );
  });

  it("types the issue-27 parameters from the grammar's table: factors and byte caps as numbers, metadata by its modes", () => {
    const params: ImageParams = {
      brightness: 1.2,
      contrast: 0.9,
      saturation: 0,
      gamma: 2.2,
      max_bytes: 40_000,
      metadata: 'keep',
      trim: 10,
    };
    // @ts-expect-error metadata is one of none, copyright, keep
    const wrong: ImageParams = { metadata: 'all' };
    expect(imageUrl(BASE, 'a.jpg', params)).toBe(
      `https://${BASE}/a.jpg?trim=10&brightness=1.2&contrast=0.9&saturation=0&gamma=2.2&max_bytes=40000&metadata=keep`,
    );
    expect(() => imageUrl(BASE, 'a.jpg', wrong)).toThrow('Invalid metadata "all": expected one of none, copyright, keep.');
  });

  it('throws the grammar message for a bad value, as the edge would answer 400', () => {
    expect(grammarMessage(() => imageUrl(BASE, 'a.jpg', { width: 0 }))).toBe('Invalid width "0": expected an integer from 1 to 8192.');
    expect(grammarMessage(() => imageUrl(BASE, 'a.jpg', { width: 1.5 }))).toBe('Invalid width "1.5": expected an integer from 1 to 8192.');
    expect(grammarMessage(() => imageUrl(BASE, 'a.jpg', { fit: 'crop' as 'cover' }))).toBe(
      'Invalid fit "crop": expected one of cover, contain, fill, inside, outside, pad.',
    );
    expect(grammarMessage(() => imageUrl(BASE, 'a.jpg', { dpr: 5 }))).toBe(
      'Invalid dpr "5": expected a number from 1 to 4 with at most one decimal.',
    );
    expect(grammarMessage(() => imageUrl(BASE, 'a.jpg', { background: 'red' }))).toBe(
      'Invalid background "red": expected a hex colour rgb, rrggbb or rrggbbaa.',
    );
    expect(grammarMessage(() => imageUrl(BASE, 'a.jpg', { width: 1, w: 2 } as ImageParams))).toBe(
      'Invalid width "2": expected a single value (width is given more than once).',
    );
    expect(grammarMessage(() => imageUrl(BASE, 'a.jpg', { width: 9000 }, { ...options, sizes: [320, 640] }))).toBe(
      'Invalid width "9000": expected an integer from 1 to 8192.',
    );
    expect(grammarMessage(() => imageUrl(BASE, 'a.jpg', { width: 700 }, { ...options, sizes: [320, 640] }))).toBe(
      'Invalid width "700": expected at most 640, the largest allowed size.',
    );
    expect(grammarMessage(() => imageUrl(BASE, 'a.jpg', { width: 100 }, { ...options, presetsOnly: true }))).toBe(
      'Invalid width "100": expected no parameter but preset (this deployment serves presets only).',
    );
    expect(grammarMessage(() => imageUrl(BASE, 'a.jpg', { preset: 'x', width: 100 }, { ...options, presetsOnly: true }))).toMatch(
      /^Invalid width "100": expected no parameter but preset/,
    );
  });

  it('throws the grammar message for a bad key', () => {
    expect(grammarMessage(() => imageUrl(BASE, 'a/../b.jpg'))).toBe('Invalid source key: it has a ".." path segment.');
    expect(grammarMessage(() => imageUrl(BASE, 'a//b.jpg'))).toBe('Invalid source key: it has an empty path segment.');
    expect(grammarMessage(() => imageUrl(BASE, ''))).toBe('Invalid source key: it is empty.');
    expect(grammarMessage(() => imageUrl(BASE, 'x'.repeat(1025)))).toBe('Invalid source key: it is longer than 1024 bytes.');
    expect(grammarMessage(() => imageUrl(BASE, 'a\nb.jpg'))).toBe('Invalid source key: it contains a control character.');
  });

  it('refuses unknown parameter names, sig, and bases with a path', () => {
    expect(() => imageUrl(BASE, 'a.jpg', { widht: 100 } as ImageParams)).toThrow(
      /^Unknown image parameter "widht": expected one of width, height, dpr, .*, preset\.$/,
    );
    expect(() => imageUrl(BASE, 'a.jpg', { constructor: 1 } as ImageParams)).toThrow(/Unknown image parameter "constructor"/);
    // The edge writes accept from the Accept header; a page cannot choose it.
    expect(() => imageUrl(BASE, 'a.jpg', { accept: 'avif' } as ImageParams)).toThrow(
      /^Unknown image parameter "accept": expected one of width, height, dpr, fit, fill, position, fp, enlarge, rotate, flip, flop, trim, crop, segment, grayscale, blur, sharpen, brightness, contrast, saturation, gamma, watermark, template, fills, text, text-size, text-color, text-font, text-align, text-position, text-pad, text-shadow, text-width, watermark2, text2, text2-size, text2-color, text2-font, text2-align, text2-position, text2-pad, text2-shadow, text2-width, watermark3, text3, text3-size, text3-color, text3-font, text3-align, text3-position, text3-pad, text3-shadow, text3-width, watermark4, text4, text4-size, text4-color, text4-font, text4-align, text4-position, text4-pad, text4-shadow, text4-width, border, background, quality, max_bytes, metadata, hdr, format, preset\.$/,
    );
    expect(() => imageUrl(BASE, 'a.jpg', { sig: 'x' } as ImageParams)).toThrow(/signedImageUrl/);
    for (const base of [
      'https://x.example.com/images',
      'x.example.com/a',
      'ftp://x.example.com',
      'https://x.example.com?a=1',
      '',
      'https://user@x.example.com',
    ]) {
      expect(() => imageUrl(base, 'a.jpg'), base).toThrow(/^Invalid image base/);
    }
    expect(imageOrigin('D111.CloudFront.net')).toBe('https://d111.cloudfront.net');
  });

  it('imageQuery gives the query alone', () => {
    expect(imageQuery({ w: 320, dpr: 2, fm: 'webp' } as ImageParams)).toBe('width=640&format=webp');
    expect(imageQuery()).toBe('');
  });
});

describe('srcset', () => {
  it('lists one candidate per width, ascending: "<url> <w>w, ..."', () => {
    const value = srcset(BASE, 'photos/my cat.jpg', [640, 320, 1280], { format: 'webp', quality: 70 });
    expect(value).toBe(
      [
        `https://${BASE}/photos/my%20cat.jpg?width=320&quality=70&format=webp 320w`,
        `https://${BASE}/photos/my%20cat.jpg?width=640&quality=70&format=webp 640w`,
        `https://${BASE}/photos/my%20cat.jpg?width=1280&quality=70&format=webp 1280w`,
      ].join(', '),
    );
    // The shape a browser's srcset parser needs: no whitespace or comma inside a URL.
    expect(value).toMatch(/^[^\s,]+ \d+w(, [^\s,]+ \d+w)*$/);
    for (const candidate of value.split(', ')) {
      const [url = '', descriptor = ''] = candidate.split(' ');
      expect(atEdge(url)).toBe(`/photos/my%20cat.jpg/width=${parseInt(descriptor, 10)},quality=70,format=webp`);
    }
  });

  it('keeps the other parameters, including a preset and keys that need encoding', () => {
    const value = srcset(BASE, 'a,b c.jpg', [100, 200], { preset: 'card', height: 50 });
    expect(value).toBe(
      `https://${BASE}/a%2Cb%20c.jpg?preset=card&width=100&height=50 100w, https://${BASE}/a%2Cb%20c.jpg?preset=card&width=200&height=50 200w`,
    );
  });

  it('with allowed sizes, describes each candidate by the size it is served at, once', () => {
    const grammar = { ...options, sizes: [320, 640, 1280] };
    expect(srcset(BASE, 'a.jpg', [300, 320, 600, 1000], {}, grammar)).toBe(
      `https://${BASE}/a.jpg?width=320 320w, https://${BASE}/a.jpg?width=640 640w, https://${BASE}/a.jpg?width=1280 1280w`,
    );
  });

  it('refuses no widths, a bad width, dpr and a width parameter', () => {
    expect(() => srcset(BASE, 'a.jpg', [])).toThrow('srcset needs at least one width.');
    expect(grammarMessage(() => srcset(BASE, 'a.jpg', [100, 0]))).toBe('Invalid width "0": expected an integer from 1 to 8192.');
    expect(() => srcset(BASE, 'a.jpg', [100], { dpr: 2 })).toThrow(/no dpr/);
    expect(() => srcset(BASE, 'a.jpg', [100], { w: 5 } as ImageParams)).toThrow(/widths as an argument/);
  });
});

describe('width: auto', () => {
  it('writes auto for the edge to resolve from client hints, and refuses it in a srcset', () => {
    expect(imageUrl('img.example.com', 'photos/cat.jpg', { width: 'auto' })).toBe('https://img.example.com/photos/cat.jpg?width=auto');
    expect(imageUrl('img.example.com', 'photos/cat.jpg', { w: 'AUTO', dpr: 'auto', quality: 70 } as ImageParams)).toBe(
      'https://img.example.com/photos/cat.jpg?width=auto&quality=70',
    );
    expect(imageUrl('img.example.com', 'photos/cat.jpg', { width: 300, dpr: 'auto' })).toBe(
      'https://img.example.com/photos/cat.jpg?width=300&dpr=auto',
    );
    expect(() => srcset('img.example.com', 'photos/cat.jpg', [320], { dpr: 'auto' })).toThrow(/srcset takes no dpr/);
  });
});

describe('cardParams', () => {
  it('names the template and writes its fills as the hex of their JSON, slots sorted', () => {
    const params = cardParams('og', { title: 'Été 2026', logo: 'brand/logo.png' }, { format: 'webp' });
    expect(params).toEqual({
      format: 'webp',
      template: 'og',
      fills: Buffer.from(JSON.stringify({ logo: 'brand/logo.png', title: 'Été 2026' })).toString('hex'),
    });
    expect(imageUrl('https://images.example.com', 'photos/beach.jpg', cardParams('og'))).toBe(
      'https://images.example.com/photos/beach.jpg?template=og',
    );
  });
});
