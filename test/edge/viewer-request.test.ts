// The viewer-request function as deployed: the generated file, run in a
// sandbox, fed CloudFront viewer-request events. Checks the URL contract at
// the edge (normalisation, negotiation, sizes, presets, signatures,
// rejections, what reaches the origin) and, over generated requests, that the
// generated file and the TypeScript grammar agree.

import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { EdgeFunctionSettings } from '../../lib/edge-function';
import {
  AUTO_FALLBACK_WIDTH,
  AUTO_WIDTHS,
  canonicalRequest,
  isGrammarError,
  numberedSlots,
  OVERLAY_SLOTS,
  SAVE_DATA_QUALITY,
  signedText,
  signUri,
  splitQuery,
  POSITIONS,
  PRESET_SPELLINGS,
  VIEWER_PARAMS,
  type GrammarOptions,
  type SignatureParams,
} from '../../lambda/grammar/index';
import { signedImageUrl, signedPrefix } from '../../lambda/client/sign';
import { imageUrl, withSignature, type ImageParams } from '../../lambda/client';
import {
  ANY_ACCEPT,
  ANY_SIZE,
  CHROMIUM_ACCEPT,
  KVS_ID,
  loadEdge,
  NO_AVIF,
  OPEN,
  PRESETS,
  PRESETS_ONLY,
  REALISTIC,
  SAFARI_ACCEPT,
} from './fixtures';
import {
  forwardedQuery,
  isResponse,
  viewerEvent,
  type FunctionResponse,
  type FunctionResult,
  type LoadedFunction,
  type ViewerRequest,
} from '../../local/emulator/cloudfront-function';
import { SAMPLE_PAIRS, VIEWER_CASES } from '../support/param-cases';

const CURRENT = 'current-secret-0123456789';
const OLD = 'old-secret-abcdefghij';

let open: LoadedFunction;
let anySize: LoadedFunction;
let noAvif: LoadedFunction;
let signed: LoadedFunction;
let presetsOnly: LoadedFunction;

beforeAll(() => {
  open = loadEdge(OPEN);
  anySize = loadEdge(ANY_SIZE);
  noAvif = loadEdge(NO_AVIF);
  signed = loadEdge(REALISTIC, `${CURRENT}\n${OLD}`);
  presetsOnly = loadEdge(PRESETS_ONLY, CURRENT);
});

/** The rewritten request, failing the test when the function answered instead. */
function rewritten(result: FunctionResult): ViewerRequest {
  if (isResponse(result)) throw new Error(`expected a rewritten request, got ${result.statusCode} ${result.body.data}`);
  return result;
}

function answered(result: FunctionResult): FunctionResponse {
  if (!isResponse(result)) throw new Error(`expected a response, got a request for ${result.uri}`);
  return result;
}

async function uriOf(fn: LoadedFunction, path: string, query = '', accept?: string): Promise<string> {
  return rewritten(await fn.handler(viewerEvent(path, query, accept ? { headers: { accept } } : {}))).uri;
}

/** The `sig` a client helper would put on this request: over the URI before negotiation. */
function sign(settings: EdgeFunctionSettings, path: string, query: string, secret = CURRENT): string {
  return signUri(canonicalRequest(path, splitQuery(query), settings.grammar).uri, secret);
}

function expectError(result: FunctionResult, status: number, code: string, message?: RegExp) {
  const response = answered(result);
  expect(response.statusCode).toBe(status);
  expect(response.headers).toEqual({
    'content-type': { value: 'application/json' },
    'cache-control': { value: 'public, max-age=10' },
    'x-content-type-options': { value: 'nosniff' },
  });
  expect(response.body.encoding).toBe('text');
  const body = JSON.parse(response.body.data);
  expect(Object.keys(body)).toEqual(['error', 'message']);
  expect(body.error).toBe(code);
  if (message) expect(body.message).toMatch(message);
}

// ------------------------------------------------------------ normalisation

describe('normalisation', () => {
  it('gives every spelling of one request one canonical URI', async () => {
    const spellings = [
      'width=640&quality=75&format=webp&fit=inside&height=480',
      'W=0640&Q=075&FM=WebP&FIT=Inside&h=480',
      'h=0480&fit=INSIDE&f=webp&q=75&w=640',
      'fm=webp&quality=75&w=640&height=480&fit=inside&utm_source=mail&foo',
      'w=320&dpr=2&h=240&fit=inside&q=75&format=webp',
    ];
    for (const query of spellings) {
      expect(await uriOf(anySize, '/photos/cat.jpg', query, CHROMIUM_ACCEPT)).toBe(
        '/photos/cat.jpg/width=640,height=480,fit=inside,quality=75,format=webp',
      );
    }
  });

  it('drops unknown parameters, defaults and no-ops', async () => {
    expect(await uriOf(anySize, '/a.jpg', 'foo=1&fit=cover&rotate=0&flip=false&dpr=1')).toBe('/a.jpg/original');
    expect(await uriOf(anySize, '/a.jpg', 'q=80&fm=jpg')).toBe('/a.jpg/format=jpeg');
    expect(await uriOf(anySize, '/a.jpg')).toBe('/a.jpg/original');
    expect(await uriOf(anySize, '/a.jpg', 'bg=%23FF0000FF&blur=02.0')).toBe('/a.jpg/blur=2,background=ff0000');
  });

  it('spells the composition parameters one way, commas inside their values', async () => {
    expect(await uriOf(anySize, '/a.jpg', 'w=200&h=200&fit=PAD&fill=blur&crop=.1,0,0.50,1&border=8,%23F00&trim')).toBe(
      '/a.jpg/width=200,height=200,fit=contain,fill=blur,trim=10,crop=0.1,0,0.5,1,border=8,ff0000',
    );
    expect(await uriOf(anySize, '/a.jpg', 'fill=blur&crop=0,0,1,1')).toBe('/a.jpg/original');
    expectError(
      await anySize.handler(viewerEvent('/a.jpg', 'crop=0.5,0,0.6,1')),
      400,
      'invalid_parameter',
      /crop "0.5,0,0.6,1": expected x,y,width,height/,
    );
    expectError(
      await anySize.handler(viewerEvent('/a.jpg', 'border=9000')),
      400,
      'invalid_parameter',
      /border "9000": expected an integer from 1 to 4095/,
    );
  });

  it('spells a cut-out one way, after the crop, in the canonical URI and so the cache key', async () => {
    expect(await uriOf(anySize, '/a.jpg', 'SEGMENT=Foreground&crop=0,0,.5,1&w=200&bg=fff')).toBe(
      '/a.jpg/width=200,crop=0,0,0.5,1,segment=foreground,background=ffffff',
    );
    expect(await uriOf(anySize, '/a.jpg', 'segment=foreground&w=200')).not.toBe(await uriOf(anySize, '/a.jpg', 'w=200'));
    expectError(
      await anySize.handler(viewerEvent('/a.jpg', 'segment=subject')),
      400,
      'invalid_parameter',
      /^Invalid segment "subject": expected one of foreground\.$/,
    );
  });

  it('keeps a focal point only where it places a cover crop, which it places instead of a position', async () => {
    expect(await uriOf(anySize, '/a.jpg', 'w=200&h=100&gravity=top&FP=.25,0.7500')).toBe('/a.jpg/width=200,height=100,fp=0.25,0.75');
    expect(await uriOf(anySize, '/a.jpg', 'w=200&h=100&fit=contain&pos=top&fp=0.25,0.75')).toBe(
      '/a.jpg/width=200,height=100,fit=contain,position=top',
    );
    expect(await uriOf(anySize, '/a.jpg', 'w=200&fp=0.25,0.75')).toBe('/a.jpg/width=200');
    expectError(
      await anySize.handler(viewerEvent('/a.jpg', 'fp=0.5')),
      400,
      'invalid_parameter',
      /^Invalid fp "0.5": expected x,y: fractions of the image\.$/,
    );
    expectError(await anySize.handler(viewerEvent('/a.jpg', 'fp=1,1&fp=0,0')), 400, 'invalid_parameter', /fp is given more than once/);
  });

  it('re-encodes the key one way: spaces, plus signs, unicode, reserved characters', async () => {
    expect(await uriOf(anySize, '/My%20Photos/caf%C3%A9+1%281%29.jpg')).toBe('/My%20Photos/caf%C3%A9%2B1%281%29.jpg/original');
    expect(await uriOf(anySize, '/a/%7Euser/b.jpg')).toBe('/a/~user/b.jpg/original');
    expect(await uriOf(anySize, '/a/b%2Fc.jpg')).toBe('/a/b/c.jpg/original');
    // Decoded once only: a double-encoded `..` is a literal key segment, not a parent.
    expect(await uriOf(anySize, '/a/%252E%252E/b.jpg')).toBe('/a/%252E%252E/b.jpg/original');
  });

  it('reads `+` in a query value as a space, like a form', async () => {
    // A space is no valid width: the error quotes the decoded value.
    expectError(await anySize.handler(viewerEvent('/a.jpg', 'w=64+0')), 400, 'invalid_parameter', /width "64 0"/);
  });

  it('sends the origin only the recognised parameters, canonically spelled', async () => {
    const request = rewritten(
      await anySize.handler(
        viewerEvent(
          '/a.jpg',
          'W=0640&FM=JPG&bg=%23ABC&response-content-type=text/html&response-cache-control=no-cache&versionId=3&x-id=GetObject&acl&foo=bar',
        ),
      ),
    );
    expect(request.querystring).toEqual({ width: { value: '640' }, format: { value: 'jpeg' }, background: { value: 'aabbcc' } });
    expect(forwardedQuery(request)).toBe('width=640&format=jpeg&background=aabbcc');
  });

  it('percent-encodes what it forwards, since CloudFront sends values as written', async () => {
    const fn = loadEdge({
      grammar: { maxDimension: 100, presets: { 'sq uare&1=%': { width: '10' } } },
      avif: true,
      signing: false,
      keyValueStoreId: KVS_ID,
    });
    const request = rewritten(await fn.handler(viewerEvent('/a.jpg', 'p=sq+uare%261%3D%25&x=%3Cscript%3E')));
    expect(request.uri).toBe('/a.jpg/width=10');
    expect(forwardedQuery(request)).toBe('preset=sq%20uare%261%3D%25');
  });

  it('leaves the headers as they are', async () => {
    const event = viewerEvent('/a.jpg', 'w=100', { headers: { accept: CHROMIUM_ACCEPT, 'user-agent': 'test' } });
    const headers = JSON.parse(JSON.stringify(event.request.headers));
    const request = rewritten(await anySize.handler(event));
    expect(request.headers).toEqual(headers);
    expect(request.cookies).toEqual({});
  });

  it('rewrites HEAD like GET', async () => {
    expect(rewritten(await anySize.handler(viewerEvent('/a.jpg', 'w=100', { method: 'HEAD' }))).uri).toBe('/a.jpg/width=100');
  });

  it('passes other methods through untouched (the distribution allows GET and HEAD only)', async () => {
    const event = viewerEvent('/a.jpg', 'w=abc&x=1', { method: 'OPTIONS' });
    const request = rewritten(await anySize.handler(event));
    expect(request.uri).toBe('/a.jpg');
    expect(request.querystring).toEqual({ w: { value: 'abc' }, x: { value: '1' } });
  });
});

