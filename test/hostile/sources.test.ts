// Hostile sources, table-driven: every row is an object in the source bucket
// and the requests made of it, each with the contract's answer. Every request
// goes through the real handler (its canonical URI) and through the emulator
// over HTTP (the viewer URL), and each answer is checked whole (status, JSON
// code, Cache-Control, no internal detail, the log entry, the cache bucket
// unchanged after an error). After the barrage the emulator still serves, and
// its cache bucket holds only variants of requests that succeeded.
//
// Not repeated here (test/origin/errors.test.ts has them through the
// handler): a zero-byte .jpg, text/HTML/random bytes named .jpg, a plain SVG,
// a JPEG cut in half, a PNG with scrambled IDAT, a 20000x20000 PNG bomb.

import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeKeyPath } from '../../lambda/grammar/index';
import { MAX_SVG_BYTES } from '../../lambda/origin/image/input';
import {
  animatedGif,
  animatedWebp,
  animationFrameColour,
  avifImage,
  gradientJpeg,
  isNear,
  opaquePng,
  pixelAt,
  pngBomb,
  tiffImage,
  webpImage,
} from '../support/images';
import { boxHeader, fakeHevcPicture, heicGrid, heifOfItems, heifSkeleton, ispe } from '../support/heic';
import { createTestOrigin, type TestOrigin } from '../support/origin';
import {
  expectEmulatorStillServing,
  gifOfPixelFrames,
  gifWithFrame,
  tiffPages,
  webpFrameBeyondCanvas,
  scrambled,
  seededBytes,
  throughEmulator,
  throughHandler,
  truncated,
  OK_KEY,
  okJpeg,
  type Expected,
  type HostileEmulator,
  startHostileEmulator,
} from './support';

// ------------------------------------------------------------------ the table

interface Probe {
  /** The viewer's query (no Accept header is sent, so no format is negotiated). */
  viewer: string;
  /** The same request as a canonical ops segment, for the handler. */
  canonical: string;
  expected: Expected;
  /** More checks of a 200 body. */
  check?: (body: Buffer) => Promise<void>;
}

interface Row {
  name: string;
  key: string;
  make: () => Buffer | Promise<Buffer>;
  probes: Probe[];
  /** An upper bound on the body's size: a bomb is small. */
  maxBytes?: number;
  /** An upper bound on how much the process's peak memory may grow while the row is served. */
  maxPeakGrowthMb?: number;
}

const UNSUPPORTED: Expected = { status: 415, code: 'unsupported_media_type' };
const DAMAGED: Expected = { status: 422, code: 'undecodable_image' };
const TOO_MANY_PIXELS: Expected = { status: 413, code: 'too_many_pixels' };
const OK: Expected = { status: 200 };

/** The four requests every broken source is asked for: as is, resized, converted, described. */
const every = (expected: Expected): Probe[] => [
  { viewer: '', canonical: 'original', expected },
  { viewer: 'w=50', canonical: 'width=50', expected },
  { viewer: 'format=webp', canonical: 'format=webp', expected },
  { viewer: 'fm=json', canonical: 'format=json', expected },
];

const text = (value: string) => () => Buffer.from(value, 'utf8');

/** Format, displayed size of one frame and frame count of a body. */
async function shape(body: Buffer) {
  const meta = await sharp(body, { animated: true }).metadata();
  return { format: meta.format, width: meta.width, height: meta.pageHeight ?? meta.height, frames: meta.pages ?? 1 };
}

const shaped = (expected: Partial<Awaited<ReturnType<typeof shape>>>) => async (body: Buffer) => {
  expect(await shape(body)).toMatchObject(expected);
};

const described = (expected: Record<string, unknown>) => async (body: Buffer) => {
  expect(JSON.parse(body.toString('utf8'))).toMatchObject(expected);
};

