// `position=face` and format=json's `faces` through the real handler on
// LocalStack, on real photos (fetched from PyPI at test time, see
// test/support/face-photos.ts): the crop keeps the face that `center` cuts,
// follows the image's turns, mirrors, trim and crop region as `fp` does,
// falls back to `attention` without a face, puts the eyes of a close portrait
// in the upper part of a wide crop, and each source is searched once.

import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { purgeSources } from '../../lambda/invalidate/purge';
import { facesKey } from '../../lambda/origin/cache-keys';
import { MAX_FACES, type FaceBox } from '../../lambda/origin/image/faces';
import { closePortrait, facePhotos, faceCases, KNOWN_FACES, shownPart, type Box } from '../support/face-photos';
import { createTestOrigin, type TestOrigin } from '../support/origin';

const photos = facePhotos();
let origin: TestOrigin;

/** Where the face of the tall portrait is (the astronaut cut to 256x512, her face near the top). */
let tallFace: Box;

async function ok(uri: string): Promise<Buffer> {
  const response = await origin.request(uri);
  expect(response.status, `${uri}: ${response.body.toString('utf8', 0, 200)}`).toBe(200);
  return response.body;
}

async function facesOf(key: string): Promise<FaceBox[]> {
  return JSON.parse((await ok(`/${key}/format=json`)).toString()).faces;
}

/** Mean difference of two images' pixels (0 to 255); they must have the same size. */
async function difference(a: Buffer, b: Buffer): Promise<number> {
  const [first, second] = await Promise.all([a, b].map((image) => sharp(image).removeAlpha().raw().toBuffer({ resolveWithObject: true })));
  expect([first!.info.width, first!.info.height]).toEqual([second!.info.width, second!.info.height]);
  let sum = 0;
  for (let i = 0; i < first!.data.length; i++) sum += Math.abs(first!.data[i]! - second!.data[i]!);
  return sum / first!.data.length;
}

/** `fp` at the centre of a face, as the grammar takes it. */
const centre = (face: Box) => [face.x + face.width / 2, face.y + face.height / 2].map((value) => Math.round(value * 1e4) / 1e4).join(',');

beforeAll(async () => {
  origin = await createTestOrigin('face-position');
  if (!photos) return;
  const cases = await faceCases(photos);
  const {
    image: tall,
    faces: [known],
  } = cases.find(({ name }) => name === 'tall portrait')!;
  tallFace = known!;
  const landscape = cases.find(({ name }) => name === 'landscape, person at the right')!.image;
  const group = cases.find(({ name }) => name === 'group of 6, faces 12% of the short side')!.image;
  await Promise.all([
    origin.putSource('tall.jpg', await sharp(tall).jpeg({ quality: 90 }).toBuffer()),
    // Stored turned a quarter back, displayed upright by its EXIF orientation 6.
    origin.putSource('tall-6.jpg', await sharp(tall).rotate(270).jpeg({ quality: 90 }).withMetadata({ orientation: 6 }).toBuffer()),
    // In a white frame that trim takes off.
    origin.putSource(
      'framed.png',
      await sharp(tall).extend({ top: 30, bottom: 30, left: 30, right: 30, background: '#ffffff' }).png().toBuffer(),
    ),
    origin.putSource('landscape.jpg', await sharp(landscape).jpeg({ quality: 90 }).toBuffer()),
    origin.putSource('group.png', group),
    // Two frames of the portrait: the first is searched.
    origin.putSource(
      'anim.gif',
      await sharp(await sharp(tall).extend({ bottom: 512, extendWith: 'repeat' }).raw().toBuffer(), {
        raw: { width: 256, height: 1024, channels: 3, pageHeight: 512 },
      })
        .gif()
        .toBuffer(),
    ),
    origin.putSource('coffee.png', photos.read('coffee.png')),
  ]);
}, 120_000);

const record = (key: string) => origin.s3.send(new GetObjectCommand({ Bucket: origin.cacheBucket, Key: facesKey(key, false) }));