// -------------------------------------------------------------- negotiation

describe('format=auto', () => {
  it('records what Accept allows: AVIF for Chromium, WebP for a browser without AVIF, neither for */*', async () => {
    expect(await uriOf(anySize, '/a.jpg', 'w=100', CHROMIUM_ACCEPT)).toBe('/a.jpg/width=100,accept=avif');
    expect(await uriOf(anySize, '/a.jpg', 'w=100&format=auto', SAFARI_ACCEPT)).toBe('/a.jpg/width=100,accept=webp');
    expect(await uriOf(anySize, '/a.jpg', 'w=100', ANY_ACCEPT)).toBe('/a.jpg/width=100');
    expect(await uriOf(anySize, '/a.jpg', 'w=100')).toBe('/a.jpg/width=100');
    expect(await uriOf(anySize, '/a.jpg', '', 'image/avif;q=0, image/webp')).toBe('/a.jpg/accept=webp');
    // AVIF only beside WebP, the fallback the origin may choose instead.
    expect(await uriOf(anySize, '/a.jpg', 'w=100', 'image/avif,*/*')).toBe('/a.jpg/width=100');
  });

  it('never records AVIF when it is switched off', async () => {
    expect(await uriOf(noAvif, '/a.jpg', 'w=100', CHROMIUM_ACCEPT)).toBe('/a.jpg/width=100,accept=webp');
  });

  it('reads every Accept header a viewer sent', async () => {
    const event = viewerEvent('/a.jpg', '', { headers: { accept: ['text/html', 'image/webp'] } });
    expect(rewritten(await anySize.handler(event)).uri).toBe('/a.jpg/accept=webp');
  });

  it('leaves an explicit format alone, so the origin can tell it from a negotiated one, and json ignores everything else', async () => {
    expect(await uriOf(anySize, '/a.jpg', 'w=100&fm=png', CHROMIUM_ACCEPT)).toBe('/a.jpg/width=100,format=png');
    expect(await uriOf(anySize, '/a.jpg', 'w=100&fm=avif', CHROMIUM_ACCEPT)).toBe('/a.jpg/width=100,format=avif');
    expect(await uriOf(anySize, '/a.jpg', 'w=100&fm=webp', SAFARI_ACCEPT)).toBe('/a.jpg/width=100,format=webp');
    expect(await uriOf(anySize, '/a.jpg', 'w=100&fm=json', CHROMIUM_ACCEPT)).toBe('/a.jpg/format=json');
  });

  it('keeps any quality with a negotiated format, whose default the origin decides', async () => {
    expect(await uriOf(anySize, '/a.jpg', 'q=80', CHROMIUM_ACCEPT)).toBe('/a.jpg/quality=80,accept=avif');
    expect(await uriOf(anySize, '/a.jpg', 'q=80', SAFARI_ACCEPT)).toBe('/a.jpg/quality=80,accept=webp');
    expect(await uriOf(anySize, '/a.jpg', 'q=80&fm=webp', SAFARI_ACCEPT)).toBe('/a.jpg/format=webp');
  });

  it("ignores a viewer's accept parameter, and does not forward it: only the Accept header decides", async () => {
    expect(await uriOf(anySize, '/a.jpg', 'w=100&accept=avif', SAFARI_ACCEPT)).toBe('/a.jpg/width=100,accept=webp');
    expect(await uriOf(anySize, '/a.jpg', 'w=100&Accept=webp', ANY_ACCEPT)).toBe('/a.jpg/width=100');
    expect(await uriOf(anySize, '/a.jpg', 'w=100&accept=gif&accept=x', CHROMIUM_ACCEPT)).toBe('/a.jpg/width=100,accept=avif');
    const request = rewritten(await anySize.handler(viewerEvent('/a.jpg', 'w=100&accept=avif', { headers: { accept: CHROMIUM_ACCEPT } })));
    expect(forwardedQuery(request)).toBe('width=100');
  });
});

// -------------------------------------------------------------------- sizes

describe('sizes', () => {
  it('snaps a width or height up to the next allowed size', async () => {
    expect(await uriOf(open, '/a.jpg', 'w=500')).toBe('/a.jpg/width=640');
    expect(await uriOf(open, '/a.jpg', 'w=640&h=1')).toBe('/a.jpg/width=640,height=16');
    expect(await uriOf(open, '/a.jpg', 'w=300&dpr=2')).toBe('/a.jpg/width=640');
    expect(await uriOf(open, '/a.jpg', 'w=3840')).toBe('/a.jpg/width=3840');
  });

  it('refuses a size above the largest allowed one', async () => {
    expectError(await open.handler(viewerEvent('/a.jpg', 'w=3841')), 400, 'invalid_parameter', /width "3841".*at most 3840/);
    expectError(await open.handler(viewerEvent('/a.jpg', 'h=2000&dpr=2')), 400, 'invalid_parameter', /height "4000"/);
  });

  it('refuses a size above maxDimension before snapping', async () => {
    expectError(await open.handler(viewerEvent('/a.jpg', 'w=5000')), 400, 'invalid_parameter', /from 1 to 4096/);
  });
});

// ------------------------------------------------------------------ presets

describe('presets', () => {
  it('expands a preset, and lets parameters beside it override it', async () => {
    expect(await uriOf(open, '/a.jpg', 'preset=thumb')).toBe('/a.jpg/width=256,height=256,fit=contain,background=ffffff');
    expect(await uriOf(open, '/a.jpg', 'P=thumb&w=128&bg=000')).toBe('/a.jpg/width=128,height=256,fit=contain,background=000000');
    expect(await uriOf(open, '/a.jpg', 'p=og', CHROMIUM_ACCEPT)).toBe('/a.jpg/width=1200,height=640,quality=85,format=jpeg');
    expect(await uriOf(open, '/a.jpg', 'p=hero', CHROMIUM_ACCEPT)).toBe('/a.jpg/width=1920,quality=70,accept=avif');
  });

  it('refuses an unknown preset, naming the ones there are', async () => {
    expectError(await open.handler(viewerEvent('/a.jpg', 'preset=huge')), 400, 'invalid_parameter', /preset "huge".*thumb, avatar/);
    expectError(await open.handler(viewerEvent('/a.jpg', 'preset=constructor')), 400, 'invalid_parameter');
    expectError(await open.handler(viewerEvent('/a.jpg', 'preset=thumb&p=hero')), 400, 'invalid_parameter', /more than once/);
  });

  it('in presets-only mode, refuses every other parameter but ignores unknown ones', async () => {
    const sig = sign(PRESETS_ONLY, '/a.jpg', 'preset=avatar');
    expect(await uriOf(presetsOnly, '/a.jpg', `preset=avatar&sig=${sig}&utm=x`)).toBe('/a.jpg/width=96,height=96,position=attention');
    expectError(
      await presetsOnly.handler(viewerEvent('/a.jpg', `preset=avatar&w=100&sig=${sig}`)),
      400,
      'invalid_parameter',
      /width "100".*presets only/,
    );
  });
});

