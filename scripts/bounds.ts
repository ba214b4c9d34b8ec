// `npm run bounds -- [--memory MB] [--budget MS] [--only NAME]`
//
// The bounded-work report: a corpus of hostile sources at the limits, each
// sent through the real origin handler (its transform child included) on
// LocalStack S3 as a plain GET from Chromium would make it, one at a time.
// For each case it prints the answer, the wall time to the answer, the peak
// resident memory of the handler and the transform process together, and the
// CPU seconds that ran after the answer: in the transform process, the
// planned part (a deferred AVIF, made after a WebP answer within the same
// invocation) apart from what ran after the invocation ended (work nobody
// planned, which must be nil), and in the handler (the planned variant or
// failure write). The last line says whether every case kept to the bounds:
// peak at most 75% of the memory size, an answer within the time budget,
// under 1 CPU-second of unplanned work after any answer. The upload
// validator's cases (`--only validator`) are measured in the same way, in
// their own process (scripts/bounds-validator.ts).

import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { crc32 } from 'node:zlib';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { OVERLAY_SLOTS } from '../lambda/grammar';
import { DEFAULT_LIMITS, originConfig, type OriginConfig } from '../lambda/origin/config';
import { createOriginHandler } from '../lambda/origin/handler';
import type { FunctionUrlResponse } from '../lambda/origin/responses';
import { MEMORY_SHARE } from '../lambda/origin/image/budget';
import { originS3Client } from '../lambda/origin/storage';
import { transformProcesses } from '../lambda/origin/transform-process';
import { commandLine, runCommand, UsageError } from '../local/harness/command-line';
import { functionUrlEvent } from '../local/emulator/function-url';
import { startLocalStack } from '../local/harness/localstack';
import { animatedGif, deepImage } from '../test/support/images';
import { metadataBombJpeg, metadataBombPng } from '../test/support/metadata';
import { ownFont } from '../test/support/own-font';
import { gifWithFrame, layeredSvg, tiffPages, useBomb, webpFrameBeyondCanvas } from '../test/hostile/support';
import { fakeHevcPicture, heicGrid, heicOf, heicWithMetadata, hevcPictureOf } from '../test/support/heic';
import { joinUltraHdr } from '../test/support/ultra-hdr';
import { cpuSecondsOf } from './bench/proc-stat';
import { isValidation, measureValidation, peakMb, VALIDATE, VALIDATE_STRIPPING } from './bounds-validator';
import { crowdOf, facePhotos, headOf, KNOWN_FACES } from '../test/support/face-photos';
import { provideFonts } from '../lib/fonts';
import { provideSubjectModel } from '../lib/subject-model';
import { CARD_SLOT_KEYS, LARGEST_TEMPLATE, largestCardAsk, noiseJpeg, OG_TEMPLATE, ogCardAsk } from './bounds-cards';

const USAGE = `usage: npm run bounds -- [--memory MB] [--budget MS] [--only NAME]
  --memory MB   the function's memory size the budgets derive from (default 2048)
  --budget MS   the time budget per request (default 25000)
  --only NAME   run only the cases whose name contains NAME`;

/** Chromium's Accept for an <img>: the edge negotiates AVIF, so the canonical URI says accept=avif. */
const NEGOTIATED = 'accept=avif';

/** An answer at the budget is on time: the 504 of a transform killed at the deadline comes a few ms after it. */
const ANSWER_MARGIN_MS = 100;

/** Unplanned CPU after an answer that the bounds allow, in seconds. */
const MAX_CPU_AFTER_ANSWER = 1;

interface Case {
  name: string;
  make: () => Promise<Buffer>;
  /** Ops segments to ask for. */
  asks: string[];
  /** The SVG policy the case needs. */
  svg?: OriginConfig['svgPolicy'];
  /** The deployment's fallback image (fallbackImage), answered in place of the case's error. */
  fallback?: () => Promise<Buffer>;
  /** Other sources the case's asks name (a card's image slots), by key. */
  others?: Record<string, () => Promise<Buffer>>;
  /** The deployment's card templates. */
  templates?: OriginConfig['templateDefinitions'];
  /** The deployment's own fonts, their files written when the case runs. */
  fonts?: () => OriginConfig['fonts'];
}

/** XML-like text that is no image, at the largest source size: the sniffer must be linear. */
const xmlText = (bytes: number) => Buffer.from('<?xml <!-- <!DOCTYPE svg '.repeat(Math.ceil(bytes / 25)).slice(0, bytes), 'latin1');

/** A photo-like image (soft noise) at the largest output size, in each format a source may have. */
const LARGEST = 8192;
function photo(format: 'jpeg' | 'png' | 'webp' | 'avif' | 'tiff' | 'gif', options: { progressive?: boolean } = {}): Promise<Buffer> {
  // Lossless formats get a smoother picture, or no 8192x8192 file would fit in MAX_SOURCE_BYTES.
  const lossless = format === 'png' || format === 'gif';
  const image = sharp({
    create: {
      width: LARGEST,
      height: LARGEST,
      channels: 3,
      background: '#808080',
      noise: { type: 'gaussian', mean: 128, sigma: lossless ? 3 : 24 },
    },
  }).blur(lossless ? 6 : 1.5);
  switch (format) {
    case 'jpeg':
      return image.jpeg({ quality: 90, progressive: options.progressive ?? false }).toBuffer();
    case 'avif':
      return image.avif({ effort: 0 }).toBuffer();
    case 'tiff':
      return image.tiff({ compression: 'jpeg' }).toBuffer();
    default:
      return image.toFormat(format).toBuffer();
  }
}

