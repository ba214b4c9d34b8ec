// The focal point (`fp`, or the source's `x-amz-meta-focal-point`) through the
// real handler on LocalStack. The source is a position map made here with
// sharp: red grows from left to right and green from top to bottom, so the
// colour of any output pixel says which point of the source it shows, and
// "the crop is centred on the point" is read straight off the output's centre.

import { CopyObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { animatedGif, pixelAt, type Orientation, type Rgb } from '../support/images';
import { createTestOrigin, type TestOrigin } from '../support/origin';
import { invalidationOf, s3Event, s3EventKey } from '../invalidate/support';

let origin: TestOrigin;

const BLUE = 128;

/**
 * A JPEG that displays, once EXIF `orientation` is applied, as a `width` x
 * `height` position map (optionally inside a white `frame`), whatever way its
 * pixels are stored.
 */
async function positionMap(width: number, height: number, options: { orientation?: Orientation; frame?: number } = {}): Promise<Buffer> {
  const { orientation = 1, frame = 0 } = options;
  const [w, h] = [width - 2 * frame, height - 2 * frame];
  const pixels = Buffer.alloc(w * h * 3);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      pixels.set([Math.round((255 * (x + 0.5)) / w), Math.round((255 * (y + 0.5)) / h), BLUE], (y * w + x) * 3);
    }
  }
  const displayed = await sharp(pixels, { raw: { width: w, height: h, channels: 3 } })
    .extend({ top: frame, bottom: frame, left: frame, right: frame, background: '#ffffff' })
    .png()
    .toBuffer();
  // Stored turned back by what the orientation turns it (6: a quarter clockwise; 3: a half).
  const undo = { 1: 0, 3: 180, 6: 270, 8: 90 }[orientation as 1 | 3 | 6 | 8];
  return sharp(displayed).rotate(undo).jpeg({ quality: 95 }).withMetadata({ orientation }).toBuffer();
}

/** The point of the map (fractions of its picture, frame excluded) that a colour shows. */
const pointOf = ({ r, g }: Rgb): [number, number] => [r / 255, g / 255];

async function image(uri: string): Promise<{ body: Buffer; width: number; height: number }> {
  const response = await origin.request(uri);
  expect(response.status, `${uri}: ${response.body.toString('utf8', 0, 200)}`).toBe(200);
  const meta = await sharp(response.body).metadata();
  return { body: response.body, width: meta.width, height: meta.height };
}

/** The point of the source shown at the output's centre (or at `x`, `y`). */
async function shown(uri: string, at?: [number, number]): Promise<[number, number]> {
  const { body, width, height } = await image(uri);
  const [x, y] = at ?? [Math.floor(width / 2), Math.floor(height / 2)];
  return pointOf(await pixelAt(body, x, y));
}

/** Within a 50th of the image by default: a pixel or two, and JPEG's colour error. */
function expectPoint(actual: [number, number], expected: [number, number], tolerance = 0.02): void {
  expect(Math.abs(actual[0] - expected[0]), `x: ${actual} vs ${expected}`).toBeLessThan(tolerance);
  expect(Math.abs(actual[1] - expected[1]), `y: ${actual} vs ${expected}`).toBeLessThan(tolerance);
}

/**
 * What the crops of `source` (ops after fp in `ops`) show at their centre for
 * the point x,y: a square box has room across the long side of the image as
 * displayed, a long thin box across the short side, so each places one
 * coordinate of the point and leaves the other at the middle. `portrait`: the
 * image is displayed taller than wide (turned a quarter).
 */
async function expectCentredOn(source: string, [x, y]: [number, number], ops = '', portrait = false): Promise<void> {
  const rest = ops ? `,${ops}` : '';
  const thin = portrait ? 'width=40,height=200' : 'width=200,height=40';
  // The map's x runs along the long side of the stored picture, whichever way it is displayed.
  expectPoint(await shown(`/${source}/width=60,height=60,fp=${x},${y}${rest}`), [x, 0.5]);
  expectPoint(await shown(`/${source}/${thin},fp=${x},${y}${rest}`), [0.5, y]);
}

function putSourceWithFocus(key: string, body: Buffer, focalPoint: string): Promise<unknown> {
  return origin.s3.send(
    new PutObjectCommand({
      Bucket: origin.sourceBucket,
      Key: key,
      Body: body,
      ContentType: 'image/jpeg',
      Metadata: { 'focal-point': focalPoint },
    }),
  );
}