// --------------------------------------------------------------- signatures

describe('signatures', () => {
  const query = 'w=640&fit=inside&h=384';

  it('lets a request with a valid signature through, to the origin with its sig', async () => {
    const sig = sign(REALISTIC, '/a.jpg', query);
    const request = rewritten(await signed.handler(viewerEvent('/a.jpg', `${query}&sig=${sig}`)));
    expect(request.uri).toBe('/a.jpg/width=640,height=384,fit=inside');
    expect(request.querystring.sig).toEqual({ value: sig });
  });

  it('answers 403 for a missing or wrong signature, 400 for a repeated one (like any repeated parameter)', async () => {
    const sig = sign(REALISTIC, '/a.jpg', query);
    expectError(await signed.handler(viewerEvent('/a.jpg', query)), 403, 'invalid_signature', /must be signed/);
    expectError(await signed.handler(viewerEvent('/a.jpg', `${query}&sig=`)), 403, 'invalid_signature');
    expectError(await signed.handler(viewerEvent('/a.jpg', `${query}&sig=${sig.toLowerCase()}`)), 403, 'invalid_signature', /not valid/);
    expectError(await signed.handler(viewerEvent('/a.jpg', `${query}&sig=${sig.slice(1)}`)), 403, 'invalid_signature');
    expectError(await signed.handler(viewerEvent('/a.jpg', `w=641&fit=inside&h=384&sig=${sig}`)), 403, 'invalid_signature');
    expectError(await signed.handler(viewerEvent('/b.jpg', `${query}&sig=${sig}`)), 403, 'invalid_signature');
    expectError(
      await signed.handler(viewerEvent('/a.jpg', `${query}&sig=${sig}&SIG=${sig}`)),
      400,
      'invalid_parameter',
      /sig .*more than once/,
    );
  });

  it('does not let a signed URL be stretched into another variant by adding a quality', async () => {
    const sig = sign(REALISTIC, '/a.jpg', 'w=640');
    const avif = { headers: { accept: 'image/avif,image/webp,*/*' } };
    expect(rewritten(await signed.handler(viewerEvent('/a.jpg', `w=640&sig=${sig}`, avif))).uri).toBe('/a.jpg/width=640,accept=avif');
    // A quality is never a default without an explicit format, so it is part of what the signature covers.
    expectError(await signed.handler(viewerEvent('/a.jpg', `w=640&q=80&sig=${sig}`, avif)), 403, 'invalid_signature');
    expectError(await signed.handler(viewerEvent('/a.jpg', `w=640&q=auto&sig=${sig}`, avif)), 403, 'invalid_signature');
  });

  it('covers quality=auto: its own variant, which a fixed quality cannot borrow', async () => {
    const sig = sign(REALISTIC, '/a.jpg', 'w=640&q=auto');
    const avif = { headers: { accept: 'image/avif,image/webp,*/*' } };
    expect(rewritten(await signed.handler(viewerEvent('/a.jpg', `w=640&q=AUTO&sig=${sig}`, avif))).uri).toBe(
      '/a.jpg/width=640,quality=auto,accept=avif',
    );
    expectError(await signed.handler(viewerEvent('/a.jpg', `w=640&q=50&sig=${sig}`, avif)), 403, 'invalid_signature');
  });

  it('accepts a signature made with an older secret still in the list, and none made with a removed one', async () => {
    expect(await uriOf(signed, '/a.jpg', `${query}&sig=${sign(REALISTIC, '/a.jpg', query, OLD)}`)).toBe(
      '/a.jpg/width=640,height=384,fit=inside',
    );
    expectError(
      await signed.handler(viewerEvent('/a.jpg', `${query}&sig=${sign(REALISTIC, '/a.jpg', query, 'retired-secret')}`)),
      403,
      'invalid_signature',
    );
  });

  it('reads secrets separated by newlines or commas, ignoring blanks and surrounding spaces', async () => {
    for (const value of [`${OLD},${CURRENT}`, ` ${OLD} ,\r\n\n ${CURRENT}\n`, `${CURRENT}`]) {
      const fn = loadEdge(REALISTIC, value);
      expect(await uriOf(fn, '/a.jpg', `${query}&sig=${sign(REALISTIC, '/a.jpg', query)}`)).toBe('/a.jpg/width=640,height=384,fit=inside');
    }
  });

  it('verifies every spelling of a request with one signature, sizes snapped alike, whatever the name case of sig', async () => {
    const sig = sign(REALISTIC, '/a.jpg', query);
    for (const spelling of ['W=0640&FIT=Inside&height=384', 'h=384&w=640&fit=inside&position=center&utm=1', 'w=600&h=300&fit=inside']) {
      expect(await uriOf(signed, '/a.jpg', `${spelling}&Sig=${sig}`)).toBe('/a.jpg/width=640,height=384,fit=inside');
    }
  });

  it('serves one signed URL to every browser, each its own format', async () => {
    const sig = sign(REALISTIC, '/a.jpg', 'w=640&q=60');
    const uris = await Promise.all(
      [CHROMIUM_ACCEPT, SAFARI_ACCEPT, ANY_ACCEPT, undefined].map((accept) => uriOf(signed, '/a.jpg', `w=640&q=60&sig=${sig}`, accept)),
    );
    expect(uris).toEqual([
      '/a.jpg/width=640,quality=60,accept=avif',
      '/a.jpg/width=640,quality=60,accept=webp',
      '/a.jpg/width=640,quality=60',
      '/a.jpg/width=640,quality=60',
    ]);
  });

  it('answers 400 before 403: a bad parameter is reported whether signed or not', async () => {
    expectError(await signed.handler(viewerEvent('/a.jpg', 'w=abc')), 400, 'invalid_parameter');
  });

  it('refuses everything, and logs why, when the KeyValueStore has no secrets', async () => {
    const fn = loadEdge(REALISTIC);
    expectError(await fn.handler(viewerEvent('/a.jpg', `${query}&sig=${sign(REALISTIC, '/a.jpg', query)}`)), 403, 'invalid_signature');
    expect(fn.logs.join('\n')).toMatch(/signing secrets unavailable/);
    const empty = loadEdge(REALISTIC, ' ,\n');
    expectError(
      await empty.handler(viewerEvent('/a.jpg', `${query}&sig=${sign(REALISTIC, '/a.jpg', query, '')}`)),
      403,
      'invalid_signature',
    );
  });

  it('ignores sig, and forwards none, when signing is off', async () => {
    const request = rewritten(await open.handler(viewerEvent('/a.jpg', 'w=640&sig=whatever')));
    expect(request.uri).toBe('/a.jpg/width=640');
    expect(request.querystring).toEqual({ width: { value: '640' } });
  });
});

// ------------------------------------------------------------- client hints