/** Frames of noise: GIF's palette search costs several times the model's photographic rate on them. */
function noiseAnimation(side: number, frames: number): Promise<Buffer> {
  return sharp({
    create: { width: side, height: side * frames, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 60 } },
  })
    .raw()
    .toBuffer()
    .then((data) =>
      sharp(data, { raw: { width: side, height: side * frames, channels: 3, pageHeight: side } })
        .gif({ effort: 1 })
        .toBuffer(),
    );
}

// ------------------------------------------------------------------ containers that understate what the decoder makes

/** A HEVC picture of `side`^2 noise from heif-enc (Debian's libheif-examples): a real tile, decoded when the file is served. */
async function noisePicture(side: number) {
  const png = await sharp({
    create: { width: side, height: side, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 24 } },
  })
    .png()
    .toBuffer();
  return hevcPictureOf(heicOf(png, { quality: 50 }));
}

/** Sources whose header understates what the decoder would make (docs/hostile-input.md, "Containers sized as decoded"). */
const CONTAINER_CASES: Case[] = [
  {
    name: 'heic: 64x64 grid over one 16384x16384 tile',
    make: async () => heicGrid({ width: 64, height: 64, rows: 1, columns: 1, picture: fakeHevcPicture(16384, 16384) }),
    asks: [NEGOTIATED, 'format=json'],
  },
  {
    name: 'heic: 64x64 grid over one 4096x4096 noise tile',
    make: async () => heicGrid({ width: 64, height: 64, rows: 1, columns: 1, picture: await noisePicture(4096) }),
    asks: [NEGOTIATED],
  },
  {
    name: 'heic: 8x8 grid of distinct 512x512 noise tiles',
    make: async () => heicGrid({ width: 4096, height: 4096, rows: 8, columns: 8, picture: await noisePicture(512) }),
    asks: [NEGOTIATED, `width=1024,${NEGOTIATED}`],
  },
  {
    name: "heic: 8x8 grid of distinct tile items sharing one 1024x1024 tile's bytes",
    make: async () => heicGrid({ width: 8192, height: 8192, rows: 8, columns: 8, picture: fakeHevcPicture(1024, 1024), sharedData: true }),
    asks: [NEGOTIATED],
  },
  {
    name: 'tiff: a 10x10 page, then a 9000x9000 page',
    make: async () =>
      tiffPages([
        { width: 10, height: 10 },
        { width: 9000, height: 9000 },
      ]),
    asks: [NEGOTIATED, 'format=jpeg'],
  },
  { name: 'gif: a 10x10 screen whose frame is 8192x8192', make: async () => gifWithFrame(10, 8192), asks: [NEGOTIATED, 'format=json'] },
  { name: 'webp: an animation frame of 4000x4000 on a 16x16 canvas', make: () => webpFrameBeyondCanvas(4000), asks: [NEGOTIATED] },
];

const CASES: Case[] = [
  { name: 'sniff: 32 MiB of XML-like text', make: async () => xmlText(32 * 1024 * 1024), asks: [NEGOTIATED] },
  { name: 'svg: <use> bomb, rasterized', make: async () => Buffer.from(useBomb(5)), asks: ['original'], svg: 'rasterize' },
  {
    name: 'svg: 10^5 translucent full-canvas layers, rasterized',
    make: async () => Buffer.from(layeredSvg(5)),
    asks: ['original'],
    svg: 'rasterize',
  },
  {
    name: 'tiff: 100 MP, 16-bit RGBA, orientation 6',
    make: () => deepImage('tiff', 10_000, 10_000, { bands: 4, bits: 16, orientation: 6 }),
    asks: [NEGOTIATED, `width=1024,${NEGOTIATED}`, 'width=2000,rotate=90,format=jpeg'],
  },
  {
    name: 'tiff: 100 MP, 16-bit RGB, orientation 1',
    make: () => deepImage('tiff', 10_000, 10_000, { bands: 3, bits: 16, orientation: 1 }),
    asks: [NEGOTIATED, `width=2048,${NEGOTIATED}`],
  },
  {
    name: 'png: 100 MP, 16-bit grey + alpha, orientation 8',
    make: () => deepImage('png', 10_000, 10_000, { bands: 2, bits: 16, orientation: 8 }),
    asks: [NEGOTIATED, `width=1024,${NEGOTIATED}`],
  },
  {
    name: 'jpeg: 8192x8192 photo',
    make: () => photo('jpeg'),
    asks: [NEGOTIATED, 'format=avif', 'format=webp', `width=1600,${NEGOTIATED}`],
  },
  { name: 'jpeg: 8192x8192 progressive', make: () => photo('jpeg', { progressive: true }), asks: [NEGOTIATED, `width=800,${NEGOTIATED}`] },
  ...(['png', 'webp', 'avif', 'tiff', 'gif'] as const).map((format) => ({
    name: `${format}: 8192x8192 photo`,
    make: () => photo(format),
    asks: [NEGOTIATED],
  })),
  { name: 'gif: 96 frames of 250x250 noise', make: () => noiseAnimation(250, 96), asks: ['format=gif'] },
  { name: 'gif: 200 frames of 500x500', make: () => animatedGif(200, 500, 500), asks: [NEGOTIATED, `width=240,${NEGOTIATED}`] },
  ...CONTAINER_CASES,
  {
    // Within MAX_SOURCE_BYTES: metadata=keep drops blocks over their caps unread.
    name: 'metadata: PNG with a 30 MB XMP packet and a 1 MB EXIF block',
    make: () => metadataBombPng(30_000_000, 1_000_000),
    asks: ['format=jpeg', 'metadata=keep,format=jpeg', `metadata=keep,${NEGOTIATED}`],
  },
  {
    // Each EXIF tag read once (a 64 KB block naming one tag thousands of times took 9 s), the 26 MB of segments skipped by the decoder.
    name: 'metadata: JPEG with an EXIF bomb, a deep XMP, 10,000 IPTC datasets and 26 MB of extended XMP',
    make: () => metadataBombJpeg(),
    asks: ['format=jpeg', 'metadata=keep,format=jpeg', `metadata=copyright,${NEGOTIATED}`],
  },
  {
    // HEIC's metadata items are read by the origin: one over its cap is never copied out of the file.
    name: 'metadata: HEIC with a 30 MB XMP item and a 1 MB Exif item',
    make: async () => heicWithMetadata(await noisePicture(512), Buffer.alloc(1_000_000), Buffer.alloc(30_000_000, 0x20)),
    asks: ['format=jpeg', 'metadata=keep,format=jpeg', `metadata=keep,${NEGOTIATED}`],
  },
];