/** A JPEG whose frame header claims `width` x `height` (the data is the small image's). */
async function jpegClaiming(width: number, height: number): Promise<Buffer> {
  const jpeg = Buffer.from(await gradientJpeg(40, 30));
  const sof = jpeg.indexOf(Buffer.from([0xff, 0xc0]));
  jpeg.writeUInt16BE(height, sof + 5);
  jpeg.writeUInt16BE(width, sof + 7);
  return jpeg;
}

/** A lossless WebP whose header claims `width` x `height` (at most 16383 a side). */
async function webpClaiming(width: number, height: number): Promise<Buffer> {
  const webp = Buffer.from(
    await sharp({ create: { width: 1, height: 1, channels: 3, background: '#000' } })
      .webp({ lossless: true })
      .toBuffer(),
  );
  const vp8l = webp.indexOf(Buffer.from('VP8L', 'latin1'));
  webp.writeUInt32LE((width - 1) | ((height - 1) << 14), vp8l + 9);
  return webp;
}

/** A PNG with its IHDR checksum broken. */
async function pngWithBadCrc(): Promise<Buffer> {
  const png = Buffer.from(await opaquePng(40, 30));
  png[29] = png[29]! ^ 0xff;
  return png;
}

/** An AVIF cut to its `ftyp` box: it names itself AVIF and holds nothing. */
async function avifFtypOnly(): Promise<Buffer> {
  const avif = await avifImage(64, 48);
  return avif.subarray(0, avif.readUInt32BE(0));
}

const HTML = '<!doctype html><html><head><script>alert(document.cookie)</script></head><body><img src=x onerror=alert(1)></body></html>';
const POLYGLOT_PAYLOAD = Buffer.from(`<script>alert(1)</script>${HTML}`);

const MAX_FRAMES = 200;

