// Source bytes + canonical ops -> variant bytes. One decode of the source,
// and no decode at all before the plan has been priced against the budget.

import type { Ops } from '../../grammar';
import type { Limits } from '../config';
import type { Variant } from '../storage';
import { chooseFormat, describeWork, predictBytes, predictSeconds, type Budget } from './budget';
import { describe } from './describe';
import { decodeError, framesToLoad, openFrames, openSource } from './input';
import { CONTENT_TYPES, planOutput } from './output';
import { applySteps } from './steps';

export interface TransformedVariant extends Variant {
  width: number;
  height: number;
  /** What the model predicted for the chosen format (budget.ts), for the log and the bounds report. */
  predicted?: { bytes: number; seconds: number };
}

/** `budget` is what this request may spend (budget.ts): the plan is priced against it before any decode. */
export async function transform(bytes: Buffer, ops: Ops, limits: Limits, budget: Budget): Promise<TransformedVariant> {
  const source = await openSource(bytes, limits);
  const undecodable = (error: unknown): never => {
    throw decodeError(error, limits);
  };
  if (ops.format === 'json') {
    const description = await describe(source).catch(undecodable);
    const body = Buffer.from(JSON.stringify(description));
    return { body, contentType: CONTENT_TYPES.json, width: description.width, height: description.height };
  }
  const candidates = planOutput(ops, source.info);
  const frames = candidates.animated ? framesToLoad(source.info, limits) : 1;
  const work = describeWork(source.info, ops, frames, limits.maxDimension);
  const plan = { ...candidates, format: chooseFormat(work, source.info, candidates.candidates, budget) };
  const image = plan.animated ? openFrames(bytes, frames, limits) : await source.firstFrame().catch(undecodable);
  applySteps(image, { ops, info: source.info, plan, limits });
  try {
    const { data, info } = await image.toBuffer({ resolveWithObject: true });
    const predicted = { bytes: predictBytes(work, plan.format), seconds: predictSeconds(work, source.info, plan.format) };
    return { body: data, contentType: CONTENT_TYPES[plan.format], width: info.width, height: info.pageHeight ?? info.height, predicted };
  } catch (error) {
    return undecodable(error);
  }
}