/** Uniform RGBA noise as a lossy WebP small enough to read: decoded, it is still noise that no PNG can compress. */
function noiseWebp(side: number): Promise<Buffer> {
  return sharp(randomBytes(side * side * 4), { raw: { width: side, height: side, channels: 4 } })
    .webp({ quality: 1, alphaQuality: 0 })
    .toBuffer();
}

/** Uniform RGB noise as a TIFF of low-quality JPEG tiles: decoded, what remains is near noise. */
function noiseTiff(side: number): Promise<Buffer> {
  return sharp(randomBytes(side * side * 3), { raw: { width: side, height: side, channels: 3 } })
    .tiff({ compression: 'jpeg', quality: 20 })
    .toBuffer();
}

/**
 * Copies and descriptions: format=json of the largest sources the model prices
 * (its previews decoded only within the budget, else answered from the
 * header), and the largest variants, which cross from the transform process
 * to the handler once and are held there while they are answered and stored.
 */
const COPIES_AND_JSON_CASES: Case[] = [
  { name: 'json: 8192x8192 HEIC', make: async () => heicOf(await photo('jpeg')), asks: ['format=json', NEGOTIATED] },
  {
    name: 'json: PNG 100 MP, 16-bit grey + alpha, orientation 8',
    make: () => deepImage('png', 10_000, 10_000, { bands: 2, bits: 16, orientation: 8 }),
    asks: ['format=json'],
  },
  {
    name: 'json: TIFF 100 MP, 16-bit RGBA, orientation 6',
    make: () => deepImage('tiff', 10_000, 10_000, { bands: 4, bits: 16, orientation: 6 }),
    asks: ['format=json'],
  },
  ...(['avif', 'webp', 'png', 'tiff'] as const).map((format) => ({
    name: `json: 8192x8192 ${format} photo`,
    make: () => photo(format),
    asks: ['format=json'],
  })),
  { name: 'json: 8192x8192 progressive JPEG', make: () => photo('jpeg', { progressive: true }), asks: ['format=json'] },
  { name: 'json: 200 frames of 500x500 GIF', make: () => animatedGif(200, 500, 500), asks: ['format=json'] },
  { name: 'copies: largest PNG, 8192x8192 RGBA noise', make: () => noiseWebp(LARGEST), asks: ['format=png'] },
  {
    name: 'copies: largest PNG and JPEG from a TIFF, 8192x8192 noise',
    make: () => noiseTiff(LARGEST),
    asks: ['format=png', 'quality=100,format=jpeg'],
  },
];

/**
 * Every op at its largest values on the largest output it allows (8192x8192,
 * enlarged from a 64x64 noise JPEG of a few hundred bytes, so that the work
 * is all the op's), and each encoder at full size on noise: each is served
 * within the budget or refused from the header with a 413.
 */
const MAX = `width=${LARGEST},height=${LARGEST}`;
const tinyNoise = () =>
  sharp({ create: { width: 64, height: 64, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 60 } } })
    .jpeg()
    .toBuffer();
const fullNoise = () =>
  // As noisy as fits in MAX_SOURCE_BYTES.
  sharp({
    create: { width: LARGEST, height: LARGEST, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } },
  })
    .jpeg({ quality: 75 })
    .toBuffer();