describe('width=auto and dpr=auto', () => {
  /** The canonical URI for a query and the viewer's client hint headers. */
  async function hinted(fn: LoadedFunction, query: string, headers: Record<string, string | string[]>): Promise<string> {
    return rewritten(await fn.handler(viewerEvent('/a.jpg', query, { headers }))).uri;
  }
  const PHONE = { 'sec-ch-width': '1170', 'sec-ch-dpr': '3', 'sec-ch-viewport-width': '390' };
  const DESKTOP = { 'sec-ch-width': '640', 'sec-ch-dpr': '1', 'sec-ch-viewport-width': '1280' };

  it('writes the hinted width into the URI, snapped up to the sizes: Sec-CH-Width is device pixels already', async () => {
    expect(await hinted(open, 'w=auto', PHONE)).toBe('/a.jpg/width=1200');
    expect(await hinted(open, 'W=AUTO', DESKTOP)).toBe('/a.jpg/width=640');
    expect(await hinted(open, 'width=auto&h=300&fit=inside', DESKTOP)).toBe('/a.jpg/width=640,height=384,fit=inside');
  });

  it('snaps to the default ladder without sizes, so hints make as few variants as explicit widths', async () => {
    expect(AUTO_WIDTHS).toEqual([160, 320, 640, 960, 1280, 1920, 2560, 3840]);
    expect(await hinted(anySize, 'w=auto', PHONE)).toBe('/a.jpg/width=1280');
    expect(await hinted(anySize, 'w=auto', { 'sec-ch-width': '100' })).toBe('/a.jpg/width=160');
    const widths = new Set<string>();
    for (let width = 1; width <= 5000; width += 7) widths.add(await hinted(anySize, 'w=auto', { 'sec-ch-width': String(width) }));
    expect([...widths]).toEqual(AUTO_WIDTHS.map((width) => `/a.jpg/width=${width}`));
  });

  it('without Sec-CH-Width (an <img> without sizes) takes the viewport times the DPR, and without hints the documented fallback', async () => {
    expect(await hinted(anySize, 'w=auto', { 'sec-ch-viewport-width': '390', 'sec-ch-dpr': '3' })).toBe('/a.jpg/width=1280');
    expect(await hinted(anySize, 'w=auto', { 'sec-ch-viewport-width': '390' })).toBe('/a.jpg/width=640');
    expect(AUTO_FALLBACK_WIDTH).toBe(1280);
    expect(await hinted(anySize, 'w=auto', {})).toBe('/a.jpg/width=1280');
    expect(await hinted(open, 'w=auto', {})).toBe('/a.jpg/width=1920');
  });

  it('dpr=auto multiplies an explicit width by the hinted DPR rounded up to a half, and is 1 without it', async () => {
    expect(await hinted(anySize, 'w=300&dpr=auto', PHONE)).toBe('/a.jpg/width=900');
    expect(await hinted(anySize, 'w=300&h=200&dpr=auto', { 'sec-ch-dpr': '2.625' })).toBe('/a.jpg/width=900,height=600');
    expect(await hinted(anySize, 'w=300&dpr=auto', { 'sec-ch-dpr': '1.25' })).toBe('/a.jpg/width=450');
    expect(await hinted(anySize, 'w=300&dpr=auto', {})).toBe('/a.jpg/width=300');
    expect(await hinted(open, 'w=300&dpr=auto', PHONE)).toBe('/a.jpg/width=1080');
    // Beside width=auto the DPR is in the hinted width already.
    expect(await hinted(anySize, 'w=auto&dpr=auto', PHONE)).toBe('/a.jpg/width=1280');
    expect(await hinted(anySize, 'w=auto&dpr=2', DESKTOP)).toBe('/a.jpg/width=640');
  });

  it('with Save-Data: on, lowers a quality not given, and keeps one given', async () => {
    expect(await hinted(anySize, 'w=auto', { ...DESKTOP, 'save-data': 'on' })).toBe(`/a.jpg/width=640,quality=${SAVE_DATA_QUALITY}`);
    expect(await hinted(anySize, 'w=300&dpr=auto', { 'save-data': 'ON' })).toBe(`/a.jpg/width=300,quality=${SAVE_DATA_QUALITY}`);
    expect(await hinted(anySize, 'w=auto&q=90', { ...DESKTOP, 'save-data': 'on' })).toBe('/a.jpg/width=640,quality=90');
    expect(await hinted(anySize, 'w=auto', { ...DESKTOP, 'save-data': 'off' })).toBe('/a.jpg/width=640');
  });

  it('ignores hints without an auto parameter, so explicit URLs keep one cache entry', async () => {
    const all = { ...PHONE, 'save-data': 'on' };
    expect(await hinted(anySize, 'w=300', all)).toBe('/a.jpg/width=300');
    expect(await hinted(anySize, 'w=300&dpr=2', all)).toBe('/a.jpg/width=600');
    expect(await hinted(anySize, '', all)).toBe('/a.jpg/original');
  });

  it('holds hostile hints within the limits, and never answers them with an error', async () => {
    const cases: [Record<string, string | string[]>, string][] = [
      [{ 'sec-ch-width': '10000' }, '/a.jpg/width=3840'],
      [{ 'sec-ch-width': '9'.repeat(400) }, '/a.jpg/width=3840'],
      [{ 'sec-ch-width': '0' }, '/a.jpg/width=1280'],
      [{ 'sec-ch-width': '-390' }, '/a.jpg/width=1280'],
      [{ 'sec-ch-width': 'NaN' }, '/a.jpg/width=1280'],
      [{ 'sec-ch-width': '1e3' }, '/a.jpg/width=1280'],
      [{ 'sec-ch-width': '0x500' }, '/a.jpg/width=1280'],
      [{ 'sec-ch-width': '' }, '/a.jpg/width=1280'],
      [{ 'sec-ch-width': ['390', '1170'] }, '/a.jpg/width=1280'],
      [{ 'sec-ch-width': '390, 1170' }, '/a.jpg/width=1280'],
      [{ 'sec-ch-viewport-width': '390', 'sec-ch-dpr': '1000' }, '/a.jpg/width=3840'],
      [{ 'sec-ch-viewport-width': '390', 'sec-ch-dpr': '-3' }, '/a.jpg/width=640'],
    ];
    for (const [headers, uri] of cases) expect(await hinted(anySize, 'w=auto', headers), JSON.stringify(headers)).toBe(uri);
    // maxDimension holds over the ladder, and a huge DPR over an explicit width.
    const small = loadEdge({ ...ANY_SIZE, grammar: { maxDimension: 100 } });
    expect(await hinted(small, 'w=auto', PHONE)).toBe('/a.jpg/width=100');
    expect(await hinted(anySize, 'w=300&dpr=auto', { 'sec-ch-dpr': '1e308' })).toBe('/a.jpg/width=300');
    expect(await hinted(anySize, 'w=3000&dpr=auto', { 'sec-ch-dpr': '99999' })).toBe('/a.jpg/width=8192');
  });

  it('refuses other values, and auto for other parameters, with the usual 400', async () => {
    expectError(await anySize.handler(viewerEvent('/a.jpg', 'w=automatic')), 400, 'invalid_parameter', /width "automatic"/);
    expectError(await anySize.handler(viewerEvent('/a.jpg', 'h=auto')), 400, 'invalid_parameter', /height "auto"/);
    expectError(await anySize.handler(viewerEvent('/a.jpg', 'w=auto&width=auto')), 400, 'invalid_parameter', /given more than once/);
  });

  it('forwards auto to the origin as given, so a redirect back through the edge resolves the same hints again', async () => {
    const request = rewritten(await anySize.handler(viewerEvent('/a.jpg', 'W=Auto&dpr=AUTO', { headers: PHONE })));
    expect(forwardedQuery(request)).toBe('width=auto&dpr=auto');
  });

  it("checks a signature over the URI with auto, so an explicit width's signature does not open every hinted width", async () => {
    const autoSig = sign(REALISTIC, '/a.jpg', 'w=auto');
    expect(rewritten(await signed.handler(viewerEvent('/a.jpg', `w=auto&sig=${autoSig}`, { headers: PHONE }))).uri).toBe(
      '/a.jpg/width=1200',
    );
    const fixedSig = sign(REALISTIC, '/a.jpg', 'w=1200');
    expectError(await signed.handler(viewerEvent('/a.jpg', `w=auto&sig=${fixedSig}`, { headers: PHONE })), 403, 'invalid_signature');
  });
});

// ------------------------------------------------- expiring signatures

/** Unix seconds, `offset` from now: tests build their times from the clock the function reads. */
const secondsFromNow = (offset: number) => String(Math.floor(Date.now() / 1000) + offset);

/** Path and query of a URL the client helper made, as a viewer sends them. */
function viewerPartsOf(url: string): [string, string] {
  const parsed = new URL(url);
  return [parsed.pathname, parsed.search.slice(1)];
}

/** What the function does with a URL the client helper made. */
async function edgeAnswer(fn: LoadedFunction, url: string, accept?: string): Promise<FunctionResult> {
  const [path, query] = viewerPartsOf(url);
  return fn.handler(viewerEvent(path, query, accept ? { headers: { accept } } : {}));
}

/** A signature made the way a signer with `secret` would, for any scope, even one the helper refuses to make (an expired one). */
function signScoped(path: string, query: string, signature: SignatureParams, secret = CURRENT): string {
  const request = canonicalRequest(path, splitQuery(query), REALISTIC.grammar);
  return signUri(signedText(request.key, request.ops, signature) as string, secret);
}

