// The output step: the variant encoded, with the source's metadata kept, at
// the quality asked, chosen (quality=auto) or searched for (max_bytes).

import type { Sharp } from 'sharp';
import { DEFAULT_QUALITY, type Ops } from '../../../grammar';
import { autoQuality, AVIF_AUTO_QUALITY, choosesQuality, PROXY_PIXELS } from '../auto-quality';
import { encode } from '../encoders';
import { HttpError } from '../../errors';
import { decodeError } from '../input';
import { iptcAfterEncode, iptcSegmentBytes, MAX_METADATA_BYTES, withMetadata } from '../metadata';
import type { EncodedFormat } from '../output';
import { FREE, inMemory, perMegapixel, pipelineOf, type Step } from './context';

type LossyFormat = keyof typeof DEFAULT_QUALITY;

/** Whether `max_bytes` lowers the quality of this output: only lossy formats have one. */
const capsBytes = (ops: Ops, format: EncodedFormat) => ops.max_bytes !== undefined && format in DEFAULT_QUALITY;

/** Most encodes a `max_bytes` search makes: the quality asked (or chosen), the lowest, and two between. */
export const MAX_BYTES_ENCODES = 4;

/**
 * The encode at the highest quality tried that fits in `room` bytes: the
 * quality asked first, then 1, then halfway between, then between the
 * highest that fits and the lowest that does not where the bytes would reach
 * `room` if their logarithm grew in a straight line with the quality. When even quality 1
 * does not fit, a 422 that says how small it came.
 */
async function encodedWithin(
  room: number,
  start: number,
  encodeAt: (quality: number) => Promise<Buffer>,
): Promise<{ made: Buffer; encodes: number }> {
  const first = await encodeAt(start);
  if (first.length <= room) return { made: first, encodes: 1 };
  const lowest = start === 1 ? first : await encodeAt(1);
  if (lowest.length > room) {
    throw new HttpError(
      'max_bytes_unreachable',
      `This output is ${lowest.length} bytes at quality 1, over the ${room} max_bytes allows; ask for a smaller size or more bytes.`,
    );
  }
  let fits = { quality: 1, made: lowest };
  let over = { quality: start, made: first };
  let tried = 2;
  for (; tried < MAX_BYTES_ENCODES && over.quality - fits.quality > 1; tried++) {
    // Halving first (quality 1 is far from the line of the others), then along the line.
    const share = tried === 2 ? 0.5 : Math.log(room / fits.made.length) / Math.log(over.made.length / fits.made.length);
    const quality = Math.min(
      over.quality - 1,
      Math.max(fits.quality + 1, Math.floor(fits.quality + share * (over.quality - fits.quality))),
    );
    const made = await encodeAt(quality);
    if (made.length <= room) fits = { quality, made };
    else over = { quality, made };
  }
  return { made: fits.made, encodes: tried };
}

/**
 * Keeping metadata, CPU seconds: reading and writing its blocks (capped, so a
 * constant), and per output megapixel what the encode costs more when the
 * output carries them, as measured by the op-price test with the suite running.
 */
const METADATA_SECONDS = 0.01;
const METADATA_SECONDS_PER_MP = 0.02;

/**
 * Encode, CPU seconds per output megapixel, with the settings of encoders.ts on
 * one thread: the worst case (noise) for every format but GIF. GIF's palette
 * search costs 20 to 50 times more on noise than on photos or drawings, so a
 * worst case would refuse ordinary animations: its rate is that of smooth
 * photographic frames, and the deadline kill bounds the rest.
 */
export const ENCODE_SECONDS_PER_MP: Record<EncodedFormat, number> = {
  jpeg: 0.09,
  png: 0.1,
  webp: 0.32,
  avif: 1.25,
  gif: 1.7,
};

/**
 * How much more an encode costs above the format's default quality (the
 * rates are at the default): AVIF's by half above 60 and 1.6 times from 80
 * (it falls again near lossless), WebP's 1.3 times above 90; quality=auto
 * reaches AVIF_AUTO_QUALITY.max.
 */
