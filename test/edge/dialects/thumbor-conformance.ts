// Thumbor's own URL and signature vectors, and those of its libraries' tests,
// as rows of what the Thumbor function of a `dit` deployment must answer.
// Each row is written from what Thumbor (or DIT, for the Thumbor paths DIT
// serves) means, not from what the function answers today: a row whose answer
// differs fails until the function is fixed. Every vector was read from the
// file named in its source (a few rows take one segment of a source's URL
// alone, or its URL without a segment, as their comments say); the rows are
// written here, none copied.
//
// A URL row is one of:
// - SAME: the native URL with the same meaning (both functions rewrite to the
//   same canonical URI);
// - REFUSED: what we lack is a 400 naming the operation, never another image;
// - DEVIATION: what we answer instead, and why (the reason is in
//   docs/migrating.md, "Thumbor conformance").
// A signature row is a secret, the path its signer signed (after the HMAC
// segment) and the HMAC the source expects; `refused` when that path is one
// the function refuses (signed or not: never an image).
//
// The deployment: source bucket my-images, my-archive serving archive/, a
// watermark named logo (test/edge/dialect-harness.ts).

import type { Answered } from '../dialect-harness';

export interface ThumborUrlRow {
  /** Where the vector is: repository and file. */
  source: string;
  /** The Thumbor URL as sent: path, percent-encoded. */
  path: string;
  /** SAME: the native URL (path and query) for the same image. */
  same?: string;
  /** REFUSED: the status and a pattern of the message. */
  refused?: { status: 400; message: RegExp };
  /** DEVIATION: what the function answers instead (and, when given, the status the signing function answers), and why. */
  deviation?: { answer: Answered; signed?: number; reason: string };
}

export interface ThumborSignatureRow {
  source: string;
  /** The signer's secret (Thumbor's SECURITY_KEY). */
  secret: string;
  /** The path the signer signed: all after `/<hmac>/`, as sent. */
  signed: string;
  /** The HMAC segment the source expects: base64url of HMAC-SHA1, padded. */
  hmac: string;
  /** When the path is one the function refuses: the pattern of the refusal of the URL as signed. */
  refused?: RegExp;
}

const THUMBOR_URL = 'thumbor/thumbor tests/test_url.py (the URL expression and its complete URL)';
const LIBRARIES = "thumbor/thumbor docs/libraries.rst (the library test scenarios every Thumbor library's tests run)";
const HANDLER = 'thumbor/thumbor tests/handlers/test_base_handler.py (SECURITY_KEY ACME-SEC)';
const SIGNER = 'thumbor/thumbor tests/url_signers/test_base64_hmac_sha1_signer.py (the test computes the HMAC; its value here)';
const FILTER_PARAMS = "thumbor/thumbor tests/filters/test_base_filter.py (arguments: spaces around a number, ', ' between)";
const LIBTHUMBOR_URL = 'thumbor/libthumbor tests/test_url.py (generate_options and its expression)';
const LIBTHUMBOR_COMPOSER = 'thumbor/libthumbor tests/test_url_composer.py (url_for, unsafe_url)';
const RUBY = 'thumbor/ruby-thumbor spec/thumbor/crypto_url_spec.rb';
const SQUARE = 'square/ThumborURL thumborurltests/ThumborURLTests.m (the HMAC tests)';
const URL_VOWS = "kesla/thumbor-url test/parse-test.js (after thumbor's vows/url_vows.py)";
const DIT_KEY =
  'aws-solutions/dynamic-image-transformation-for-amazon-cloudfront source/image-handler/test/image-request/parse-image-key.spec.ts';
const DIT_EDITS = 'aws-solutions/serverless-image-handler source/image-handler/test/thumbor-mapper/edits.spec.ts';