const ROWS: Row[] = [
  // --- not images, whatever their names say: 415
  { name: 'zero bytes named .png', key: 'not/empty.png', make: () => Buffer.alloc(0), probes: every(UNSUPPORTED) },
  { name: 'one byte', key: 'not/one.webp', make: () => Buffer.from([0xff]), probes: every(UNSUPPORTED) },
  { name: 'HTML with a script named .png', key: 'not/page.png', make: text(HTML), probes: every(UNSUPPORTED) },
  { name: 'plain text named .webp', key: 'not/notes.webp', make: text('Nothing to see here.\n'.repeat(20)), probes: every(UNSUPPORTED) },
  { name: 'random bytes named .gif', key: 'not/noise.gif', make: () => seededBytes(8192), probes: every(UNSUPPORTED) },
  {
    name: 'a PDF named .jpg',
    key: 'not/doc.jpg',
    make: text('%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n'),
    probes: every(UNSUPPORTED),
  },
  {
    name: 'a ZIP named .png',
    key: 'not/archive.png',
    make: () => Buffer.concat([Buffer.from('PK\x03\x04\x14\x00\x00\x00', 'latin1'), seededBytes(200)]),
    probes: every(UNSUPPORTED),
  },
  {
    name: 'gzip (an .svgz) named .svg',
    key: 'not/drawing.svgz',
    make: () => Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]), seededBytes(100)]),
    probes: every(UNSUPPORTED),
  },
  {
    name: 'an ELF executable named .avif',
    key: 'not/program.avif',
    make: () => Buffer.concat([Buffer.from('\x7fELF\x02\x01\x01\x00', 'latin1'), seededBytes(120)]),
    probes: every(UNSUPPORTED),
  },
  {
    name: 'a BMP',
    key: 'not/bitmap.bmp',
    make: () => Buffer.concat([Buffer.from('BM', 'latin1'), seededBytes(100)]),
    probes: every(UNSUPPORTED),
  },
  {
    name: 'a JPEG XL codestream named .jpg',
    key: 'not/next.jpg',
    make: () => Buffer.concat([Buffer.from([0xff, 0x0a]), seededBytes(64)]),
    probes: every(UNSUPPORTED),
  },

  // --- SVG, refused by default (SVG_POLICY=refuse; svg.test.ts covers rasterize): 415
  {
    name: 'an SVG with a UTF-8 BOM, an XML declaration and a comment',
    key: 'svg/bom.svg',
    make: () =>
      Buffer.concat([
        Buffer.from([0xef, 0xbb, 0xbf]),
        Buffer.from('<?xml version="1.0"?>\n<!-- logo -->\n<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20"/>'),
      ]),
    probes: every(UNSUPPORTED),
  },
  {
    name: 'an SVG billion laughs (entity expansion) named .png',
    key: 'svg/laughs.png',
    make: text(
      '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "lol">' +
        Array.from({ length: 9 }, (_, i) => `<!ENTITY ${'b'.repeat(i + 1)} "${`&${i === 0 ? 'a' : 'b'.repeat(i)};`.repeat(10)}">`).join(
          '',
        ) +
        ']><svg xmlns="http://www.w3.org/2000/svg" width="20" height="20"><text>&bbbbbbbbb;</text></svg>',
    ),
    probes: every(UNSUPPORTED),
  },
  {
    name: 'an SVG referencing http:// and file:///etc/passwd',
    key: 'svg/external.svg',
    make: text(
      '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="20" height="20">' +
        '<image xlink:href="http://169.254.169.254/latest/meta-data/" width="20" height="20"/>' +
        '<image href="file:///etc/passwd" width="20" height="20"/></svg>',
    ),
    probes: every(UNSUPPORTED),
  },
  {
    name: `an SVG over the ${MAX_SVG_BYTES}-byte SVG limit (refused as SVG first)`,
    key: 'svg/huge.svg',
    make: () => Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20"><!--${'x'.repeat(MAX_SVG_BYTES)}--></svg>`),
    probes: every(UNSUPPORTED),
  },

  // --- images that cannot be decoded: 422
  { name: 'JPEG: its 3 SOI bytes only', key: 'broken/soi.jpg', make: () => Buffer.from([0xff, 0xd8, 0xff]), probes: every(DAMAGED) },
  {
    name: 'JPEG: the first 10% (headers cut)',
    key: 'broken/head.jpg',
    make: async () => truncated(await gradientJpeg(400, 300), 0.1),
    probes: every(DAMAGED),
  },
  {
    name: 'JPEG: the last 10% missing',
    key: 'broken/tail.jpg',
    make: async () => truncated(await gradientJpeg(400, 300), 0.9),
    probes: every(DAMAGED),
  },
  {
    name: 'JPEG: scrambled after the first 200 bytes',
    key: 'broken/scrambled.jpg',
    make: async () => scrambled(await gradientJpeg(400, 300), 200),
    probes: every(DAMAGED),
  },
  {
    name: 'JPEG: SOI, then HTML (a polyglot)',
    key: 'broken/polyglot.jpg',
    make: () => Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), POLYGLOT_PAYLOAD]),
    probes: every(DAMAGED),
  },
  {
    name: 'JPEG: progressive, the first 60%',
    key: 'broken/progressive.jpg',
    make: async () =>
      truncated(
        await sharp(await gradientJpeg(400, 300))
          .jpeg({ progressive: true })
          .toBuffer(),
        0.6,
      ),
    probes: every(DAMAGED),
  },
  {
    name: 'PNG: its signature only',
    key: 'broken/signature.png',
    make: () => Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'),
    probes: every(DAMAGED),
  },
  {
    name: 'PNG: the first 70%',
    key: 'broken/cut.png',
    make: async () => truncated(await opaquePng(200, 150), 0.7),
    probes: every(DAMAGED),
  },
  {
    name: 'PNG: interlaced (Adam7), the first 90%',
    key: 'broken/interlaced.png',
    make: async () =>
      truncated(
        await sharp(await opaquePng(200, 150))
          .png({ progressive: true })
          .toBuffer(),
        0.9,
      ),
    probes: every(DAMAGED),
  },
  { name: 'PNG: a wrong IHDR checksum', key: 'broken/crc.png', make: pngWithBadCrc, probes: every(DAMAGED) },
  {
    name: 'PNG: signature, then HTML',
    key: 'broken/polyglot.png',
    make: () => Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), POLYGLOT_PAYLOAD]),
    probes: every(DAMAGED),
  },
  {
    name: 'WebP: its RIFF header only',
    key: 'broken/riff.webp',
    make: () => Buffer.from('RIFF\x04\x00\x00\x00WEBP', 'latin1'),
    probes: every(DAMAGED),
  },
  {
    name: 'WebP: the first half',
    key: 'broken/half.webp',
    make: async () => truncated(await webpImage(200, 150), 0.5),
    probes: every(DAMAGED),
  },
  {
    name: 'WebP: scrambled after the first 40 bytes',
    key: 'broken/scrambled.webp',
    make: async () => scrambled(await webpImage(200, 150), 40),
    probes: every(DAMAGED),
  },
  {
    name: 'animated WebP: the first 90%',
    key: 'broken/anim.webp',
    make: async () => truncated(await animatedWebp(4, 60, 40), 0.9),
    probes: every(DAMAGED),
  },
  { name: 'GIF: its 6-byte signature only', key: 'broken/signature.gif', make: text('GIF89a'), probes: every(DAMAGED) },
  // libvips decodes these without a word, the cut frame filled from the one before: 200 before the fix.
  {
    name: 'GIF: animated, cut inside its third frame',
    key: 'broken/cut.gif',
    make: async () => truncated(await animatedGif(4, 60, 40), 0.6),
    probes: every(DAMAGED),
  },
  {
    name: 'GIF: animated, all frames but no trailer',
    key: 'broken/no-trailer.gif',
    make: async () => (await animatedGif(4, 60, 40)).subarray(0, -1),
    probes: every(DAMAGED),
  },
  {
    name: 'GIF: signature, then HTML',
    key: 'broken/polyglot.gif',
    make: () => Buffer.concat([Buffer.from('GIF89a', 'latin1'), POLYGLOT_PAYLOAD]),
    probes: every(DAMAGED),
  },
  { name: 'AVIF: its ftyp box only', key: 'broken/ftyp.avif', make: avifFtypOnly, probes: every(DAMAGED) },
  {
    name: 'AVIF: the first half',
    key: 'broken/half.avif',
    make: async () => truncated(await avifImage(200, 150), 0.5),
    probes: every(DAMAGED),
  },
  {
    name: 'AVIF: scrambled after the ftyp box',
    key: 'broken/scrambled.avif',
    make: async () => scrambled(await avifImage(200, 150), 40),
    probes: every(DAMAGED),
  },
  // HEIC: refused by the header parser (heif.ts), or by libheif in the transform child.
  {
    name: 'HEIC: its ftyp, then random bytes, named .avif',
    key: 'broken/phone.avif',
    make: () => Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypheic\0\0\0\0mif1heic', 'latin1'), seededBytes(64)]),
    probes: every(DAMAGED),
  },
  {
    name: 'HEIC: a whole header and no image data',
    key: 'broken/empty.heic',
    make: () => heifSkeleton({ width: 64, height: 64 }),
    probes: every(DAMAGED),
  },
  {
    name: 'HEIC: a box that claims more than its file',
    key: 'broken/overrun.heic',
    make: () => Buffer.concat([heifSkeleton({ width: 64, height: 64 }), boxHeader(1 << 30, 'mdat')]),
    probes: every(DAMAGED),
  },
  {
    name: 'HEIC: a 64-bit box size of 2^62',
    key: 'broken/large.heic',
    make: () => Buffer.concat([heifSkeleton({ width: 64, height: 64 }), boxHeader(1, 'mdat'), Buffer.from([0x40, 0, 0, 0, 0, 0, 0, 0])]),
    probes: every(DAMAGED),
  },
  {
    name: 'HEIC: a grid whose own size is not its ispe',
    key: 'broken/grid.heic',
    make: () => heifSkeleton({ width: 64, height: 64, itemType: 'grid' }),
    probes: every(DAMAGED),
  },
  {
    name: 'HEIC: a primary item of a type with no decoder (a JPEG)',
    key: 'broken/jpeg-item.heic',
    make: () => heifSkeleton({ width: 64, height: 64, itemType: 'jpeg' }),
    probes: every(DAMAGED),
  },
  // Containers that understate what the decoder makes: refused from the header, before libheif is loaded.
  {
    name: "HEIC: 64 distinct tile items of an 8192x8192 grid sharing one tile's bytes",
    key: 'lie/shared.heic',
    make: () => heicGrid({ width: 8192, height: 8192, rows: 8, columns: 8, picture: fakeHevcPicture(1024, 1024), sharedData: true }),
    probes: every(DAMAGED),
  },
  {
    name: 'HEIC: an overlay (iovl) of a 16384x16384 picture',
    key: 'lie/overlay.heic',
    make: () =>
      heifOfItems(1, [
        {
          id: 1,
          type: 'iovl',
          properties: [ispe(64, 64)],
          data: Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 0, 64]),
          references: [{ type: 'dimg', to: [2] }],
        },
        {
          id: 2,
          type: 'hvc1',
          properties: [fakeHevcPicture(16384, 16384).hvcC, ispe(16384, 16384)],
          data: fakeHevcPicture(16384, 16384).data,
        },
      ]),
    probes: every(DAMAGED),
  },
  {
    name: 'HEIC: a 64x64 ispe over a picture its SPS codes at 16384x16384',
    key: 'lie/sps.heic',
    make: () =>
      heifOfItems(1, [
        { id: 1, type: 'hvc1', properties: [fakeHevcPicture(16384, 16384).hvcC, ispe(64, 64)], data: fakeHevcPicture(16384, 16384).data },
      ]),
    probes: every(DAMAGED),
  },
  // libvips refuses to load pages of different sizes together, and loads no page but the first alone.
  {
    name: 'TIFF: a 10x10 page, then a 9000x9000 page',
    key: 'lie/pages.tiff',
    make: () =>
      tiffPages([
        { width: 10, height: 10 },
        { width: 9000, height: 9000 },
      ]),
    probes: [
      { viewer: 'format=jpeg', canonical: 'format=jpeg', expected: OK, check: shaped({ format: 'jpeg', width: 10, height: 10 }) },
      { viewer: 'format=webp', canonical: 'format=webp', expected: DAMAGED },
      { viewer: 'fm=json', canonical: 'format=json', expected: OK, check: described({ width: 10, height: 10, frames: 2 }) },
    ],
  },
  // libwebp's demuxer refuses a frame outside the canvas.
  {
    name: 'WebP: an animation frame of 4000x4000 on a 16x16 canvas',
    key: 'lie/frame.webp',
    make: () => webpFrameBeyondCanvas(4000),
    probes: every(DAMAGED),
  },
  // libvips cannot even open these, which read as "unsupported image format": 415 before the fix.
  {
    name: 'TIFF: its magic, then garbage',
    key: 'broken/magic.tiff',
    make: () => Buffer.concat([Buffer.from('II*\0', 'latin1'), seededBytes(200)]),
    probes: every(DAMAGED),
  },
  {
    name: 'TIFF: the first half',
    key: 'broken/half.tiff',
    make: async () => truncated(await tiffImage(100, 80), 0.5),
    probes: every(DAMAGED),
  },

  // --- over the limits: 413, from the header alone
  {
    name: 'a PNG bomb: 30000x30000 (900 MP) in about 100 KB',
    maxBytes: 1_000_000,
    key: 'bomb/square.png',
    make: () => pngBomb(30_000, 30_000),
    probes: every(TOO_MANY_PIXELS),
  },
  {
    name: 'a PNG bomb of extreme aspect: 1000000x200',
    maxBytes: 1_000_000,
    key: 'bomb/line.png',
    make: () => pngBomb(1_000_000, 200),
    probes: every(TOO_MANY_PIXELS),
  },
  {
    name: 'a JPEG whose header claims 65000x65000',
    key: 'bomb/claims.jpg',
    make: () => jpegClaiming(65_000, 65_000),
    probes: every(TOO_MANY_PIXELS),
  },
  {
    name: 'a WebP whose header claims 16383x16383',
    key: 'bomb/claims.webp',
    make: () => webpClaiming(16_383, 16_383),
    probes: every(TOO_MANY_PIXELS),
  },
  {
    name: 'a HEIC whose ispe claims 60000x60000',
    key: 'bomb/claims.heic',
    make: () => heifSkeleton({ width: 60_000, height: 60_000 }),
    probes: every(TOO_MANY_PIXELS),
  },
  {
    name: 'a 64x64 HEIC grid over one 16384x16384 tile',
    key: 'bomb/tile.heic',
    make: () => heicGrid({ width: 64, height: 64, rows: 1, columns: 1, picture: fakeHevcPicture(16384, 16384) }),
    probes: every(TOO_MANY_PIXELS),
  },
  // libvips grows a GIF's canvas to its first frame, and its header says so.
  {
    name: 'a GIF whose 10x10 screen holds a 20000x20000 frame',
    key: 'bomb/frame.gif',
    make: () => gifWithFrame(10, 20_000),
    probes: every(TOO_MANY_PIXELS),
  },

  // --- hostile but servable: 200, bounded
  {
    // 96 MP, under the 100 MP limit: decoded, streamed, and still bounded in time.
    name: 'a PNG bomb just under the pixel limit: 60000x1600 1-bit in 12 KB',
    maxBytes: 1_000_000,
    key: 'bomb/under.png',
    make: () => pngBomb(60_000, 1_600),
    probes: [{ viewer: 'w=100', canonical: 'width=100', expected: OK, check: shaped({ format: 'jpeg', width: 100, height: 3 }) }],
  },
  {
    name: 'a JPEG with an HTML payload after its end: the payload never reaches the viewer',
    key: 'polyglot/appended.jpg',
    make: async () => Buffer.concat([await gradientJpeg(40, 30), POLYGLOT_PAYLOAD]),
    probes: [
      { viewer: '', canonical: 'original', expected: OK, check: async (body) => expect(body.includes('<script')).toBe(false) },
      { viewer: 'format=png', canonical: 'format=png', expected: OK, check: async (body) => expect(body.includes('<script')).toBe(false) },
    ],
  },
  {
    name: `a GIF of 3000 frames: served with MAX_FRAMES (${MAX_FRAMES}), fast, in bounded memory`,
    maxPeakGrowthMb: 256,
    key: 'anim/3000.gif',
    make: () => animatedGif(3000, 32, 32),
    probes: [
      {
        viewer: '',
        canonical: 'original',
        expected: OK,
        check: async (body) => {
          expect(await shape(body)).toEqual({ format: 'gif', width: 32, height: 32, frames: MAX_FRAMES });
          // The frames kept are the first ones, in order.
          expect(isNear(await pixelAt(body, 16, 16, { page: MAX_FRAMES - 1 }), animationFrameColour(MAX_FRAMES - 1), 20)).toBe(true);
        },
      },
      { viewer: 'w=16', canonical: 'width=16', expected: OK, check: shaped({ format: 'gif', width: 16, height: 16, frames: MAX_FRAMES }) },
      { viewer: 'format=webp', canonical: 'format=webp', expected: OK, check: shaped({ format: 'webp', width: 32, frames: MAX_FRAMES }) },
      {
        viewer: 'fm=json',
        canonical: 'format=json',
        expected: OK,
        check: described({ format: 'gif', width: 32, height: 32, frames: 3000 }),
      },
    ],
  },
  {
    name: 'a GIF of 5000 one-pixel frames on a 100x100 screen (100 KB)',
    maxPeakGrowthMb: 256,
    key: 'anim/pixels.gif',
    make: () => gifOfPixelFrames(5000, 100, 100),
    probes: [
      { viewer: '', canonical: 'original', expected: OK, check: shaped({ format: 'gif', width: 100, height: 100, frames: MAX_FRAMES }) },
      { viewer: 'fm=json', canonical: 'format=json', expected: OK, check: described({ frames: 5000 }) },
    ],
  },
  {
    name: 'a 10000x1 source',
    key: 'aspect/wide.png',
    make: () =>
      sharp({ create: { width: 10_000, height: 1, channels: 3, background: '#336699' } })
        .png()
        .toBuffer(),
    probes: [
      { viewer: '', canonical: 'original', expected: OK, check: shaped({ width: 8192, height: 1 }) },
      { viewer: 'w=1', canonical: 'width=1', expected: OK, check: shaped({ width: 1, height: 1 }) },
      { viewer: 'h=8192&enlarge=1', canonical: 'height=8192,enlarge=1', expected: OK, check: shaped({ width: 8192, height: 1 }) },
      {
        viewer: 'w=8192&h=1&pos=entropy&enlarge=1',
        canonical: 'width=8192,height=1,position=entropy,enlarge=1',
        expected: OK,
        check: shaped({ width: 8192, height: 1 }),
      },
      {
        viewer: 'w=2000&h=2000&fit=contain&enlarge=1',
        canonical: 'width=2000,height=2000,fit=contain,enlarge=1',
        expected: OK,
        check: shaped({ format: 'jpeg', width: 2000, height: 2000 }),
      },
      {
        viewer: 'w=8192&h=8192&fit=outside&enlarge=1',
        canonical: 'width=8192,height=8192,fit=outside,enlarge=1',
        expected: OK,
        check: shaped({ width: 8192, height: 1 }),
      },
      // Enlarging cover crops that would scale the whole source past libvips' 10M-pixel side (422 before 478bc80).
      {
        viewer: 'w=1&h=8192&enlarge=1',
        canonical: 'width=1,height=8192,enlarge=1',
        expected: OK,
        check: shaped({ width: 1, height: 8192 }),
      },
      {
        viewer: 'w=2000&h=2000&enlarge=1&pos=right',
        canonical: 'width=2000,height=2000,position=right,enlarge=1',
        expected: OK,
        check: shaped({ width: 2000, height: 2000 }),
      },
      {
        viewer: 'rotate=90&format=avif',
        canonical: 'rotate=90,format=avif',
        expected: OK,
        check: shaped({ format: 'heif', width: 1, height: 8192 }),
      },
      { viewer: 'fm=json', canonical: 'format=json', expected: OK, check: described({ width: 10_000, height: 1 }) },
    ],
  },
  {
    name: 'a 1x10000 source',
    key: 'aspect/tall.png',
    make: () =>
      sharp({ create: { width: 1, height: 10_000, channels: 3, background: '#336699' } })
        .png()
        .toBuffer(),
    probes: [
      { viewer: '', canonical: 'original', expected: OK, check: shaped({ width: 1, height: 8192 }) },
      { viewer: 'h=1', canonical: 'height=1', expected: OK, check: shaped({ width: 1, height: 1 }) },
      { viewer: 'w=8192&enlarge=1', canonical: 'width=8192,enlarge=1', expected: OK, check: shaped({ width: 1, height: 8192 }) },
      {
        viewer: 'w=1&h=8192&pos=attention&enlarge=1',
        canonical: 'width=1,height=8192,position=attention,enlarge=1',
        expected: OK,
        check: shaped({ width: 1, height: 8192 }),
      },
      {
        viewer: 'w=8192&h=1&pos=attention&enlarge=1',
        canonical: 'width=8192,height=1,position=attention,enlarge=1',
        expected: OK,
        check: shaped({ width: 8192, height: 1 }),
      },
      {
        viewer: 'w=3&sharpen=10&blur=100',
        canonical: 'width=3,blur=100,sharpen=10',
        expected: OK,
        check: shaped({ width: 1, height: 8192 }),
      },
      { viewer: 'format=gif', canonical: 'format=gif', expected: OK, check: shaped({ format: 'gif', width: 1, height: 8192 }) },
    ],
  },
  {
    name: 'extreme aspect requests of a normal 80x60 source',
    key: 'aspect/normal.jpg',
    make: okJpeg,
    probes: [
      {
        viewer: 'w=8192&h=1&enlarge=1',
        canonical: 'width=8192,height=1,enlarge=1',
        expected: OK,
        check: shaped({ width: 8192, height: 1 }),
      },
      {
        viewer: 'w=1&h=8192&enlarge=1&format=avif',
        canonical: 'width=1,height=8192,enlarge=1,format=avif',
        expected: OK,
        check: shaped({ width: 1, height: 8192 }),
      },
      {
        viewer: 'w=8192&h=1&fit=fill&enlarge=1',
        canonical: 'width=8192,height=1,fit=fill,enlarge=1',
        expected: OK,
        check: shaped({ width: 8192, height: 1 }),
      },
      // Never enlarged: the box is cut to what the source has.
      { viewer: 'w=1&h=8192', canonical: 'width=1,height=8192', expected: OK, check: shaped({ width: 1, height: 60 }) },
    ],
  },
];

