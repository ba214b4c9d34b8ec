// The miss study, what `npm run bench` runs without a study's flag: what a miss
// costs, against the floor (bare sharp doing the same work on the same bytes)
// and the AWS sample's naive pipeline, on real photos. For each operation and
// photo, in one run and interleaved (rotating order):
//   bare       bare sharp, bytes in memory
//   transform  the handler's transform() alone, bytes in memory
//   miss       the origin handler end to end: GET the source from LocalStack,
//              transform, the response (what the viewer waits for: the Lambda
//              streams it), then the conditional PUT of the variant (the end of
//              the invocation: what Lambda bills, and when it takes the next
//              request). The variant is deleted before each call, untimed.
//   naive      the AWS sample, in its own process with sharp's default threads
//              and, like the handler, no libvips cache (scripts/bench/naive-server.ts):
//              GET, metadata + resize + toFormat, PUT, base64, then the (buffered) response
//   hit        the variant from the cache bucket, over HTTP through the emulator
//              (generated CloudFront Function + cache bucket; edge cache off)
// then images/s at concurrency 2, quality (SSIM) of the outputs, peak RSS on
// the largest photo, cold init of the bundled handler and its size, and what a
// composed op (pad + watermark) costs against the same resize without it
// (scripts/bench/miss-report.ts writes the tables).