/** The image URLs the sources use, as keys in our source bucket. */
const LIB_KEY = 'my.server.com/some/path/to/image.jpg';
const RUBY_KEY = 'my.domain.com/some/image/url.jpg';
const URL_KEY = 'some/image.jpg';
/** Thumbor's unicode key, as its test sends it (percent-encoded UTF-8). */
const CYRILLIC = '15967251_212831_19242645_%D0%90%D0%B3%D0%B0%D1%82%D0%B0%D0%B2%D0%97%D0%BE%D0%BE%D0%BF%D0%B0%D1%80%D0%BA%D0%B5.jpg';

const same = (source: string, path: string, native: string): ThumborUrlRow => ({ source, path, same: native });
const refused = (source: string, path: string, message: RegExp): ThumborUrlRow => ({ source, path, refused: { status: 400, message } });
const deviation = (source: string, path: string, answer: Answered, reason: string, signed?: number): ThumborUrlRow => ({
  source,
  path,
  deviation: { answer, reason, signed },
});

/** A path read as a key (REASONS.ditKey): its canonical URI, the path's own when it needs no escape. */
const asKey = (source: string, path: string, uri = path): ThumborUrlRow =>
  deviation(source, path, { status: 200, uri: uri + '/original' }, REASONS.ditKey);

const PIXELS = /^DIT AxB:CxD: a crop in pixels needs the source's size/;

/** The reasons of the deviations, each also in docs/migrating.md. */
export const REASONS = {
  trim: "`trim` without a tolerance trims with our default threshold, 10, where Thumbor's tolerance defaults to 0 (only the corner's exact colour).",
  tolerance:
    "`trim:<n>` passes Thumbor's tolerance as our threshold unconverted: Thumbor measures a colour's Euclidean distance from the corner's, sharp its difference, so an edge near the tolerance can trim differently.",
  ditKey:
    "A path with a segment DIT's Thumbor mapper does not read (`meta/`, `debug/`, `adaptive-full-fit-in/`, a size of `orig`) is a key from that segment on, as DIT reads `meta/` and `debug/`: where Thumbor answers the image's metadata, a debug view or a size of the source's, that key usually names no object (404).",
  unsigned:
    'A path with neither `unsafe/` nor a well-formed HMAC segment is a key, as DIT reads it: an unsigned deployment looks that key up (a malformed HMAC then names a key S3 does not have), where Thumbor refuses the URL (400); with `signing`, such a URL is a 403.',
};