describe('expiring signatures', () => {
  const query = 'w=640&fit=inside&h=384';
  const URI = '/a.jpg/width=640,height=384,fit=inside';

  it('serves an unexpired URL from the cache entry an unsigned one would use, forwarding exp to the origin', async () => {
    const soon = signedImageUrl('img.example.com', 'a.jpg', { w: 640, fit: 'inside', h: 384 } as ImageParams, {
      secret: CURRENT,
      expires: (Date.now() / 1000 + 60) | 0,
    });
    const later = signedImageUrl('img.example.com', 'a.jpg', { w: 640, fit: 'inside', h: 384 } as ImageParams, {
      secret: CURRENT,
      expires: new Date(Date.now() + 86_400_000),
    });
    expect(soon).toMatch(/\?width=640&height=384&fit=inside&exp=\d{10}&sig=[\w-]{32}$/);
    const [first, second] = [rewritten(await edgeAnswer(signed, soon)), rewritten(await edgeAnswer(signed, later))];
    // Two expiries of one image: one cache key, one variant.
    expect([first.uri, second.uri]).toEqual([URI, URI]);
    expect(first.querystring.exp).toEqual({ value: new URL(soon).searchParams.get('exp') });
    // The origin can send the viewer back through the edge (an oversized variant) and it still verifies.
    const [again, forwarded] = redirectTarget(first);
    expect(await uriOf(signed, again, forwarded)).toBe(URI);
  });

  it('answers 403 once the time has passed, even though the signature is right', async () => {
    for (const exp of [secondsFromNow(-1), secondsFromNow(0), secondsFromNow(-86_400 * 365)]) {
      const sig = signScoped('/a.jpg', query, { exp });
      expectError(
        await signed.handler(viewerEvent('/a.jpg', `${query}&exp=${exp}&sig=${sig}`)),
        403,
        'invalid_signature',
        /^This URL has expired\.$/,
      );
    }
  });

  it('does not let the time be changed, added or removed', async () => {
    const exp = secondsFromNow(60);
    const sig = signScoped('/a.jpg', query, { exp });
    const plainSig = sign(REALISTIC, '/a.jpg', query);
    for (const changed of [
      `${query}&exp=${Number(exp) + 1}&sig=${sig}`, // later
      `${query}&exp=0${exp}&sig=${sig}`, // the same time spelled otherwise is not what was signed
      `${query}&sig=${sig}`, // removed
      `${query}&exp=${exp}&sig=${plainSig}`, // a lasting signature given an expiry
    ]) {
      expectError(await signed.handler(viewerEvent('/a.jpg', changed)), 403, 'invalid_signature', /not valid/);
    }
    expect(await uriOf(signed, '/a.jpg', `${query}&EXP=${exp}&sig=${sig}`)).toBe(URI); // names are case-insensitive
  });

  it('refuses malformed, negative, fractional and huge times: past ones as expired, the rest as unsigned', async () => {
    const sig = signScoped('/a.jpg', query, { exp: secondsFromNow(60) });
    for (const exp of ['-5', '1.5', '', '%20', '0x10']) {
      expectError(await signed.handler(viewerEvent('/a.jpg', `${query}&exp=${exp}&sig=${sig}`)), 403, 'invalid_signature', /expired/);
    }
    for (const exp of ['abc', '1e400', '9'.repeat(20), 'Infinity', `${secondsFromNow(60)}.0`]) {
      expectError(await signed.handler(viewerEvent('/a.jpg', `${query}&exp=${exp}&sig=${sig}`)), 403, 'invalid_signature', /not valid/);
    }
    expectError(
      await signed.handler(viewerEvent('/a.jpg', `${query}&exp=1&exp=2&sig=${sig}`)),
      400,
      'invalid_parameter',
      /exp .*more than once/,
    );
    expectError(
      await signed.handler(viewerEvent('/a.jpg', `${query}&prefix=a&Prefix=b&sig=${sig}`)),
      400,
      'invalid_parameter',
      /prefix .*more than once/,
    );
    expectError(
      await signed.handler(viewerEvent('/a.jpg', `${query}&allow=a&ALLOW=a&sig=${sig}`)),
      400,
      'invalid_parameter',
      /allow .*more than once/,
    );
  });

  it('sets no limit on how far ahead a signer may set the time: the signature covers it', async () => {
    const exp = '9999999999'; // 2286
    expect(await uriOf(signed, '/a.jpg', `${query}&exp=${exp}&sig=${signScoped('/a.jpg', query, { exp })}`)).toBe(URI);
  });

  it('verifies with any active secret, so a rotation keeps expiring URLs working', async () => {
    const exp = secondsFromNow(60);
    expect(await uriOf(signed, '/a.jpg', `${query}&exp=${exp}&sig=${signScoped('/a.jpg', query, { exp }, OLD)}`)).toBe(URI);
    const retired = signScoped('/a.jpg', query, { exp }, 'retired-secret');
    expectError(await signed.handler(viewerEvent('/a.jpg', `${query}&exp=${exp}&sig=${retired}`)), 403, 'invalid_signature', /not valid/);
  });

  it('ignores exp, prefix and allow, and forwards none, when signing is off, even an expired time', async () => {
    const request = rewritten(await open.handler(viewerEvent('/a.jpg', `w=640&exp=${secondsFromNow(-10)}&prefix=a&allow=x&sig=y`)));
    expect(request.querystring).toEqual({ width: { value: '640' } });
  });
});

// ------------------------------------------------------------ prefix grants

describe('prefix grants', () => {
  const BASE = 'img.example.com';
  const options = REALISTIC.grammar;
  const grantFor = (prefix: string, allow?: ImageParams[], secret = CURRENT) =>
    signedPrefix(prefix, { secret, expires: new Date(Date.now() + 3_600_000), allow }, options);
  const urlWith = (grant: string, path: string, query = '') => withSignature(`https://${BASE}${path}${query ? '?' + query : ''}`, grant);

  it('verifies for every key under the prefix, at any depth, with any parameters when none are bound', async () => {
    const grant = grantFor('users/42/');
    expect(grant).toMatch(/^prefix=users\/42&exp=\d{10}&sig=[\w-]{32}$/);
    for (const [key, params] of [
      ['users/42/a.jpg', { width: 640 }],
      ['users/42/albums/2026/b c.png', { blur: 5, format: 'webp' }],
      ['users/42/x', {}],
    ] as [string, ImageParams][]) {
      const request = rewritten(await edgeAnswer(signed, withSignature(imageUrl(BASE, key, params, options), grant)));
      expect(request.uri.startsWith('/' + key.replace(' ', '%20') + '/')).toBe(true);
      // Forwarded for the origin's redirect, which comes back through the edge and verifies again.
      expect(Object.keys(request.querystring)).toEqual(expect.arrayContaining(['prefix', 'exp', 'sig']));
      const [again, forwarded] = redirectTarget(request);
      expect(await uriOf(signed, again, forwarded)).toBe(request.uri);
    }
  });

  it('signs a folder of any name as ASCII text, the same bytes in every runtime', async () => {
    const folder = 'café/日本 #1';
    const text = signedText(`${folder}/a.jpg`, {}, { prefix: folder, exp: '1795489791' });
    expect(text).toBe('["/caf%C3%A9/%E6%97%A5%E6%9C%AC%20%231","1795489791",null]');
    const url = withSignature(imageUrl(BASE, `${folder}/a.jpg`, { width: 640 }, options), grantFor(folder));
    expect(rewritten(await edgeAnswer(signed, url)).uri).toBe('/caf%C3%A9/%E6%97%A5%E6%9C%AC%20%231/a.jpg/width=640');
  });

  it('verifies for no key outside it: whole segments of the decoded key, case and escapes included', async () => {
    const grant = grantFor('users/42');
    for (const path of [
      '/users/420/a.jpg',
      '/users/4/a.jpg',
      '/users/42',
      '/Users/42/a.jpg',
      '/users/42%252Fa.jpg',
      '/users/a.jpg',
      '/other/users/42/a.jpg',
    ]) {
      expectError(await signed.handler(viewerEvent(...viewerPartsOf(urlWith(grant, path)))), 403, 'invalid_signature', /not valid/);
    }
    expectError(
      await signed.handler(viewerEvent(...viewerPartsOf(urlWith(grantFor('users/4'), '/users/42/a.jpg')))),
      403,
      'invalid_signature',
    );
    // `..` (sent raw: a browser resolves it before sending) never reaches a prefix check: such a key is refused first.
    for (const path of ['/users/42/../43/a.jpg', '/users/42/%2E%2E/43/a.jpg', '/users/42//a.jpg']) {
      expectError(await signed.handler(viewerEvent(path, grant)), 400, 'invalid_key');
    }
    // An encoded slash in the path names the same key, so the same object: the grant covers it.
    expect(await uriOf(signed, ...viewerPartsOf(urlWith(grant, '/users%2F42/a.jpg')))).toBe('/users/42/a.jpg/original');
  });

  it('reads the prefix with or without its trailing slash and in any escaping, and refuses any other prefix with its signature', async () => {
    const sig = new URLSearchParams(grantFor('users/42')).get('sig');
    const rest = `exp=${new URLSearchParams(grantFor('users/42')).get('exp')}&sig=${sig}`;
    for (const prefix of ['users/42', 'users/42/', 'users%2F42%2F']) {
      expect(await uriOf(signed, '/users/42/a.jpg', `prefix=${prefix}&${rest}`)).toBe('/users/42/a.jpg/original');
    }
    for (const prefix of ['users', 'users/42/a.jpg', 'users/42/../42', 'users/42//', '', 'users/42/x/..', 'USERS/42']) {
      expectError(
        await signed.handler(viewerEvent('/users/42/a.jpg/b.jpg', `prefix=${encodeURIComponent(prefix)}&${rest}`)),
        403,
        'invalid_signature',
      );
    }
  });

  it('allows only the variants it is bound to, checked on the canonical request', async () => {
    const grant = grantFor('users/42', [{ width: 320 }, { width: 640 }, { preset: 'thumb' }]);
    expect(grant).toContain('&allow=width%3D384+width%3D640+width%3D256,height%3D256,fit%3Dcontain,background%3Dffffff&');
    for (const query of ['width=640', 'W=0640', 'w=320&dpr=2', 'w=300', 'p=thumb', 'w=640&format=auto', 'w=640&fit=cover']) {
      expect(rewritten(await signed.handler(viewerEvent(...viewerPartsOf(urlWith(grant, '/users/42/a.jpg', query))))).uri).toMatch(
        /^\/users\/42\/a\.jpg\//,
      );
    }
    for (const query of [
      '',
      'w=1080',
      'w=640&q=90',
      'w=640&blur=3',
      'w=640&format=png',
      'p=thumb&w=640',
      'p=avatar',
      'format=json',
      'w=640&h=640',
    ]) {
      expectError(
        await signed.handler(viewerEvent(...viewerPartsOf(urlWith(grant, '/users/42/a.jpg', query)))),
        403,
        'invalid_signature',
        /not valid/,
      );
    }
  });

  it('does not let its binding, prefix or time be changed, added or removed', async () => {
    const bound = new URLSearchParams(grantFor('users/42', [{ width: 640 }]));
    const change = (name: string, value?: string) => {
      const copy = new URLSearchParams(bound);
      if (value === undefined) copy.delete(name);
      else copy.set(name, value);
      return copy.toString();
    };
    for (const query of [
      change('allow'), // unbound
      change('allow', 'width=640 width=3840'),
      change('allow', 'width=3840'),
      change('prefix', 'users'),
      change('exp'),
      change('exp', String(Number(bound.get('exp')) + 60)),
    ]) {
      const request = query.includes('3840') ? 'w=3840&' + query : 'w=640&' + query;
      expectError(await signed.handler(viewerEvent('/users/42/a.jpg', request)), 403, 'invalid_signature', /not valid/);
    }
    expect(await uriOf(signed, '/users/42/a.jpg', 'w=640&' + bound.toString())).toBe('/users/42/a.jpg/width=640');
  });

  it('refuses a URL signature turned into a grant, a grant turned into a URL signature, and two signatures', async () => {
    const urlSig = sign(REALISTIC, '/users/42/a.jpg', 'w=640');
    expectError(
      await signed.handler(viewerEvent('/users/42/a.jpg', `w=640&prefix=users/42&sig=${urlSig}`)),
      403,
      'invalid_signature',
      /not valid/,
    );
    const grant = new URLSearchParams(grantFor('users/42'));
    expectError(
      await signed.handler(viewerEvent('/users/42/a.jpg', `w=640&exp=${grant.get('exp')}&sig=${grant.get('sig')}`)),
      403,
      'invalid_signature',
    );
    expectError(
      await signed.handler(viewerEvent('/users/42/a.jpg', `w=640&${grant.toString()}&sig=${urlSig}`)),
      400,
      'invalid_parameter',
      /sig .*more than once/,
    );
  });

  it('expires like any signature, and verifies with any active secret', async () => {
    const exp = secondsFromNow(-1);
    const sig = signUri(signedText('users/42/a.jpg', {}, { prefix: 'users/42', exp }) as string, CURRENT);
    expectError(
      await signed.handler(viewerEvent('/users/42/a.jpg', `prefix=users/42&exp=${exp}&sig=${sig}`)),
      403,
      'invalid_signature',
      /expired/,
    );
    expect(await uriOf(signed, ...viewerPartsOf(urlWith(grantFor('users/42', undefined, OLD), '/users/42/a.jpg')))).toBe(
      '/users/42/a.jpg/original',
    );
  });
});

