// The composition operations against the bounds, through the real handler
// (its transform child included) on LocalStack S3: trim and a blurred fill
// hold whole images, which the memory model counts before any decode; a huge
// border is priced with the pixels it adds; a crop region outside the image
// never reaches sharp.

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkedPlacement, watermarkVersion } from '../../lambda/origin/watermarks';
import { gradientJpeg, noiseImage } from '../support/images';
import { createTestOrigin, type TestOrigin } from '../support/origin';
import { NOISE_MB, throughHandler, variantLog } from './support';

/** A 1 MP noise watermark (the largest a deployment may name), as wide as the output. */
async function largestWatermark() {
  const bytes = await noiseImage(1024, 1024, 'png');
  const placement = checkedPlacement('noise', { size: 1, margin: 0 });
  const file = join(await mkdtemp(join(tmpdir(), 'watermark-bounds-')), 'noise.png');
  await writeFile(file, bytes);
  return { noise: { ...placement, file, version: watermarkVersion(bytes, placement) } };
}

describe('the memory model counts what composition holds', () => {
  let origin: TestOrigin;
  let watermark: string;
  beforeAll(async () => {
    const watermarkDefinitions = await largestWatermark();
    watermark = `watermark=noise.${watermarkDefinitions.noise.version}`;
    origin = await createTestOrigin('composition bounds', { watermarkDefinitions });
    await origin.putSource('photo.jpg', await gradientJpeg(4000, 3000));
  });

  it.each([
    ['trim: the decoded image and its trimmed pixels', () => '/photo.jpg/width=300,trim=10'],
    ['a blurred fill: the image and its canvas', () => '/photo.jpg/width=3000,height=3000,fit=contain,fill=blur,enlarge=1'],
    ['a watermark: the image, its canvas and the watermark decoded', () => `/photo.jpg/width=3000,${watermark}`],
  ])('%s stay within the prediction', async (_name, uriOf) => {
    const uri = uriOf();
    await throughHandler(origin, uri, { status: 200 });
    const logged = variantLog(origin, uri);
    expect(logged.TransformRss - logged.transformStartMb, 'measured work (MB) against the prediction').toBeLessThanOrEqual(
      logged.predictedMb + NOISE_MB,
    );
  });
});

describe('refused from the header when it cannot fit', () => {
  let small: TestOrigin;
  beforeAll(async () => {
    small = await createTestOrigin('composition small', { memorySizeMb: 512 });
    await small.putSource('large.jpg', await gradientJpeg(6000, 5000));
    await small.putSource('tiny.jpg', await gradientJpeg(40, 30));
  });

  it('a 30 MP photo is served small, but trimming it needs the whole decode: a 413 saying what it would take', async () => {
    await throughHandler(small, '/large.jpg/width=200', { status: 200 });
    const start = performance.now();
    const refused = await throughHandler(small, '/large.jpg/width=200,trim=10', { status: 413, code: 'too_costly' });
    // Trim's search for edges runs over every decoded pixel: its time is priced as well as its memory.
    expect(refused.json().message).toMatch(
      /from a 6000x5000 source would (need about \d+ MB, over the \d+ MB|take about \d+ s, over the [\d.]+ s) allowed/,
    );
    expect(performance.now() - start, 'refused from the header, without decoding').toBeLessThan(3_000);
  });

  it('the widest border makes the output maxDimension square: priced as such, and refused', async () => {
    const refused = await throughHandler(small, '/tiny.jpg/border=4095,ffffff', { status: 413, code: 'too_costly' });
    expect(refused.json().message).toMatch(/from a 40x30 source would (need|take) about/);
  });

  it('a crop region outside the image is a 400 in a canonical URI too, and the next request is served', async () => {
    const refused = await throughHandler(small, '/tiny.jpg/crop=0.5,0,0.6,1', { status: 400, code: 'invalid_parameter' });
    expect(refused.json().message).toMatch(/^Invalid crop "0.5,0,0.6,1": expected x,y,width,height/);
    await throughHandler(small, '/tiny.jpg/crop=0.5,0,0.5,1', { status: 200 });
  });
});
