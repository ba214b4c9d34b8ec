// DIT's Thumbor-path cases: thumbor-mapper/*.spec.ts and the Thumbor paths of
// image-request/*.spec.ts, written as what DIT v6.3.3's code makes of them:
// thumbor-mapper.ts maps the path to sharp's edits (every `filters:` segment,
// sorted by name; a filter it does not know is left out; `fit-in` anywhere in
// the path is fit: inside), image-request.ts takes the key (the path without
// its size, crop, `filters:`, `fit-in` and chosen `s3:<bucket>/` segments) and
// the bucket (the first `s3:<bucket>` segment in SOURCE_BUCKETS, else the
// default), and refuses a key whose extension it does not know (400).
//
// Skipped, having no URL: thumbor-mapper/parse.spec.ts (the REWRITE_MATCH_PATTERN
// and REWRITE_SUBSTITUTION of a deployment's custom rewrite, which a default
// deployment lacks), and the cases that call a parser with the request type
// CUSTOM or undefined (parse-image-key, parse-image-bucket, parse-image-edits,
// parse-request-type, setup: "custom request").

import { deviation, refused, row, same, thumbor, unsupported, UNKNOWN_BUCKET, type ConformanceRow } from './dit-conformance-kit';

const KEY = 'test-image-001.jpg';
const K = `/${KEY}`;
const PIXELS = /^DIT AxB:CxD: a crop in pixels/;
const PLACEMENT = /^DIT filters:watermark: names a watermark/;
const WE_LACK = 'We lack the operation.';
const PLACED = "The watermark is the deployment's, placed by its own definition; DIT's placement has no counterpart.";
const FILTER = 'thumbor-mapper/filter.spec.ts';
const MAPPINGS = 'thumbor-mapper/mappings.spec.ts';
const KEYS = 'image-request/parse-image-key.spec.ts';
const BUCKETS = 'image-request/parse-image-bucket.spec.ts';
const TYPES = 'image-request/parse-request-type.spec.ts';
/** DIT's key with parentheses and spaces, as sent. */
const PARENS = '/thumbor-image%20(1)%20suffix.jpg';

