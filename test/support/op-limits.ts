// Each op and encoder at its limit: a request per step of the pipeline
// (lambda/origin/image/steps/) and per encoder, the sources they run on,
// and the largest square output the model accepts for a function's memory and
// time budget. test/hostile/op-prices.test.ts sends them through the handler;
// `npx tsx scripts/bench/op-prices.ts --largest` prints the limits for the
// docs.

import sharp from 'sharp';
import {
  canonicalRequest,
  DEFAULT_GRAMMAR_OPTIONS,
  inSlot,
  OVERLAY_SLOTS,
  splitQuery,
  type GrammarOptions,
  type Ops,
} from '../../lambda/grammar';
import { DEFAULT_LIMITS, type Limits } from '../../lambda/origin/config';
import {
  afterSearch,
  budgetFor,
  chooseFormat,
  describeWork,
  FACE_MODEL,
  SUBJECT_MODEL,
  withModels,
} from '../../lambda/origin/image/budget';
import { wantsFaces, wantsSubject } from '../../lambda/origin/image/findings';
import { framesToLoad, type SourceInfo } from '../../lambda/origin/image/input';
import { planOutput } from '../../lambda/origin/image/output';
import { alphaPng, noiseImage } from './images';
import { ultraHdrJpeg } from './ultra-hdr';

/**
 * Noise at the output's size (the encoders' worst case), turned by EXIF, CMYK, a drawing with alpha, 64x64 to enlarge,
 * animation frames, or an Ultra HDR JPEG of noise whose gain map is as large as its primary.
 */
export type SourceKind = 'noise' | 'cmyk' | 'alpha' | 'tiny' | 'turned' | 'frames' | 'hdr';

export interface OpCase {
  /** The step (its name in steps/) or the encoder driven to its limit. */
  name: string;
  /** The viewer query, with SIDE for the output's side. */
  query: string;
  source: SourceKind;
  /** The same request without the op, to measure what the op adds; absent when the op is most of the work. */
  base?: { query: string; source?: SourceKind };
  /** Why the op's own price is nil. */
  free?: string;
  /** Past its limit the request is served without the op, rather than refused: why. */
  servedWithout?: string;
  /** Why the op is not driven to its limit here, and where it is. */
  notDriven?: string;
}

/** A 64x64 source enlarged: the output's pixels are all the op's, the decode costs nothing. */
const enlarged = (ops: string) => `width=SIDE&height=SIDE&enlarge=true&${ops}`;

/** Frames of an animation case. */
const FRAMES = 8;

/** The steps of the numbered overlay slots: `watermark2`, `text2`... */
const NUMBERED_SLOT_STEPS = OVERLAY_SLOTS.slice(1).flatMap((slot) => [inSlot('watermark', slot), inSlot('text', slot)]);

