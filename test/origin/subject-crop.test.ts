// `position=auto` without the model: the placement (subject-crop.ts) on its
// own, then through the real steps and sharp on sources made here, a red
// object off the centre of a grey field, with the Subject a model would give
// for it (the red pixels as the mask, their bounds as the box). The portrait
// and the wide crop keep the object where `center` cuts it; the subject is
// followed through EXIF orientation, turns, mirrors, trim and a crop region;
// faces come first; without a subject the crop is `attention`'s.

import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { Ops } from '../../lambda/grammar';
import { DEFAULT_LIMITS } from '../../lambda/origin/config';
import type { FaceBox } from '../../lambda/origin/image/faces';
import { openSource } from '../../lambda/origin/image/input';
import { planOutput } from '../../lambda/origin/image/output';
import { applySteps } from '../../lambda/origin/image/steps';
import { subjectAnchor, subjectFocus, weightedCentre } from '../../lambda/origin/image/subject-crop';
import { SUBJECT_MASK_SIDE, type Subject } from '../../lambda/origin/image/subject';

/** A mask of `width` x `height` whose pixel (x, y) is `value(x, y)`. */
function maskOf(width: number, height: number, value: (x: number, y: number) => number): Subject['mask'] {
  const data = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data[y * width + x] = value(x, y);
  return { data, width, height };
}

describe('weightedCentre: the centroid of the mask over the box', () => {
  const whole = { x: 0, y: 0, width: 1, height: 1 };

  it('is the box centre for a uniform mask, and for an empty one', () => {
    expect(weightedCentre({ box: whole, mask: maskOf(10, 10, () => 200) }, whole)).toEqual([0.5, 0.5]);
    const box = { x: 0.2, y: 0.4, width: 0.4, height: 0.2 };
    expect(weightedCentre({ box, mask: maskOf(10, 10, () => 0) }, box)).toEqual([0.4, 0.5]);
  });

  it('leans to where the mask is heavier, counting only the pixels whose centres are in the box', () => {
    // Columns 0..4 weigh 255, 5..9 weigh 85: the centroid of the columns is left of the middle.
    const mask = maskOf(10, 4, (x) => (x < 5 ? 255 : 85));
    const [x, y] = weightedCentre({ box: whole, mask }, whole);
    expect(x).toBeCloseTo((255 * 12.5 + 85 * 37.5) / (255 * 5 + 85 * 5) / 10, 10);
    expect(y).toBe(0.5);
    // The box over columns 5..9 only: uniform there.
    const right = { x: 0.5, y: 0, width: 0.5, height: 1 };
    expect(weightedCentre({ box: right, mask }, right)).toEqual([0.75, 0.5]);
  });
});

describe("subjectAnchor: the box's top, and the centroid across", () => {
  it('is the top of the box, at the weighted centre across', () => {
    const box = { x: 0.5, y: 0.2, width: 0.5, height: 0.6 };
    // Heavier at the right: the centroid leans right, the anchor stays on the box's top edge.
    const mask = maskOf(10, 10, (x) => (x >= 8 ? 200 : 50));
    const [x, y] = subjectAnchor({ box, mask }, box);
    expect(x).toBeCloseTo(weightedCentre({ box, mask }, box)[0]);
    expect(x).toBeGreaterThan(0.75);
    expect(y).toBe(0.2);
  });
});

describe('subjectFocus: where the window centres', () => {
  const subject = { left: 100, top: 50, right: 300, bottom: 150, anchor: [120, 140] as [number, number] };

  it('holds the whole box, centred on it, along a side where the window is long enough', () => {
    expect(subjectFocus(subject, [200, 100])).toEqual([200, 100]);
    expect(subjectFocus(subject, [500, 400])).toEqual([200, 100]);
  });

  it('centres a shorter window on the anchor, kept within the box', () => {
    // Across: 120 would put the window's left edge at 20, outside the box: it starts at the box's left.
    expect(subjectFocus(subject, [100, 100])).toEqual([150, 100]);
    // Down: 140 would reach past the bottom (150): the window ends there.
    expect(subjectFocus(subject, [200, 40])).toEqual([200, 130]);
    // An anchor well inside the box is the window's centre.
    expect(subjectFocus({ ...subject, anchor: [210, 100] }, [100, 40])).toEqual([210, 100]);
    // An anchor on the box's top edge (subjectAnchor's): the window starts there.
    expect(subjectFocus({ ...subject, anchor: [210, 50] }, [100, 40])).toEqual([210, 70]);
  });
});