/** The requests of thumbor-mapper/filter.spec.ts, each filter on DIT's fixture key (a JPEG). */
const FILTER_ROWS: ConformanceRow[] = [
  row(`${FILTER}: autojpg()`, thumbor(`/filters:autojpg()${K}`), same(`${K}?format=jpeg`, 'format=jpeg')),
  row(
    `${FILTER}: background_color(ffff), a four-digit hex (white)`,
    thumbor(`/filters:background_color(ffff)${K}`),
    deviation({ status: 400, message: /^Invalid background "ffff"/ }, 'stricterValue'),
  ),
  row(`${FILTER}: blur(60), half the radius`, thumbor(`/filters:blur(60)${K}`), same(`${K}?blur=30`, 'blur=30')),
  row(`${FILTER}: blur(60, 2), the sigma (a space after the comma)`, thumbor(`/filters:blur(60,%202)${K}`), same(`${K}?blur=2`, 'blur=2')),
  row(
    `${FILTER}: convolution(1;2;1;2;4;2;1;2;1,3,true)`,
    thumbor(`/filters:convolution(1;2;1;2;4;2;1;2;1,3,true)${K}`),
    refused(400, unsupported('filters:convolution'), WE_LACK),
  ),
  row(`${FILTER}: equalize() (normalize)`, thumbor(`/filters:equalize()${K}`), refused(400, unsupported('filters:equalize'), WE_LACK)),
  // fill() is a resize's fit and background: without a size sharp resizes nothing, so the image is the original.
  row(`${FILTER}: fill(fff) without a size`, thumbor(`/filters:fill(fff)${K}`), same(K, 'original')),
  row(`${FILTER}: fill(fff) after an empty resize (0x0)`, thumbor(`/0x0/filters:fill(fff)${K}`), same(K, 'original')),
  row(`${FILTER}: format(png)`, thumbor(`/filters:format(png)${K}`), same(`${K}?format=png`, 'format=png')),
  row(
    `${FILTER}: format(test), not a format: ignored`,
    thumbor(`/filters:format(test)${K}`),
    deviation({ status: 400, message: /^Invalid format "test"/ }, 'stricterValue'),
  ),
  row(`${FILTER}: no_upscale() without a size`, thumbor(`/filters:no_upscale()${K}`), same(K, 'original')),
  row(
    `${FILTER}: no_upscale() after 300x400`,
    thumbor(`/300x400/filters:no_upscale()${K}`),
    same(`${K}?width=300&height=400`, 'width=300,height=400'),
  ),
  row(
    `${FILTER}: proportion(0.3) of 200x200`,
    thumbor(`/200x200/filters:proportion(0.3)${K}`),
    deviation({ status: 400, message: unsupported('filters:proportion') }, 'proportion'),
  ),
  row(
    `${FILTER}: proportion(0.3) without a size (a ratio of the source's)`,
    thumbor(`/filters:proportion(0.3)${K}`),
    refused(400, unsupported('filters:proportion'), "The source's size is not known at the edge."),
  ),
  // quality() is the quality of the key's format (fixQuality moves it to the output's): ours is the output's.
  ...['jpg', 'png', 'webp', 'tiff', 'heif', 'avif'].map((ext) =>
    row(
      `${FILTER}: quality(50) of a .${ext}`,
      thumbor(`/filters:quality(50)/test-image-001.${ext}`),
      same(`/test-image-001.${ext}?quality=50`),
    ),
  ),
  row(
    `${FILTER}: quality(50) of an unsupported type (.xml)`,
    thumbor('/filters:quality(50)/test-image-001.xml'),
    refused(400, unsupported('*.xml'), 'DIT refuses it too (400, RequestTypeError): not an image type it reads.'),
  ),
  row(`${FILTER}: rgb(10, 10, 10) (tint)`, thumbor(`/filters:rgb(10,%2010,%2010)${K}`), refused(400, unsupported('filters:rgb'), WE_LACK)),
  row(`${FILTER}: rotate(75)`, thumbor(`/filters:rotate(75)${K}`), refused(400, /^Invalid rotate "75"/, 'Quarter turns only here.')),
  row(`${FILTER}: sharpen(75, 5), a sigma of 1 + 5 / 2`, thumbor(`/filters:sharpen(75,%205)${K}`), same(`${K}?sharpen=3.5`, 'sharpen=3.5')),
  row(`${FILTER}: stretch() without a size`, thumbor(`/filters:stretch()${K}`), same(K, 'original')),
  row(
    `${FILTER}: stretch() after 300x400`,
    thumbor(`/300x400/filters:stretch()${K}`),
    same(`${K}?width=300&height=400&fit=fill&enlarge=1`),
  ),
  row(`${FILTER}: stretch() after fit-in, no size`, thumbor(`/fit-in/filters:stretch()${K}`), same(K, 'original')),
  row(
    `${FILTER}: stretch() after fit-in/400x300 (fit-in wins)`,
    thumbor(`/fit-in/400x300/filters:stretch()${K}`),
    same(`${K}?width=400&height=300&fit=inside&enlarge=1`, 'width=400,height=300,fit=inside,enlarge=1'),
  ),
  row(`${FILTER}: strip_exif()`, thumbor(`/filters:strip_exif()${K}`), deviation(K, 'oriented', 'original')),
  row(`${FILTER}: strip_icc()`, thumbor(`/filters:strip_icc()${K}`), deviation(K, 'oriented', 'original')),
  row(`${FILTER}: upscale() without a size (fit: inside)`, thumbor(`/filters:upscale()${K}`), same(K, 'original')),
  row(`${FILTER}: upscale() after an empty resize (0x0)`, thumbor(`/0x0/filters:upscale()${K}`), same(K, 'original')),
  ...['100,100,0', '50p,30p,0', 'x,x,0', '100,100,0,10,10'].map((placement) =>
    row(
      `${FILTER}: watermark(bucket,key,${placement})`,
      thumbor(`/filters:watermark(my-images,logo.png,${placement})${K}`),
      refused(400, PLACEMENT, PLACED),
    ),
  ),
  row(
    `${FILTER}: notSupportedFilter()`,
    thumbor(`/filters:notSupportedFilter()${K}`),
    deviation({ status: 400, message: unsupported('filters:notSupportedFilter') }, 'unknownFilter'),
  ),
  row(
    `${FILTER}: format(jpeg) then quality(50), no extension`,
    thumbor('/filters:format(jpeg)/filters:quality(50)/image_without_extension'),
    same('/image_without_extension?format=jpeg&quality=50', 'quality=50,format=jpeg'),
  ),
  row(
    `${FILTER}: quality(50) then format(jpeg), no extension (the filters are sorted)`,
    thumbor('/filters:quality(50)/filters:format(jpeg)/image_without_extension'),
    same('/image_without_extension?format=jpeg&quality=50', 'quality=50,format=jpeg'),
  ),
  row(
    `${FILTER}: quality(50) then format(jpeg) of a .png (the PNG's quality moves to the JPEG)`,
    thumbor('/filters:quality(50)/filters:format(jpeg)/image_without_extension.png'),
    same('/image_without_extension.png?format=jpeg&quality=50', 'quality=50,format=jpeg'),
  ),
  row(
    `${FILTER}: fit-in/200x300 and grayscale()`,
    thumbor(`/fit-in/200x300/filters:grayscale()${K}`),
    same(`${K}?width=200&height=300&fit=inside&enlarge=1&grayscale=1`, 'width=200,height=300,fit=inside,enlarge=1,grayscale=1'),
  ),
  row(
    `${FILTER}: fit-in with a watermark in a folder; ${KEYS}: a watermark containing a slash`,
    thumbor('/fit-in/400x400/filters:watermark(my-images,folder/logo.png,0,0)/image.jpg'),
    refused(400, PLACEMENT, PLACED),
  ),
  row(
    `${FILTER}: fit-in with a watermark not in a folder; ${KEYS}: a watermark not containing a slash`,
    thumbor('/fit-in/400x400/filters:watermark(my-images,logo.png,0,0)/image.jpg'),
    refused(400, PLACEMENT, PLACED),
  ),
  ...['fAlSe', '', 'ABCDEF'].map((value) =>
    row(
      `${FILTER}: animated(${value})`,
      thumbor(`/filters:animated(${value})${K}`),
      refused(400, unsupported('filters:animated'), WE_LACK),
    ),
  ),
];

