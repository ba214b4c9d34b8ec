// The benchmark's operations, and two ways to do each besides the handler:
//  - bare: the least sharp code that makes the same variant from the same
//    bytes (the floor). It is told the source's format and alpha up front, so
//    it reads no metadata; its encoder settings mirror lambda/origin/image/output.ts,
//    and the bench checks that bare and handler outputs have the same size.
//  - naive: what the AWS image-optimization sample does (sharp with
//    failOn 'none' and animated: true, a metadata() call, resize, rotate when
//    EXIF says so, toFormat with sharp's default encoder settings, toBuffer).

import sharp, { type Sharp } from 'sharp';
import { rgbaToThumbHash } from 'thumbhash';
import { canonicalRequest, DEFAULT_GRAMMAR_OPTIONS, DEFAULT_QUALITY, splitQuery, type Ops } from '../../lambda/grammar';

export type OpName = 'thumb' | 'op1' | 'op2' | 'avif' | 'jpeg' | 'json' | 'gif';

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
}

export const OPS: readonly OpSpec[] = [
  { name: 'thumb', label: 'thumbnail 200x200 cover (source family)', query: 'w=200&h=200&fit=cover', width: 200, height: 200 },
  { name: 'op1', label: 'op1: 800 w WebP q80', query: 'w=800&format=webp', width: 800, format: 'webp' },
  { name: 'op2', label: 'op2: 400x400 cover JPEG q80', query: 'w=400&h=400&format=jpeg', width: 400, height: 400, format: 'jpeg' },
  { name: 'avif', label: '1600 w AVIF', query: 'w=1600&format=avif', width: 1600, format: 'avif' },
  { name: 'jpeg', label: '1200 w JPEG', query: 'w=1200&format=jpeg', width: 1200, format: 'jpeg' },
  { name: 'json', label: 'format=json', query: 'format=json', format: 'json' },
  { name: 'gif', label: 'animated GIF 240 w', query: 'w=240', width: 240, animated: true },
];

/** The canonical ops the edge makes of an op's query (no Accept header). */
export function canonicalOpsOf(op: OpSpec, key: string): Ops {
  return canonicalRequest('/' + key, splitQuery(op.query), DEFAULT_GRAMMAR_OPTIONS, { accept: '' }).ops;
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

/** The handler's encoder settings (lambda/origin/image/output.ts), written out again. */
export const BARE_ENCODERS: Record<Family, (image: Sharp) => Sharp> = {
  jpeg: (image) => image.jpeg({ quality: DEFAULT_QUALITY.jpeg, progressive: true }),
  webp: (image) => image.webp({ quality: DEFAULT_QUALITY.webp, effort: 4 }),
  avif: (image) => image.avif({ quality: DEFAULT_QUALITY.avif, effort: 2, chromaSubsampling: '4:2:0' }),
  png: (image) => image.png({ compressionLevel: 6 }),
  gif: (image) => image.gif({ effort: 6 }),
};

/** The placeholders of format=json: a 16 px WebP, a ThumbHash and the dominant colour, from one 100 px copy. */
async function placeholders(image: Sharp) {
  const small = await image.rotate().resize(100, 100, { fit: 'inside' }).toColourspace('srgb').ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const raw = { raw: { width: small.info.width, height: small.info.height, channels: 4 as const } };
  const [webp, stats] = await Promise.all([
    sharp(small.data, raw).resize(16, 16, { fit: 'inside' }).blur(0.5).webp({ quality: 40, alphaQuality: 40 }).toBuffer(),
    sharp(small.data, raw).stats(),
  ]);
  return { webp: webp.toString('base64'), thumbhash: Buffer.from(rgbaToThumbHash(small.info.width, small.info.height, small.data)).toString('base64'), dominant: stats.dominant };
}

/** Bare sharp: the same variant as the handler, with nothing around it. */
export async function bare(op: OpSpec, bytes: Buffer, facts: SourceFacts): Promise<Buffer> {
  if (op.format === 'json') {
    const image = sharp(bytes);
    const meta = await image.metadata();
    return Buffer.from(JSON.stringify({ width: meta.autoOrient.width, height: meta.autoOrient.height, ...(await placeholders(image)) }));
  }
  const family = familyOf(op, facts);
  const image = sharp(bytes, facts.pages > 1 && family !== 'jpeg' && family !== 'png' ? { pages: -1 } : {});
  image.rotate();
  if (family === 'jpeg' && facts.hasAlpha) image.flatten({ background: '#ffffff' });
  if (op.width !== undefined || op.height !== undefined) {
    image.resize({ width: op.width, height: op.height, fit: 'cover', withoutEnlargement: true });
  }
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

/** The AWS sample's pipeline. null: the sample has no such operation (format=json). */
export async function naive(op: OpSpec, bytes: Uint8Array): Promise<{ body: Buffer; contentType: string } | null> {
  if (op.format === 'json') return null;
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
