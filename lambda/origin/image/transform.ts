// Source bytes + canonical ops -> variant bytes. One decode of the source.

import type { Ops } from '../../grammar';
import type { Limits } from '../config';
import type { Variant } from '../storage';
import { describe } from './describe';
import { decodeError, openFrames, openSource } from './input';
import { CONTENT_TYPES, planOutput } from './output';
import { applySteps } from './steps';

export interface TransformedVariant extends Variant {
  width: number;
  height: number;
}

/** `seconds` lets libvips itself abandon work that has overrun the time budget. */
export async function transform(bytes: Buffer, ops: Ops, limits: Limits, seconds: number): Promise<TransformedVariant> {
  const source = await openSource(bytes, limits);
  try {
    if (ops.format === 'json') {
      const description = await describe(source);
      const body = Buffer.from(JSON.stringify(description));
      return { body, contentType: CONTENT_TYPES.json, width: description.width, height: description.height };
    }
    const plan = planOutput(ops, source.info);
    const image = plan.animated ? openFrames(bytes, source.info, limits) : source.firstFrame;
    image.timeout({ seconds: Math.max(1, Math.ceil(seconds)) });
    applySteps(image, { ops, info: source.info, plan, limits });
    const { data, info } = await image.toBuffer({ resolveWithObject: true });
    return { body: data, contentType: CONTENT_TYPES[plan.format], width: info.width, height: info.pageHeight ?? info.height };
  } catch (error) {
    throw decodeError(error, limits);
  }
}
