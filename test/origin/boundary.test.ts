// Where the origin draws the line between a damaged source (422) and its own
// bug (500): only sharp's decode and encode calls are read as "the image is
// damaged". A step that throws on good bytes is a bug, and a viewer must not
// be told the photo is broken when it is not.

import { afterAll, describe, expect, it } from 'vitest';
import type { Ops } from '../../lambda/grammar';
import { DEFAULT_LIMITS } from '../../lambda/origin/config';
import { HttpError } from '../../lambda/origin/errors';
import { budgetFor } from '../../lambda/origin/image/budget';
import { transformProcesses } from '../../lambda/origin/transform-process';
import { gradientJpeg } from '../support/images';

const transforms = transformProcesses(1);
afterAll(() => transforms.close());

async function outcome(bytes: Buffer, ops: Ops): Promise<unknown> {
  const job = { bytes, ops, limits: DEFAULT_LIMITS, budget: budgetFor(2048, 25_000, bytes.length) };
  return transforms.run(job, performance.now() + 20_000).then(
    () => 'made',
    (error: unknown) => error,
  );
}

describe('the transform error boundary', () => {
  it('a step that throws on a good source is a bug (the handler answers 500), not a damaged image', async () => {
    // No canonical URI holds a negative width: here it stands for a bug in a step.
    const error = await outcome(await gradientJpeg(40, 30), { width: -5 });
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(HttpError);
    expect(String(error)).toMatch(/width/);
  });

  it('damaged bytes are a 422 undecodable_image', async () => {
    const good = await gradientJpeg(40, 30);
    const cut = good.subarray(0, Math.floor(good.length / 2));
    const error = await outcome(cut, { width: 20 });
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ code: 'undecodable_image', status: 422 });
  });

  it('the same process serves a good transform afterwards', async () => {
    expect(await outcome(await gradientJpeg(40, 30), { width: 20 })).toBe('made');
  });
});
