// The benchmark's operations, and two ways to do each besides the handler:
//  - bare: the least sharp code that makes the same variant from the same
//    bytes (the floor). It is told the source's format and alpha up front, so
//    it reads no metadata; its encoder settings mirror lambda/origin/image/encoders.ts,
//    and the bench checks that bare and handler outputs have the same size.
//  - naive: what the AWS image-optimization sample does (sharp with
//    failOn 'none' and animated: true, a metadata() call, resize, rotate when
//    EXIF says so, toFormat with sharp's default encoder settings, toBuffer).
//    It has no format=json, no fit (it always covers the box) and no watermark.

import { readFile } from 'node:fs/promises';
import sharp, { type OverlayOptions, type Sharp } from 'sharp';
import { rgbaToThumbHash } from 'thumbhash';
import { canonicalRequest, DEFAULT_GRAMMAR_OPTIONS, DEFAULT_QUALITY, splitQuery, type Ops } from '../../lambda/grammar';
import { detectFaces, FACE_SEARCH_SIDE, faceSearchCopy } from '../../lambda/origin/image/faces';
import type { TransformOptions } from '../../lambda/origin/image/transform';
import { checkedPlacement, watermarkVersion, type WatermarkDefinition } from '../../lambda/origin/watermarks';

export type OpName = 'thumb' | 'op1' | 'op2' | 'avif' | 'jpeg' | 'json' | 'gif' | 'inside' | 'composed';

export interface OpSpec {
  name: OpName;
  label: string;
  /** The viewer query (sent without an Accept header, so no format is negotiated). */
  query: string;
  width?: number;
  height?: number;
  /** Explicit output format; absent: the source's family (JPEG, PNG with alpha, GIF when animated). */
  format?: 'webp' | 'jpeg' | 'avif' | 'json';
  /** Runs on the animated source only (the other ops run on the photos). */
  animated?: boolean;
  /** sharp's fit into the box; absent: cover, the handler's default. */
  fit?: 'inside' | 'contain';
  /** The padding's colour (hex) of fit=pad, which is contain. */
  background?: string;
  /** Draws the bench's watermark (WATERMARK_NAME). */
  watermark?: boolean;
  /** The same op without its composition: the report gives this op's cost against it. */
  baseline?: OpName;
}

/** The composed op's watermark: the playground's logo, placed as the playground places it. */
export const WATERMARK_NAME = 'logo';
export const WATERMARK_PLACEMENT = checkedPlacement(WATERMARK_NAME, { opacity: 0.85 });

export const OPS: readonly OpSpec[] = [
  { name: 'thumb', label: 'thumbnail 200x200 cover (source family)', query: 'w=200&h=200&fit=cover', width: 200, height: 200 },
  { name: 'op1', label: 'op1: 800 w WebP q80', query: 'w=800&format=webp', width: 800, format: 'webp' },
  { name: 'op2', label: 'op2: 400x400 cover JPEG q80', query: 'w=400&h=400&format=jpeg', width: 400, height: 400, format: 'jpeg' },
  { name: 'avif', label: '1600 w AVIF', query: 'w=1600&format=avif', width: 1600, format: 'avif' },
  { name: 'jpeg', label: '1200 w JPEG', query: 'w=1200&format=jpeg', width: 1200, format: 'jpeg' },
  { name: 'json', label: 'format=json', query: 'format=json', format: 'json' },
  { name: 'gif', label: 'animated GIF 240 w', query: 'w=240', width: 240, animated: true },
  { name: 'inside', label: '800x800 inside (source family)', query: 'w=800&h=800&fit=inside', width: 800, height: 800, fit: 'inside' },
  {
    name: 'composed',
    label: 'composed: 800x800 pad + watermark (source family)',
    query: `w=800&h=800&fit=pad&background=f4f1ea&wm=${WATERMARK_NAME}`,
    width: 800,
    height: 800,
    fit: 'contain',
    background: 'f4f1ea',
    watermark: true,
    baseline: 'inside',
  },
];