// --------------------------------------------------------------- hdr

describe('hdr', () => {
  const dropping: EdgeFunctionSettings = { ...REALISTIC, grammar: { ...REALISTIC.grammar, hdr: 'drop' } };

  it('keeps a gain map by default: hdr=drop enters the canonical URI, hdr=keep does not', async () => {
    expect(await uriOf(anySize, '/a.jpg', 'w=640', CHROMIUM_ACCEPT)).toBe('/a.jpg/width=640,accept=avif');
    expect(await uriOf(anySize, '/a.jpg', 'w=640&hdr=KEEP', CHROMIUM_ACCEPT)).toBe('/a.jpg/width=640,accept=avif');
    expect(await uriOf(anySize, '/a.jpg', 'w=640&hdr=drop', CHROMIUM_ACCEPT)).toBe('/a.jpg/width=640,hdr=drop,accept=avif');
    // Only a JPEG carries a gain map: another format asked for has no HDR to drop.
    expect(await uriOf(anySize, '/a.jpg', 'w=640&hdr=drop&fm=webp')).toBe('/a.jpg/width=640,format=webp');
    expect(await uriOf(anySize, '/a.jpg', 'w=640&hdr=drop&fm=jpg')).toBe('/a.jpg/width=640,hdr=drop,format=jpeg');
  });

  it("writes a deployment's drop default into the canonical URI, so that the two never share a key, and keeps its signed URLs valid", async () => {
    const fn = loadEdge(dropping, CURRENT);
    const signedUri = async (query: string) => uriOf(fn, '/a.jpg', `${query}&sig=${sign(dropping, '/a.jpg', query)}`, CHROMIUM_ACCEPT);
    expect(await signedUri('w=640')).toBe('/a.jpg/width=640,hdr=drop,accept=avif');
    expect(await signedUri('w=640&hdr=keep')).toBe('/a.jpg/width=640,accept=avif');
    expect(await signedUri('w=640&fm=png')).toBe('/a.jpg/width=640,format=png');
    // The same signature serves a deployment that keeps: it covers the URL as written, not the default.
    const query = `w=640&sig=${sign(REALISTIC, '/a.jpg', 'w=640')}`;
    expect(await uriOf(loadEdge(REALISTIC, CURRENT), '/a.jpg', query, CHROMIUM_ACCEPT)).toBe('/a.jpg/width=640,accept=avif');
    expect(await uriOf(fn, '/a.jpg', query, CHROMIUM_ACCEPT)).toBe('/a.jpg/width=640,hdr=drop,accept=avif');
  });
});

// --------------------------------------------------------------- watermarks

describe('watermarks', () => {
  const versions = (logo: string) => ({ logo, badge: '0f0e0d0c' });
  const watermarked = (logo: string): EdgeFunctionSettings => ({
    ...REALISTIC,
    grammar: { ...REALISTIC.grammar, watermarks: versions(logo) },
  });
  const before = watermarked('1a2b3c4d');
  const after = watermarked('99aa88bb');

  it('writes the version the store holds into the canonical URI, whatever the spelling or a version the viewer wrote', async () => {
    const fn = loadEdge(before, CURRENT);
    for (const query of ['w=640&wm=logo', 'w=640&WATERMARK=LOGO', 'w=640&wm=logo.deadbeef']) {
      const signedQuery = `${query}&sig=${sign(before, '/a.jpg', query)}`;
      expect(await uriOf(fn, '/a.jpg', signedQuery), query).toBe('/a.jpg/width=640,watermark=logo.1a2b3c4d');
    }
  });

  it('keeps signed URLs valid across a new watermark version, which gives them new cache keys', async () => {
    const query = `w=640&wm=logo&sig=${sign(before, '/a.jpg', 'w=640&wm=logo')}`;
    expect(await uriOf(loadEdge(before, CURRENT), '/a.jpg', query)).toBe('/a.jpg/width=640,watermark=logo.1a2b3c4d');
    expect(await uriOf(loadEdge(after, CURRENT), '/a.jpg', query)).toBe('/a.jpg/width=640,watermark=logo.99aa88bb');
  });

  it('refuses a name the deployment does not define, naming those it does', async () => {
    const fn = loadEdge(before, CURRENT);
    const query = `w=640&wm=nope&sig=${sign(before, '/a.jpg', 'w=640&wm=nope')}`;
    expectError(
      await fn.handler(viewerEvent('/a.jpg', query)),
      400,
      'invalid_parameter',
      /^Invalid watermark "nope": expected one of logo, badge\.$/,
    );
    expectError(
      await open.handler(viewerEvent('/a.jpg', 'wm=logo')),
      400,
      'invalid_parameter',
      /expected one of \(no watermarks are defined\)\.$/,
    );
  });

  it('refuses a signed watermark and version with the ops after it folded in, which would drop them from the variant', async () => {
    const fn = loadEdge(before, CURRENT);
    // The canonical URI signed is `/a.jpg/watermark=logo.deadbeef,quality=30,format=webp`: so is that of the one value.
    const sig = sign(before, '/a.jpg', 'wm=logo.deadbeef&q=30&format=webp');
    expect(await uriOf(fn, '/a.jpg', `wm=logo.deadbeef&q=30&format=webp&sig=${sig}`)).toBe(
      '/a.jpg/watermark=logo.1a2b3c4d,quality=30,format=webp',
    );
    for (const folded of ['wm=logo.deadbeef%2Cquality%3D30%2Cformat%3Dwebp', 'wm=logo.deadbeef%2Cquality%3D30&format=webp']) {
      expectError(await fn.handler(viewerEvent('/a.jpg', `${folded}&sig=${sig}`)), 400, 'invalid_parameter', /^Invalid watermark/);
    }
  });

  it('refuses anything but a name the deployment defines, by looking it up', async () => {
    const fn = loadEdge(before, CURRENT);
    for (const value of ['', 'Logo!', 'a'.repeat(33), '-logo', 'logo%2F..', 'constructor']) {
      const query = `wm=${value}&sig=${sign(before, '/a.jpg', `wm=${value}`)}`;
      expectError(await fn.handler(viewerEvent('/a.jpg', query)), 400, 'invalid_parameter', /expected one of logo, badge\.$/);
    }
  });
});