/** The fallback image at its worst (lambda/origin/fallback.ts): RGB noise in a PNG just under the synth's 1 MiB, after a source whose decode fails late. */
const FALLBACK_CASES: Case[] = [
  {
    name: 'fallback: a 1 MiB noise PNG in place of a truncated 8192x8192 noise JPEG',
    make: async () => {
      const whole = await fullNoise();
      return whole.subarray(0, Math.floor(whole.length / 2));
    },
    fallback: () =>
      sharp(randomBytes(580 * 580 * 3), { raw: { width: 580, height: 580, channels: 3 } })
        .png()
        .toBuffer(),
    asks: [`${MAX},enlarge=1,format=png`, `${MAX},enlarge=1,format=jpeg`, `${MAX},enlarge=1,${NEGOTIATED}`],
  },
];

/** Canonical ops drawing `ops` (a text, then `SLOT-*` ops) in every overlay slot: `text=...,text-size=...,text2=...`. */
const everySlot = (ops: string) => OVERLAY_SLOTS.map((slot) => `text${slot}=${ops.replace(/SLOT/g, `text${slot}`)}`).join(',');

const OP_CASES: Case[] = [
  {
    name: 'ops: 64x64 noise JPEG enlarged to 8192x8192',
    make: tinyNoise,
    asks: [
      `${MAX},enlarge=1,format=jpeg`,
      `${MAX},enlarge=1,blur=100,sharpen=10,format=jpeg`,
      `${MAX},enlarge=1,blur=100,format=jpeg`,
      `${MAX},enlarge=1,blur=30,format=jpeg`,
      `${MAX},enlarge=1,sharpen=10,format=jpeg`,
      `${MAX},fit=contain,fill=blur,enlarge=1,format=jpeg`,
      `${MAX},enlarge=1,trim=0,format=jpeg`,
      `${MAX},enlarge=1,grayscale=1,border=64,ff0000,format=jpeg`,
      `${MAX},enlarge=1,brightness=10,contrast=10,saturation=10,gamma=0.34,border=64,ff0000,format=jpeg`,
      `${MAX},enlarge=1,quality=auto,format=avif`,
      `${MAX},enlarge=1,max_bytes=1000000,format=jpeg`,
    ],
  },
  {
    name: 'ops: 8192x8192 noise JPEG',
    make: fullNoise,
    asks: [
      'format=jpeg',
      'format=png',
      'format=webp',
      'rotate=90,format=jpeg',
      'flip=1,format=jpeg',
      'trim=0,format=jpeg',
      'crop=0,0,0.5,1,format=jpeg',
    ],
  },
  {
    // The largest sides the model accepts for these ops (docs/hostile-input.md).
    name: 'ops, largest: 64x64 noise JPEG enlarged to the largest side each op allows',
    make: tinyNoise,
    asks: [
      'width=7160,height=7160,enlarge=1,blur=100,format=jpeg',
      'width=6448,height=6448,enlarge=1,sharpen=10,format=jpeg',
      'width=5352,height=5352,enlarge=1,blur=100,sharpen=10,format=jpeg',
      'width=7744,height=7744,fit=contain,fill=blur,enlarge=1,format=jpeg',
      'width=2760,height=2760,enlarge=1,quality=auto,format=avif',
      'width=7593,height=7593,enlarge=1,brightness=10,contrast=10,saturation=10,gamma=0.34,format=jpeg',
    ],
  },
  {
    // The largest texts the limits allow (lambda/origin/image/text/render.ts): 200 characters, each at the largest size
    // whose predicted area stays within TEXT_LIMITS.area, wrapped within the output, with the largest shadow or none.
    // On the largest output the text's price makes it a 413; on 4096x4096 it is drawn.
    name: 'ops, largest: text over a 64x64 noise JPEG enlarged',
    make: tinyNoise,
    asks: [
      `${MAX},enlarge=1,text=${encodeURIComponent('鬱'.repeat(200))},text-size=105,text-shadow=64,format=jpeg`,
      `width=4096,height=4096,enlarge=1,text=${encodeURIComponent('鬱'.repeat(200))},text-size=105,text-shadow=64,format=jpeg`,
      `width=4096,height=4096,enlarge=1,text=${'W'.repeat(200)},text-size=140,format=jpeg`,
      // The largest text in every overlay slot at once (docs/text.md#several-overlays).
      `width=4096,height=4096,enlarge=1,${everySlot(`${encodeURIComponent('鬱'.repeat(200))},SLOT-size=105,SLOT-shadow=64`)},format=jpeg`,
      `width=2048,height=2048,enlarge=1,${everySlot(`${'W'.repeat(200)},SLOT-size=140`)},format=jpeg`,
    ],
  },
  {
    // The same texts in a deployment's own font (the fonts setting): the largest packaged font, Noto Sans SC (10.6 MB),
    // renamed, which libvips loads on its first use in the process; priced as any text.
    name: "ops, largest: text in a deployment's own font over a 64x64 noise JPEG enlarged",
    make: tinyNoise,
    fonts: () => ({ own: { family: 'Zeta Sans SC', weight: '', file: ownFont('NotoSansSC_400Regular.ttf') } }),
    asks: [
      `width=4096,height=4096,enlarge=1,text=${encodeURIComponent('鬱'.repeat(200))},text-size=105,text-font=own,text-shadow=64,format=jpeg`,
      `width=4096,height=4096,enlarge=1,text=${'W'.repeat(200)},text-size=140,text-font=own,format=jpeg`,
    ],
  },
  {
    name: 'ops, largest: 8192x8192 CMYK photo',
    make: async () =>
      sharp(await photo('jpeg'))
        .toColourspace('cmyk')
        .jpeg({ quality: 75 })
        .toBuffer(),
    asks: ['format=jpeg', 'grayscale=1,format=jpeg'],
  },
];

