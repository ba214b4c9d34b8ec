// The subject model's cost (docs/subjects.md): what the Lambda bundles for it,
// its cold load in a fresh process (as a transform child loads it, sharp
// first), its warm CPU time and memory per finding on a 1600 px source, and
// what position=auto adds to a miss over attention's through a real transform
// child: a first miss (the source searched) and a later size (remembered).
// With --threads, the model alone on one intra-op thread and on two, in turn
// (the origin runs it on one per whole vCPU its memory buys: image/subject.ts says why).
//   npx tsx scripts/bench/subject-cost.ts [--runs 20] [--threads]
// CPU times are the process's own (user + system), which a shared machine
// disturbs less than wall-clock times; both are printed.

import { statSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import type { Ops } from '../../lambda/grammar';
import { faceSearchCopy } from '../../lambda/origin/image/faces';
import {
  findSubject,
  loadSubjectModel,
  SUBJECT_FINDING_COST,
  SUBJECT_MODEL_LOAD_COST,
  SUBJECT_SESSION_OPTIONS,
} from '../../lambda/origin/image/subject';
import { subjectModelPath } from '../../lambda/origin/image/subject-model';
import { facePhotos } from '../../test/support/face-photos';
import { coldLoad, cpuMs, mb, missTimes, printMisses, warmRuns } from './model-bench';
import { median, p95 } from './stats';
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

/** The model's run alone, on one thread and on two, taking turns so that the machine's load falls on both alike. */
async function threads(runs: number): Promise<void> {
  const ort = await import('onnxruntime-node');
  const sessions = await Promise.all(
    [1, 2].map((count) => ort.InferenceSession.create(subjectModelPath(), { ...SUBJECT_SESSION_OPTIONS, intraOpNumThreads: count })),
  );
  const input = new ort.Tensor(
    'float32',
    Float32Array.from({ length: 3 * 320 * 320 }, () => Math.random() - 0.5),
    [1, 3, 320, 320],
  );
  const times = sessions.map(() => ({ wall: [] as number[], cpu: [] as number[] }));
  for (let run = -1; run < runs; run++) {
    for (const [index, session] of sessions.entries()) {
      const [cpu, start] = [process.cpuUsage(), performance.now()];
      await session.run({ [session.inputNames[0]!]: input }, [session.outputNames[0]!]);
      if (run < 0) continue;
      times[index]!.wall.push(performance.now() - start);
      times[index]!.cpu.push(cpuMs(cpu));
    }
  }
  console.log(`The model alone, ${runs} runs each, in turn (load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores):`);
  for (const [index, { wall, cpu }] of times.entries()) {
    console.log(
      `  ${index + 1} thread${index ? 's' : ' '}  wall p50 ${median(wall).toFixed(0)} ms, p95 ${p95(wall).toFixed(0)} ms; CPU p50 ${median(cpu).toFixed(0)} ms, p95 ${p95(cpu).toFixed(0)} ms`,
    );
  }
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
  const runs = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 20;
  if (process.argv.includes('--threads')) await threads(runs);
  const crop: Ops = { width: 400, height: 800, format: 'jpeg' };
  const auto: Ops = { ...crop, position: 'auto' };
  const results = await missTimes(
    source,
    [
      { name: 'attention', ops: { ...crop, position: 'attention' } },
      { name: 'auto, searched', ops: auto },
      { name: 'auto, remembered', ops: auto, remembered: true },
    ],
    runs,
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
