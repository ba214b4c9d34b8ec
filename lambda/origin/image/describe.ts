// `format=json`: what the source is, plus what a page can show while the real
// image loads: a tiny blurred WebP, a ThumbHash and the dominant colour. All
// three come from one small copy of the first frame (at most 100x100 pixels,
// made with shrink-on-load), so they cost one small resize beyond the decode
// of the first frame. That decode is priced like any transform's (budget.ts):
// when it does not fit, the answer is what the header says, and the three
// previews are null.

import sharp from 'sharp';
import { rgbaToThumbHash } from 'thumbhash';
import type { FaceBox } from './faces';
import type { SubjectBox } from './subject';
import type { OpenedSource } from './input';

/** Longest side of the placeholder, in pixels; a page stretches and blurs it further with CSS. */
const PLACEHOLDER_SIZE = 16;
/** ThumbHash's encoder takes at most 100x100 pixels, and gains nothing from more: the previews' one small copy. */
export const PREVIEW_SIZE = 100;

export interface Description {
  width: number;
  height: number;
  format: string;
  bytes: number;
  hasAlpha: boolean;
  frames: number;
  /** A data URL of a WebP at most 16 pixels on its longer side (`next/image`'s `blurDataURL` takes it as is). */
  placeholder: string | null;
  /** The ThumbHash of the image as displayed, base64: about 25 bytes, decoded in the page (thumbhash's `thumbHashToDataURL`). */
  thumbhash: string | null;
  /** `#rrggbb`: the most frequent colour, for a background while the image loads. */
  dominantColor: string | null;
  /**
   * The faces found in the first frame, in fractions of the image as displayed
   * (the frame of `fp`), most confident first, at most 32; null when the
   * search did not fit the budget (faces.ts, budget.ts). Boxes only: the
   * eyes that a crop places are the origin's own.
   */
  faces: Omit<FaceBox, 'eyes'>[] | null;
  /**
   * The salient subject's box, in fractions of the image as displayed (subject.ts):
   * null when the model found no subject, or when its search did not fit the budget.
   */
  subject: SubjectBox | null;
}

type Previews = Pick<Description, 'placeholder' | 'thumbhash' | 'dominantColor'>;

/** What a source too costly to decode within the budget is described with. */
const NO_PREVIEWS: Previews = { placeholder: null, thumbhash: null, dominantColor: null };

const hex = (channel: number) => channel.toString(16).padStart(2, '0');

/** The three previews, from one copy of the first frame at most PREVIEW_SIZE on each side. */
async function previews(firstFrame: OpenedSource['firstFrame']): Promise<Previews> {
  const small = await (
    await firstFrame()
  )
    .autoOrient()
    .resize(PREVIEW_SIZE, PREVIEW_SIZE, { fit: 'inside' })
    .toColourspace('srgb')
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const raw = { raw: { width: small.info.width, height: small.info.height, channels: 4 as const } };
  const [placeholder, stats] = await Promise.all([
    sharp(small.data, raw)
      .resize(PLACEHOLDER_SIZE, PLACEHOLDER_SIZE, { fit: 'inside' })
      .blur(0.5)
      .webp({ quality: 40, alphaQuality: 40 })
      .toBuffer(),
    sharp(small.data, raw).stats(),
  ]);
  const { r, g, b } = stats.dominant;
  return {
    placeholder: 'data:image/webp;base64,' + placeholder.toString('base64'),
    thumbhash: Buffer.from(rgbaToThumbHash(small.info.width, small.info.height, small.data)).toString('base64'),
    dominantColor: '#' + hex(r) + hex(g) + hex(b),
  };
}

/** The source as its header tells, with its previews when `affordable` (their decode priced within the budget), and its faces. */
export async function describe(
  { info, firstFrame }: OpenedSource,
  affordable: boolean,
  faces: FaceBox[] | null,
  subject: SubjectBox | null,
): Promise<Description> {
  return {
    width: info.width,
    height: info.height,
    format: info.format,
    bytes: info.bytes,
    hasAlpha: info.hasAlpha,
    frames: info.frames,
    ...(affordable ? await previews(firstFrame) : NO_PREVIEWS),
    faces: faces && faces.map(({ x, y, width, height, confidence }) => ({ x, y, width, height, confidence })),
    subject,
  };
}