describe.skipIf(!photos)('position=face', () => {
  it('keeps the face near the top of a tall portrait, which center and attention cut off', async () => {
    const faces = await facesOf('tall.jpg');
    expect(faces).toHaveLength(1);
    const face = faces[0]!;
    expect(Math.abs(face.y - tallFace.y)).toBeLessThan(0.05);
    // Square crops keep 256 of the 512 rows: the face is whole in the face crop only.
    await origin.putSource('kept.png', await ok('/tall.jpg/width=256,height=256,position=face'));
    await origin.putSource('centre.png', await ok('/tall.jpg/width=256,height=256'));
    await origin.putSource('attention.png', await ok('/tall.jpg/width=256,height=256,position=attention'));
    const [inFaceCrop, inCentre, inAttention] = await Promise.all([facesOf('kept.png'), facesOf('centre.png'), facesOf('attention.png')]);
    expect(inFaceCrop).toHaveLength(1);
    expect(inFaceCrop[0]!.y).toBeGreaterThan(0); // not cut by the top edge
    expect(inCentre).toEqual([]);
    expect(inAttention).toEqual([]);
  });

  it('centres on the person at the right of a wide landscape in a square crop', async () => {
    const [face] = await facesOf('landscape.jpg');
    const square = await ok('/landscape.jpg/width=300,height=300,position=face');
    expect(await difference(square, await ok(`/landscape.jpg/width=300,height=300,fp=${centre(face!)}`))).toBeLessThan(1);
  });

  it('holds every face of a group when they fit, and the largest group when they do not', async () => {
    const faces = await facesOf('group.png');
    expect(faces.length).toBe(6);
    const wide = await ok('/group.png/width=800,height=400,position=face');
    await origin.putSource('group-wide.png', await sharp(wide).png().toBuffer());
    expect(await facesOf('group-wide.png')).toHaveLength(6);
    // A tall thin crop holds one column of faces: two of them, whole.
    const thin = await ok('/group.png/width=200,height=1000,position=face');
    await origin.putSource('group-thin.png', await sharp(thin).png().toBuffer());
    expect(await facesOf('group-thin.png')).toHaveLength(2);
  });

  it('follows EXIF orientation, rotate, flip, flop, trim and a crop region as fp does', async () => {
    const [face] = await facesOf('tall.jpg');
    const [turnedFace] = await facesOf('tall-6.jpg');
    const [framedFace] = await facesOf('framed.png');
    const [animatedFace] = await facesOf('anim.gif');
    const cases: [string, Box, string][] = [
      ['tall-6.jpg', turnedFace!, 'width=200,height=200'],
      ['tall.jpg', face!, 'width=200,height=200,rotate=90'],
      ['tall.jpg', face!, 'width=200,height=200,flip=1'],
      ['tall.jpg', face!, 'width=100,height=300,rotate=270,flop=1'],
      ['tall.jpg', face!, 'width=200,height=200,crop=0,0.1,1,0.9'],
      ['framed.png', framedFace!, 'width=200,height=200,trim=10'],
      ['framed.png', framedFace!, 'width=300,height=150,rotate=90,trim=10'],
      ['anim.gif', animatedFace!, 'width=100,height=100'],
    ];
    for (const [key, box, ops] of cases) {
      const [size, rest] = [ops.split(',').slice(0, 2).join(','), ops.split(',').slice(2).join(',')];
      const byFace = await ok(`/${key}/${size},position=face${rest ? ',' + rest : ''}`);
      const byPoint = await ok(`/${key}/${size},fp=${centre(box)}${rest ? ',' + rest : ''}`);
      expect(await difference(byFace, byPoint), `${key} ${ops}`).toBeLessThan(1);
    }
  });

  it('puts the eyes of a close portrait in the upper part of a wide crop, shorter than the face', async () => {
    for (const name of ['astronaut.png', 'grace_hopper.jpg'] as const) {
      const key = `close-${name.replace(/\..*/, '')}.png`;
      const portrait = await closePortrait(photos!.read(name), KNOWN_FACES[name]!, 0.65);
      await origin.putSource(key, portrait);
      const crop = await ok(`/${key}/width=500,height=200,position=face`);
      // The detector's eyes (as remembered), in the part of the portrait the crop shows.
      const [face]: FaceBox[] = JSON.parse(await (await record(key)).Body!.transformToString()).faces;
      const part = await shownPart(portrait, crop);
      const eyeLine = (face!.eyes.y - part.y) / part.height;
      // Centred on the box they were at 0.18 of the height for the astronaut: the forehead cut, the chin kept.
      expect(eyeLine, name).toBeGreaterThan(0.25);
      expect(eyeLine, name).toBeLessThan(0.5);
    }
  });

  it("is attention's crop where no face is found", async () => {
    expect(await facesOf('coffee.png')).toEqual([]);
    const byFace = await ok('/coffee.png/width=200,height=300,position=face');
    expect(await difference(byFace, await ok('/coffee.png/width=200,height=300,position=attention'))).toBe(0);
    expect(await difference(byFace, await ok('/coffee.png/width=200,height=300'))).toBeGreaterThan(1);
  });
});

