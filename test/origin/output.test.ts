// The output plan: which formats a request may be answered in, best first,
// for canonical URIs as the edge writes them (an explicit format, or what
// Accept allowed), over real sources opened as the origin opens them.

import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_GRAMMAR_OPTIONS, parseCanonicalUri } from '../../lambda/grammar';
import { DEFAULT_LIMITS } from '../../lambda/origin/config';
import { openSource, type SourceInfo } from '../../lambda/origin/image/input';
import { encode } from '../../lambda/origin/image/encoders';
import { planOutput, type OutputPlan } from '../../lambda/origin/image/output';
import { rgbOf, ssimulacra2 } from '../../scripts/bench/ssimulacra2';
import { alphaPng, animatedGif, gradientJpeg, grainyScenePng } from '../support/images';

const sources: Record<'opaque' | 'alpha' | 'animated', SourceInfo> = {} as never;

beforeAll(async () => {
  sources.opaque = (await openSource(await gradientJpeg(40, 30), DEFAULT_LIMITS)).info;
  sources.alpha = (await openSource(await alphaPng(40, 30), DEFAULT_LIMITS)).info;
  sources.animated = (await openSource(await animatedGif(3, 40, 30), DEFAULT_LIMITS)).info;
});

/** The plan for a canonical ops segment, e.g. `width=100,accept=avif`. */
function plan(segment: string, source: keyof typeof sources): OutputPlan {
  return planOutput(parseCanonicalUri(`/k/${segment}`, DEFAULT_GRAMMAR_OPTIONS).ops, sources[source]);
}

describe('planOutput candidates', () => {
  it.each<[string, keyof typeof sources, string[], boolean]>([
    // Negotiated: what the viewer accepts, then the family every viewer takes.
    ['accept=avif', 'opaque', ['avif', 'webp', 'jpeg'], false],
    ['accept=avif', 'alpha', ['avif', 'webp', 'png'], false],
    ['accept=webp', 'opaque', ['webp', 'jpeg'], false],
    ['accept=webp', 'alpha', ['webp', 'png'], false],
    ['width=20', 'opaque', ['jpeg'], false],
    ['width=20', 'alpha', ['png'], false],
    // libvips writes no animated AVIF: an animation is offered as WebP, then GIF.
    ['accept=avif', 'animated', ['webp', 'gif'], true],
    ['accept=webp', 'animated', ['webp', 'gif'], true],
    ['width=20', 'animated', ['gif'], true],
    // A quarter turn gives the first frame, which AVIF can hold (GIF frames decode with alpha).
    ['rotate=90,accept=avif', 'animated', ['avif', 'webp', 'png'], false],
    // So do a trim, a blurred fill and a watermark, which libvips cannot apply frame by frame; a half turn can be.
    ['trim=10,accept=avif', 'animated', ['avif', 'webp', 'png'], false],
    ['width=20,height=20,fit=contain,fill=blur,accept=avif', 'animated', ['avif', 'webp', 'png'], false],
    ['watermark=logo.1a2b3c4d,accept=avif', 'animated', ['avif', 'webp', 'png'], false],
    ['rotate=180,accept=avif', 'animated', ['webp', 'gif'], true],
    // Explicit: that format only, whatever the source.
    ['format=avif', 'opaque', ['avif'], false],
    ['format=webp', 'alpha', ['webp'], false],
    ['format=jpeg', 'alpha', ['jpeg'], false],
    ['format=png', 'opaque', ['png'], false],
    ['format=gif', 'opaque', ['gif'], false],
    ['format=avif', 'animated', ['webp'], true],
    ['format=gif', 'animated', ['gif'], true],
    ['format=jpeg', 'animated', ['jpeg'], false],
  ])('%s on the %s source: %j (animated: %s)', (segment, source, candidates, animated) => {
    const result = plan(segment, source);
    expect(result.candidates).toEqual(candidates);
    expect(result.format).toBe(candidates[0]);
    expect(result.animated).toBe(animated);
  });

  it('treats format=avif as explicit, the way an old edge still writes a negotiated one during a deploy', () => {
    expect(plan('width=20,format=avif', 'opaque').candidates).toEqual(['avif']);
    expect(plan('width=20,accept=avif', 'opaque').candidates).toEqual(['avif', 'webp', 'jpeg']);
  });
});

describe('encode', () => {
  it("makes a JPEG in fewer bytes than libjpeg's standard tables need for the same SSIMULACRA 2", async () => {
    const original = await grainyScenePng(400, 300);
    const reference = await rgbOf(original);
    const scored = async (jpeg: Buffer) => ({ bytes: jpeg.length, score: ssimulacra2(reference, await rgbOf(jpeg)) });
    const ours = await scored(await encode(sharp(original), { format: 'jpeg' }).toBuffer());
    // The standard tables' bytes at our score, interpolated between the two neighbours of a sweep in steps of 2.
    const sweep: { bytes: number; score: number }[] = [];
    for (let quality = 70; quality <= 90; quality += 2)
      sweep.push(await scored(await sharp(original).jpeg({ quality, progressive: true }).toBuffer()));
    const high = sweep.findIndex((point) => point.score >= ours.score);
    expect(high).toBeGreaterThan(0);
    const [below, above] = [sweep[high - 1]!, sweep[high]!];
    const standardBytes = below.bytes + ((ours.score - below.score) / (above.score - below.score)) * (above.bytes - below.bytes);
    expect(ours.bytes).toBeLessThan(standardBytes * 0.95);
  });
});
