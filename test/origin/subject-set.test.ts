// The subject set (test/support/subject-photos.ts: real photos, cut so the
// subject sits off the centre, with hand-drawn boxes) through the real
// transform: a portrait and a wide cover crop per photo keep the subject when
// 90% of its box is in the crop. The set is checked first (every subject fits
// its crops; the centre loses it in most), then position=center and attention
// as they are, then position=auto and segment=foreground against the issue's
// criteria as soon as the grammar takes them; until then, the test says the
// grammar refuses them, and fails loudly the day it takes them and they fall short.

import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Ops } from '../../lambda/grammar';
import {
  cropQuery,
  cropRequest,
  cutOutMeans,
  cutOutOps,
  insidePolygon,
  KEPT_SHARE,
  keptShare,
  opsOf,
  shareInside,
  SUBJECT_CROPS,
  subjectCases,
  subjectPhotos,
  transformed,
  type SubjectCase,
  type SubjectCrop,
} from '../support/subject-photos';

const photos = subjectPhotos();
const CROPS = Object.keys(SUBJECT_CROPS) as SubjectCrop[];
let cases: SubjectCase[] = [];

beforeAll(async () => {
  if (photos) cases = await subjectCases(photos);
});

/** The share of the subject the best window of `crop` could keep: the window slid to the subject's centre, within the photo. */
function bestShare({ width, height, subject }: SubjectCase, crop: SubjectCrop): number {
  const [w, h] = cropRequest(crop, width, height);
  const scale = Math.max(w / width, h / height);
  const [across, down] = [w / scale / width, h / scale / height];
  const place = (start: number, size: number, window: number) => Math.min(1 - window, Math.max(0, start + size / 2 - window / 2));
  const window = { x: place(subject.x, subject.width, across), y: place(subject.y, subject.height, down), width: across, height: down };
  return shareInside(subject, window);
}

/** How many of the set's crops keep the subject with `position`. */
async function keptCount(position: string): Promise<number> {
  let kept = 0;
  for (const subjectCase of cases) {
    for (const crop of CROPS) {
      const ops = opsOf(cropQuery(subjectCase, crop, position));
      expect(ops, `position=${position}`).not.toBeTypeOf('string');
      if ((await keptShare(subjectCase, ops as Ops)) >= KEPT_SHARE) kept++;
    }
  }
  return kept;
}

describe.skipIf(!photos)('the subject set', () => {
  it('has seven photos, each subject fitting its portrait and wide crop, and lost by the centred crop in half the crops or more', async () => {
    expect(cases).toHaveLength(7);
    for (const subjectCase of cases) {
      for (const crop of CROPS) expect(bestShare(subjectCase, crop), `${subjectCase.name}, ${crop}`).toBeGreaterThanOrEqual(KEPT_SHARE);
    }
    // Measured: center keeps 5 of the 14.
    expect(await keptCount('center')).toBeLessThanOrEqual(7);
  });

  it('scores attention: it keeps more subjects than the centre, and short of all (the bar position=auto must clear)', async () => {
    // Measured: attention keeps 9 of the 14, center 5.
    const attention = await keptCount('attention');
    expect(attention).toBeGreaterThan(await keptCount('center'));
    expect(attention).toBeLessThan(cases.length * CROPS.length);
  });

  it('position=auto keeps more subjects than attention, and more than the centre', async () => {
    const kept = await keptCount('auto');
    expect(kept).toBeGreaterThan(await keptCount('attention'));
    expect(kept).toBeGreaterThan(await keptCount('center'));
  });

  // Measured: auto keeps 13 of the 14. The one it loses is the cat's portrait (55% of its face): the face
  // detector takes the cat's right eye for a face (0.80 confident), and auto crops on faces first.
  it('position=auto keeps the subject in all crops but one at most', async () => {
    expect(await keptCount('auto')).toBeGreaterThanOrEqual(cases.length * CROPS.length - 1);
  });

  it('segment=foreground keeps every whole subject opaque within its outline, and the border away from it transparent', async () => {
    const cutOut = cutOutOps() as Ops;
    const whole = cases.filter(({ outline }) => outline);
    expect(whole.map(({ name }) => name)).toEqual(['rocket, low', 'dahlia, left', 'blurred clock, low left']);
    for (const { name, image, subject, outline } of whole) {
      const means = await cutOutMeans(await transformed(image, cutOut), subject, outline!);
      expect(means.outline, name).toBeGreaterThanOrEqual(0.5);
      expect(means.border, name).toBeLessThanOrEqual(0.2);
    }
  });
});

describe('the scoring', () => {
  it('finds the points inside an outline, a concave one too', () => {
    // A U: two arms joined at the bottom.
    const u: [number, number][] = [
      [0, 0],
      [1, 0],
      [1, 3],
      [2, 3],
      [2, 0],
      [3, 0],
      [3, 4],
      [0, 4],
    ];
    expect(insidePolygon(0.5, 1, u)).toBe(true);
    expect(insidePolygon(2.5, 1, u)).toBe(true);
    expect(insidePolygon(1.5, 3.5, u)).toBe(true);
    expect(insidePolygon(1.5, 1, u)).toBe(false);
    expect(insidePolygon(3.5, 1, u)).toBe(false);
  });

  it('counts a box kept by the share of its area inside the window', () => {
    const box = { x: 0.1, y: 0.1, width: 0.4, height: 0.4 };
    expect(shareInside(box, { x: 0, y: 0, width: 1, height: 1 })).toBe(1);
    expect(shareInside(box, { x: 0.3, y: 0, width: 0.7, height: 1 })).toBeCloseTo(0.5);
    expect(shareInside(box, { x: 0.6, y: 0, width: 0.4, height: 1 })).toBe(0);
  });

  it("reads a cut-out's alpha over the outline, the box and the border frame away from it", async () => {
    const [width, height] = [200, 100];
    const subject = { x: 0.4, y: 0.3, width: 0.2, height: 0.4 };
    // Opaque over the box's left half, and at the left edge, far from the box; clear elsewhere.
    const alpha = Buffer.alloc(width * height);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        if (x >= 80 && x < 100 && y >= 30 && y < 70) alpha[y * width + x] = 255;
        else if (x < 10) alpha[y * width + x] = 255;
      }
    }
    const cutOut = await sharp({ create: { width, height, channels: 3, background: '#808080' } })
      .joinChannel(alpha, { raw: { width, height, channels: 1 } })
      .png()
      .toBuffer();
    // The outline: a triangle within the box's opaque left half.
    const triangle: [number, number][] = [
      [0.4, 0.3],
      [0.5, 0.3],
      [0.4, 0.7],
    ];
    const means = await cutOutMeans(cutOut, subject, triangle);
    expect(means.outline).toBe(1);
    expect(means.box).toBe(0.5);
    // The frame is 10 px deep and all of it 10 px or more from the box: its left side (10 x 100 px) is opaque.
    expect(means.border).toBeCloseTo((10 * 100) / (200 * 100 - 180 * 80), 4);
  });
});