export const OP_CASES: OpCase[] = [
  { name: 'orient', query: 'format=jpeg', source: 'turned', base: { query: 'format=jpeg', source: 'noise' } },
  { name: 'rotate', query: 'rotate=90&format=jpeg', source: 'noise', base: { query: 'format=jpeg' } },
  { name: 'mirror', query: 'flip=true&flop=true&format=jpeg', source: 'noise', base: { query: 'format=jpeg' } },
  { name: 'trim', query: 'trim=0&format=jpeg', source: 'noise', base: { query: 'format=jpeg' } },
  {
    name: 'crop',
    query: 'crop=0,0,0.5,1&format=jpeg',
    source: 'noise',
    free: 'its region is cut by resize; the decode it keeps at full size is the decode’s',
  },
  { name: 'flatten', query: 'background=ffffff&format=png', source: 'alpha', base: { query: 'format=png' } },
  { name: 'resize', query: enlarged('format=jpeg'), source: 'tiny' },
  {
    name: 'fill',
    query: 'width=SIDE&height=SIDE&fit=contain&fill=blur&format=jpeg',
    source: 'tiny',
    base: { query: 'width=SIDE&height=SIDE&fit=contain&format=jpeg' },
  },
  { name: 'blur', query: enlarged('blur=100&format=jpeg'), source: 'tiny', base: { query: enlarged('format=jpeg') } },
  { name: 'sharpen', query: enlarged('sharpen=10&format=jpeg'), source: 'tiny', base: { query: enlarged('format=jpeg') } },
  {
    name: 'blur and sharpen',
    query: enlarged('blur=100&sharpen=10&format=jpeg'),
    source: 'tiny',
    base: { query: enlarged('format=jpeg') },
  },
  { name: 'colour', query: 'grayscale=true&format=jpeg', source: 'cmyk', base: { query: 'format=jpeg', source: 'noise' } },
  {
    name: 'adjust',
    query: enlarged('brightness=10&contrast=10&saturation=10&gamma=0.34&format=jpeg'),
    source: 'tiny',
    base: { query: enlarged('format=jpeg') },
  },
  {
    name: 'adjust under a border',
    query: enlarged('brightness=10&contrast=10&saturation=10&gamma=0.34&border=1&format=jpeg'),
    source: 'tiny',
    base: { query: enlarged('border=1&format=jpeg') },
  },
  { name: 'watermark', query: enlarged('watermark=mark&format=jpeg'), source: 'tiny', base: { query: enlarged('format=jpeg') } },
  {
    name: 'segment',
    query: 'segment=foreground&format=png',
    source: 'noise',
    base: { query: 'format=png' },
    notDriven: "its subject model's search does not fit this origin's budget at any side; npm run bounds drives it (its subject cases)",
  },
  {
    // 200 CJK characters at the largest size the render's area allows, with the largest shadow (lambda/origin/image/text/render.ts).
    name: 'text',
    query: enlarged(`text=${encodeURIComponent('鬱'.repeat(200))}&text-size=105&text-shadow=64&format=jpeg`),
    source: 'tiny',
    base: { query: enlarged('format=jpeg') },
  },
  // The numbered slots' steps are the first slot's, priced alike: one case draws a watermark and a text in every slot.
  ...NUMBERED_SLOT_STEPS.map((name) => ({
    name,
    query: enlarged(`${name}=${name.startsWith('text') ? 'Slot' : 'mark'}&format=jpeg`),
    source: 'tiny' as const,
    notDriven: "the first slot's step, priced alike: 'every overlay slot' drives it",
  })),
  {
    name: 'every overlay slot',
    query: enlarged(
      OVERLAY_SLOTS.map((slot) => `watermark${slot}=mark&text${slot}=${encodeURIComponent('鬱'.repeat(20))}&text${slot}-size=60`).join(
        '&',
      ) + '&format=jpeg',
    ),
    source: 'tiny',
    base: { query: enlarged('format=jpeg') },
  },
  { name: 'border', query: 'border=64,ff0000&format=jpeg', source: 'noise', base: { query: 'format=jpeg' } },
  { name: 'output', query: 'format=jpeg', source: 'noise' },
  { name: 'metadata', query: 'metadata=keep&format=jpeg', source: 'noise', base: { query: 'format=jpeg' } },
  {
    name: 'gain map',
    query: 'format=jpeg',
    source: 'hdr',
    base: { query: 'hdr=drop&format=jpeg' },
    servedWithout: 'a gain map whose keeping does not fit is dropped, and the SDR image served',
  },
  { name: 'max_bytes', query: 'max_bytes=1000000&format=webp', source: 'noise', base: { query: 'format=webp' } },
  { name: 'png encode', query: 'format=png', source: 'noise' },
  { name: 'webp encode', query: 'format=webp', source: 'noise' },
  { name: 'avif encode', query: 'format=avif', source: 'noise' },
  { name: 'avif encode at quality 90', query: 'quality=90&format=avif', source: 'noise', base: { query: 'format=avif' } },
  { name: 'quality=auto', query: 'quality=auto&format=avif', source: 'noise', base: { query: 'format=avif' } },
  { name: 'animation frames', query: 'format=webp', source: 'frames' },
];

/** The source of `kind` whose output is `side` pixels square. */
export async function makeSource(kind: SourceKind, side: number): Promise<Buffer> {
  switch (kind) {
    case 'noise':
      return noiseImage(side, side, 'jpeg');
    case 'turned':
      return sharp(await noiseImage(side, side, 'jpeg'))
        .withMetadata({ orientation: 6 })
        .jpeg({ quality: 90 })
        .toBuffer();
    case 'cmyk':
      return sharp(await noiseImage(side, side, 'jpeg'))
        .toColourspace('cmyk')
        .jpeg({ quality: 90 })
        .toBuffer();
    case 'alpha':
      // Flattening costs the same on any pixels; a drawing keeps the largest side within MAX_SOURCE_BYTES.
      return alphaPng(side, side);
    case 'tiny':
      return noiseImage(64, 64, 'jpeg');
    case 'hdr':
      return ultraHdrJpeg(side, side, { noise: true, scale: 1 });
    case 'frames': {
      const frames = await sharp(await noiseImage(side, side * FRAMES, 'png'))
        .raw()
        .toBuffer();
      // Few colours keep the palette search quick; the frames stay noise to the encoder.
      return sharp(frames, { raw: { width: side, height: side * FRAMES, channels: 3, pageHeight: side } })
        .gif({ effort: 1, colours: 4, dither: 0 })
        .toBuffer();
    }
  }
}

