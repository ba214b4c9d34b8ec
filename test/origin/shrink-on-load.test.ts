// The decode the price model reckons for a JPEG much larger than its output:
// shrunk on load (by 8 here), unless a step reads the whole image at its
// decoded size (a trim, a crop region, an entropy or attention crop), as
// sharp does. An op that defeats the shrink and is priced as if it did not
// would be served past its memory budget.

import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_GRAMMAR_OPTIONS, parseCanonicalUri } from '../../lambda/grammar';
import { DEFAULT_LIMITS } from '../../lambda/origin/config';
import { describeWork } from '../../lambda/origin/image/budget';
import { openSource, type SourceInfo } from '../../lambda/origin/image/input';
import { gradientJpeg } from '../support/images';

let jpeg: SourceInfo;

beforeAll(async () => {
  jpeg = (await openSource(await gradientJpeg(2400, 1600), DEFAULT_LIMITS)).info;
});

/** The pixels the model says libvips decodes for a canonical ops segment. */
const decodedPixels = (segment: string) =>
  describeWork(jpeg, parseCanonicalUri(`/k/${segment}`, DEFAULT_GRAMMAR_OPTIONS).ops, 1, DEFAULT_GRAMMAR_OPTIONS.maxDimension)
    .decodedPixels;

describe('shrink-on-load in the price of a decode', () => {
  it('shrinks a JPEG by 8 for an output a sixteenth of its width', () => {
    expect(decodedPixels('width=150,format=jpeg')).toBe(300 * 200);
    expect(decodedPixels('width=150,height=100,position=top,format=jpeg')).toBe(300 * 200);
  });

  it.each([
    'width=150,trim=10,format=jpeg',
    'width=150,crop=0,0,1,0.5,format=jpeg',
    'width=150,height=100,position=entropy,format=jpeg',
    'width=150,height=100,position=attention,format=jpeg',
  ])('decodes it whole for %s, which reads the whole decoded image', (segment) => {
    expect(decodedPixels(segment)).toBe(2400 * 1600);
  });
});