const GREY = { r: 128, g: 128, b: 128 };
/** Whether the pixel at byte `i` of 3-channel pixels is the object's red. */
const isRed = (data: Buffer, i: number) => data[i]! > 200 && data[i + 1]! < 60 && data[i + 2]! < 60;

/** A `width` x `height` grey PNG with red rectangles (left, top, width, height), optionally in a white frame. */
async function scene(width: number, height: number, objects: [number, number, number, number][], frame = 0): Promise<Buffer> {
  const red = objects.map(([left, top, w, h]) => ({
    input: { create: { width: w, height: h, channels: 3 as const, background: { r: 230, g: 20, b: 20 } } },
    left,
    top,
  }));
  const image = await sharp({ create: { width, height, channels: 3, background: GREY } })
    .composite(red)
    .png()
    .toBuffer();
  const white = { r: 255, g: 255, b: 255 };
  return frame ? sharp(image).extend({ top: frame, bottom: frame, left: frame, right: frame, background: white }).png().toBuffer() : image;
}

/** What a model would find in `source` as displayed: its red pixels as the mask (long side SUBJECT_MASK_SIDE), their bounds as the box. */
async function redSubject(source: Buffer): Promise<Subject> {
  const { data, info } = await sharp(source)
    .autoOrient()
    .resize(SUBJECT_MASK_SIDE, SUBJECT_MASK_SIDE, { fit: 'inside', kernel: 'nearest' })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const mask = maskOf(info.width, info.height, (x, y) => (isRed(data, (y * info.width + x) * 3) ? 255 : 0));
  const xs: number[] = [];
  const ys: number[] = [];
  mask.data.forEach((value, i) => {
    if (value) [xs, ys].forEach((list, axis) => list.push(axis ? Math.floor(i / info.width) : i % info.width));
  });
  const box = xs.length
    ? {
        x: Math.min(...xs) / info.width,
        y: Math.min(...ys) / info.height,
        width: (Math.max(...xs) + 1 - Math.min(...xs)) / info.width,
        height: (Math.max(...ys) + 1 - Math.min(...ys)) / info.height,
      }
    : null;
  return { box, mask };
}

/** The output of the steps for `ops` on `source`, as PNG pixels, with the subject and faces given. */
async function output(source: Buffer, ops: Ops, found: { subject?: Subject; faces?: FaceBox[] } = {}) {
  const opened = await openSource(source, DEFAULT_LIMITS);
  const withFormat: Ops = { format: 'png', ...ops };
  const plan = planOutput(withFormat, opened.info);
  const image = await opened.firstFrame();
  const { pipeline } = await applySteps(image, { ops: withFormat, info: opened.info, plan, limits: DEFAULT_LIMITS, ...found });
  return pipeline.removeAlpha().raw().toBuffer({ resolveWithObject: true });
}

/** How many of the output's pixels are red. */
function redPixels(made: { data: Buffer }): number {
  let count = 0;
  for (let i = 0; i < made.data.length; i += 3) if (isRed(made.data, i)) count++;
  return count;
}

/** The red pixels of `ops`'s output with `position=auto` and with `position=center`, the source's subject given. */
async function autoAndCentre(source: Buffer, ops: Ops): Promise<[number, number]> {
  const subject = await redSubject(source);
  const auto = await output(source, { ...ops, position: 'auto' }, { subject });
  const centre = await output(source, ops, { subject });
  return [redPixels(auto), redPixels(centre)];
}

