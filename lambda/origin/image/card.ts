// A card drawn from its template (lambda/origin/templates.ts): the canvas, its
// source beneath, each image slot's source fitted into its box by the
// transform itself (shrink-on-load, `position` with attention and faces, its
// own budget check), each text slot at the largest size of its range that
// fits its box, then one encode. The whole card is priced before any pixel is
// decoded: the sum of its images' transforms, its texts' renders (as many as
// the fit may try, each at the range's largest size) and the canvas's
// composite and encode, refused with a 413 over the budget.

import sharp, { type OverlayOptions } from 'sharp';
import type { Ops } from '../../grammar';
import type { Limits } from '../config';
import { HttpError } from '../errors';
import type { Box, ImageSlot, TemplateDefinition, TextSlot } from '../templates';
import { chooseFormat, describeWork, predictBytes, predictSeconds, type Budget, type Work } from './budget';
import { encode } from './encoders';
import { openSource, type SourceInfo } from './input';
import { rgba, type Rgba } from './steps/context';
import { CONTENT_TYPES, type EncodedFormat } from './output';
import type { DeploymentFonts } from './text/fonts';
import { FONT_LOAD, predictedBox, renderPrice, renderText, TextLimitError, type RenderedText, type TextSpec } from './text/render';
import { transform, type TransformedVariant } from './transform';

/** What the child is given to draw a card: its template, its texts, and its images in the order their bytes follow one another. */
export interface CardJob {
  template: TemplateDefinition;
  texts: Record<string, string>;
  /** Each image's slot (`""` for the template's source, under every slot) and its length in the job's bytes. */
  images: { slot: string; bytes: number }[];
  /** The deployment's own fonts, which a text slot may name. */
  fonts?: DeploymentFonts;
}

/** The slot that stands for the template's source: the whole canvas, covered. */
const SOURCE_SLOT: ImageSlot = { kind: 'image', box: [0, 0, 0, 0], fit: 'cover', position: 'center' };

const slotOf = (template: TemplateDefinition, slot: string): ImageSlot =>
  slot === '' ? { ...SOURCE_SLOT, box: [0, 0, template.width, template.height] } : (template.slots[slot] as ImageSlot);

/** The transform that fits an image into its slot's box: a lossless PNG of the box (cover) or inside it (contain). */
const slotOps = ({ box, fit, position }: ImageSlot): Ops => ({
  width: box[2],
  height: box[3],
  fit: fit === 'cover' ? 'cover' : 'inside',
  ...(fit === 'cover' ? { position } : {}),
  enlarge: true,
  format: 'png',
});

/** Renders a fit may try: a search over the size range, halving it each time. */
export const fitRenders = ([min, max]: [number, number]) => Math.ceil(Math.log2(max - min + 1)) + 1;

const textSpec = (slot: TextSlot, text: string, size: number): TextSpec => ({
  text,
  font: slot.font,
  size,
  colour: rgba(slot.colour),
  align: slot.align,
  width: slot.box[2],
});

/** The canvas as the price model sees it: its pixels, one RGBA frame. */
const canvasInfo = ({ width, height }: TemplateDefinition): SourceInfo => ({
  format: 'png',
  width,
  height,
  frames: 1,
  hasAlpha: true,
  bytes: 0,
  channels: 4,
  depth: 'uchar',
  orientation: 1,
  progressive: false,
});

