// The examples of each dialect's own public documentation, as test cases: the
// URL in the dialect, where it came from, and the native URL that means the
// same image (with the canonical URI both must reach), or the refusal a URL we
// cannot honour gets. test/edge/dialects.test.ts runs them through the
// generated functions, test/emulator/dialects.test.ts through the emulator.
// Another dialect's cases are one more table of the same shape.

import type { EdgeGrammar } from '../../lambda/edge/dialects/dialect';

export interface DialectCase {
  /** The function that reads the URL. */
  grammar: Exclude<EdgeGrammar, 'native'>;
  /** Where the example is documented. */
  source: string;
  /** The URL as the dialect writes it: path (percent-encoded as sent) and query. */
  path: string;
  query?: string;
  /** The native URL of the same image, and the canonical URI both reach (no Accept header). */
  native?: { path: string; query: string; canonical: string };
  /** Or the refusal: status and a pattern of the message. */
  refused?: { status: 400; message: RegExp };
}

/** DIT's base64 JSON request for `request`, as its documentation builds it (`btoa(JSON.stringify(...))`). */
export const ditRequest = (request: object): string => '/' + Buffer.from(JSON.stringify(request)).toString('base64');

const DOCS = 'https://docs.aws.amazon.com/solutions/latest/dynamic-image-transformation-for-amazon-cloudfront/';
const CREATE = DOCS + 'create-and-use-image-requests.html';
const FILTERS = DOCS + 'use-filters.html';
const QUERY = DOCS + 'use-supported-query-param-edits.html';
const SMART_CROP = DOCS + 'smart-cropping.html';
/** DIT 8.1's smart crop of the ECS architecture: Rekognition labels (named objects), text and custom models beside the faces. */
const SMART_CROP_ECS = DOCS + 'ecs-architecture-features.html';
const MAPPER = 'DIT source, image-handler/thumbor-mapper.ts';
const REQUEST = 'DIT source, image-handler/image-request.ts';

const KEY = 'photos/cat.jpg';
const native = (query: string, canonical: string, path = '/' + KEY) => ({ path, query, canonical: path + '/' + canonical });