/** A gain map of noise, `side` square, as a JPEG (joinUltraHdr adds its metadata). */
const noiseMap = (side: number) =>
  sharp({ create: { width: side, height: side, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } } })
    .grayscale()
    .jpeg({ quality: 75 })
    .toBuffer();

/**
 * HDR gain maps (docs/url-contract.md#hdr-gain-maps): the largest noise JPEG
 * with a noise map at a quarter of its sides, kept (the primary decoded whole,
 * the map decoded and encoded again), negotiated (it stays JPEG) and dropped;
 * and a 1024x1024 photo whose map claims 8192x8192, which is dropped unread.
 */
const GAIN_MAP_CASES: Case[] = [
  {
    name: 'hdr: 8192x8192 noise Ultra HDR JPEG, 2048x2048 noise gain map',
    make: async () => joinUltraHdr(await fullNoise(), await noiseMap(LARGEST / 4)),
    asks: ['format=jpeg', NEGOTIATED, 'width=1024,format=jpeg', 'hdr=drop,format=jpeg'],
  },
  {
    name: 'hdr: 1024x1024 photo, its gain map 8192x8192',
    make: async () =>
      joinUltraHdr(
        await sharp(await photo('jpeg'))
          .resize(1024)
          .jpeg()
          .toBuffer(),
        await noiseMap(LARGEST),
      ),
    asks: ['format=jpeg', NEGOTIATED],
  },
];

/** A crowd of 120 faces at 4% of the short side on a 4000x3000 photo: every search window full of candidates. */
async function crowdPhoto(): Promise<Buffer> {
  const photos = facePhotos();
  if (!photos) throw new Error('the crowd case needs the face test photos (test/support/face-photos.ts), which could not be fetched');
  const heads = await Promise.all(
    (['astronaut.png', 'grace_hopper.jpg'] as const).map((name) => headOf(photos.read(name), KNOWN_FACES[name]!)),
  );
  const { image } = await crowdOf(heads, photos.read('coffee.png'), [4000, 3000], 120, 0.04);
  return sharp(image).jpeg({ quality: 90 }).toBuffer();
}

/**
 * The face detector at its limits: position=face and format=json (whose every
 * case above, an 8192x8192 HEIC's among them, searches for faces too) on the largest sources, each searched on
 * a copy at most 640 px long made with shrink-on-load where the format has
 * it, the first frame of an animation, and a crowd.
 */
const FACE_CROP = `width=1024,height=1024,position=face,${NEGOTIATED}`;
const FACE_CASES: Case[] = [
  {
    name: 'faces: 8192x8192 JPEG photo',
    make: () => photo('jpeg'),
    asks: [FACE_CROP, `width=${LARGEST},height=4096,position=face,format=jpeg`],
  },
  { name: 'faces: 8192x8192 progressive JPEG', make: () => photo('jpeg', { progressive: true }), asks: [FACE_CROP] },
  ...(['png', 'avif'] as const).map((format) => ({
    name: `faces: 8192x8192 ${format} photo`,
    make: () => photo(format),
    asks: [FACE_CROP],
  })),
  {
    name: 'faces: TIFF 100 MP, 16-bit RGBA, orientation 6',
    make: () => deepImage('tiff', 10_000, 10_000, { bands: 4, bits: 16, orientation: 6 }),
    asks: [FACE_CROP],
  },
  {
    name: 'faces: 200 frames of 500x500 GIF',
    make: () => animatedGif(200, 500, 500),
    asks: ['width=240,height=240,position=face,format=webp'],
  },
  { name: 'faces: 64x64 noise JPEG enlarged to 8192x8192', make: tinyNoise, asks: [`${MAX},position=face,enlarge=1,format=jpeg`] },
  { name: 'faces: a crowd of 120 on a 4000x3000 JPEG', make: crowdPhoto, asks: [FACE_CROP, 'format=json'] },
];

/**
 * The subject model at its limits: position=auto (faces first, then the
 * subject) and format=json on the largest sources of each kind the model
 * reads (a copy at most 640 px long, squeezed to 320x320), an animation's
 * first frame, an alpha channel flattened, CMYK and 16-bit made sRGB.
 */
const AUTO_CROP = `width=1024,height=1024,position=auto,${NEGOTIATED}`;
const SUBJECT_CASES: Case[] = [
  {
    name: 'subject: 8192x8192 JPEG photo',
    make: () => photo('jpeg'),
    asks: [AUTO_CROP, `width=${LARGEST},height=2048,position=auto,format=jpeg`],
  },
  {
    name: 'subject: 8192x8192 CMYK JPEG',
    make: async () =>
      sharp(await photo('jpeg'))
        .toColourspace('cmyk')
        .jpeg({ quality: 75 })
        .toBuffer(),
    asks: [AUTO_CROP],
  },
  {
    name: 'subject: PNG 100 MP, 16-bit grey + alpha, orientation 8',
    make: () => deepImage('png', 10_000, 10_000, { bands: 2, bits: 16, orientation: 8 }),
    asks: [AUTO_CROP, 'format=json'],
  },
  {
    name: 'subject: 200 frames of 500x500 GIF',
    make: () => animatedGif(200, 500, 500),
    asks: ['width=240,height=240,position=auto,format=webp'],
  },
];