/** The card's price beside its final encode: each image's transform and each text's renders, in seconds and bytes held at once. */
async function partsPrice(job: CardJob, sources: Buffer[], limits: Limits): Promise<{ seconds: number; bytes: number }> {
  let seconds = 0;
  let bytes = 0;
  for (const [index, image] of job.images.entries()) {
    const info = (await openSource(sources[index]!, limits)).info;
    const work = describeWork(info, slotOps(slotOf(job.template, image.slot)), 1, limits.maxDimension);
    seconds += predictSeconds(work, info, 'png');
    bytes = Math.max(bytes, predictBytes(work, 'png'));
  }
  const texts = Object.entries(job.texts);
  // The fonts' load, once for all of the card's texts (as for a request's: steps/text.ts).
  if (texts.length) seconds += FONT_LOAD.seconds;
  for (const [name, text] of texts) {
    const slot = job.template.slots[name] as TextSlot;
    const largest = largestRendered(slot, text);
    const render = renderPrice(textSpec(slot, text, largest));
    // The search renders no size above `largest`; and once more at the smallest size when none fits.
    seconds += render.seconds * (fitRenders([slot.size[0], largest]) + 1);
    bytes = Math.max(bytes, render.bytes + FONT_LOAD.bytes);
  }
  return { seconds, bytes };
}

/** The format the card is encoded in, chosen within what is left of the budget once its parts are paid for. */
function cardFormat(
  job: CardJob,
  ops: Ops,
  parts: { seconds: number; bytes: number },
  budget: Budget,
): { format: EncodedFormat; work: Work } {
  const info = canvasInfo(job.template);
  const work = describeWork(info, { format: ops.format }, 1, Math.max(info.width, info.height));
  const translucent = job.template.background.length === 8 && job.template.source === undefined;
  const candidates: EncodedFormat[] = ops.format
    ? [ops.format as EncodedFormat]
    : ops.accept === 'avif'
      ? ['avif', 'webp']
      : ops.accept === 'webp'
        ? ['webp']
        : [translucent ? 'png' : 'jpeg'];
  const rest = { seconds: budget.seconds - parts.seconds, memoryBytes: budget.memoryBytes - parts.bytes };
  if (rest.seconds <= 0 || rest.memoryBytes <= 0)
    throw new HttpError('too_costly', `This card's images and texts would take about ${parts.seconds.toFixed(1)} s, over the budget.`);
  return { format: chooseFormat(work, info, candidates, rest), work };
}

/**
 * Whether a size is worth a render: its text's predicted height (lines as
 * wrapped at the box's width, an estimate) at most 1.5 times the box's. What a
 * fit renders, and so what it is priced at, stays within that area.
 */
const worthRendering = (slot: TextSlot, spec: TextSpec) => predictedBox(spec).height <= 1.5 * slot.box[3];

/** The largest size a fit may render at: the price of each of its renders (fitRenders) is at most this size's. */
function largestRendered(slot: TextSlot, text: string): number {
  let [low, high] = slot.size;
  // The predicted height grows with the size: the largest worth rendering, found without a render.
  while (low < high) {
    const size = Math.ceil((low + high) / 2);
    if (worthRendering(slot, textSpec(slot, text, size))) low = size;
    else high = size - 1;
  }
  return low;
}

/** One render at `size`, or undefined when it cannot fit: predicted far too tall, or over a text limit at that size. */
async function renderAt(slot: TextSlot, text: string, size: number, fonts?: DeploymentFonts): Promise<RenderedText | undefined> {
  const spec = textSpec(slot, text, size);
  if (size > slot.size[0] && !worthRendering(slot, spec)) return undefined;
  try {
    return await renderText({ ...spec, fonts });
  } catch (error) {
    if (error instanceof TextLimitError && size > slot.size[0]) return undefined;
    throw error;
  }
}

/** The largest size of the slot's range at which its text fits the box (or the smallest, cut to the box). */
async function fittedText(slot: TextSlot, text: string, fonts?: DeploymentFonts): Promise<RenderedText> {
  const [, , width, height] = slot.box;
  let [low, high] = slot.size;
  let best: RenderedText | undefined;
  while (low <= high) {
    const size = Math.floor((low + high + 1) / 2);
    const drawn = await renderAt(slot, text, size, fonts);
    if (drawn && drawn.width <= width && drawn.height <= height) {
      best = drawn;
      low = size + 1;
    } else high = size - 1;
  }
  // Too large even at the smallest size: drawn at it, cut to the box.
  return best ?? ((await renderAt(slot, text, slot.size[0], fonts)) as RenderedText);
}