// --------------------------------------------------------------- rejections

describe('rejections', () => {
  const cases: [string, string, string, RegExp][] = [
    ['/a.jpg', 'w=abc', 'invalid_parameter', /Invalid width "abc": expected an integer from 1 to 8192/],
    ['/a.jpg', 'w=0', 'invalid_parameter', /width "0"/],
    ['/a.jpg', 'w=-5', 'invalid_parameter', /width "-5"/],
    ['/a.jpg', 'w=1e3', 'invalid_parameter', /width "1e3"/],
    ['/a.jpg', 'fit=squash', 'invalid_parameter', /fit "squash".*cover, contain/],
    ['/a.jpg', 'q=101', 'invalid_parameter', /quality "101"/],
    ['/a.jpg', 'bg=zzz', 'invalid_parameter', /background "zzz"/],
    ['/a.jpg', 'dpr=1.25', 'invalid_parameter', /dpr "1.25"/],
    ['/a.jpg', 'rotate=45', 'invalid_parameter', /rotate "45"/],
    ['/a.jpg', 'format=tiff', 'invalid_parameter', /format "tiff"/],
    ['/a.jpg', 'flip=yes', 'invalid_parameter', /flip "yes"/],
    // A name without UTF-8 (a lone surrogate) could be in no query to the origin, even where it changes nothing.
    ['/a.jpg', 'fills=\udfff', 'invalid_parameter', /Invalid fills ".": expected text in Unicode\./],
    ['/a.jpg', 'w=100&w=200', 'invalid_parameter', /more than once/],
    ['/a.jpg', 'w=100&width=200', 'invalid_parameter', /more than once/],
    ['/a.jpg', 'W=100&w=100', 'invalid_parameter', /more than once/],
    ['/a.jpg', 'w=%2531%2530', 'invalid_parameter', /width "%31%30"/],
    ['/a.jpg', 'w=%E0%A4%A', 'invalid_parameter', /not valid percent-encoded/],
    ['/a.jpg', 'w=%zz', 'invalid_parameter', /not valid percent-encoded/],
    ['/a.jpg', `w=${'9'.repeat(500)}`, 'invalid_parameter', /width "9{40}…"/],
    ['/a/../b.jpg', '', 'invalid_key', /"\.\." path segment/],
    ['/a/%2e%2E/b.jpg', '', 'invalid_key', /"\.\." path segment/],
    ['/a/./b.jpg', '', 'invalid_key', /"\." path segment/],
    ['/a//b.jpg', '', 'invalid_key', /empty path segment/],
    ['/a/', '', 'invalid_key', /empty path segment/],
    ['/', '', 'invalid_key', /empty/],
    ['/a%00.jpg', '', 'invalid_key', /control character/],
    ['/a%0A.jpg', '', 'invalid_key', /control character/],
    ['/a%7F.jpg', '', 'invalid_key', /control character/],
    ['/a%ED%A0%80.jpg', '', 'invalid_key', /percent-encoded UTF-8/],
    ['/a%E0.jpg', '', 'invalid_key', /percent-encoded UTF-8/],
    [`/${'k'.repeat(1025)}`, '', 'invalid_key', /longer than 1024 bytes/],
  ];
  for (const [path, query, code, message] of cases) {
    it(`answers 400 ${code} for ${path.slice(0, 30)}${query ? '?' + query.slice(0, 30) : ''}`, async () => {
      expectError(await anySize.handler(viewerEvent(path, query)), 400, code, message);
    });
  }

  // One bad value per viewer parameter, so every kind of value (integer, number, choice, the
  // choice of angles, boolean, colour, region, point, border, a deployment's name) is refused.
  const refusals: { [name: string]: [query: string, value: string, allowed: string] } = {
    width: ['w=abc', 'abc', 'an integer from 1 to 8192'],
    height: ['h=0', '0', 'an integer from 1 to 8192'],
    dpr: ['dpr=4.5', '4.5', 'a number from 1 to 4 with at most one decimal'],
    fit: ['fit=squash', 'squash', 'one of cover, contain, fill, inside, outside, pad'],
    fill: ['fill=solid', 'solid', 'one of background, blur'],
    position: ['gravity=north', 'north', `one of ${POSITIONS.join(', ')}`],
    fp: ['fp=0.5', '0.5', 'x,y: fractions of the image'],
    enlarge: ['enlarge=yes', 'yes', 'true, false, 1 or 0'],
    rotate: ['rotate=45', '45', 'one of 0, 90, 180, 270'],
    flip: ['flip=no', 'no', 'true, false, 1 or 0'],
    flop: ['flop=2', '2', 'true, false, 1 or 0'],
    trim: ['trim=256', '256', 'an integer from 0 to 255'],
    crop: ['crop=0.5,0,0.6,1', '0.5,0,0.6,1', 'x,y,width,height: fractions of the image, the region inside it'],
    segment: ['segment=background', 'background', 'one of foreground'],
    grayscale: ['greyscale=on', 'on', 'true, false, 1 or 0'],
    blur: ['blur=0.2', '0.2', 'a number from 0.3 to 100 with at most one decimal'],
    sharpen: ['sharpen=11', '11', 'a number from 0.5 to 10 with at most one decimal'],
    brightness: ['brightness=11', '11', 'a number from 0 to 10 with at most two decimals'],
    contrast: ['contrast=1.255', '1.255', 'a number from 0 to 10 with at most two decimals'],
    saturation: ['saturation=-1', '-1', 'a number from 0 to 10 with at most two decimals'],
    gamma: ['gamma=0.3', '0.3', 'a number from 0.34 to 3 with at most two decimals'],
    watermark: ['wm=nope', 'nope', 'one of logo'],
    template: ['template=nope', 'nope', 'one of og'],
    border: ['border=5,red', 'red', 'a hex colour rgb, rrggbb or rrggbbaa'],
    background: ['bg=%2312345', '#12345', 'a hex colour rgb, rrggbb or rrggbbaa'],
    quality: ['q=101', '101', 'an integer from 1 to 100'],
    max_bytes: ['mb=0', '0', 'an integer from 1 to 100000000'],
    metadata: ['metadata=all', 'all', 'one of none, copyright, keep'],
    hdr: ['hdr=sdr', 'sdr', 'one of keep, drop'],
    format: ['fm=tiff', 'tiff', `one of auto, jpeg, jpg, png, webp, avif, gif, json`],
    'text-size': ['text-size=513', '513', 'an integer from 4 to 512'],
    'text-color': ['text-color=white', 'white', 'a hex colour rgb, rrggbb or rrggbbaa'],
    'text-font': ['text-font=comic', 'comic', 'one of sans, sans-bold'],
    'text-align': ['text-align=justify', 'justify', 'one of left, center, right'],
    'text-position': [
      'text-position=face',
      'face',
      'one of center, top, right, bottom, left, top-left, top-right, bottom-left, bottom-right',
    ],
    'text-pad': ['text-pad=-1', '-1', 'an integer from 0 to 4096'],
    'text-shadow': ['text-shadow=65', '65', 'an integer from 0 to 64'],
    'text-width': ['text-width=0', '0', 'an integer from 1 to 8192'],
  };

  // The numbered overlay slots' (`watermark2=nope`, `text2-size=513`...), refused as the first slot's.
  const firstSlot = Object.fromEntries(Object.entries(refusals).filter(([name]) => /^(watermark|text-)/.test(name)));
  for (const [name, [query, value, allowed]] of Object.entries(numberedSlots(firstSlot))) {
    refusals[name] = [`${name}=${query.slice(query.indexOf('=') + 1)}`, value, allowed];
  }

  // Read at the origin, which refuses them: a card's fills against its template (docs/templates.md), any text
  // for its length or a control character (text-render.test.ts).
  const readAtTheOrigin = ['fills', ...OVERLAY_SLOTS.map((slot) => `text${slot}`)];

  it('has a refusal below for every parameter a viewer may give', () => {
    expect(Object.keys(refusals).sort()).toEqual(
      VIEWER_PARAMS.map((param) => param.name as string)
        .filter((name) => !readAtTheOrigin.includes(name))
        .sort(),
    );
  });

  // The words come from the store's data, with or without watermarks and templates in it.
  const withStore = loadEdge({
    ...ANY_SIZE,
    grammar: { ...ANY_SIZE.grammar, watermarks: { logo: '1a2b3c4d' }, templates: { og: '5e6f7a8b' } },
  });
  for (const [name, [query, value, allowed]] of Object.entries(refusals)) {
    it(`refuses a bad ${name} naming the parameter, the value and what is allowed, with or without watermarks in its data`, async () => {
      for (const fn of /^watermark\d?$/.test(name) || name === 'template' ? [withStore] : [withStore, anySize]) {
        const result = await fn.handler(viewerEvent('/a.jpg', query));
        expectError(result, 400, 'invalid_parameter');
        expect(JSON.parse(answered(result).body.data).message).toBe(`Invalid ${name} "${value}": expected ${allowed}.`);
      }
    });
  }

  it('answers the contract status line', async () => {
    const response = answered(await anySize.handler(viewerEvent('/a.jpg', 'w=abc')));
    expect(response.statusDescription).toBe('Bad Request');
    const forbidden = answered(await signed.handler(viewerEvent('/a.jpg', 'w=100')));
    expect([forbidden.statusCode, forbidden.statusDescription]).toEqual([403, 'Forbidden']);
  });
});