/** thumbor-mapper/mappings.spec.ts tests each filter's mapper alone: each as a path with that filter. */
const MAPPINGS_ROWS: ConformanceRow[] = [
  row(
    `${MAPPINGS}: mapBGColor, a colour name (red)`,
    thumbor(`/filters:background_color(red)${K}`),
    deviation({ status: 400, message: /^Invalid background "red"/ }, 'stricterValue'),
  ),
  row(`${MAPPINGS}: mapBGColor, hex (FF0000)`, thumbor(`/filters:background_color(FF0000)${K}`), same(`${K}?background=ff0000`)),
  row(`${MAPPINGS}: mapBlur, the sigma (50,20)`, thumbor(`/filters:blur(50,20)${K}`), same(`${K}?blur=20`, 'blur=20')),
  row(`${MAPPINGS}: mapBlur, half the radius (50)`, thumbor(`/filters:blur(50)${K}`), same(`${K}?blur=25`, 'blur=25')),
  row(
    `${MAPPINGS}: mapConvolution`,
    thumbor(`/filters:convolution(1;2;3;4;5;6,2)${K}`),
    refused(400, unsupported('filters:convolution'), WE_LACK),
  ),
  // With a size, so that the fill shows.
  row(
    `${MAPPINGS}: mapFill, a colour name (red), on 300x200`,
    thumbor(`/300x200/filters:fill(red)${K}`),
    deviation({ status: 400, message: /^Invalid background "red"/ }, 'stricterValue'),
  ),
  row(
    `${MAPPINGS}: mapFill, hex (FF0000), on 300x200`,
    thumbor(`/300x200/filters:fill(FF0000)${K}`),
    same(`${K}?width=300&height=200&fit=contain&background=ff0000&enlarge=1`),
  ),
  row(`${MAPPINGS}: mapFormat, jpg is jpeg`, thumbor(`/filters:format(jpg)${K}`), same(`${K}?format=jpeg`, 'format=jpeg')),
  row(
    `${MAPPINGS}: mapFormat, pdf is not a format: ignored`,
    thumbor(`/filters:format(pdf)${K}`),
    deviation({ status: 400, message: /^Invalid format "pdf"/ }, 'stricterValue'),
  ),
  row(
    `${MAPPINGS}: mapNoUpscale, on fit-in/300x200`,
    thumbor(`/fit-in/300x200/filters:no_upscale()${K}`),
    same(`${K}?width=300&height=200&fit=inside`, 'width=300,height=200,fit=inside'),
  ),
  row(
    `${MAPPINGS}: mapResizeRatio, of 10x10`,
    thumbor(`/10x10/filters:proportion(0.5)${K}`),
    deviation({ status: 400, message: unsupported('filters:proportion') }, 'proportion'),
  ),
  row(
    `${MAPPINGS}: mapResizeRatio, without a size`,
    thumbor(`/filters:proportion(0.5)${K}`),
    refused(400, unsupported('filters:proportion'), "The source's size is not known at the edge."),
  ),
  row(`${MAPPINGS}: mapQuality, a JPEG`, thumbor(`/filters:quality(90)${K}`), same(`${K}?quality=90`, 'quality=90')),
  row(
    `${MAPPINGS}: mapQuality, a PDF`,
    thumbor('/filters:quality(90)/test-image-001.pdf'),
    refused(400, unsupported('*.pdf'), 'DIT refuses it too (400, RequestTypeError): not an image type it reads.'),
  ),
  row(
    `${MAPPINGS}: mapStretch, fit: fill`,
    thumbor(`/300x200/filters:stretch()${K}`),
    same(`${K}?width=300&height=200&fit=fill&enlarge=1`),
  ),
  row(
    `${MAPPINGS}: mapStretch, not over fit-in`,
    thumbor(`/fit-in/300x200/filters:stretch()${K}`),
    same(`${K}?width=300&height=200&fit=inside&enlarge=1`, 'width=300,height=200,fit=inside,enlarge=1'),
  ),
  // upscale() is fit: inside, which sharp enlarges.
  row(
    `${MAPPINGS}: mapUpscale, fit: inside`,
    thumbor(`/300x200/filters:upscale()${K}`),
    same(`${K}?width=300&height=200&fit=inside&enlarge=1`),
  ),
  ...['10,%20-20', 'invalid,%20-20', '10,%20invalid'].map((xy) =>
    row(
      `${MAPPINGS}: mapWatermark (${decodeURIComponent(xy)}, 50, 30, 40)`,
      thumbor(`/filters:watermark(my-images,%20logo.png,%20${xy},%2050,%2030,%2040)${K}`),
      refused(400, PLACEMENT, PLACED),
    ),
  ),
];

