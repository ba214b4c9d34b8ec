// DIT's base64 JSON requests: those of image-request/*.spec.ts, and the edits
// of image-handler/*.spec.ts as the requests that carry them, written as what
// DIT v6.3.3's code makes of them: image-request.ts decodes the request, takes
// its bucket (403 outside SOURCE_BUCKETS, the default when absent), key,
// edits, outputFormat, `effort` (WebP's; any other top-level name is not
// read) and headers (less its deny list); image-handler.ts applies the edits
// with sharp (sizes rounded, an overlay only from SOURCE_BUCKETS).
//
// Skipped, having no URL or testing what no request chooses: decode-request's
// "no path at all"; get-output-format.spec.ts (AUTO_WEBP and the Accept header
// only); fix-quality.spec.ts (a request's internals after parsing);
// get-original-image, infer-image-type, get-allowed-source-buckets (S3's
// answers and SOURCE_BUCKETS' syntax); setup's "any other error" (the secrets
// provider failing); image-handler specs that test sharp on given pixels
// (overlay sizes, crop limits, animation, content moderation, thumbhash).

import { ditRequest } from '../../support/dialect-cases';
import { ditSignature } from '../dialect-signers';
import { deviation, json, refused, row, same, unsupported, UNKNOWN_BUCKET, type ConformanceRow } from './dit-conformance-kit';

const BUCKET = 'my-images';
const KEYS = 'image-request/parse-image-key.spec.ts';
const BUCKETS = 'image-request/parse-image-bucket.spec.ts';
const HEADERS = 'image-request/parse-image-headers.spec.ts';
const SETUP = 'image-request/setup.spec.ts';
const OUTPUT = 'image-request/determine-output-format.spec.ts';
const OVERLAY = 'image-handler/overlay.spec.ts';
const NO_HEADERS = "A response's headers are the deployment's.";

/** The key of parse-image-key's base64 with a slash: Arabic, spaces and parentheses. */
const ARABIC =
  'env-prod/gcc/landingpage/1_57_SlimN_Lift-Corset-For-Men-SNAP/attachments/ffc1f160-bd38-41e8-8bad-e3a19cc61dd3__سليم ليفت (2).jpg';
const sent = (key: string) => '/' + key.split('/').map(encodeURIComponent).join('/');

const PNG = { bucket: BUCKET, key: 'validKey', edits: { toFormat: 'png' } };
const WEBP = { bucket: BUCKET, key: 'test.png', outputFormat: 'webp' };
const ROUND = { bucket: BUCKET, key: 'key', edits: { roundCrop: true, resize: { width: 100, height: 100 } } };