export const URL_ROWS: ThumborUrlRow[] = [
  // Thumbor's URL expression: each segment, and the complete URL of its test.
  asKey(
    THUMBOR_URL,
    `/debug/meta/trim/300x200:400x500/adaptive-full-fit-in/-300x-400/left/top/smart/filters:brightness(100)/${URL_KEY}`,
    '/debug/meta/trim/300x200%3A400x500/adaptive-full-fit-in/-300x-400/left/top/smart/filters%3Abrightness%28100%29/some/image.jpg',
  ),
  asKey(THUMBOR_URL, `/debug/${URL_KEY}`),
  asKey(THUMBOR_URL, `/meta/${URL_KEY}`),
  asKey(THUMBOR_URL, `/adaptive-full-fit-in/-300x-400/${URL_KEY}`),
  refused(THUMBOR_URL, `/adaptive-fit-in/300x200/${URL_KEY}`, /^DIT adaptive-fit-in: /),
  same(THUMBOR_URL, `/full-fit-in/300x200/${URL_KEY}`, `/${URL_KEY}?width=300&height=200&fit=outside&enlarge=1`),
  same(THUMBOR_URL, `/fit-in/${URL_KEY}`, `/${URL_KEY}?fit=inside`),
  // `orig`: the source's own width or height, which the edge does not know.
  asKey(THUMBOR_URL, `/300xorig/${URL_KEY}`),
  asKey(THUMBOR_URL, `/origx100/${URL_KEY}`),
  // libthumbor writes `stretch/`; Thumbor's expression has no such segment: a key there, as here.
  same(LIBTHUMBOR_URL, `/stretch/300x200/${URL_KEY}`, `/stretch/300x200/${URL_KEY}`),

  // libthumbor's and ruby-thumbor's composers: options to path.
  same(LIBTHUMBOR_COMPOSER, `/300x0/${LIB_KEY}`, `/${LIB_KEY}?width=300&enlarge=1`),
  same(LIBTHUMBOR_COMPOSER, `/0x300/${LIB_KEY}`, `/${LIB_KEY}?height=300&enlarge=1`),
  same(LIBTHUMBOR_COMPOSER, `/200x300/${LIB_KEY}`, `/${LIB_KEY}?width=200&height=300&enlarge=1`),
  same(LIBTHUMBOR_COMPOSER, `/200x300/smart/${LIB_KEY}`, `/${LIB_KEY}?width=200&height=300&position=face&enlarge=1`),
  same(LIBTHUMBOR_COMPOSER, `/fit-in/200x300/${LIB_KEY}`, `/${LIB_KEY}?width=200&height=300&fit=inside&enlarge=1`),
  // Thumbor's horizontal flip mirrors left to right: sharp's flop.
  same(LIBTHUMBOR_COMPOSER, `/-0x0/${LIB_KEY}`, `/${LIB_KEY}?flop=1`),
  same(LIBTHUMBOR_COMPOSER, `/0x-0/${LIB_KEY}`, `/${LIB_KEY}?flip=1`),
  same(LIBTHUMBOR_COMPOSER, `/-0x-0/${LIB_KEY}`, `/${LIB_KEY}?flip=1&flop=1`),
  same(LIBTHUMBOR_COMPOSER, `/-200x0/${LIB_KEY}`, `/${LIB_KEY}?width=200&flop=1&enlarge=1`),
  same(LIBTHUMBOR_COMPOSER, `/0x-200/${LIB_KEY}`, `/${LIB_KEY}?height=200&flip=1&enlarge=1`),
  same(LIBTHUMBOR_COMPOSER, `/-200x-300/${LIB_KEY}`, `/${LIB_KEY}?width=200&height=300&flip=1&flop=1&enlarge=1`),
  // An alignment without a size crops nothing: the original.
  same(LIBTHUMBOR_COMPOSER, `/left/${LIB_KEY}`, `/${LIB_KEY}`),
  same(LIBTHUMBOR_COMPOSER, `/top/${LIB_KEY}`, `/${LIB_KEY}`),
  same(LIBTHUMBOR_COMPOSER, `/left/top/${LIB_KEY}`, `/${LIB_KEY}`),
  same(LIBTHUMBOR_COMPOSER, `/left/smart/${LIB_KEY}`, `/${LIB_KEY}`),
  refused(LIBTHUMBOR_COMPOSER, `/10x20:30x40/${LIB_KEY}`, PIXELS),
  same(LIBTHUMBOR_COMPOSER, `/unsafe/${LIB_KEY}`, `/${LIB_KEY}`),
  same(LIBTHUMBOR_COMPOSER, `/unsafe/100x140/${LIB_KEY}`, `/${LIB_KEY}?width=100&height=140&enlarge=1`),
  same(LIBTHUMBOR_COMPOSER, `/unsafe/100x140/smart/${LIB_KEY}`, `/${LIB_KEY}?width=100&height=140&position=face&enlarge=1`),
  same(RUBY, `/300x200/left/top/${RUBY_KEY}`, `/${RUBY_KEY}?width=300&height=200&position=top-left&enlarge=1`),
  same(RUBY, `/40x50/${RUBY_KEY}`, `/${RUBY_KEY}?width=40&height=50&enlarge=1`),
  deviation(RUBY, `/trim/${RUBY_KEY}`, { status: 200, uri: `/${RUBY_KEY}/trim=10` }, REASONS.trim),
  deviation(RUBY, `/trim/smart/${RUBY_KEY}`, { status: 200, uri: `/${RUBY_KEY}/trim=10` }, REASONS.trim),
  refused(RUBY, `/trim:bottom-right/${RUBY_KEY}`, /^DIT trim:bottom-right: /),
  refused(RUBY, `/trim:bottom-right:15/${RUBY_KEY}`, /^DIT trim:bottom-right: /),
  refused(RUBY, `/0x0:80x100/40x50/${RUBY_KEY}`, PIXELS),
  refused(RUBY, `/0x10:100x90/-50x-40/${RUBY_KEY}`, PIXELS),
  // Its URLs without their crop in pixels (refused: see the signature rows).
  same(SQUARE, '/fit-in/10x-10/smart/twitter.com/foo.png', '/twitter.com/foo.png?width=10&height=10&fit=inside&flip=1&enlarge=1'),
  same(SQUARE, '/full-fit-in/10x-10/smart/twitter.com/foo.png', '/twitter.com/foo.png?width=10&height=10&fit=outside&flip=1&enlarge=1'),

  // Thumbor's URL tests as the JS port keeps them.
  asKey(
    URL_VOWS,
    '/meta/10x11:12x13/fit-in/-300x-200/left/top/smart/filters:some_filter()/img',
    '/meta/10x11%3A12x13/fit-in/-300x-200/left/top/smart/filters%3Asome_filter%28%29/img',
  ),
  refused(
    URL_VOWS,
    '/filters:watermark(s.glbimg.com/es/ge/f/original/2011/03/29/orlandosilva_60.jpg,0,0,0)/img',
    /^DIT filters:watermark: /,
  ),
  // Its Thumbor-of-Thumbor URL, the image's path shortened.
  refused(URL_VOWS, '/90x100/filters:brightness(-50):contrast(20)/my.image.path/img.jpg', /^DIT filters:brightness: not supported/),
  same(URL_VOWS, '/100x/img.jpg', '/img.jpg?width=100&enlarge=1'),
  same(URL_VOWS, '/x100/img.jpg', '/img.jpg?height=100&enlarge=1'),
  deviation(URL_VOWS, '/trim:123/img.jpg', { status: 200, uri: '/img.jpg/trim=123' }, REASONS.tolerance),
  deviation(URL_VOWS, '/trim:top-left:123/img.jpg', { status: 200, uri: '/img.jpg/trim=123' }, REASONS.tolerance),
  // Thumbor's HTTP loader reads an image's URL; DIT reads keys of its buckets.
  refused(
    URL_VOWS,
    '/unsafe/200x200/smart/http://s3.amazonaws.com/policymic-images/filename2.jpg',
    /^Invalid source key: it has an empty path segment/,
  ),

  // Thumbor's handler tests: what its server answers.
  same(HANDLER, '/unsafe/smart/image.jpg', '/image.jpg'),
  same(HANDLER, '/unsafe/smart/image', '/image'),
  same(HANDLER, '/unsafe/image%20space.jpg', '/image%20space.jpg'),
  same(HANDLER, `/unsafe/${CYRILLIC}`, `/${CYRILLIC}`),
  refused(HANDLER, '/unsafe/', /^Invalid source key: it is empty/),
  deviation(HANDLER, '/alabama1_ap620%C3%A9.jpg', { status: 200, uri: '/alabama1_ap620%C3%A9.jpg/original' }, REASONS.unsigned, 403),
  deviation(
    HANDLER,
    '/%D1%80=/alabama1_ap620%C3%A9.jpg',
    { status: 200, uri: '/%D1%80%3D/alabama1_ap620%C3%A9.jpg/original' },
    REASONS.unsigned,
    403,
  ),
  refused(HANDLER, '/unsafe/filters:watermark(boom.jpg,0,0,0)/image.jpg', /^DIT filters:watermark: /),
  refused(HANDLER, '/unsafe/0x0:1681x596/1x/image.jpg', PIXELS),
  same(HANDLER, '/unsafe/filters:format(png)/cmyk.jpg', '/cmyk.jpg?format=png'),
  same(HANDLER, '/unsafe/filters:format(avif)/image.jpg', '/image.jpg?format=avif'),
  refused(HANDLER, '/unsafe/filters:format(heic)/image.jpg', /^Invalid format "heic"/),
  refused(HANDLER, '/unsafe/filters:format(heif)/image.jpg', /^Invalid format "heif"/),
  same(HANDLER, '/unsafe/400x500/Commons-logo.svg', '/Commons-logo.svg?width=400&height=500&enlarge=1'),
  same(HANDLER, '/unsafe/fit-in/300x/Commons-logo.svg', '/Commons-logo.svg?width=300&fit=inside&enlarge=1'),
  // fill() without a size: DIT's fill is a resize's, so there is nothing to fill.
  same(HANDLER, '/filters:fill(blue)/image.jpg', '/image.jpg'),

  // Thumbor reads a number with spaces around it, and `, ` between arguments (sent as %20).
  same(FILTER_PARAMS, '/filters:sharpen(2,%201,true)/a.jpg', '/a.jpg?sharpen=1.5'),
  same(FILTER_PARAMS, '/filters:blur(4,%203)/a.jpg', '/a.jpg?blur=3'),
  same(FILTER_PARAMS, '/filters:blur(%207%20)/a.jpg', '/a.jpg?blur=3.5'),
  same(FILTER_PARAMS, '/filters:quality(010)/a.jpg', '/a.jpg?quality=10'),

  // DIT's Thumbor paths: filters in several segments, each applied in order; s3:<bucket> among them.
  same(DIT_EDITS, '/filters:rotate(90)/filters:grayscale()/thumbor-image.jpg', '/thumbor-image.jpg?rotate=90&grayscale=1'),
  same(DIT_EDITS, '/filters:rotate(90):grayscale()/filters:blur(20)/thumbor-image.jpg', '/thumbor-image.jpg?rotate=90&grayscale=1&blur=10'),
  same(DIT_KEY, '/filters:rotate(90)/filters:grayscale()/thumbor-image%20(1).jpg', '/thumbor-image%20(1).jpg?rotate=90&grayscale=1'),
  same(DIT_KEY, '/filters:rotate(90)/s3:my-archive/filters:grayscale()/old/dog.jpg', '/archive/old/dog.jpg?rotate=90&grayscale=1'),
  same(DIT_KEY, '/filters:grayscale()/s3:my-archive/old/dog.jpg', '/archive/old/dog.jpg?grayscale=1'),
  same(DIT_KEY, '/s3:my-archive/filters:grayscale()/old/dog.jpg', '/archive/old/dog.jpg?grayscale=1'),
  same(DIT_KEY, '/100x100/test-100x100/test/beach-100x100.jpg', '/test-100x100/test/beach-100x100.jpg?width=100&height=100&enlarge=1'),
  same(
    DIT_KEY,
    '/fit-in/400x0/filters:fill(ffffff)/fit-in-thumbor-image%20(1)%20suffix.jpg',
    // fill() is a resize's: with one side, nothing to fill.
    '/fit-in-thumbor-image%20(1)%20suffix.jpg?width=400&fit=inside&enlarge=1',
  ),
];