/** Crops, chained filters, sizes (thumbor-mapper/crop, edits, resize.spec.ts). */
const PATH_ROWS: ConformanceRow[] = [
  row(
    'thumbor-mapper/crop.spec.ts: a crop',
    thumbor(`/10x0:100x200${K}`),
    refused(400, PIXELS, "A crop in pixels needs the source's size."),
  ),
  row('thumbor-mapper/crop.spec.ts: invalid crop dimensions are part of the key', thumbor(`/abc:0:10x200${K}`), same(`/abc:0:10x200${K}`)),
  row(
    'thumbor-mapper/crop.spec.ts: a crop and a resize',
    thumbor(`/10x0:100x200/10x20${K}`),
    refused(400, PIXELS, "A crop in pixels needs the source's size."),
  ),
  row(
    'thumbor-mapper/edits.spec.ts: filters chained',
    thumbor('/filters:rotate(90):grayscale()/thumbor-image.jpg'),
    same('/thumbor-image.jpg?rotate=90&grayscale=1', 'rotate=90,grayscale=1'),
  ),
  row(
    `thumbor-mapper/edits.spec.ts: filters not chained; ${KEYS}: a Thumbor key; image-request/parse-image-edits.spec.ts: a Thumbor request`,
    thumbor('/filters:rotate(90)/filters:grayscale()/thumbor-image.jpg'),
    same('/thumbor-image.jpg?rotate=90&grayscale=1', 'rotate=90,grayscale=1'),
  ),
  row(
    'thumbor-mapper/edits.spec.ts: filters both chained and individual',
    thumbor('/filters:rotate(90):grayscale()/filters:blur(20)/thumbor-image.jpg'),
    same('/thumbor-image.jpg?rotate=90&grayscale=1&blur=10', 'rotate=90,grayscale=1,blur=10'),
  ),
  row(
    'thumbor-mapper/edits.spec.ts: slashes in a filter',
    thumbor('/filters:watermark(my-images,folder/logo.png,0,0)/image.jpg'),
    refused(400, PLACEMENT, PLACED),
  ),
  row(
    'thumbor-mapper/resize.spec.ts: fit-in/400x300',
    thumbor(`/fit-in/400x300${K}`),
    same(`${K}?width=400&height=300&fit=inside&enlarge=1`, 'width=400,height=300,fit=inside,enlarge=1'),
  ),
  row('thumbor-mapper/resize.spec.ts: fit-in without a size', thumbor(`/fit-in${K}`), same(K, 'original')),
  row(
    'thumbor-mapper/resize.spec.ts: 400x300',
    thumbor(`/400x300${K}`),
    same(`${K}?width=400&height=300&enlarge=1`, 'width=400,height=300,enlarge=1'),
  ),
  row('thumbor-mapper/resize.spec.ts: 0x300', thumbor(`/0x300${K}`), same(`${K}?height=300&enlarge=1`, 'height=300,enlarge=1')),
  row('thumbor-mapper/resize.spec.ts: 400x0', thumbor(`/400x0${K}`), same(`${K}?width=400&enlarge=1`, 'width=400,enlarge=1')),
  row('thumbor-mapper/resize.spec.ts: 0x0', thumbor(`/0x0${K}`), same(K, 'original')),
];

