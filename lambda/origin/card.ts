// A card's miss in the handler: its fills checked (card-fills.ts), the images
// its slots name read from the deployment's buckets beside the URL key's
// source, and the card drawn in the transform process (image/card.ts) like
// any variant, by the request's deadline and within its budget.

import { HttpError } from './errors';
import { cardFills, templateOf, type CardFills } from './card-fills';
import type { CardJob } from './image/card';
import { transformerOf, type Transformer } from './phases';
import type { RequestContext } from './request';
import { bucketObjectOf } from './sources';
import { fetchSource, type Source } from './storage';
import { keySlot, type TemplateDefinition } from './templates';

/** The images' slots and keys in drawing order: the template's source (`""`) first, then its image slots in the template's order. */
function slotKeys(template: TemplateDefinition, fills: CardFills): [string, string][] {
  const beneath: [string, string][] = template.source !== undefined ? [['', template.source]] : [];
  return [
    ...beneath,
    ...Object.keys(template.slots).flatMap((slot): [string, string][] => (slot in fills.images ? [[slot, fills.images[slot]!]] : [])),
  ];
}

/** One slot's image from the deployment's buckets; a refusal names the slot. */
async function slotImage(ctx: RequestContext, slot: string, key: string): Promise<Buffer> {
  const { s3, routes, config } = ctx.services;
  const object = bucketObjectOf(key, routes);
  const name = slot === '' ? "The template's source" : `The slot "${slot}"`;
  if (!object) throw new HttpError('invalid_fill', `${name}: "${key.slice(0, 80)}" is not in the deployment's buckets.`);
  try {
    return (await ctx.deadline.race(fetchSource(s3, object.bucket, object.objectKey, config.maxSourceBytes))).bytes;
  } catch (error) {
    if (error instanceof HttpError && error.status < 500) throw new HttpError(error.code, `${name}: ${error.message}`, error.detail);
    throw error;
  }
}

/** The transform that draws the card the request names over its key's `source`. */
export async function cardTransformer(ctx: RequestContext, source: Source): Promise<Transformer> {
  const { request, services } = ctx;
  const template = templateOf(request.ops.template as string, services.config.templateDefinitions);
  const fills = cardFills(request, template, (request.ops.template as string).split('.')[0]!);
  const first = keySlot(template);
  const images: { slot: string; bytes: Buffer }[] = [];
  // The URL's key was fetched as the request's source: the first image slot's, or without one the template's source.
  const keyOf = first ?? '';
  for (const [slot, key] of slotKeys(template, fills)) {
    images.push({ slot, bytes: slot === keyOf ? source.bytes : await slotImage(ctx, slot, key) });
  }
  const total = images.reduce((sum, image) => sum + image.bytes.length, 0);
  if (total > services.config.maxSourceBytes)
    throw new HttpError('source_too_large', `The card's images are larger than the ${services.config.maxSourceBytes}-byte limit together.`);
  const job: CardJob = {
    template,
    texts: fills.texts,
    images: images.map(({ slot, bytes }) => ({ slot, bytes: bytes.length })),
    fonts: services.config.fonts,
  };
  const run = await transformerOf(ctx, Buffer.concat(images.map((image) => image.bytes)), request.ops, services.config, ctx.failed);
  return (options) => run({ ...options, card: job });
}