import { CreateBucketCommand, DeleteObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import sharp from 'sharp';
import { canonicalUri, encodeKeyPath, opsSegment } from '../../lambda/grammar';
import { variantKey } from '../../lambda/origin/cache-keys';
import { DEFAULT_CACHE_CONTROL, DEFAULT_LIMITS, originConfig } from '../../lambda/origin/config';
import { createOriginHandler, type OriginHandler } from '../../lambda/origin/handler';
import { budgetFor } from '../../lambda/origin/image/budget';
import { transform } from '../../lambda/origin/image/transform';
import { storeVariant } from '../../lambda/origin/storage';
import { functionUrlEvent } from '../../local/emulator/function-url';
import type { RunningEmulator } from '../../local/emulator/start';
import { localS3Client } from '../../local/harness/s3-client';
import type { Corpus, Photo } from './corpus';
import {
  bare,
  canonicalOpsOf,
  readBenchWatermark,
  reference,
  sampleHas,
  transformOptions,
  WATERMARK_NAME,
  WATERMARK_PLACEMENT,
  type BenchWatermark,
  type OpName,
  type OpSpec,
} from './ops';
import { bundles, childMeasurements, startNaiveServer, type ChildContext, type NaiveServer } from './processes';
import { decodePlanes, prepareReference, ssimImages } from './ssim';
import { log, progress, progressDone } from './session';
import { median } from './stats';

export type Mode = 'bare' | 'transform' | 'miss' | 'naive' | 'hit';
const TIMED_MODES: Mode[] = ['bare', 'transform', 'miss', 'naive'];

export interface Sample {
  photo: string;
  iteration: number;
  ms: number;
  /** bare, transform: CPU time of the process (all libvips threads), steadier than wall time on a shared machine. */
  cpuMs?: number;
  bytes?: number;
  /** miss: Server-Timing and the logged write; naive: its parts. */
  fetch?: number;
  transform?: number;
  store?: number;
  /** miss: when the invocation ended (after the write); naive: the same as ms. */
  invocationMs?: number;
}

export class Results {
  readonly samples = new Map<string, Sample[]>();
  private id(op: OpName, mode: Mode) {
    return `${op}/${mode}`;
  }
  add(op: OpName, mode: Mode, sample: Sample) {
    const id = this.id(op, mode);
    if (!this.samples.has(id)) this.samples.set(id, []);
    this.samples.get(id)!.push(sample);
  }
  of(op: OpName, mode: Mode, filter: (sample: Sample) => boolean = () => true): Sample[] {
    return (this.samples.get(this.id(op, mode)) ?? []).filter(filter);
  }
  /** Per photo: the median over iterations (for per-photo ratios and, of invocations, images/s at c=1). */
  perPhoto(op: OpName, mode: Mode, filter?: (sample: Sample) => boolean, of: 'ms' | 'invocationMs' | 'cpuMs' = 'ms'): Map<string, number> {
    const byPhoto = new Map<string, number[]>();
    for (const sample of this.of(op, mode, filter)) {
      if (!byPhoto.has(sample.photo)) byPhoto.set(sample.photo, []);
      byPhoto.get(sample.photo)!.push(sample[of] ?? sample.ms);
    }
    return new Map([...byPhoto].map(([photo, values]) => [photo, median(values)]));
  }
}

interface Context extends ChildContext {
  emulator: RunningEmulator;
  handler: OriginHandler;
  /** The store time of the handler's last `variant` log line. */
  lastStoreMs: number;
  naiveBucket: string;
  naive: NaiveServer;
  /** Transform outputs of the first iteration: the hit's seed and the quality check. */
  outputs: Map<string, Buffer>;
  naiveOutputs: Map<string, Buffer>;
  bareBytes: Map<string, number>;
  seeded: Set<string>;
}

const outputId = (op: OpSpec, photo: Photo) => `${op.name}:${photo.key}`;

function serverTiming(header: string | undefined): Record<string, number> {
  const timings: Record<string, number> = {};
  for (const part of (header ?? '').split(',')) {
    const match = /^\s*(\w+);dur=([\d.]+)/.exec(part);
    if (match) timings[match[1]!] = Number(match[2]);
  }
  return timings;
}

async function measure(ctx: Context, mode: Mode, op: OpSpec, photo: Photo, iteration: number): Promise<Sample> {
  const ops = canonicalOpsOf(op, photo.key, ctx.watermark);
  const key = variantKey(photo.key, ops);
  const first = iteration === 0;
  const cpuSince = (start: NodeJS.CpuUsage) => {
    const used = process.cpuUsage(start);
    return (used.user + used.system) / 1000;
  };
  if (mode === 'bare') {
    const cpu = process.cpuUsage();
    const start = performance.now();
    const out = await bare(op, photo.bytes, photo.facts, ctx.watermark);
    const elapsed = performance.now() - start;
    if (first) ctx.bareBytes.set(outputId(op, photo), out.length);
    return { photo: photo.key, iteration, ms: elapsed, cpuMs: cpuSince(cpu), bytes: out.length };
  }
  if (mode === 'transform') {
    const cpu = process.cpuUsage();
    const start = performance.now();
    const variant = await transform(
      photo.bytes,
      ops,
      DEFAULT_LIMITS,
      budgetFor(DEFAULT_LIMITS.memorySizeMb, 120_000, photo.bytes.length),
      transformOptions(ops, ctx.watermark),
    );
    const elapsed = performance.now() - start;
    if (first) ctx.outputs.set(outputId(op, photo), variant.body);
    return { photo: photo.key, iteration, ms: elapsed, cpuMs: cpuSince(cpu), bytes: variant.body.length };
  }
  if (mode === 'miss') {
    await ctx.s3.send(new DeleteObjectCommand({ Bucket: ctx.missBucket, Key: key }));
    const event = functionUrlEvent(canonicalUri(photo.key, ops));
    let responded = NaN;
    const start = performance.now();
    const result = await ctx.handler(event, { getRemainingTimeInMillis: () => 60_000 }, () => {
      responded = performance.now() - start;
    });
    const invocation = performance.now() - start;
    if (result.statusCode !== 200) throw new Error(`miss ${event.rawPath}: ${result.statusCode} ${result.body}`);
    const headers = result.headers as Record<string, string>;
    return {
      photo: photo.key,
      iteration,
      ms: responded,
      invocationMs: invocation,
      bytes: Number(headers['content-length']),
      ...serverTiming(headers['server-timing']),
      store: ctx.lastStoreMs,
    };
  }
  if (mode === 'naive') {
    const answer = await ctx.naive.request({
      op: op.name,
      sourceBucket: ctx.emulator.sourceBucket,
      key: photo.key,
      variantBucket: ctx.naiveBucket,
      variantKey: `${photo.key}/${opsSegment(ops)}`,
      withBody: first,
    });
    if (answer.body !== undefined) ctx.naiveOutputs.set(outputId(op, photo), Buffer.from(answer.body, 'base64'));
    const { ms, fetch, transform, store, bytes } = answer;
    return { photo: photo.key, iteration, ms, invocationMs: ms, bytes, fetch, transform, store };
  }
  // hit: the variant must be in the emulator's cache bucket, as the first miss would have left it.
  if (!ctx.seeded.has(key)) {
    const body =
      ctx.outputs.get(outputId(op, photo)) ??
      (
        await transform(
          photo.bytes,
          ops,
          DEFAULT_LIMITS,
          budgetFor(DEFAULT_LIMITS.memorySizeMb, 120_000, photo.bytes.length),
          transformOptions(ops, ctx.watermark),
        )
      ).body;
    const contentType =
      op.format === 'json' ? 'application/json' : `image/${(await sharp(body).metadata()).format.replace('heif', 'avif')}`;
    await storeVariant(
      ctx.s3,
      ctx.emulator.cacheBucket,
      key,
      { body, contentType },
      { cacheControl: DEFAULT_CACHE_CONTROL, metadata: { 'source-etag': '' } },
    );
    ctx.seeded.add(key);
  }
  const url = `${ctx.emulator.url}${encodeKeyPath(photo.key)}?${op.query}`;
  const start = performance.now();
  const response = await fetch(url);
  const body = Buffer.from(await response.arrayBuffer());
  const elapsed = performance.now() - start;
  if (response.status !== 200 || response.headers.get('x-origin') !== 'cache-bucket') {
    throw new Error(`hit ${url}: ${response.status} from ${response.headers.get('x-origin')}`);
  }
  return { photo: photo.key, iteration, ms: elapsed, bytes: body.length };
}

export const itemsOf = (corpus: Corpus, op: OpSpec) => (op.animated ? corpus.animations : corpus.photos);
/** The sample's AVIF (sharp's default effort 4) takes 5 to 25 s per photo here: it runs once, on the largest originals. */
export const NAIVE_AVIF_MP = 14;
/** Ops beyond the sample's URL API (format=json, fit, a watermark) are not in it. */
const naiveRuns = (op: OpSpec, iteration: number, photo: Photo) =>
  sampleHas(op) && (op.format !== 'avif' || (iteration <= 0 && photo.megapixels >= NAIVE_AVIF_MP));

async function interleaved(ctx: Context, corpus: Corpus, ops: OpSpec[], iterations: number, results: Results) {
  const started = performance.now();
  for (let iteration = 0; iteration < iterations; iteration++) {
    for (const op of ops) {
      const items = itemsOf(corpus, op);
      const opStart = performance.now();
      for (const [index, photo] of items.entries()) {
        progress(`iteration ${iteration + 1}/${iterations} · ${op.name} · ${index + 1}/${items.length} ${photo.key}`);
        const shift = (iteration + index) % TIMED_MODES.length;
        const order = [...TIMED_MODES.slice(shift), ...TIMED_MODES.slice(0, shift)];
        for (const mode of order) {
          if (mode === 'naive' && !naiveRuns(op, iteration, photo)) continue;
          results.add(op.name, mode, await measure(ctx, mode, op, photo, iteration));
        }
        results.add(op.name, 'hit', await measure(ctx, 'hit', op, photo, iteration));
      }
      progressDone();
      log(
        `iteration ${iteration + 1}/${iterations} · ${op.name} done in ${((performance.now() - opStart) / 1000).toFixed(1)} s (total ${((performance.now() - started) / 1000).toFixed(0)} s)`,
      );
    }
  }
}

/** Wall time for the items with two requests in flight. */
async function concurrent(ctx: Context, mode: Mode, op: OpSpec, items: Photo[]): Promise<number> {
  if (mode === 'miss') {
    for (const photo of items) {
      await ctx.s3.send(
        new DeleteObjectCommand({ Bucket: ctx.missBucket, Key: variantKey(photo.key, canonicalOpsOf(op, photo.key, ctx.watermark)) }),
      );
    }
  }
  let next = 0;
  const start = performance.now();
  const worker = async () => {
    while (next < items.length) await measure(ctx, mode, op, items[next++]!, 1);
  };
  await Promise.all([worker(), worker()]);
  return performance.now() - start;
}

export interface Throughput {
  c2: Map<string, number>; // `${op}/${mode}` -> images/s
}

async function concurrency2(ctx: Context, corpus: Corpus, ops: OpSpec[]): Promise<Throughput> {
  const c2 = new Map<string, number>();
  for (const op of ops) {
    const items = itemsOf(corpus, op);
    const modes: Mode[] = ['bare', 'miss', ...(!sampleHas(op) || op.format === 'avif' ? [] : ['naive' as Mode])];
    for (const mode of modes) {
      progress(`concurrency 2 · ${op.name} · ${mode}`);
      const wall = await concurrent(ctx, mode, op, items);
      c2.set(`${op.name}/${mode}`, items.length / (wall / 1000));
    }
    progressDone();
    log(`concurrency 2 · ${op.name} done`);
  }
  return { c2 };
}

export interface QualityRow {
  op: OpName;
  photos: number;
  handlerBytes: number;
  naiveBytes: number;
  handlerSsim: number[];
  naiveSsim: number[];
  handlerChroma: number[];
  naiveChroma: number[];
}

/** SSIM of the first iteration's handler and naive outputs against the uncompressed resize (of the ops the sample has). */
async function qualityOfOutputs(ctx: Context, corpus: Corpus, ops: OpSpec[]): Promise<QualityRow[]> {
  const rows: QualityRow[] = [];
  for (const op of ops) {
    if (!sampleHas(op) || op.animated) continue;
    const row: QualityRow = {
      op: op.name,
      photos: 0,
      handlerBytes: 0,
      naiveBytes: 0,
      handlerSsim: [],
      naiveSsim: [],
      handlerChroma: [],
      naiveChroma: [],
    };
    for (const photo of corpus.photos) {
      progress(`quality · ${op.name} · ${photo.key}`);
      const mine = ctx.outputs.get(outputId(op, photo));
      const theirs = ctx.naiveOutputs.get(outputId(op, photo));
      if (!mine || !theirs) continue;
      const ref = await reference(op, photo.bytes, photo.facts);
      const planes = prepareReference(
        await decodePlanes({ data: ref.data, width: ref.info.width, height: ref.info.height, channels: ref.info.channels as 3 }),
      );
      const [a, b] = await Promise.all([sharp(mine).metadata(), sharp(theirs).metadata()]);
      // The sample enlarges a source smaller than the request: not the same image, so not compared.
      if (a.width !== b.width || a.height !== b.height || a.width !== planes.width || a.height !== planes.height) continue;
      const [ssimMine, ssimTheirs] = [await ssimImages(planes, mine), await ssimImages(planes, theirs)];
      row.photos++;
      row.handlerBytes += mine.length;
      row.naiveBytes += theirs.length;
      row.handlerSsim.push(ssimMine.y);
      row.naiveSsim.push(ssimTheirs.y);
      row.handlerChroma.push(ssimMine.c);
      row.naiveChroma.push(ssimTheirs.c);
    }
    progressDone();
    rows.push(row);
  }
  return rows;
}

/**
 * Shrink-on-load check on the largest photo: a full decode, against what the
 * handler and bare sharp spend on its thumbnail (which decodes at 1/8 scale when
 * nothing forces a full-size decode first), and what the metadata() read costs.
 */
async function decodeCheck(corpus: Corpus) {
  const largest = [...corpus.photos].sort((a, b) => b.megapixels - a.megapixels)[0]!;
  const timeIt = async (work: () => Promise<unknown>) => {
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const start = performance.now();
      await work();
      times.push(performance.now() - start);
    }
    return median(times);
  };
  return {
    photo: largest,
    fullDecodeMs: await timeIt(() => sharp(largest.bytes).raw().toBuffer()),
    metadataMs: await timeIt(() => sharp(largest.bytes).metadata()),
  };
}