// --------------------------------------------- agreement with the grammar

/**
 * Values per parameter, from the parameter table: its samples and the edges of its range under each
 * of its spellings, and the presets.
 */
const VALID_PAIRS = [
  ...SAMPLE_PAIRS,
  ...VIEWER_CASES.flatMap(({ name, aliases, case: { outOfRange } }) =>
    outOfRange.slice(0, 2).map((value) => [aliases[0] ?? name, value] as const),
  ),
  ...PRESET_SPELLINGS.flatMap((spelling) => Object.keys(PRESETS).map((preset) => [spelling, preset] as const)),
];
const KNOWN_NAMES = [...VIEWER_CASES.flatMap(({ name, aliases }) => [name, ...aliases]), ...PRESET_SPELLINGS];
const OTHER_NAMES = [
  'foo',
  'utm_source',
  'response-content-type',
  'versionId',
  'constructor',
  '__proto__',
  'toString',
  '',
  'x y',
  'accept',
];
const ODD_VALUES = [
  '0',
  '-1',
  'abc',
  '',
  '641',
  '9000',
  '4.1',
  '101',
  'zzz',
  '45',
  'yes',
  'tiff',
  'nope',
  'constructor',
  '%',
  '%zz',
  '%E0%A4',
  '%2531',
  ' 1',
  'avif',
  'webp',
];
const ACCEPTS = [CHROMIUM_ACCEPT, SAFARI_ACCEPT, ANY_ACCEPT, '', 'image/avif;q=0,image/webp;q=0', 'IMAGE/WEBP', 'image/avif'];
const KEYS = ['photos/cat.jpg', 'a b/c+d (1).png', 'été/日本.webp', 'x', '%41', "it's/[1]~!*.gif"];
const BAD_KEYS = ['..', 'a/./b', '', 'a//b', 'a/', 'k\u0000'];

/** Percent-encodes some of a text's characters, or all, or none, as a viewer might. */
const spelled = (text: string): fc.Arbitrary<string> =>
  fc.constantFrom('raw', 'component', 'all', 'plus').map((how) => {
    if (how === 'component') return encodeURIComponent(text);
    if (how === 'all') return Array.from(new TextEncoder().encode(text), (byte) => '%' + byte.toString(16).padStart(2, '0')).join('');
    if (how === 'plus') return encodeURIComponent(text).replace(/%20/g, '+');
    return text.replace(/[&=#%\s]/g, encodeURIComponent);
  });

const anyCase = (text: string): fc.Arbitrary<string> =>
  fc
    .boolean()
    .chain((mixed) =>
      mixed ? fc.constantFrom(text.toUpperCase(), text[0] ? text[0].toUpperCase() + text.slice(1) : text) : fc.constant(text),
    );

const validPair = fc.constantFrom(...VALID_PAIRS).chain(([n, v]) => fc.tuple(anyCase(n), fc.constant(v)));
const oddPair = fc.tuple(
  fc.oneof(fc.constantFrom(...KNOWN_NAMES).chain(anyCase), fc.constantFrom(...OTHER_NAMES), fc.string({ maxLength: 4 })),
  fc.oneof(fc.constantFrom(...ODD_VALUES), fc.string({ maxLength: 6 })),
);
const unknownPair = fc.tuple(fc.constantFrom(...OTHER_NAMES), fc.string({ maxLength: 6 }));
const pair = fc
  .tuple(
    fc.oneof({ weight: 12, arbitrary: validPair }, { weight: 2, arbitrary: unknownPair }, { weight: 1, arbitrary: oddPair }),
    fc.boolean(),
  )
  .chain(([[n, v], bare]) =>
    fc.tuple(spelled(n), /^%/.test(v) ? fc.constant(v) : spelled(v)).map(([sn, sv]) => (bare && sv === '' ? sn : `${sn}=${sv}`)),
  );
const query = fc.array(pair, { maxLength: 4 }).map((pairs) => pairs.join('&'));
const encodedPath = (key: string) => '/' + key.split('/').map(encodeURIComponent).join('/');
const path = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...KEYS).map(encodedPath) },
  fc.constantFrom(...BAD_KEYS).map(encodedPath),
  fc.constantFrom(...KEYS, ...BAD_KEYS).map((key) => '/' + key),
  fc.string({ maxLength: 12 }).map((text) => '/' + text.replace(/[?#]/g, '')),
);

type Outcome = { uri: string } | { status: number; error: string };

function grammarOutcome(options: GrammarOptions, avif: boolean, p: string, q: string, accept: string): Outcome {
  try {
    return { uri: canonicalRequest(p, splitQuery(q), options, { accept, avif }).uri };
  } catch (error) {
    if (isGrammarError(error)) return { status: 400, error: error.code };
    throw error;
  }
}

function edgeOutcome(result: FunctionResult): Outcome {
  if (isResponse(result)) return { status: result.statusCode, error: JSON.parse(result.body.data).error };
  return { uri: result.uri };
}

/** Where the origin redirects an oversized variant: the key's path plus the forwarded query. */
function redirectTarget(request: ViewerRequest): [string, string] {
  return [request.uri.slice(0, request.uri.lastIndexOf('/')), forwardedQuery(request)];
}

describe('agreement with the TypeScript grammar', () => {
  const RUNS = { numRuns: 3000 };

  for (const [label, settings, fn] of [
    ['sizes and presets', OPEN, () => open],
    ['any size', ANY_SIZE, () => anySize],
    ['no AVIF', NO_AVIF, () => noAvif],
  ] as const) {
    it(`gives the grammar's URI or its 400 for any request (${label})`, async () => {
      await fc.assert(
        fc.asyncProperty(path, query, fc.constantFrom(...ACCEPTS), async (p, q, accept) => {
          const result = await fn().handler(viewerEvent(p, q, { headers: { accept } }));
          expect(edgeOutcome(result)).toEqual(grammarOutcome(settings.grammar, settings.avif, p, q, accept));
          if (isResponse(result)) return;
          // The forwarded query leads back to the same URI, for the same browser.
          const [again, forwarded] = redirectTarget(result);
          expect(await uriOf(fn(), again, forwarded, accept || undefined)).toBe(result.uri);
        }),
        RUNS,
      );
    });
  }

  it('accepts any valid request signed by the client rule, and its redirect, for every browser', async () => {
    await fc.assert(
      fc.asyncProperty(path, query, fc.constantFrom(...ACCEPTS), async (p, q, accept) => {
        const plain = grammarOutcome(REALISTIC.grammar, true, p, q, '');
        fc.pre('uri' in plain && !splitQuery(q).some((one) => one[0].toLowerCase() === 'sig'));
        const sig = sign(REALISTIC, p, q);
        const result = rewritten(await signed.handler(viewerEvent(p, `${q}&sig=${sig}`, { headers: { accept } })));
        expect(result.uri).toBe((grammarOutcome(REALISTIC.grammar, true, p, q, accept) as { uri: string }).uri);
        const [again, forwarded] = redirectTarget(result);
        expect(await uriOf(signed, again, forwarded, accept || undefined)).toBe(result.uri);
      }),
      { numRuns: 1500 },
    );
  });

  it('follows presets-only mode through the redirect too', async () => {
    for (const preset of ['thumb', 'avatar', 'hero', 'og', 'mono', 'gallery']) {
      const sig = sign(PRESETS_ONLY, '/a.jpg', `preset=${preset}`);
      for (const accept of [CHROMIUM_ACCEPT, SAFARI_ACCEPT, undefined]) {
        const result = rewritten(
          await presetsOnly.handler(viewerEvent('/a.jpg', `p=${preset}&sig=${sig}`, accept ? { headers: { accept } } : {})),
        );
        const [again, forwarded] = redirectTarget(result);
        expect(forwarded).toBe(`preset=${preset}&sig=${sig}`);
        expect(await uriOf(presetsOnly, again, forwarded, accept)).toBe(result.uri);
      }
    }
  });
});