const BRIGHTNESS = /^DIT filters:brightness: not supported/;

export const SIGNATURE_ROWS: ThumborSignatureRow[] = [
  {
    source: LIBRARIES + ', scenarios 1 and 2 (and globocom/gothumbor url_test.go, NotWoods/thumbor-es upstream_test.ts)',
    secret: 'my-security-key',
    signed: `300x200/${LIB_KEY}`,
    hmac: '8ammJH8D-7tXy6kU3lTvoXlhu4o=',
  },
  {
    source: LIBRARIES + ', scenario 3',
    secret: 'my-security-key',
    signed: `meta/${LIB_KEY}`,
    hmac: 'Ps3ORJDqxlSQ8y00T29GdNAh2CY=',
  },
  { source: LIBRARIES + ', scenario 4', secret: 'my-security-key', signed: `smart/${LIB_KEY}`, hmac: '-2NHpejRK2CyPAm61FigfQgJBxw=' },
  { source: LIBRARIES + ', scenario 5', secret: 'my-security-key', signed: `fit-in/${LIB_KEY}`, hmac: 'uvLnA6TJlF-Cc-L8z9pEtfasO3s=' },
  {
    source: LIBRARIES + ', scenario 6',
    secret: 'my-security-key',
    signed: `filters:brightness(10):contrast(20)/${LIB_KEY}`,
    hmac: 'ZZtPCw-BLYN1g42Kh8xTcRs0Qls=',
    refused: BRIGHTNESS,
  },
  { source: RUBY, secret: 'my-security-key', signed: RUBY_KEY, hmac: '964rCTkAEDtvjy_a572k7kRa0SU=' },
  { source: RUBY, secret: 'my-security-key', signed: `300x200/${RUBY_KEY}`, hmac: 'TQfyd3H36Z3srcNcLOYiM05YNO8=' },
  { source: RUBY, secret: 'my-security-key', signed: `meta/300x200/${RUBY_KEY}`, hmac: 'YBQEWd3g_WRMnVEG73zfzcr8Zj0=' },
  {
    source: RUBY,
    secret: 'my-security-key',
    signed: `meta/300x200/smart/${RUBY_KEY}`,
    hmac: 'jP89J0qOWHgPlm_lOA28GtOh5GU=',
  },
  {
    source: RUBY,
    secret: 'my-security-key',
    signed: `meta/fit-in/300x200/smart/${RUBY_KEY}`,
    hmac: 'zrrOh_TtTs4kiLLEQq1w4bcTYdc=',
  },
  {
    source: RUBY,
    secret: 'my-security-key',
    signed: `meta/fit-in/-300x200/smart/${RUBY_KEY}`,
    hmac: '4t1XK1KH43cOb1QJ9tU00-W2_k8=',
  },
  {
    source: RUBY,
    secret: 'my-security-key',
    signed: `meta/fit-in/-300x-200/smart/${RUBY_KEY}`,
    hmac: 'HJnvjZU69PkPOhyZGu-Z3Uc_W_A=',
  },
  {
    source: RUBY,
    secret: 'my-security-key',
    signed: `filters:quality(20):brightness(10)/${RUBY_KEY}`,
    hmac: 'q0DiFg-5-eFZIqyN3lRoCvg2K0s=',
    refused: BRIGHTNESS,
  },
  { source: HANDLER, secret: 'ACME-SEC', signed: 'smart/image.jpg', hmac: '_wIUeSaeHw8dricKG2MGhqu5thk=' },
  // Signed as sent, the key's escapes and all.
  { source: HANDLER, secret: 'ACME-SEC', signed: 'smart/alabama1_ap620%C3%A9.jpg', hmac: 'lc6e3kkm_2Ww7NWho8HPOe-sqLU=' },
  {
    source: HANDLER,
    secret: 'ACME-SEC',
    signed: 'filters:fill(blue)/image.jpg',
    hmac: '5YRxzS2yxZxj9SZ50SoZ11eIdDI=',
  },
  {
    source: SIGNER,
    secret: 'something',
    signed: '10x11:12x13/-300x-300/center/middle/smart/some/image.jpg',
    hmac: 'jF7DnlqMr04h7IQ3QBGQ3P991X8=',
    refused: PIXELS,
  },
  { source: SQUARE, secret: 'omg152', signed: 'twitter.com/foo.png', hmac: 'yfI2JhRv0z312pPzm_vE6U4cURM=' },
  {
    source: SQUARE,
    secret: 'omg152',
    signed: '20x20:40x40/fit-in/10x-10/smart/twitter.com/foo.png',
    hmac: 'aOH7-AuI2kyIb4d9TLbcBdDlGwk=',
    refused: PIXELS,
  },
  {
    source: SQUARE,
    secret: 'omg152',
    signed: '20x20:40x40/full-fit-in/10x-10/smart/twitter.com/foo.png',
    hmac: 'pe1aHRMVLSs-f9lZd9o0RVjhEUY=',
    refused: PIXELS,
  },
  {
    source: SQUARE,
    secret: 'omg152',
    signed: 'trim/20x20:40x40/fit-in/10x-10/smart/twitter.com/foo.png',
    hmac: 'BmpHlSr72S8Xee7wZ-LCsENOu8Y=',
    refused: PIXELS,
  },
];