function qualityFactor(format: EncodedFormat, asked: Ops['quality']): number {
  const quality = asked === 'auto' ? AVIF_AUTO_QUALITY.max : asked;
  if (quality === undefined) return 1;
  if (format === 'avif') return quality >= 80 ? 1.6 : quality > 60 ? 1.5 : 1;
  return format === 'webp' && quality > 90 ? 1.3 : 1;
}

/** What an encoder holds beyond the pipeline, bytes per output pixel (its buffers and the encoded output). */
export const ENCODER_BYTES_PER_PIXEL: Record<EncodedFormat, number> = {
  jpeg: 7.5,
  png: 4,
  webp: 19,
  avif: 24,
  gif: 33,
};

export const outputStep: Step = {
  name: 'output',
  price: (work) => {
    const { format, outputPixels, frames, ops } = work;
    // quality=auto holds the output as pixels (alpha at most) and a proxy of them, and encodes the proxy first.
    const proxy = choosesQuality(ops.quality, format, frames > 1) ? Math.min(PROXY_PIXELS, outputPixels) : 0;
    // max_bytes holds the output as pixels and the smallest encode that fits, and encodes up to MAX_BYTES_ENCODES times.
    const capped = capsBytes(ops, format);
    const encodes = capped ? MAX_BYTES_ENCODES : 1;
    const held = (proxy ? (outputPixels + proxy) * 4 : 0) + (capped ? outputPixels * frames * (4 + 3) : 0);
    // The source's metadata blocks read and written anew, at their caps: a copy of each on either side.
    const metadata =
      ops.metadata === undefined
        ? FREE
        : {
            seconds: METADATA_SECONDS + perMegapixel(METADATA_SECONDS_PER_MP, outputPixels * frames),
            bytes: 2 * (MAX_METADATA_BYTES.exif + MAX_METADATA_BYTES.xmp + MAX_METADATA_BYTES.iptc),
          };
    return {
      seconds:
        perMegapixel(ENCODE_SECONDS_PER_MP[format] * qualityFactor(format, ops.quality), encodes * outputPixels * frames + proxy) +
        metadata.seconds,
      bytes: outputPixels * frames * ENCODER_BYTES_PER_PIXEL[format] + held + metadata.bytes,
    };
  },
  // A search for max_bytes encodes the pixels in memory.
  carriesGainMap: (ops) => !capsBytes(ops, 'jpeg'),
  async apply(image, context) {
    const { ops, plan, limits, metadata } = context;
    // The timing as it stands at each encode: set once the frames are in memory.
    const encodeAt = (pipeline: Sharp, quality?: number) =>
      withMetadata(encode(pipeline, { ...plan, timing: context.timing }, quality), metadata);
    const auto = choosesQuality(ops.quality, plan.format, plan.animated);
    const asked = ops.quality === 'auto' ? undefined : ops.quality;
    if (!auto && !capsBytes(ops, plan.format)) {
      encodeAt(image, asked);
      return undefined;
    }
    // The image in memory once: a proxy of it is encoded to choose the quality, or the whole at each quality tried.
    const made = await inMemory(image, context);
    const quality = auto
      ? await autoQuality(made, (proxy, trial) => encode(proxy, plan, trial))
      : (asked ?? DEFAULT_QUALITY[plan.format as LossyFormat]);
    if (!capsBytes(ops, plan.format)) return encodeAt(pipelineOf(made), quality);
    // The IPTC block is added after the encode (transform.ts).
    const iptc = iptcAfterEncode(metadata, plan.format, context.info.gainMap !== undefined);
    const room = ops.max_bytes! - (iptc ? iptcSegmentBytes(iptc) : 0);
    const { made: data, encodes } = await encodedWithin(room, quality, (trial) =>
      encodeAt(pipelineOf(made), trial)
        .toBuffer()
        .catch((error: unknown) => {
          throw decodeError(error, limits);
        }),
    );
    context.encoded = { data, width: made.info.width, height: made.info.pageHeight ?? made.info.height, encodes };
    return undefined;
  },
};