/** What the header of that source says, as input.ts reads it (its bytes at their uncompressed most, within the source limit). */
export function headerOf(kind: SourceKind, side: number): SourceInfo {
  const [width, height] = kind === 'tiny' ? [64, 64] : [side, side];
  // libvips reads every GIF as RGBA.
  const channels = kind === 'cmyk' || kind === 'alpha' || kind === 'frames' ? 4 : 3;
  return {
    format: kind === 'alpha' ? 'png' : kind === 'frames' ? 'gif' : 'jpeg',
    width,
    height,
    frames: kind === 'frames' ? FRAMES : 1,
    hasAlpha: kind === 'alpha' || kind === 'frames',
    // An Ultra HDR JPEG of noise (makeSource's) is 1.19 bytes a pixel, its map included: the model prices copies of the file.
    bytes: Math.min(kind === 'hdr' ? Math.ceil(width * height * 1.2) : width * height * channels, DEFAULT_LIMITS.maxSourceBytes),
    channels,
    depth: 'uchar',
    orientation: kind === 'turned' ? 6 : 1,
    progressive: false,
    // Its map's JPEG: grey noise, 0.53 bytes a pixel as ultraHdrJpeg writes it, counted a little over.
    ...(kind === 'hdr' ? { gainMap: { width, height, scale: 1 }, gainMapBytes: Math.ceil(width * height * 0.55) } : {}),
  };
}

/** The grammar of the origin the cases run on: its one watermark, `mark`, at the version its file has. */
export const opGrammar = (markVersion: string): GrammarOptions => ({ ...DEFAULT_GRAMMAR_OPTIONS, watermarks: { mark: markVersion } });

/** The canonical ops of `query` at `side`. */
export const opsOf = (query: string, side: number, grammar: GrammarOptions) =>
  canonicalRequest('k', splitQuery(query.replaceAll('SIDE', String(side))), grammar, {}).ops as Ops;

/** The bytes the handler holds for a request at a side: the source's, and a watermark's. */
export type RequestBytes = (side: number) => number;

/** Whether the model accepts the case at `side` for a function of `limits`. */
function accepted({ source, query }: OpCase, side: number, limits: Limits, requestBytes?: RequestBytes): boolean {
  const info = headerOf(source, side);
  const ops = opsOf(query, side, opGrammar('any'));
  const plan = planOutput(ops, info);
  const frames = plan.animated ? framesToLoad(info, limits) : 1;
  const granted = budgetFor(limits.memorySizeMb, limits.timeBudgetMs, requestBytes?.(side) ?? info.bytes);
  // The models a request runs are paid for first, in a child that loads them (image/search.ts).
  const models = [...(wantsFaces(ops) ? [FACE_MODEL] : []), ...(wantsSubject(ops) ? [SUBJECT_MODEL] : [])];
  const held = withModels(granted, models);
  const runs = models.map((model) => ({ model, loaded: false }));
  const budget = runs.length ? afterSearch(info, held, limits.maxDimension, runs) : held;
  if (!budget) return false;
  try {
    chooseFormat(describeWork(info, ops, frames, limits.maxDimension), info, plan.candidates, budget);
    return true;
  } catch {
    return false;
  }
}

/**
 * The largest side (to 8 pixels) at which the model accepts the case, by
 * bisection: prices grow with the side. Without `requestBytes`, the source is
 * taken at its largest.
 */
export function largestSide(opCase: OpCase, limits: Limits, requestBytes?: RequestBytes): number {
  let [low, high] = [8, limits.maxDimension];
  if (accepted(opCase, high, limits, requestBytes)) return high;
  while (high - low > 8) {
    const middle = Math.round((low + high) / 2);
    if (accepted(opCase, middle, limits, requestBytes)) low = middle;
    else high = middle;
  }
  return low;
}