/** The AWS sample's URL API covers the op (see naive). */
export const sampleHas = (op: OpSpec): op is OpSpec & { format?: Exclude<OpSpec['format'], 'json'> } =>
  op.format !== 'json' && op.fit === undefined && !op.watermark;

/** The watermark as the bench deploys it: its definition (for the origin and, by version, the edge) and its bytes. */
export interface BenchWatermark {
  definition: WatermarkDefinition;
  bytes: Buffer;
}

/** The watermark in `file` (a PNG the bench renders at start, never a file of the repository). */
export async function readBenchWatermark(file: string): Promise<BenchWatermark> {
  const bytes = await readFile(file);
  return { bytes, definition: { ...WATERMARK_PLACEMENT, file, version: watermarkVersion(bytes, WATERMARK_PLACEMENT) } };
}

/** The canonical ops the edge makes of an op's query (no Accept header), with the watermark's version when it names one. */
export function canonicalOpsOf(op: OpSpec, key: string, watermark?: BenchWatermark): Ops {
  const watermarks: Record<string, string> = watermark ? { [WATERMARK_NAME]: watermark.definition.version } : {};
  return canonicalRequest('/' + key, splitQuery(op.query), { ...DEFAULT_GRAMMAR_OPTIONS, watermarks }, { accept: '' }).ops;
}

/** What the handler gives transform() for canonical `ops`: the watermark they name (canonicalOpsOf had it). */
export function transformOptions(ops: Ops, watermark?: BenchWatermark): TransformOptions {
  return ops.watermark === undefined || !watermark
    ? {}
    : { watermarks: { watermark: { bytes: watermark.bytes, placement: WATERMARK_PLACEMENT } } };
}

export interface SourceFacts {
  format: string;
  hasAlpha: boolean;
  pages: number;
}

type Family = 'jpeg' | 'png' | 'webp' | 'avif' | 'gif';

function familyOf(op: OpSpec, facts: SourceFacts): Family {
  if (op.format && op.format !== 'json') return op.format;
  if (facts.pages > 1) return 'gif';
  return facts.hasAlpha ? 'png' : 'jpeg';
}

/** The handler's encoder settings (lambda/origin/image/encoders.ts), written out again. */
export const BARE_ENCODERS: Record<Family, (image: Sharp) => Sharp> = {
  jpeg: (image) => image.jpeg({ quality: DEFAULT_QUALITY.jpeg, progressive: true, quantisationTable: 3 }),
  webp: (image) => image.webp({ quality: DEFAULT_QUALITY.webp, effort: 4 }),
  avif: (image) => image.avif({ quality: DEFAULT_QUALITY.avif, effort: 2, chromaSubsampling: '4:2:0' }),
  png: (image) => image.png({ compressionLevel: 6 }),
  gif: (image) => image.gif({ effort: 6 }),
};

/** The placeholders of format=json: a 16 px WebP, a ThumbHash and the dominant colour, from one 100 px copy. */
async function placeholders(image: Sharp) {
  const small = await image
    .rotate()
    .resize(100, 100, { fit: 'inside' })
    .toColourspace('srgb')
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const raw = { raw: { width: small.info.width, height: small.info.height, channels: 4 as const } };
  const [webp, stats] = await Promise.all([
    sharp(small.data, raw).resize(16, 16, { fit: 'inside' }).blur(0.5).webp({ quality: 40, alphaQuality: 40 }).toBuffer(),
    sharp(small.data, raw).stats(),
  ]);
  return {
    webp: webp.toString('base64'),
    thumbhash: Buffer.from(rgbaToThumbHash(small.info.width, small.info.height, small.data)).toString('base64'),
    dominant: stats.dominant,
  };
}

/**
 * The watermark where the handler draws it (lambda/origin/image/steps/composition.ts) on a
 * box of this size: bottom-right inside the margin, its alpha times the opacity.
 */