/** DIT's documented requests, the source bucket being `my-images`, the archive's `my-archive` (test/edge/fixtures.ts). */
export const DIT_CASES: DialectCase[] = [
  {
    grammar: 'dit-json',
    source: CREATE,
    path: ditRequest({ bucket: 'my-images', key: KEY, edits: { grayscale: true, resize: { width: 200, height: 250 } } }),
    native: native('width=200&height=250&enlarge=1&grayscale=1', 'width=200,height=250,enlarge=1,grayscale=1'),
  },
  {
    grammar: 'dit-json',
    source: CREATE + ' (bucket absent: the default source bucket)',
    path: ditRequest({ key: KEY, edits: { resize: { width: 300, fit: 'inside', withoutEnlargement: true } } }),
    native: native('width=300', 'width=300'),
  },
  {
    grammar: 'dit-json',
    source: CREATE + ' (bucket: another of SOURCE_BUCKETS)',
    path: ditRequest({ bucket: 'my-archive', key: 'old/dog.jpg', edits: { flip: true, flop: true, rotate: 90 } }),
    native: native('rotate=90&flip=1&flop=1', 'rotate=90,flip=1,flop=1', '/archive/old/dog.jpg'),
  },
  {
    grammar: 'dit-json',
    source: CREATE + ' (sharp resize: fit contain with a background)',
    path: ditRequest({
      key: KEY,
      edits: { resize: { width: 400, height: 400, fit: 'contain', background: { r: 255, g: 0, b: 0, alpha: 1 } } },
    }),
    native: native(
      'width=400&height=400&fit=contain&enlarge=1&background=ff0000',
      'width=400,height=400,fit=contain,enlarge=1,background=ff0000',
    ),
  },
  {
    grammar: 'dit-json',
    source: CREATE + ' (toFormat and the format quality)',
    path: ditRequest({ key: KEY, edits: { toFormat: 'webp', webp: { quality: 60 }, jpeg: { quality: 90 } } }),
    native: native('format=webp&quality=60', 'quality=60,format=webp'),
  },
  {
    grammar: 'dit-json',
    source: SMART_CROP,
    path: ditRequest({ key: KEY, edits: { smartCrop: { faceIndex: 0, padding: 0 }, resize: { width: 300, height: 300 } } }),
    native: native('width=300&height=300&position=face&enlarge=1', 'width=300,height=300,position=face,enlarge=1'),
  },
  {
    grammar: 'dit-json',
    source: REQUEST + ' (overlayWith, a named watermark)',
    path: ditRequest({ key: KEY, edits: { overlayWith: { bucket: 'my-images', key: 'brand/logo.png' } } }),
    native: native('wm=logo', 'watermark=logo.1a2b3c4d'),
  },
  {
    grammar: 'dit-json',
    source: QUERY + ' (a query parameter beside a base64 request overrides its edit)',
    path: ditRequest({ key: KEY, edits: { resize: { width: 100 } } }),
    query: 'width=150&format=png',
    native: native('width=150&enlarge=1&format=png', 'width=150,enlarge=1,format=png'),
  },
  { grammar: 'thumbor', source: FILTERS, path: `/filters:blur(7)/${KEY}`, native: native('blur=3.5', 'blur=3.5') },
  {
    grammar: 'thumbor',
    source: FILTERS,
    path: `/fit-in/800x1000/${KEY}`,
    native: native('width=800&height=1000&fit=inside&enlarge=1', 'width=800,height=1000,fit=inside,enlarge=1'),
  },
  { grammar: 'thumbor', source: FILTERS, path: `/filters:grayscale()/${KEY}`, native: native('grayscale=1', 'grayscale=1') },
  { grammar: 'thumbor', source: FILTERS, path: `/filters:quality(60)/${KEY}`, native: native('q=60', 'quality=60') },
  { grammar: 'thumbor', source: FILTERS, path: `/filters:rotate(90)/${KEY}`, native: native('rotate=90', 'rotate=90') },
  { grammar: 'thumbor', source: FILTERS, path: `/filters:format(webp)/${KEY}`, native: native('format=webp', 'format=webp') },
  { grammar: 'thumbor', source: FILTERS, path: `/filters:autojpg()/${KEY}`, native: native('format=jpg', 'format=jpeg') },
  { grammar: 'thumbor', source: FILTERS, path: `/filters:sharpen(2,1,true)/${KEY}`, native: native('sharpen=1.5', 'sharpen=1.5') },
  { grammar: 'thumbor', source: FILTERS, path: `/filters:strip_exif()/${KEY}`, native: native('', 'original') },
  {
    grammar: 'thumbor',
    source: FILTERS,
    path: `/fit-in/300x200/filters:fill(white)/${KEY}`,
    native: native('w=300&h=200&fit=pad&enlarge=1&bg=fff', 'width=300,height=200,fit=contain,enlarge=1,background=ffffff'),
  },
  {
    grammar: 'thumbor',
    source: FILTERS,
    path: `/fit-in/300x200/filters:fill(blur)/${KEY}`,
    native: native('w=300&h=200&fit=contain&fill=blur&enlarge=1', 'width=300,height=200,fit=contain,fill=blur,enlarge=1'),
  },
  {
    grammar: 'thumbor',
    source: FILTERS,
    path: `/300x200/filters:stretch()/${KEY}`,
    native: native('w=300&h=200&fit=fill&enlarge=1', 'width=300,height=200,fit=fill,enlarge=1'),
  },
  {
    grammar: 'thumbor',
    source: FILTERS,
    path: `/300x200/filters:no_upscale()/${KEY}`,
    native: native('w=300&h=200', 'width=300,height=200'),
  },
  {
    grammar: 'thumbor',
    source: FILTERS + ' (watermark, named by its file)',
    path: `/filters:watermark(my-images,brand/logo.png)/${KEY}`,
    native: native('wm=logo', 'watermark=logo.1a2b3c4d'),
  },
  {
    grammar: 'thumbor',
    source: FILTERS + ' (two filters in one segment)',
    path: `/filters:format(webp):quality(50)/${KEY}`,
    native: native('format=webp&quality=50', 'quality=50,format=webp'),
  },
  {
    grammar: 'thumbor',
    source: MAPPER + ' (0 keeps the aspect ratio)',
    path: `/0x300/${KEY}`,
    native: native('height=300&enlarge=1', 'height=300,enlarge=1'),
  },
  {
    grammar: 'thumbor',
    source: 'Thumbor usage: -W and -H flip, halign/valign, smart',
    path: `/unsafe/-300x-200/left/top/${KEY}`,
    native: native(
      'w=300&h=200&position=top-left&flip=1&flop=1&enlarge=1',
      'width=300,height=200,position=top-left,enlarge=1,flip=1,flop=1',
    ),
  },
  {
    grammar: 'thumbor',
    source: 'Thumbor usage: smart',
    path: `/300x300/smart/${KEY}`,
    native: native('w=300&h=300&position=face&enlarge=1', 'width=300,height=300,position=face,enlarge=1'),
  },
  {
    grammar: 'thumbor',
    source: 'Thumbor usage: trim, full-fit-in',
    path: `/trim/full-fit-in/300x200/${KEY}`,
    native: native('w=300&h=200&fit=outside&trim&enlarge=1', 'width=300,height=200,fit=outside,enlarge=1,trim=10'),
  },
  {
    grammar: 'thumbor',
    source: MAPPER + ' (s3:<bucket> names another of SOURCE_BUCKETS)',
    path: '/fit-in/100x100/s3:my-archive/old/dog.jpg',
    native: native('w=100&h=100&fit=inside&enlarge=1', 'width=100,height=100,fit=inside,enlarge=1', '/archive/old/dog.jpg'),
  },
  {
    grammar: 'thumbor',
    source: MAPPER + ' (every filters: segment, as its tests write them)',
    path: `/fit-in/300x200/filters:rotate(90)/filters:grayscale()/${KEY}`,
    native: native(
      'w=300&h=200&fit=inside&enlarge=1&rotate=90&grayscale=1',
      'width=300,height=200,fit=inside,enlarge=1,rotate=90,grayscale=1',
    ),
  },
  {
    grammar: 'thumbor',
    source: MAPPER + ' (s3:<bucket> before the filters)',
    path: '/s3:my-archive/filters:grayscale()/old/dog.jpg',
    native: native('grayscale=1', 'grayscale=1', '/archive/old/dog.jpg'),
  },
  {
    grammar: 'thumbor',
    source: MAPPER + ' (arguments read decoded, a space after a comma)',
    path: `/filters:blur(60,%202)/${KEY}`,
    native: native('blur=2', 'blur=2'),
  },
  { grammar: 'thumbor', source: QUERY, path: `/${KEY}`, query: 'format=webp', native: native('format=webp', 'format=webp') },
  {
    grammar: 'thumbor',
    source: QUERY + ' (beside a Thumbor path, overriding it)',
    path: `/fit-in/300x200/${KEY}`,
    query: 'width=100&greyscale=true',
    native: native('w=100&h=200&fit=inside&enlarge=1&grayscale=1', 'width=100,height=200,fit=inside,enlarge=1,grayscale=1'),
  },
  {
    grammar: 'thumbor',
    source: FILTERS,
    path: `/10x10:100x100/${KEY}`,
    refused: { status: 400, message: /^DIT AxB:CxD: a crop in pixels/ },
  },
  {
    grammar: 'thumbor',
    source: FILTERS,
    path: `/filters:convolution(1;2;1;2;4;2;1;2;1,3,false)/${KEY}`,
    refused: { status: 400, message: /^DIT filters:convolution: not supported here\.$/ },
  },
  {
    grammar: 'thumbor',
    source: FILTERS,
    path: `/filters:equalize()/${KEY}`,
    refused: { status: 400, message: /^DIT filters:equalize: not supported/ },
  },
  {
    grammar: 'thumbor',
    source: FILTERS,
    path: `/filters:rgb(20,-20,40)/${KEY}`,
    refused: { status: 400, message: /^DIT filters:rgb: not supported/ },
  },
  {
    grammar: 'thumbor',
    source: FILTERS,
    path: `/filters:proportion(0.5)/${KEY}`,
    refused: { status: 400, message: /^DIT filters:proportion: not supported/ },
  },
  {
    grammar: 'thumbor',
    source: FILTERS + ' (watermark with a placement)',
    path: `/filters:watermark(my-images,logo.png,10,10,50)/${KEY}`,
    refused: { status: 400, message: /^DIT filters:watermark: names a watermark/ },
  },
  {
    grammar: 'thumbor',
    source: 'Thumbor usage',
    path: `/adaptive-fit-in/300x200/${KEY}`,
    refused: { status: 400, message: /^DIT adaptive-fit-in: not supported/ },
  },
  {
    grammar: 'thumbor',
    source: 'Thumbor usage',
    path: `/trim:bottom-right/${KEY}`,
    refused: { status: 400, message: /^DIT trim:bottom-right: not supported/ },
  },
  {
    grammar: 'dit-json',
    source: CREATE + ' (sharp operations without a counterpart here)',
    path: ditRequest({ key: KEY, edits: { normalise: true } }),
    refused: { status: 400, message: /^DIT edits\.normalise: not supported here\.$/ },
  },
  {
    grammar: 'dit-json',
    source: SMART_CROP + ' (padding)',
    path: ditRequest({ key: KEY, edits: { smartCrop: { faceIndex: 0, padding: 40 }, resize: { width: 300, height: 300 } } }),
    refused: { status: 400, message: /^DIT edits\.smartCrop\.padding: expected none\.$/ },
  },
  {
    // A label names the object sought (Shoe, Car): our subject crop finds whatever stands out, so it is not position=auto.
    grammar: 'dit-json',
    source: SMART_CROP_ECS + ' (label detection)',
    path: ditRequest({ key: KEY, edits: { smartCrop: { labels: ['Shoe'] }, resize: { width: 300, height: 300 } } }),
    refused: { status: 400, message: /^DIT edits\.smartCrop\.labels\.0: not supported here\.$/ },
  },
  {
    grammar: 'dit-json',
    source: SMART_CROP + ' (no resize)',
    path: ditRequest({ key: KEY, edits: { smartCrop: true } }),
    refused: { status: 400, message: /^DIT edits\.smartCrop: needs a resize/ },
  },
  {
    grammar: 'dit-json',
    source: REQUEST + ' (headers of the response)',
    path: ditRequest({ key: KEY, headers: { 'Cache-Control': 'max-age=1' } }),
    refused: { status: 400, message: /^DIT headers\.Cache-Control: not supported here\.$/ },
  },
  {
    grammar: 'dit-json',
    source: REQUEST + ' (overlay placement)',
    path: ditRequest({ key: KEY, edits: { overlayWith: { key: 'logo.png', alpha: 50 } } }),
    refused: { status: 400, message: /^DIT edits\.overlayWith\.alpha: not supported/ },
  },
];
