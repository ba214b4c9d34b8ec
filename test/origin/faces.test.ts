// The face detector on real photos (fetched from PyPI at test time, see
// test/support/face-photos.ts) and on pictures made from them: where it finds
// faces, that it finds none where there are none, and that a crowd stays
// within its declared price and its cap.

import { writeFileSync } from 'node:fs';
import sharp, { type Sharp } from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  boxOverlap,
  detectFaces,
  FACE_DETECTION_COST,
  FACE_SEARCH_SIDE,
  faceSearchCopy,
  loadFaceModel,
  MAX_FACES,
  MIN_FACE_CONFIDENCE,
  type FaceBox,
} from '../../lambda/origin/image/faces';
import { maxRssBytes } from '../../scripts/bench/rss';
import { crowdOf, faceCases, facePhotos, facesFound, headOf, KNOWN_FACES, type FaceCase } from '../support/face-photos';

const photos = facePhotos();

/** The faces sharp's copy of `image` holds, as the pipeline will search them: oriented first. */
async function facesIn(image: Buffer | Sharp): Promise<FaceBox[]> {
  return detectFaces(await faceSearchCopy(Buffer.isBuffer(image) ? sharp(image).autoOrient() : image));
}

const ASTRONAUT_FACE = KNOWN_FACES['astronaut.png']!;

/** Resets the kernel's peak resident set of this process (Linux), which maxRssBytes then reads. */
function resetPeak(): void {
  writeFileSync('/proc/self/clear_refs', '5');
}

describe('detectFaces', () => {
  it('refuses pixels that are not an RGB copy of at most FACE_SEARCH_SIDE', async () => {
    await expect(detectFaces({ data: new Uint8Array(4 * 10 * 10), width: 10, height: 10 })).rejects.toThrow('RGB pixels');
    const side = FACE_SEARCH_SIDE + 1;
    await expect(detectFaces({ data: new Uint8Array(3 * side), width: side, height: 1 })).rejects.toThrow(`at most ${FACE_SEARCH_SIDE} px`);
  });

  it('loads the model once per process', async () => {
    expect(loadFaceModel()).toBe(loadFaceModel());
    expect((await loadFaceModel()).session).toBe((await loadFaceModel()).session);
  });

  it('finds no face in a generated gradient, nor in a flat grey picture', async () => {
    const gradient = await sharp(
      Buffer.from(
        `<svg xmlns="http://www.w3.org/2000/svg" width="640" height="400"><defs><linearGradient id="g"><stop offset="0" stop-color="#203040"/><stop offset="1" stop-color="#f0d0a0"/></linearGradient></defs><rect width="640" height="400" fill="url(#g)"/></svg>`,
      ),
    )
      .png()
      .toBuffer();
    expect(await facesIn(gradient)).toEqual([]);
    expect(await facesIn(sharp({ create: { width: 300, height: 900, channels: 3, background: '#808080' } }))).toEqual([]);
  });
});

describe.skipIf(!photos)('detectFaces on real photos', () => {
  let cases: FaceCase[];
  beforeAll(async () => {
    cases = await faceCases(photos!);
    await loadFaceModel();
  }, 60_000);

  it("finds the astronaut's face where it is, and only it", async () => {
    const faces = await facesIn(photos!.read('astronaut.png'));
    expect(faces).toHaveLength(1);
    expect(boxOverlap(faces[0]!, ASTRONAUT_FACE)).toBeGreaterThan(0.5);
    expect(faces[0]!.confidence).toBeGreaterThanOrEqual(MIN_FACE_CONFIDENCE);
  });

  it('finds every face of the set and nothing in the photos without one', async () => {
    const results = [];
    for (const { name, image, faces } of cases) {
      const found = await facesIn(image);
      results.push({ name, found: facesFound(found, faces), expected: faces.length, others: found.length - facesFound(found, faces) });
    }
    expect(results).toEqual(results.map(({ name, expected }) => ({ name, found: expected, expected, others: 0 })));
  });

  it('keeps the face near the top of a tall portrait, and the person at the right of a landscape', async () => {
    const [tall, landscape] = ['tall portrait', 'landscape, person at the right'].map((name) => cases.find((c) => c.name === name)!);
    const [face] = await facesIn(tall!.image);
    expect(face!.y + face!.height).toBeLessThan(0.4);
    const [person] = await facesIn(landscape!.image);
    expect(person!.x).toBeGreaterThan(0.6);
  });

  it('finds the face in a greyscale and in a CMYK copy of the photo, at the same place', async () => {
    const astronaut = photos!.read('astronaut.png');
    const grey = await sharp(astronaut).greyscale().jpeg().toBuffer();
    const cmyk = await sharp(astronaut).toColourspace('cmyk').jpeg().toBuffer();
    expect((await sharp(cmyk).metadata()).space).toBe('cmyk');
    for (const image of [grey, cmyk, photos!.read('camera.png')]) expect(await facesIn(image)).toHaveLength(1);
    expect(boxOverlap((await facesIn(grey))[0]!, ASTRONAUT_FACE)).toBeGreaterThan(0.5);
    expect(boxOverlap((await facesIn(cmyk))[0]!, ASTRONAUT_FACE)).toBeGreaterThan(0.5);
  });

  it('finds a face cut by the left edge, its box clipped to the image', async () => {
    // The astronaut's face spans x = 179 to 272 of 512: a quarter of it is cut off.
    const cut = await sharp(photos!.read('astronaut.png')).extract({ left: 200, top: 0, width: 312, height: 512 }).toBuffer();
    const faces = await facesIn(cut);
    expect(faces).toHaveLength(1);
    expect(faces[0]!.x).toBe(0);
    expect(faces[0]!.width).toBeGreaterThan(0.15);
    expect(faces[0]!.y + faces[0]!.height).toBeLessThan(0.4);
  });

  it('finds a face of 5% of the short side in a large photo, searched on its 640 px copy', async () => {
    const { image, faces } = await crowdOf(
      [await headOf(photos!.read('astronaut.png'), ASTRONAUT_FACE)],
      photos!.read('rocket.jpg'),
      [4000, 3000],
      1,
      0.05,
    );
    const copy = await faceSearchCopy(sharp(image));
    expect(Math.max(copy.width, copy.height)).toBe(FACE_SEARCH_SIDE);
    expect(facesFound(await detectFaces(copy), faces)).toBe(1);
  });

  it('stops at MAX_FACES in a crowd of 120 faces, within the declared CPU time and memory', async () => {
    const head = await headOf(photos!.read('astronaut.png'), ASTRONAUT_FACE);
    const crowd = await crowdOf([head], photos!.read('coffee.png'), [FACE_SEARCH_SIDE, FACE_SEARCH_SIDE], 120, 0.06);
    const copy = await faceSearchCopy(sharp(crowd.image));
    await detectFaces(copy); // warm
    resetPeak();
    const startBytes = process.memoryUsage.rss();
    const cpu = process.cpuUsage();
    const faces = await detectFaces(copy);
    const used = process.cpuUsage(cpu);
    // The copy itself is already held here; the declared bytes include it.
    expect(maxRssBytes() - startBytes).toBeLessThan(FACE_DETECTION_COST.bytes);
    expect((used.user + used.system) / 1e6).toBeLessThan(FACE_DETECTION_COST.seconds);
    expect(faces).toHaveLength(MAX_FACES);
    expect(facesFound(faces, crowd.faces)).toBe(MAX_FACES);
  });
});