beforeAll(async () => {
  origin = await createTestOrigin('focal-point');
  await Promise.all([
    origin.putSource('map.jpg', await positionMap(400, 200)),
    origin.putSource('map-6.jpg', await positionMap(400, 200, { orientation: 6 })),
    origin.putSource('map-3.jpg', await positionMap(400, 200, { orientation: 3 })),
    origin.putSource('framed.jpg', await positionMap(440, 240, { frame: 20 })),
    origin.putSource('framed-6.jpg', await positionMap(440, 240, { frame: 20, orientation: 6 })),
    origin.putSource('small.jpg', await positionMap(40, 20)),
    origin.putSource(
      'line.png',
      await sharp(await positionMap(10000, 2))
        .png()
        .toBuffer(),
    ),
    origin.putSource('anim.gif', await animatedGif(3, 60, 40)),
    putSourceWithFocus('tagged.jpg', await positionMap(400, 200), '0.6,0.3'),
    putSourceWithFocus('tagged-badly.jpg', await positionMap(400, 200), '60%,30%'),
  ]);
});

describe('fp centres a cover crop on the point', () => {
  it('shows the point at the centre of the crop, across the long side and the short one', async () => {
    expectPoint(await shown('/map.jpg/width=100,height=100,fp=0.6,0.5'), [0.6, 0.5]);
    expectPoint(await shown('/map.jpg/width=100,height=100'), [0.5, 0.5]);
    expectPoint(await shown('/map.jpg/width=200,height=50,fp=0.5,0.7'), [0.5, 0.7]);
    expectPoint(await shown('/map.jpg/width=200,height=50,fp=0.3,0.35'), [0.5, 0.35]); // nothing to move across
  });

  it('keeps the crop within the image: a point near an edge puts the crop against it', async () => {
    const { body, width, height } = await image('/map.jpg/width=100,height=100,fp=1,1');
    expect([width, height]).toEqual([100, 100]);
    // The crop is the right-hand half of the (scaled) map; its centre is not the point.
    expectPoint(pointOf(await pixelAt(body, 99, 99)), [1, 1]);
    expectPoint(pointOf(await pixelAt(body, 0, 50)), [0.5, 0.5]);
    expectPoint(pointOf(await pixelAt(body, 0, 0)), [0.5, 0]);
  });

  it('at the centre, makes what sharp makes without a point', async () => {
    const centred = await image('/map.jpg/width=120,height=90,fp=0.5,0.5');
    const plain = await image('/map.jpg/width=120,height=90');
    expect([centred.width, centred.height]).toEqual([plain.width, plain.height]);
    for (const [x, y] of [
      [0, 0],
      [60, 45],
      [119, 89],
    ] as const) {
      expectPoint(pointOf(await pixelAt(centred.body, x, y)), pointOf(await pixelAt(plain.body, x, y)));
    }
  });

  it('names a point of the image as displayed: EXIF orientation does not move it', async () => {
    for (const key of ['map.jpg', 'map-6.jpg', 'map-3.jpg']) await expectCentredOn(key, [0.3, 0.6]);
  });

  it('follows the point through turns and mirrors', async () => {
    for (const ops of ['rotate=180', 'flip=1', 'flop=1', 'flip=1,flop=1']) await expectCentredOn('map.jpg', [0.3, 0.6], ops);
    for (const ops of ['rotate=90', 'rotate=270', 'rotate=90,flip=1', 'rotate=270,flop=1'])
      await expectCentredOn('map.jpg', [0.3, 0.6], ops, true);
    await expectCentredOn('map-6.jpg', [0.7, 0.4], 'rotate=90,flop=1', true);
  });

  it('within a crop region, centres on the point, or against the region edge nearest to it', async () => {
    // The right half of the map, 200x200, to 100x50: only the height has room to move.
    expectPoint(await shown('/map.jpg/width=100,height=50,fp=0.75,0.3,crop=0.5,0,0.5,1'), [0.75, 0.3]);
    const { body } = await image('/map.jpg/width=50,height=100,fp=0.1,0.5,crop=0.25,0,0.75,1');
    expectPoint(pointOf(await pixelAt(body, 0, 50)), [0.25, 0.5]);
  });

  it('after trim, centres on the same point of the picture, EXIF orientation or not', async () => {
    // The picture is 400x200 inside a 20-pixel white frame; fp names a point of the framed source.
    const fp = [(20 + 0.7 * 400) / 440, (20 + 0.4 * 200) / 240].map((v) => v.toFixed(4)).join(',');
    for (const key of ['framed.jpg', 'framed-6.jpg']) {
      for (const ops of ['trim=10', 'flop=1,trim=10', 'flip=1,trim=10']) {
        expectPoint(await shown(`/${key}/width=60,height=60,fp=${fp},${ops}`), [0.7, 0.5]);
        expectPoint(await shown(`/${key}/width=200,height=40,fp=${fp},${ops}`), [0.5, 0.4]);
      }
      expectPoint(await shown(`/${key}/width=60,height=60,fp=${fp},rotate=90,trim=10`), [0.7, 0.5]);
      expectPoint(await shown(`/${key}/width=40,height=200,fp=${fp},rotate=90,trim=10`), [0.5, 0.4]);
    }
  });

  it('does not enlarge unless asked, and then centres the enlarged crop on the point', async () => {
    // 40x20 into 30x30: the box shrinks to the source's height, as sharp's cover does.
    const small = await image('/small.jpg/width=30,height=30,fp=0.6,0.5');
    const plain = await image('/small.jpg/width=30,height=30');
    expect([small.width, small.height]).toEqual([plain.width, plain.height]);
    // A pixel of a 40-pixel image is a 40th of it.
    expectPoint(pointOf(await pixelAt(small.body, 15, 10)), [0.6, 0.5], 0.04);
    expectPoint(await shown('/small.jpg/width=200,height=200,fp=0.6,0.5,enlarge=1'), [0.6, 0.5], 0.04);
  });

  it('places the cut of an extreme enlargement too (a 10000x2 line to a square)', async () => {
    expectPoint(await shown('/line.png/width=2000,height=2000,fp=0.3,0.5,enlarge=1'), [0.3, 0.5]);
    expectPoint(await shown('/line.png/width=2000,height=2000,enlarge=1'), [0.5, 0.5]);
  });

  it('crops every frame of an animation alike', async () => {
    const response = await origin.request('/anim.gif/width=20,height=20,fp=0.9,0.1');
    expect(response.status).toBe(200);
    const meta = await sharp(response.body, { animated: true }).metadata();
    expect([meta.width, meta.pageHeight, meta.pages]).toEqual([20, 20, 3]);
  });
});