describe.skipIf(!photos)('each source is searched once', () => {
  it('remembers the faces of a source version beside its variants, and a later size uses them', async () => {
    await origin.putSource('remembered.jpg', await ok('/tall.jpg/width=256,height=512'));
    await ok('/remembered.jpg/width=256,height=256,position=face');
    const stored = JSON.parse(await (await record('remembered.jpg')).Body!.transformToString());
    expect(stored.faces).toHaveLength(1);
    // A record that says the face is at the bottom: the next size follows it, so no search was made.
    const bottom = { x: 0.4, y: 0.85, width: 0.2, height: 0.1, confidence: 0.9, eyes: { x: 0.5, y: 0.88 } };
    await origin.s3.send(
      new PutObjectCommand({
        Bucket: origin.cacheBucket,
        Key: facesKey('remembered.jpg', false),
        Body: JSON.stringify({ ...stored, faces: [bottom] }),
      }),
    );
    const followed = await ok('/remembered.jpg/width=128,height=128,position=face');
    expect(await difference(followed, await ok(`/remembered.jpg/width=128,height=128,fp=${centre(bottom)}`))).toBeLessThan(1);
    // The answer gives the box, not the eyes.
    const { eyes: _eyes, ...box } = bottom;
    expect(JSON.parse((await ok('/remembered.jpg/format=json')).toString()).faces).toEqual([box]);
  });

  it('ignores a planted record out of the bounds the detector writes, and searches again', async () => {
    await origin.putSource('planted.jpg', await ok('/tall.jpg/width=256,height=512'));
    const found = await facesOf('planted.jpg');
    expect(found).toHaveLength(1);
    const { etag, faces: searched } = JSON.parse(await (await record('planted.jpg')).Body!.transformToString());
    const box = { x: 0.4, y: 0.1, width: 0.2, height: 0.1, confidence: 0.9, eyes: { x: 0.5, y: 0.14 } };
    const plant = (faces: string) =>
      origin.s3.send(
        new PutObjectCommand({
          Bucket: origin.cacheBucket,
          Key: facesKey('planted.jpg', false),
          Body: `{"etag":${JSON.stringify(etag)},"faces":${faces}}`,
        }),
      );
    const boxes = (...faces: object[]) => JSON.stringify(faces);
    // Each as the record's text: JSON has no Infinity, but a number too large for a double reads as one.
    const hostile: [string, string][] = [
      ['more boxes than MAX_FACES', boxes(...Array.from({ length: MAX_FACES + 1 }, () => box))],
      ['a negative corner', boxes({ ...box, x: -0.5 })],
      ['a side of 1e300', boxes({ ...box, width: 1e300 })],
      ['a box past the right edge', boxes({ ...box, x: 0.9, width: 0.5 })],
      ['an infinite confidence', boxes(box).replace('"confidence":0.9', '"confidence":1e999')],
      ['a box that is not an object', '[null]'],
      ['no eyes', boxes({ ...box, eyes: undefined })],
      ['eyes outside the image', boxes({ ...box, eyes: { x: 0.5, y: 1.5 } })],
    ];
    for (const [name, faces] of hostile) {
      await plant(faces);
      expect(await facesOf('planted.jpg'), name).toEqual(found);
      // Searched again: the record holds the detector's faces once more.
      expect(JSON.parse(await (await record('planted.jpg')).Body!.transformToString()).faces, name).toEqual(searched);
    }
    // The same record within bounds is trusted: what made the others be searched again was their bounds.
    await plant(boxes(box));
    const { eyes: _eyes, ...planted } = box;
    expect(await facesOf('planted.jpg')).toEqual([planted]);
  });

  it('searches again for another version of the source, and the purge deletes the record with the variants', async () => {
    await origin.s3.send(
      new PutObjectCommand({
        Bucket: origin.cacheBucket,
        Key: facesKey('tall.jpg', false),
        Body: JSON.stringify({ etag: '"another version"', faces: [] }),
      }),
    );
    expect(await facesOf('tall.jpg')).toHaveLength(1);
    expect(JSON.parse(await (await record('tall.jpg')).Body!.transformToString()).faces).toHaveLength(1);
    const report = await purgeSources([{ key: 'tall.jpg' }], { s3: origin.s3, cacheBucket: origin.cacheBucket });
    expect(report.sources[0]!.failure).toBeUndefined();
    expect((await origin.cachedKeys()).filter((key) => key.startsWith('tall.jpg/'))).toEqual([]);
  });

  it('answers 404 for a missing source, with nothing left unhandled by the faces read beside it', async () => {
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', listener);
    try {
      for (const uri of ['/no-such-photo.jpg/width=200,height=200,position=face', '/no-such-photo.jpg/format=json']) {
        expect((await origin.request(uri)).status).toBe(404);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      process.off('unhandledRejection', listener);
    }
    expect(unhandled).toEqual([]);
  });

  it('never names the record with a canonical URI', async () => {
    const response = await origin.request(`/tall.jpg/${facesKey('tall.jpg', false).slice('tall.jpg/'.length)}`);
    expect(response.status).toBe(400);
  });
});

describe.skipIf(!photos)('format=json', () => {
  it('gives the faces in fractions of the image as displayed, with their confidence', async () => {
    const faces = await facesOf('tall-6.jpg');
    expect(faces).toHaveLength(1);
    const known = KNOWN_FACES['astronaut.png']!;
    expect(faces[0]!.confidence).toBeGreaterThan(0.75);
    // Displayed upright whatever the stored pixels: the face is near the top, across the middle.
    expect(faces[0]!.y).toBeLessThan(known.y + 0.05);
    expect(faces[0]!.x + faces[0]!.width / 2).toBeGreaterThan(0.3);
    expect(faces[0]!.x + faces[0]!.width / 2).toBeLessThan(0.7);
  });
});