/** Where a drawn layer of `size` goes in `box`: a contained image centred, a text at the box's top by its alignment. */
function placed(box: Box, size: [number, number], align: 'left' | 'centre' | 'right', middle: boolean): { left: number; top: number } {
  const spare = box[2] - size[0];
  const left = box[0] + (align === 'left' ? 0 : align === 'right' ? spare : Math.floor(spare / 2));
  return { left: Math.max(box[0], left), top: box[1] + (middle ? Math.max(0, Math.floor((box[3] - size[1]) / 2)) : 0) };
}

/** Each image fitted to its slot, as a layer. */
async function imageLayers(job: CardJob, sources: Buffer[], limits: Limits, budget: Budget): Promise<OverlayOptions[]> {
  const layers: OverlayOptions[] = [];
  for (const [index, image] of job.images.entries()) {
    const slot = slotOf(job.template, image.slot);
    const made: TransformedVariant = await transform(sources[index]!, slotOps(slot), limits, budget);
    const at = placed(slot.box, [made.width, made.height], 'centre', true);
    layers.push({ input: made.body, ...at });
  }
  return layers;
}

/** Each text at its fitted size, cut to its box, as a layer. */
async function textLayers(job: CardJob): Promise<OverlayOptions[]> {
  const layers: OverlayOptions[] = [];
  for (const [name, text] of Object.entries(job.texts)) {
    const slot = job.template.slots[name] as TextSlot;
    const drawn = await fittedText(slot, text, job.fonts);
    const raw = { width: drawn.width, height: drawn.height, channels: 4 as const };
    const cut = sharp(drawn.data, { raw }).extract({
      left: 0,
      top: 0,
      width: Math.min(drawn.width, slot.box[2]),
      height: Math.min(drawn.height, slot.box[3]),
    });
    const { data, info } = await cut.raw().toBuffer({ resolveWithObject: true });
    layers.push({
      input: data,
      raw: { width: info.width, height: info.height, channels: 4 },
      ...placed(slot.box, [info.width, info.height], slot.align, false),
    });
  }
  return layers;
}

/** The canvas's colour; for a JPEG, over white, so that the card is opaque before its encode drops the alpha. */
function canvasColour(background: string, format: EncodedFormat): Rgba {
  const colour = rgba(background);
  if (format !== 'jpeg') return colour;
  const over = (channel: number) => Math.round(channel * colour.alpha + 255 * (1 - colour.alpha));
  return { r: over(colour.r), g: over(colour.g), b: over(colour.b), alpha: 1 };
}

/** Draws the card `job` describes from `bytes` (its images, one after another) and encodes it as `ops` ask, within `budget`. */
export async function renderCard(bytes: Buffer, ops: Ops, job: CardJob, limits: Limits, budget: Budget): Promise<TransformedVariant> {
  const sources: Buffer[] = [];
  let offset = 0;
  for (const image of job.images) {
    sources.push(bytes.subarray(offset, offset + image.bytes));
    offset += image.bytes;
  }
  const parts = await partsPrice(job, sources, limits);
  const { format, work } = cardFormat(job, ops, parts, budget);
  const layers = [...(await imageLayers(job, sources, limits, budget)), ...(await textLayers(job))];
  const { width, height } = job.template;
  const canvas = sharp({ create: { width, height, channels: 4, background: canvasColour(job.template.background, format) } }).composite(
    layers,
  );
  const body = await encode(canvas, { format }, typeof ops.quality === 'number' ? ops.quality : undefined).toBuffer();
  const predicted = {
    bytes: predictBytes(work, format) + parts.bytes,
    seconds: predictSeconds(work, canvasInfo(job.template), format) + parts.seconds,
  };
  return { body, contentType: CONTENT_TYPES[format], width, height, predicted };
}