/** A PNG of one colour whose `side`^2 pixels, at the pixel limit, fit in a few hundred KB: a decompression bomb within the limits. */
const flatPng = (side: number) =>
  sharp({ create: { width: side, height: side, channels: 3, background: '#336699' } })
    .png({ compressionLevel: 9 })
    .toBuffer();

/** A PNG whose header claims `side`^2 pixels over a few bytes of data. */
function claimingPng(side: number): Promise<Buffer> {
  return sharp({ create: { width: 8, height: 8, channels: 3, background: '#336699' } })
    .png()
    .toBuffer()
    .then((png) => {
      const claimed = Buffer.from(png);
      claimed.writeUInt32BE(side, 16);
      claimed.writeUInt32BE(side, 20);
      // The IHDR's CRC, so that the header is refused for its size, not for its checksum.
      claimed.writeUInt32BE(crc32(claimed.subarray(12, 29)), 29);
      return claimed;
    });
}

/** `jpeg` with comment segments of `x` after its start marker, `bytes` long in all: the largest source, most of it for the strip to blank and store. */
function paddedJpeg(jpeg: Buffer, bytes: number): Buffer {
  const segments: Buffer[] = [];
  for (let room = bytes - jpeg.length; room >= 4;) {
    const size = Math.min(room, 0xffff + 2);
    const segment = Buffer.alloc(size, 0x78);
    segment.writeUInt16BE(0xfffe, 0);
    segment.writeUInt16BE(size - 2, 2);
    segments.push(segment);
    room -= size;
  }
  return Buffer.concat([jpeg.subarray(0, 2), ...segments, jpeg.subarray(2)]);
}

/**
 * The upload validator on hostile uploads at the limits (scripts/bounds-validator.ts):
 * each validated as uploaded and, where it carries metadata, with its location stripped.
 */
/** Side of the noise JPEGs of the largest card: four of them (6.5 MB each) within MAX_SOURCE_BYTES together. */
const CARD_NOISE_SIDE = 2800;
const CARD_CASES: Case[] = [
  {
    name: 'card: Open Graph (1200x630) over a 4000x4000 noise JPEG, a title of 120 characters',
    make: () => noiseJpeg(4000),
    templates: { og: OG_TEMPLATE },
    asks: ['format=jpeg', 'accept=webp', NEGOTIATED].map(ogCardAsk),
  },
  {
    name: 'card: the largest template (2500x1600, 4 noise images, 4 texts as long as its key allows)',
    make: () => noiseJpeg(CARD_NOISE_SIDE),
    others: Object.fromEntries(CARD_SLOT_KEYS.map((key) => [key, () => noiseJpeg(CARD_NOISE_SIDE)])),
    templates: { largest: LARGEST_TEMPLATE },
    asks: ['format=jpeg', 'format=png', 'accept=webp', NEGOTIATED].map((tail) => largestCardAsk('case-99', tail)),
  },
  {
    name: 'card: the largest template over 8192x8192 noise (its images too large together)',
    make: fullNoise,
    others: Object.fromEntries(CARD_SLOT_KEYS.map((key) => [key, fullNoise])),
    templates: { largest: LARGEST_TEMPLATE },
    asks: [largestCardAsk('case-99', NEGOTIATED)],
  },
];

const VALIDATOR_CASES: Case[] = [
  { name: 'validator: 8192x8192 JPEG photo', make: () => photo('jpeg'), asks: [VALIDATE, VALIDATE_STRIPPING] },
  {
    name: 'validator: 8192x8192 JPEG photo padded with comments to the source limit',
    make: async () => paddedJpeg(await photo('jpeg'), DEFAULT_LIMITS.maxSourceBytes),
    asks: [VALIDATE, VALIDATE_STRIPPING],
  },
  {
    name: 'validator: TIFF 100 MP, 16-bit RGBA, orientation 6',
    make: () => deepImage('tiff', 10_000, 10_000, { bands: 4, bits: 16, orientation: 6 }),
    asks: [VALIDATE, VALIDATE_STRIPPING],
  },
  { name: 'validator: PNG 10000x10000 of one colour (a decompression bomb)', make: () => flatPng(10_000), asks: [VALIDATE] },
  { name: 'validator: PNG whose header claims 100000x100000', make: () => claimingPng(100_000), asks: [VALIDATE] },
  {
    name: 'validator: HEIC 64x64 grid over one 16384x16384 tile',
    make: async () => heicGrid({ width: 64, height: 64, rows: 1, columns: 1, picture: fakeHevcPicture(16384, 16384) }),
    asks: [VALIDATE],
  },
  { name: 'validator: GIF 10x10 screen whose frame is 8192x8192', make: async () => gifWithFrame(10, 8192), asks: [VALIDATE] },
  { name: 'validator: GIF 200 frames of 500x500', make: () => animatedGif(200, 500, 500), asks: [VALIDATE, VALIDATE_STRIPPING] },
  {
    name: 'validator: JPEG with an EXIF bomb, a deep XMP, 10,000 IPTC datasets and 26 MB of extended XMP',
    make: () => metadataBombJpeg(),
    asks: [VALIDATE_STRIPPING],
  },
  {
    name: 'validator: PNG with a 30 MB XMP packet and a 1 MB EXIF block',
    make: () => metadataBombPng(30_000_000, 1_000_000),
    asks: [VALIDATE_STRIPPING],
  },
  {
    name: 'validator: HEIC with a 30 MB XMP item and a 1 MB Exif item',
    make: async () => heicWithMetadata(await noisePicture(512), Buffer.alloc(1_000_000), Buffer.alloc(30_000_000, 0x20)),
    asks: [VALIDATE_STRIPPING],
  },
];