const REQUEST_ROWS: ConformanceRow[] = [
  row(
    `${KEYS}: a key in a default request`,
    json({ bucket: BUCKET, key: 'sample-image-001.jpg' }),
    same('/sample-image-001.jpg', 'original'),
  ),
  row(
    `${KEYS}: a base64 request holding a slash`,
    json({ bucket: BUCKET, key: ARABIC, edits: { resize: { width: 480, fit: 'cover' } } }),
    same(`${sent(ARABIC)}?width=480&fit=cover&enlarge=1`),
  ),
  row(
    `${BUCKETS}: a bucket of SOURCE_BUCKETS`,
    json({ bucket: BUCKET, key: 'sampleImageKey001.jpg', edits: { grayscale: 'true' } }),
    same('/sampleImageKey001.jpg?grayscale=1', 'grayscale=1'),
  ),
  row(
    `${BUCKETS}: a bucket not in SOURCE_BUCKETS`,
    json({ bucket: 'not-my-bucket', key: 'sampleImageKey001.jpg', edits: { grayscale: 'true' } }),
    refused(UNKNOWN_BUCKET.status, UNKNOWN_BUCKET.message, 'DIT refuses it too (403, ImageBucket::CannotAccessBucket).'),
  ),
  // DIT's own fixture, padding and all: no bucket to translate.
  row(
    `${BUCKETS}: no bucket, the default`,
    { grammar: 'dit-json', path: '/eyJrZXkiOiJzYW1wbGVJbWFnZUtleTAwMS5qcGciLCJlZGl0cyI6eyJncmF5c2NhbGUiOiJ0cnVlIn19==', query: '' },
    same('/sampleImageKey001.jpg?grayscale=1', 'grayscale=1'),
  ),
  row(
    'image-request/parse-image-edits.spec.ts: edits of a request without a key',
    json({ edits: { grayscale: 'true', rotate: 90, flip: 'true' } }),
    refused(400, /^DIT key: not supported/, 'DIT has no object to read either (404).'),
  ),
  row(
    'image-request/decode-request.spec.ts: a base64 request',
    json({ bucket: BUCKET, key: 'key-name-here' }),
    same('/key-name-here', 'original'),
  ),
  row(
    'image-request/parse-request-type.spec.ts: a default request',
    json({ bucket: BUCKET, key: 'my-sample-key', edits: { grayscale: true } }),
    same('/my-sample-key?grayscale=1', 'grayscale=1'),
  ),
  row(
    `${HEADERS}: headers; ${SETUP}: custom headers`,
    json({ bucket: BUCKET, key: 'validKey', headers: { 'Cache-Control': 'max-age=31536000,public' }, outputFormat: 'jpeg' }),
    refused(400, unsupported('headers.Cache-Control'), NO_HEADERS),
  ),
  row(
    `${HEADERS}: restricted headers are dropped`,
    json({
      bucket: BUCKET,
      key: 'validKey',
      headers: {
        'Cache-Control': 'max-age=31536000,public',
        'Transfer-encoding': 'value',
        'x-api-key': 'value',
        'x-amz-header': 'value',
        'content-type': 'html',
        'Access-Control-Allow-Origin': '*',
      },
      outputFormat: 'jpeg',
    }),
    refused(400, /^DIT headers\./, NO_HEADERS),
  ),
  row(`${HEADERS}: no headers`, json({ bucket: BUCKET, key: 'validKey' }), same('/validKey', 'original')),
  row(
    `${SETUP}: a default request with outputFormat`,
    json({ bucket: BUCKET, key: 'validKey', edits: { grayscale: true }, outputFormat: 'jpeg' }),
    same('/validKey?grayscale=1&format=jpeg', 'grayscale=1,format=jpeg'),
  ),
  row(
    `${SETUP}: a UTF-8 key (both cases)`,
    json({ bucket: BUCKET, key: '中文', edits: { grayscale: true }, outputFormat: 'jpeg' }),
    same('/%E4%B8%AD%E6%96%87?grayscale=1&format=jpeg', 'grayscale=1,format=jpeg'),
  ),
  row(`${SETUP}: toFormat`, json(PNG), same('/validKey?format=png', 'format=png')),
  row(
    `${SETUP}: a bucket not allowed`,
    json({ bucket: 'not-my-bucket', key: 'validKey', edits: { grayscale: true } }),
    refused(UNKNOWN_BUCKET.status, UNKNOWN_BUCKET.message, 'DIT refuses it too (403, ImageBucket::CannotAccessBucket).'),
  ),
  row(
    `${SETUP}: the image signature is correct`,
    json(PNG, `signature=${ditSignature(ditRequest(PNG))}`, true),
    same('/validKey?format=png', 'format=png'),
  ),
  row(
    `${SETUP}: queryStringParameters missing; the signature parameter missing`,
    json(PNG, '', true),
    refused(403, /^This URL must be signed\.$/, 'DIT refuses it too (400, AuthorizationQueryParametersError).'),
  ),
  row(
    `${SETUP}: the signature does not match`,
    json(PNG, 'signature=invalid', true),
    refused(403, /^The signature is not valid for this URL\.$/, 'DIT refuses it too (403, SignatureDoesNotMatch).'),
  ),
  // reductionEffort is not a name DIT reads (its `effort` is).
  ...[3, 'test', 10].map((effort) =>
    row(
      `${SETUP}: reductionEffort ${JSON.stringify(effort)}, not read`,
      json({ ...WEBP, reductionEffort: effort }),
      same('/test.png?format=webp', 'format=webp'),
    ),
  ),
  row(`${SETUP}: no reductionEffort`, json(WEBP), same('/test.png?format=webp', 'format=webp')),
  // roundCrop is in every request of determine-output-format.spec.ts.
  row(
    `${OUTPUT}: edits.toFormat`,
    json({ ...ROUND, edits: { ...ROUND.edits, toFormat: 'png' } }),
    refused(400, unsupported('edits.roundCrop'), 'We lack it.'),
  ),
  row(`${OUTPUT}: outputFormat`, json({ ...ROUND, outputFormat: 'png' }), refused(400, unsupported('edits.roundCrop'), 'We lack it.')),
  ...[3, 'invalid', 7, -1, 2.378].map((effort) =>
    row(
      `${OUTPUT}: effort ${JSON.stringify(effort)} of a WebP`,
      json({ ...ROUND, outputFormat: 'webp', effort }),
      refused(400, unsupported('edits.roundCrop'), 'We lack it.'),
    ),
  ),
];

/** The edits of image-handler/*.spec.ts, as the request that carries them. */
const EDIT_ROWS: ConformanceRow[] = [
  row(
    'image-handler/resize.spec.ts: width and height as strings of decimals, rounded',
    json({ key: 'test.jpg', edits: { resize: { width: '99.1', height: '99.9' } } }),
    deviation({ status: 400, message: /^Invalid width "99\.1"/ }, 'stricterValue'),
  ),
  row(
    'image-handler/resize.spec.ts: width and height 0 are invalid',
    json({ key: 'test.jpg', edits: { resize: { width: 0, height: 0 } } }),
    deviation('/test.jpg', 'zeroSize', 'original'),
  ),
  row(
    `${OVERLAY}: an overlay`,
    json({ key: 'test.jpg', edits: { overlayWith: { bucket: BUCKET, key: 'logo.png' } } }),
    same('/test.jpg?wm=logo', 'watermark=logo.1a2b3c4d'),
  ),
  ...['-1', '1', '50p', '-50p', '25.5p'].map((at) =>
    row(
      `${OVERLAY}: an overlay at ${at}, ${at}`,
      json({ key: 'test.jpg', edits: { overlayWith: { bucket: BUCKET, key: 'logo.png', options: { left: at, top: at } } } }),
      refused(400, unsupported('edits.overlayWith.options.left'), "The watermark is the deployment's, placed by its own definition."),
    ),
  ),
  row(
    `${OVERLAY}: an overlay from a bucket not in SOURCE_BUCKETS (v6.3.3)`,
    json({ key: 'test.jpg', edits: { overlayWith: { bucket: 'not-my-bucket', key: 'logo.png' } } }),
    refused(UNKNOWN_BUCKET.status, UNKNOWN_BUCKET.message, 'DIT refuses it too (403, since v6.3.3).'),
  ),
  row(
    'image-handler/rotate.spec.ts: rotate null',
    json({ key: 'test.jpg', edits: { rotate: null } }),
    deviation('/test.jpg', 'oriented', 'original'),
  ),
  row('image-handler/rotate.spec.ts: no edits, the orientation kept', json({ key: 'test.jpg', edits: {} }), same('/test.jpg', 'original')),
];

export const JSON_ROWS: ConformanceRow[] = [...REQUEST_ROWS, ...EDIT_ROWS];