const ROTATED_GREY = 'rotate=90&grayscale=1';

/** The Thumbor paths of image-request/*.spec.ts. */
const REQUEST_ROWS: ConformanceRow[] = [
  ...['(1)', '(1', '1)', '(1)%20suffix'].map((name) =>
    row(
      `${KEYS}: a Thumbor key with parentheses, ${decodeURIComponent(name)}`,
      thumbor(`/filters:rotate(90)/filters:grayscale()/thumbor-image%20${name}.jpg`),
      same(`/thumbor-image%20${name}.jpg?${ROTATED_GREY}`),
    ),
  ),
  row(
    `${KEYS}: an s3:<bucket> segment equal to the bucket is not in the key`,
    thumbor('/filters:rotate(90)/s3:my-archive/filters:grayscale()/thumbor-image%20(1).jpg'),
    same(`/archive/thumbor-image%20(1).jpg?${ROTATED_GREY}`),
  ),
  row(
    `${KEYS}: an s3:<bucket> segment not the bucket is in the key`,
    thumbor('/filters:rotate(90)/filters:grayscale()/s3:not-my-bucket/thumbor-image%20(1).jpg'),
    deviation(UNKNOWN_BUCKET, 'unservedBucket'),
  ),
  row(
    `${KEYS}: a crop before the filters`,
    thumbor(`/10x10:100x100/filters:rotate(90)/filters:grayscale()${PARENS}`),
    refused(400, PIXELS, "A crop in pixels needs the source's size."),
  ),
  row(
    `${KEYS}: a resize before the filters`,
    thumbor(`/10x10/filters:rotate(90)/filters:grayscale()${PARENS}`),
    same(`${PARENS}?width=10&height=10&enlarge=1&${ROTATED_GREY}`),
  ),
  row(
    `${KEYS}: a crop and a resize before the filters`,
    thumbor(`/10x20:100x200/10x10/filters:rotate(90)/filters:grayscale()${PARENS}`),
    refused(400, PIXELS, "A crop in pixels needs the source's size."),
  ),
  // fill() makes the fit contain: with one side, the box is the image's own shape.
  row(
    `${KEYS}: a key containing "fit-in"`,
    thumbor('/fit-in/400x0/filters:fill(ffffff)/fit-in-thumbor-image%20(1)%20suffix.jpg'),
    // fill() is a resize's: with one side, nothing to fill.
    same('/fit-in-thumbor-image%20(1)%20suffix.jpg?width=400&fit=inside&enlarge=1'),
  ),
  row(
    `${KEYS}: an image in a sub-directory named like a size`,
    thumbor('/100x100/test-100x100/test/beach-100x100.jpg'),
    same('/test-100x100/test/beach-100x100.jpg?width=100&height=100&enlarge=1', 'width=100,height=100,enlarge=1'),
  ),
  row(
    `${BUCKETS}: the default bucket for a Thumbor request; image-request/setup.spec.ts: a Thumbor request`,
    thumbor(`/filters:grayscale()${K}`),
    same(`${K}?grayscale=1`, 'grayscale=1'),
  ),
  row(
    `${BUCKETS}: an s3:<bucket> not in SOURCE_BUCKETS`,
    thumbor(`/filters:grayscale()/s3:not-my-bucket${K}`),
    deviation(UNKNOWN_BUCKET, 'unservedBucket'),
  ),
  row(
    `${BUCKETS}: s3:<bucket> anywhere in the path`,
    thumbor(`/s3:my-archive/filters:grayscale()${K}`),
    same(`/archive${K}?grayscale=1`, 'grayscale=1'),
  ),
  row(
    `${BUCKETS}: only a bucket of SOURCE_BUCKETS is read`,
    thumbor(`/s3:not-my-bucket/s3:my-archive${K}`),
    deviation(UNKNOWN_BUCKET, 'unservedBucket'),
  ),
  row(
    `${BUCKETS}: s3:<bucket> after the filters`,
    thumbor(`/filters:grayscale()/s3:my-archive${K}`),
    same(`/archive${K}?grayscale=1`, 'grayscale=1'),
  ),
  row(
    'image-request/decode-request.spec.ts: a path that is not base64 (a Thumbor key, no extension)',
    thumbor('/someNonBase64EncodedContentHere'),
    same('/someNonBase64EncodedContentHere', 'original'),
  ),
  // DIT ignores brightness() and contrast() and reads the key `unsafe//https://upload...`, which no bucket holds.
  row(
    `${TYPES}: a Thumbor request (unsafe/, brightness, contrast, a URL as the key)`,
    thumbor(
      '/unsafe/filters:brightness(10):contrast(30)/https://upload.wikimedia.org/wikipedia/commons/thumb/7/79/Coffee_berries_1.jpg/1200px-Coffee_berries_1.jpg',
    ),
    refused(400, unsupported('filters:brightness'), 'DIT serves no image for it either (404: no such key).'),
  ),
  ...['jpg', 'jpeg', 'png', 'webp', 'tiff', 'tif', 'svg'].map((ext) =>
    row(`${TYPES}: a supported .${ext}`, thumbor(`/image.${ext}`), same(`/image.${ext}`, 'original')),
  ),
  row(
    `${TYPES}: an unsupported .bmp`,
    thumbor('/12x12e24d234r2ewxsad123d34r.bmp'),
    refused(400, unsupported('*.bmp'), 'DIT refuses it too (400, RequestTypeError): not an image type it reads.'),
  ),
  row('image-request/parse-image-headers.spec.ts: no headers for a Thumbor request', thumbor('/test.jpg'), same('/test.jpg', 'original')),
  row(
    'image-request/setup.spec.ts: format(png) and quality(50)',
    thumbor(`/filters:format(png)/filters:quality(50)${K}`),
    same(`${K}?format=png&quality=50`, 'format=png'),
  ),
  row(
    'image-request/setup.spec.ts: an SVG with edits and no format',
    thumbor('/100x100/image.svg'),
    deviation('/image.svg?width=100&height=100&enlarge=1', 'svgPng'),
  ),
  row(
    'image-request/setup.spec.ts: an SVG with format(jpg)',
    thumbor('/filters:format(jpg)/image.svg'),
    same('/image.svg?format=jpeg', 'format=jpeg'),
  ),
];

export const THUMBOR_ROWS: ConformanceRow[] = [...FILTER_ROWS, ...MAPPINGS_ROWS, ...PATH_ROWS, ...REQUEST_ROWS];