// ---------------------------------------------------------------- the study

/** LocalStack S3, the emulator serving the corpus with the bench's watermark, and a bucket for the handler's variants. */
export interface BenchStack {
  s3: S3Client;
  endpoint: string;
  emulator: RunningEmulator;
  watermark: BenchWatermark;
  missBucket: string;
  /** Makes a bucket named for this run. */
  bucket(label: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startBenchStack(corpus: Corpus): Promise<BenchStack> {
  // Imported here: the studies that need neither LocalStack nor the emulator do not load them.
  const { startLocalStack } = await import('../../local/harness/localstack');
  const { startEmulator, writeSampleWatermark } = await import('../../local/emulator/start');
  const localStack = await startLocalStack({ log: (line) => log(`localstack: ${line}`) });
  const s3 = localS3Client(localStack.endpoint);
  const id = Date.now().toString(36);
  // Rendered now (an SVG), never a file of the repository.
  const watermark = await readBenchWatermark(await writeSampleWatermark());
  const stopLocalStack = async () => {
    await localStack.stop();
    await rm(dirname(watermark.definition.file), { recursive: true });
  };
  const emulator = await startEmulator({
    s3,
    port: 0,
    images: corpus.dir,
    edgeCache: false,
    watermarks: { [WATERMARK_NAME]: { file: watermark.definition.file, ...WATERMARK_PLACEMENT } },
    buckets: { source: `bench-src-${id}`, cache: `bench-cache-${id}` },
    watchIntervalMs: 3_600_000,
    log: (line) => log(`emulator: ${line}`),
  }).catch(async (error: unknown) => {
    await stopLocalStack();
    throw error;
  });
  const bucket = async (label: string) => {
    const name = `bench-${label}-${id}`;
    await s3.send(new CreateBucketCommand({ Bucket: name }));
    return name;
  };
  return {
    s3,
    endpoint: localStack.endpoint,
    emulator,
    watermark,
    missBucket: await bucket('miss'),
    bucket,
    stop: async () => {
      await emulator.close();
      await stopLocalStack();
    },
  };
}

/** Every mode once per op on the smallest photo, untimed (JIT, libvips, sockets). */
async function warmUp(ctx: Context, corpus: Corpus, ops: OpSpec[]) {
  const smallest = [...corpus.photos].sort((a, b) => a.megapixels - b.megapixels)[0]!;
  for (const op of ops) {
    const photo = op.animated ? corpus.animations[0]! : smallest;
    for (const mode of [...TIMED_MODES, 'hit'] as Mode[]) {
      if (mode === 'naive' && (op.format === 'avif' || !naiveRuns(op, 0, photo))) continue;
      await measure(ctx, mode, op, photo, -1);
    }
  }
}

/** The bare and handler outputs whose sizes differ by more than 1%: where the bare row is not quite the same work. */
function sizeMismatches(ctx: Context): string[] {
  const mismatches: string[] = [];
  for (const [id, bytes] of ctx.bareBytes) {
    const handlerBytes = ctx.outputs.get(id)?.length;
    if (handlerBytes !== undefined && !id.startsWith('json:') && Math.abs(handlerBytes - bytes) > 0.01 * bytes)
      mismatches.push(`${id} (${bytes} vs ${handlerBytes})`);
  }
  return mismatches;
}

export interface MissStudyOptions {
  ops: OpSpec[];
  iterations: number;
  /** No concurrency-2 pass. */
  quick: boolean;
}

/** Runs the miss study on `stack`; what the report is made of. */
export async function missStudy(corpus: Corpus, stack: BenchStack, options: MissStudyOptions) {
  const { ops, iterations } = options;
  const naiveBucket = await stack.bucket('naive');
  const config = originConfig(
    { sourceBucket: stack.emulator.sourceBucket, cacheBucket: stack.missBucket },
    { watermarkDefinitions: { [WATERMARK_NAME]: stack.watermark.definition } },
  );
  const handler = createOriginHandler({
    s3: stack.s3,
    config,
    log: (entry) => {
      if (entry.event === 'variant') ctx.lastStoreMs = entry.store as number;
      else log(`handler: ${JSON.stringify(entry)}`);
    },
  });
  const naive = await startNaiveServer(stack.endpoint);
  const ctx: Context = {
    ...stack,
    sourceBucket: stack.emulator.sourceBucket,
    handler,
    lastStoreMs: NaN,
    naiveBucket,
    naive,
    outputs: new Map(),
    naiveOutputs: new Map(),
    bareBytes: new Map(),
    seeded: new Set(),
  };
  try {
    await warmUp(ctx, corpus, ops);
    log('warmed up; measuring');
    const results = new Results();
    await interleaved(ctx, corpus, ops, iterations, results);
    const throughput = options.quick ? undefined : await concurrency2(ctx, corpus, ops);
    log('quality of the outputs (SSIM)');
    const quality = await qualityOfOutputs(ctx, corpus, ops);
    log('bundling the handler; cold starts and peak RSS in fresh processes');
    const built = await bundles();
    const children = await childMeasurements(ctx, corpus, ops, built);
    const decode = await decodeCheck(corpus);
    return { results, throughput, quality, children, decode, built, bytesMismatch: sizeMismatches(ctx), naiveSettings: naive.settings };
  } finally {
    naive.stop();
  }
}

export type MissMeasurements = Awaited<ReturnType<typeof missStudy>>;