// ------------------------------------------------------------------ the run

let origin: TestOrigin;
let emulator: HostileEmulator;
let bodies: Record<string, Buffer>;
/** Cache-bucket keys of the emulator's successful requests. */
const succeeded = new Set<string>();

beforeAll(async () => {
  bodies = Object.fromEntries(await Promise.all(ROWS.map(async (row) => [row.key, await row.make()] as const)));
  origin = await createTestOrigin('hostile sources');
  await Promise.all([
    origin.putSource(OK_KEY, await okJpeg(), 'image/jpeg'),
    ...Object.entries(bodies).map(([key, body]) => origin.putSource(key, body, 'image/jpeg')),
  ]);
  emulator = await startHostileEmulator('hostile sources', bodies);
}, 60_000);

describe('hostile sources: the contract answer through the handler and through the emulator', () => {
  it.each(ROWS.map((row) => [row.name, row] as const))('%s', async (_name, row) => {
    if (row.maxBytes) expect(bodies[row.key]!.length).toBeLessThan(row.maxBytes);
    const peakBefore = process.resourceUsage().maxRSS;
    for (const probe of row.probes) {
      // The two layers have their own buckets: ask both at once.
      await Promise.all([
        (async () => {
          const start = performance.now();
          const response = await throughHandler(origin, `${encodeKeyPath(row.key)}/${probe.canonical}`, probe.expected);
          // Every one of these is answered from the header or a bounded decode.
          expect(performance.now() - start, probe.canonical).toBeLessThan(5_000);
          if (probe.check) await probe.check(response.body);
        })(),
        (async () => {
          const path = encodeKeyPath(row.key) + (probe.viewer ? `?${probe.viewer}` : '');
          const answer = await throughEmulator(emulator, path, { ...probe.expected, at: 'origin' });
          if (probe.check) await probe.check(answer.body);
          if (probe.expected.status === 200) succeeded.add(`${row.key}/${probe.canonical}`);
        })(),
      ]);
    }
    // maxRSS is a peak in KB: an upper bound on what serving this row added (handler and emulator run here).
    if (row.maxPeakGrowthMb) expect((process.resourceUsage().maxRSS - peakBefore) / 1024).toBeLessThan(row.maxPeakGrowthMb);
  });
});

describe('after the barrage', () => {
  it('the handler still serves a normal request, and logged nothing unexpected', async () => {
    const response = await origin.request('/ok/fine.jpg/width=41');
    expect(response.status).toBe(200);
    expect((await shape(response.body)).width).toBe(41);
    expect(origin.logs.filter((entry) => entry.event === 'unexpected')).toEqual([]);
  });

  it('the emulator answers /_health and a normal image request; its cache bucket holds only variants of successes', async () => {
    await expectEmulatorStillServing(emulator, succeeded);
  });
});