async function bareOverlay(watermark: BenchWatermark, width: number, height: number): Promise<OverlayOptions> {
  const { margin: share, size, opacity } = WATERMARK_PLACEMENT;
  const margin = Math.round(share * Math.min(width, height));
  const { data, info } = await sharp(watermark.bytes)
    .resize({ width: Math.round(size * width), height: height - 2 * margin, fit: 'inside' })
    .ensureAlpha()
    .linear([1, 1, 1, opacity], [0, 0, 0, 0])
    .raw()
    .toBuffer({ resolveWithObject: true });
  const raw = { width: info.width, height: info.height, channels: info.channels };
  return { input: data, raw, left: width - margin - info.width, top: height - margin - info.height };
}

/** Bare sharp: the same variant as the handler, with nothing around it (one pass: sharp composites after the resize). */
export async function bare(op: OpSpec, bytes: Buffer, facts: SourceFacts, watermark?: BenchWatermark): Promise<Buffer> {
  if (op.format === 'json') {
    const image = sharp(bytes);
    const meta = await image.metadata();
    // One copy of the first frame for the face search and the previews. sharp has no face
    // detector: the floor runs the handler's model (onnxruntime) on the same copy.
    const copy = await image
      .rotate()
      .resize({ width: FACE_SEARCH_SIDE, height: FACE_SEARCH_SIDE, fit: 'inside', withoutEnlargement: true })
      .toColourspace('srgb')
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    const decoded = () => sharp(copy.data, { raw: { width: copy.info.width, height: copy.info.height, channels: 4 } });
    const faces = await detectFaces(await faceSearchCopy(decoded()));
    const { width, height } = meta.autoOrient;
    return Buffer.from(JSON.stringify({ width, height, ...(await placeholders(decoded())), faces }));
  }
  const family = familyOf(op, facts);
  const image = sharp(bytes, facts.pages > 1 && family !== 'jpeg' && family !== 'png' ? { pages: -1 } : {});
  image.rotate();
  if (family === 'jpeg' && facts.hasAlpha) image.flatten({ background: '#ffffff' });
  if (op.width !== undefined || op.height !== undefined) {
    image.resize({
      width: op.width,
      height: op.height,
      fit: op.fit ?? 'cover',
      withoutEnlargement: true,
      ...(op.background ? { background: `#${op.background}` } : {}),
    });
  }
  if (op.watermark) image.composite([await bareOverlay(watermark!, op.width!, op.height!)]);
  return BARE_ENCODERS[family](image).toBuffer();
}

/** The resized image before encoding: the reference the quality metric compares against. */
export async function reference(op: OpSpec, bytes: Buffer, facts: SourceFacts) {
  // An animation: all frames, stacked (info.pageHeight says where each starts).
  const image = sharp(bytes, facts.pages > 1 ? { pages: -1 } : {}).rotate();
  if (facts.hasAlpha) image.flatten({ background: '#ffffff' });
  if (op.width !== undefined || op.height !== undefined) {
    image.resize({ width: op.width, height: op.height, fit: 'cover', withoutEnlargement: true });
  }
  return image.toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
}

/** The AWS sample's pipeline. null: the sample has no such operation (sampleHas). */
export async function naive(op: OpSpec, bytes: Uint8Array): Promise<{ body: Buffer; contentType: string } | null> {
  if (!sampleHas(op)) return null;
  let image = sharp(bytes, { failOn: 'none', animated: true });
  const metadata = await image.metadata();
  const resize: { width?: number; height?: number } = {};
  if (op.width) resize.width = op.width;
  if (op.height) resize.height = op.height;
  image = image.resize(resize);
  if (metadata.orientation) image = image.rotate();
  // Its URL rewrite turns format=auto into avif/webp/jpeg by Accept; here, as for the
  // handler with no Accept, the source's own family when no format is named.
  const format = op.format ?? ((metadata.pages ?? 1) > 1 ? 'gif' : metadata.hasAlpha ? 'png' : 'jpeg');
  image = image.toFormat(format);
  const body = await image.toBuffer();
  return { body, contentType: `image/${format}` };
}
