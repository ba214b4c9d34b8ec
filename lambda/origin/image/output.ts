// What a variant is encoded as: the format rules of the contract (the
// encoder settings per format are in encoders.ts).

import type { NegotiatedFormat, Ops } from '../../grammar';
import type { SourceInfo } from './input';
import { firstFrameOnly } from './steps';

export type EncodedFormat = 'jpeg' | 'png' | 'webp' | 'avif' | 'gif';

export interface OutputPlan {
  /** The format encoded: the first candidate. */
  format: EncodedFormat;
  /**
   * The formats acceptable for this request, best first: only the one asked
   * for when the format is explicit; when it was negotiated, the accepted
   * formats and then the source's own family, which every viewer takes.
   */
  candidates: EncodedFormat[];
  /** Whether every frame of an animated source is kept (the same for every candidate). */
  animated: boolean;
}

/** How long each frame shows, in ms, and how many times the animation plays (0: forever). */
export interface FrameTiming {
  delay?: number[];
  loop?: number;
}

export const CONTENT_TYPES: Record<EncodedFormat | 'json', string> = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  avif: 'image/avif',
  gif: 'image/gif',
  json: 'application/json',
};

/** What a viewer takes for each `accept` the edge records, best first (`avif` means WebP too). */
const ACCEPTED: Record<NegotiatedFormat, EncodedFormat[]> = { avif: ['avif', 'webp'], webp: ['webp'] };

/**
 * An explicit format is the only candidate. A negotiated one (`accept`) lists
 * what the viewer accepts, then the source's own family: GIF for animations,
 * PNG with alpha (a cut-out's included), JPEG otherwise; with neither, the family alone. An old edge
 * still writes `format=avif` for a negotiated request during a deploy: that
 * counts as explicit. An animation stays animated in WebP or GIF; libvips
 * cannot write animated AVIF, so AVIF becomes WebP there. JPEG and PNG, and
 * a step libvips cannot apply frame by frame (quarter turns, trim, a blurred
 * fill, a watermark, a cut-out: each says so in its record under steps/), give the
 * first frame. A source whose HDR gain map is kept (gain-map.ts) stays JPEG,
 * the one format that carries it here.
 */
export function planOutput(ops: Ops, info: SourceInfo): OutputPlan {
  if (info.gainMap) return { format: 'jpeg', candidates: ['jpeg'], animated: false };
  const animatedSource = info.frames > 1 && !firstFrameOnly(ops);
  // A cut-out has alpha unless an opaque background fills it (an rrggbbaa one is translucent).
  const cutOut = ops.segment !== undefined && (ops.background === undefined || ops.background.length === 8);
  const family: EncodedFormat = animatedSource ? 'gif' : info.hasAlpha || cutOut ? 'png' : 'jpeg';
  const wanted: EncodedFormat[] =
    ops.format !== undefined && ops.format !== 'json' ? [ops.format] : (ops.accept ? ACCEPTED[ops.accept] : []).concat(family);
  const candidates: EncodedFormat[] = [];
  for (const one of wanted) {
    const format = animatedSource && one === 'avif' ? 'webp' : one;
    if (!candidates.includes(format)) candidates.push(format);
  }
  const format = candidates[0] as EncodedFormat;
  return { format, candidates, animated: animatedSource && (format === 'webp' || format === 'gif') };
}