describe("the source's focal point (x-amz-meta-focal-point)", () => {
  it('centres cover crops on it when the URI gives no point or position', async () => {
    expectPoint(await shown('/tagged.jpg/width=100,height=100'), [0.6, 0.5]);
    expectPoint(await shown('/tagged.jpg/width=200,height=50'), [0.5, 0.3]);
  });

  it("gives way to the URI's own point and to a named position", async () => {
    expectPoint(await shown('/tagged.jpg/width=100,height=100,fp=0.3,0.5'), [0.3, 0.5]);
    expectPoint(await shown('/tagged.jpg/width=100,height=100,position=left'), [0.25, 0.5]);
  });

  it('does nothing without a cover crop', async () => {
    const { width, height } = await image('/tagged.jpg/width=100');
    expect([width, height]).toEqual([100, 50]);
    expectPoint(await shown('/tagged.jpg/width=100'), [0.5, 0.5]);
  });

  it('when malformed, is logged and ignored: the image is served as without it', async () => {
    expectPoint(await shown('/tagged-badly.jpg/width=100,height=100'), [0.5, 0.5]);
    const warning = origin.logs.find((entry) => entry.event === 'focal_point_ignored');
    expect(warning).toMatchObject({ level: 'warn', uri: '/tagged-badly.jpg/width=100,height=100' });
    expect(warning?.detail).toBe('x-amz-meta-focal-point: Invalid fp "60%,30%": expected x,y: fractions of the image.');
  });

  it('changed in place (CopyObject, metadata replaced), purges the variants, which are made again on the new point', async () => {
    const key = 'retagged.jpg';
    const uri = `/${key}/width=100,height=100`;
    await putSourceWithFocus(key, await positionMap(400, 200), '0.3,0.5');
    expectPoint(await shown(uri), [0.3, 0.5]);
    expect(await origin.cachedKeys()).toContain(`${key}/width=100,height=100`);

    await origin.s3.send(
      new CopyObjectCommand({
        Bucket: origin.sourceBucket,
        Key: key,
        CopySource: `${origin.sourceBucket}/${key}`,
        MetadataDirective: 'REPLACE',
        Metadata: { 'focal-point': '0.7,0.5' },
        ContentType: 'image/jpeg',
      }),
    );
    // The event S3 sends for it; the invalidation Lambda's handler as deployed, on these buckets.
    const { handle: invalidate, cloudFront } = invalidationOf(origin);
    const report = await invalidate(s3Event([{ eventName: 'ObjectCreated:Copy', rawKey: s3EventKey(key), bucket: origin.sourceBucket }]));
    expect(report.keys).toMatchObject([{ key, change: 'created', deleted: 1 }]);
    expect(cloudFront.calls[0]?.paths).toContain(uri);
    expect(await origin.cachedKeys()).not.toContain(`${key}/width=100,height=100`);

    expectPoint(await shown(uri), [0.7, 0.5]);
  });
});