describe('position=auto through the steps, on a red object off the centre of a grey field', () => {
  // 600x600, the object 100x100 at the bottom right: a portrait crop keeps a 200-wide band, a wide one a 200-high band.
  const object: [number, number, number, number] = [430, 440, 100, 100];
  // At 100x300 from 600x600, the scale is 1/2: the object is 50x50 in the output.
  const whole = 50 * 50;

  it('keeps the whole object in a portrait crop and in a wide one, where center keeps none of it', async () => {
    const source = await scene(600, 600, [object]);
    for (const box of [
      { width: 100, height: 300 },
      { width: 300, height: 100 },
    ]) {
      const [auto, centre] = await autoAndCentre(source, box);
      expect(auto, `${box.width}x${box.height}`).toBeGreaterThanOrEqual(whole * 0.95);
      expect(centre, `${box.width}x${box.height}`).toBe(0);
    }
  });

  it('fills the window with the object where the object is larger than it', async () => {
    // A 300x100 object, a window 150 wide: the window lies within the object across.
    const source = await scene(600, 300, [[250, 150, 300, 100]]);
    const made = await output(source, { width: 150, height: 300, position: 'auto' }, { subject: await redSubject(source) });
    const { width, height } = made.info;
    // Every column of the output holds red, 60 rows from the bottom (centre would keep the grey left of the object).
    for (let x = 0; x < width; x++) expect(isRed(made.data, ((height - 60) * width + x) * 3), `column ${x}`).toBe(true);
  });

  it("keeps the top of a subject taller than the window, the subject's own top after a mirror or a half turn", async () => {
    // A 100x400 red object with a 40 px yellow cap, 600x600; a 300x100 crop keeps a 200-high band of it.
    const plain = await scene(600, 600, [[250, 100, 100, 400]]);
    const source = await sharp(plain)
      .composite([{ input: { create: { width: 100, height: 40, channels: 3, background: '#ffff00' } }, left: 250, top: 100 }])
      .png()
      .toBuffer();
    // The whole object is the subject, its cap too.
    const subject = await redSubject(plain);
    const yellowRows = async (ops: Ops) => {
      const made = await output(source, { width: 300, height: 100, position: 'auto', ...ops }, { subject });
      const { width, height } = made.info;
      const rows: number[] = [];
      for (let y = 0; y < height; y++) {
        const i = (y * width + width / 2) * 3;
        if (made.data[i]! > 200 && made.data[i + 1]! > 200 && made.data[i + 2]! < 60) rows.push(y);
      }
      return rows;
    };
    // Upright: the cap at the output's top (20 rows at the scale of 1/2); flipped or turned, at its bottom.
    expect(await yellowRows({})).toEqual(Array.from({ length: 20 }, (_, i) => i));
    for (const ops of [{ flip: true }, { rotate: 180 }] as Ops[]) {
      expect(await yellowRows(ops), JSON.stringify(ops)).toEqual(Array.from({ length: 20 }, (_, i) => 80 + i));
    }
  });

  it('follows the subject through EXIF orientation, a turn, mirrors, trim and a crop region', async () => {
    const upright = await scene(600, 600, [object]);
    const sources = {
      // Stored a quarter turn back, displayed upright (EXIF 6).
      oriented: await sharp(upright).rotate(270).withMetadata({ orientation: 6 }).jpeg({ quality: 95 }).toBuffer(),
      framed: await scene(600, 600, [object], 40),
      plain: upright,
    };
    const cases: [keyof typeof sources, Ops][] = [
      ['oriented', { width: 100, height: 300 }],
      ['plain', { width: 100, height: 300, rotate: 90 }],
      ['plain', { width: 100, height: 300, flip: true, flop: true }],
      ['plain', { width: 300, height: 100, rotate: 270, flop: true }],
      ['framed', { width: 100, height: 300, trim: 10 }],
      // The region 480 wide: the object is at 310..410 of it, the centre's window 140..340.
      ['plain', { width: 100, height: 300, crop: '0.2,0,0.8,1' }],
    ];
    for (const [name, ops] of cases) {
      const [auto, centre] = await autoAndCentre(sources[name], ops);
      expect(auto, `${name} ${JSON.stringify(ops)}`).toBeGreaterThan(centre);
      expect(auto, `${name} ${JSON.stringify(ops)}`).toBeGreaterThanOrEqual(whole * 0.9);
    }
  });

  it('crops to the faces first when there are faces, as position=face does', async () => {
    // A "face" at the top left, the red object at the bottom right.
    const source = await scene(600, 600, [object]);
    const faces: FaceBox[] = [{ x: 0.05, y: 0.05, width: 0.1, height: 0.1, confidence: 0.9, eyes: { x: 0.1, y: 0.09 } }];
    const subject = await redSubject(source);
    const auto = await output(source, { width: 100, height: 300, position: 'auto' }, { subject, faces });
    const face = await output(source, { width: 100, height: 300, position: 'face' }, { faces });
    expect(auto.data.equals(face.data)).toBe(true);
    expect(redPixels(auto)).toBe(0);
  });

  it("is attention's crop without a subject, or with a subject without a box", async () => {
    const source = await scene(600, 600, [object]);
    const attention = await output(source, { width: 100, height: 300, position: 'attention' });
    const empty: Subject = { box: null, mask: maskOf(320, 320, () => 0) };
    for (const found of [{}, { subject: empty }]) {
      const auto = await output(source, { width: 100, height: 300, position: 'auto' }, found);
      expect(auto.data.equals(attention.data)).toBe(true);
    }
  });
});