/** An ask as the report prints it: a card's fills run to a kilobyte. */
const shortAsk = (ask: string) => ask.replace(/fills=([0-9a-f]{12})[0-9a-f]+/, 'fills=$1…');

/** 200: the type served; 302: a variant too large to return inline, stored and redirected to; else the error code. */
function answerOf({ statusCode, headers, body }: FunctionUrlResponse): string {
  if (statusCode === 200) return headers['content-type']!;
  if (headers['content-type']?.startsWith('image/')) return `fallback ${headers['content-type']}, ${body.length} bytes`;
  if (statusCode === 302) return 'stored, redirected';
  return (JSON.parse(body.toString('utf8')) as { error: string }).error;
}

interface Row {
  case: string;
  ask: string;
  status: number;
  answer: string;
  ms: number;
  peakMb: number;
  /** Transform CPU between the answer and the invocation's end: a deferred AVIF. */
  childCpuPlanned: number;
  /** Transform CPU after the invocation's end: work nobody planned. */
  childCpuAfter: number;
  handlerCpuAfter: number;
}

/** One request to measure, in a process of its own: the handler's peak is then its own, not the corpus generator's. */
interface Measurement {
  endpoint: string;
  config: OriginConfig;
  name: string;
  key: string;
  ask: string;
}

const MEASUREMENT = 'BOUNDS_MEASUREMENT';

function measureApart(measurement: Measurement): Promise<Row> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), [], {
      env: { ...process.env, [MEASUREMENT]: JSON.stringify(measurement) },
      execArgv: ['--import', 'tsx'],
    });
    child.once('message', (row: Row) => resolve(row));
    child.once('exit', (code) => reject(new Error(`the measurement of ${measurement.name} ${measurement.ask} ended with ${code}`)));
  });
}

const s3Client = (endpoint: string) =>
  originS3Client({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, forcePathStyle: true });

async function measure({ endpoint, config, name, key, ask }: Measurement): Promise<Row> {
  const s3 = s3Client(endpoint);
  if (isValidation(ask)) {
    const row = await measureValidation(s3, config, key, ask);
    return { case: name, ask, ...row, childCpuPlanned: 0, childCpuAfter: 0, handlerCpuAfter: 0 };
  }
  const transforms = transformProcesses();
  await transforms.ready();
  const handle = createOriginHandler({ s3, config, log: () => {}, metrics: { enabled: false }, transforms });
  writeFileSync('/proc/self/clear_refs', '5');
  let peak = 0;
  const childPeak = new Map<number, number>();
  const sample = setInterval(() => {
    for (const pid of transforms.pids()) childPeak.set(pid, Math.max(childPeak.get(pid) ?? 0, peakMb(pid) ?? 0));
    peak = Math.max(peak, (peakMb('self') ?? 0) + Math.max(0, ...childPeak.values()));
  }, 20);
  const children = transforms.pids();
  const start = performance.now();
  let answeredAt = NaN;
  let atAnswer = { child: 0, handler: 0 };
  const response = await handle(functionUrlEvent(`/${key}/${ask}`), { getRemainingTimeInMillis: () => config.timeBudgetMs + 5_000 }, () => {
    answeredAt = performance.now();
    const used = process.cpuUsage();
    atAnswer = { child: children.reduce((sum, pid) => sum + cpuSecondsOf(pid), 0), handler: (used.user + used.system) / 1e6 };
  });
  // What the invocation did after its answer was planned: a deferred AVIF (avif-claims.ts), the variant's write.
  const atEnd = children.reduce((sum, pid) => sum + cpuSecondsOf(pid), 0);
  // Anything left running after the invocation would show within this second.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  clearInterval(sample);
  const childAfter = children.reduce((sum, pid) => sum + cpuSecondsOf(pid), 0) - atEnd;
  const used = process.cpuUsage();
  transforms.close();
  return {
    case: name,
    ask,
    status: response.statusCode,
    answer: answerOf(response),
    ms: answeredAt - start,
    peakMb: peak,
    childCpuPlanned: Math.max(0, atEnd - atAnswer.child),
    childCpuAfter: Math.max(0, childAfter),
    handlerCpuAfter: (used.user + used.system) / 1e6 - atAnswer.handler,
  };
}

async function main() {
  const args = commandLine(USAGE, {
    memory: { type: 'string', default: '2048' },
    budget: { type: 'string', default: '25000' },
    only: { type: 'string', default: '' },
  });
  if (!args) return;
  const memorySizeMb = Number(args.memory);
  const timeBudgetMs = Number(args.budget);
  if (!Number.isInteger(memorySizeMb) || memorySizeMb < 512)
    throw new UsageError(`--memory must be a whole number of MB, at least 512, not "${args.memory}"`);
  if (!Number.isInteger(timeBudgetMs) || timeBudgetMs < 1000)
    throw new UsageError(`--budget must be a whole number of ms, at least 1000, not "${args.budget}"`);

  // The subject model and the text fonts as the tests have them, named by SUBJECT_MODEL_FILE and TEXT_FONTS_DIR for the origins measured.
  await provideSubjectModel((line) => console.error(line));
  await provideFonts((line) => console.error(line));
  const localStack = await startLocalStack({ log: (line) => console.error(`[localstack] ${line}`) });
  try {
    const s3 = s3Client(localStack.endpoint);
    const id = Date.now().toString(36);
    const buckets = { sourceBucket: `bounds-src-${id}`, cacheBucket: `bounds-cache-${id}` };
    await s3.send(new CreateBucketCommand({ Bucket: buckets.sourceBucket }));
    await s3.send(new CreateBucketCommand({ Bucket: buckets.cacheBucket }));
    const rows: Row[] = [];
    for (const [index, item] of [
      ...CASES,
      ...COPIES_AND_JSON_CASES,
      ...OP_CASES,
      ...GAIN_MAP_CASES,
      ...FALLBACK_CASES,
      ...FACE_CASES,
      ...SUBJECT_CASES,
      ...CARD_CASES,
      ...VALIDATOR_CASES,
    ]
      .filter((c) => c.name.includes(args.only))
      .entries()) {
      const key = `case-${index}`;
      await s3.send(new PutObjectCommand({ Bucket: buckets.sourceBucket, Key: key, Body: await item.make() }));
      for (const [other, make] of Object.entries(item.others ?? {}))
        await s3.send(new PutObjectCommand({ Bucket: buckets.sourceBucket, Key: other, Body: await make() }));
      const fallbackImage = item.fallback && join(mkdtempSync(join(tmpdir(), 'bounds-fallback-')), 'fallback.png');
      if (item.fallback && fallbackImage) writeFileSync(fallbackImage, await item.fallback());
      const config = originConfig(buckets, {
        memorySizeMb,
        timeBudgetMs,
        svgPolicy: item.svg ?? 'refuse',
        fallbackImage,
        templateDefinitions: item.templates ?? {},
        fonts: item.fonts?.() ?? {},
      });
      for (const ask of item.asks) {
        const row = await measureApart({ endpoint: localStack.endpoint, config, name: item.name, key, ask });
        console.error(
          `${item.name} ${shortAsk(ask)}: ${row.status} ${row.answer} in ${row.ms.toFixed(0)} ms, peak ${row.peakMb.toFixed(0)} MB`,
        );
        rows.push(row);
      }
    }
    const limitMb = memorySizeMb * MEMORY_SHARE;
    const kept = (row: Row) =>
      row.peakMb <= limitMb && row.ms <= timeBudgetMs + ANSWER_MARGIN_MS && row.childCpuAfter < MAX_CPU_AFTER_ANSWER;
    const lines = [
      `Bounded work, ${new Date().toISOString().slice(0, 16)} UTC: memory size ${memorySizeMb} MB (peak allowed ${limitMb.toFixed(0)} MB), time budget ${timeBudgetMs} ms. \`npm run bounds\``,
      '',
      '| case | asked | answer | ms to answer | peak RSS, both processes (MB) | transform CPU after answer, planned (s) | transform CPU after the invocation (s) | handler CPU after answer (s) | within bounds |',
      '| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |',
      ...rows.map(
        (row) =>
          `| ${row.case} | \`${shortAsk(row.ask)}\` | ${row.status} ${row.answer} | ${row.ms.toFixed(0)} | ${row.peakMb.toFixed(0)} | ${row.childCpuPlanned.toFixed(2)} | ${row.childCpuAfter.toFixed(2)} | ${row.handlerCpuAfter.toFixed(2)} | ${kept(row) ? 'yes' : '**no**'} |`,
      ),
      '',
      `${rows.filter(kept).length} of ${rows.length} cases within bounds; largest peak ${Math.max(...rows.map((r) => r.peakMb)).toFixed(0)} MB, slowest answer ${Math.max(...rows.map((r) => r.ms)).toFixed(0)} ms, most transform CPU after an invocation ${Math.max(...rows.map((r) => r.childCpuAfter)).toFixed(2)} s.`,
    ];
    console.log(lines.join('\n'));
    if (!rows.every(kept)) process.exitCode = 1;
  } finally {
    await localStack.stop();
  }
}

/** In a measuring child: one measurement, sent to the parent. */
async function measureOne(spec: string): Promise<void> {
  const row = await measure(JSON.parse(spec) as Measurement);
  process.send?.(row, () => process.exit(0));
}

const measurement = process.env[MEASUREMENT];
runCommand(USAGE, measurement ? () => measureOne(measurement) : main);
