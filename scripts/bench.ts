// `npm run bench [-- --quick] [--iterations N] [--ops a,b] [--quality] [--settings] [--first-view] [--auto-quality] [--quality-bound]`
//
// What a miss costs, against the floor (bare sharp doing the same work on the
// same bytes) and the AWS sample's naive pipeline, on real photos. For each
// operation and photo, in one run and interleaved (rotating order):
//   bare       bare sharp, bytes in memory
//   transform  the handler's transform() alone, bytes in memory
//   miss       the origin handler end to end: GET the source from LocalStack,
//              transform, the response (what the viewer waits for: the Lambda
//              streams it), then the conditional PUT of the variant (the end of
//              the invocation: what Lambda bills, and when it takes the next
//              request). The variant is deleted before each call, untimed.
//   naive      the AWS sample, in its own process with sharp untuned
//              (scripts/bench/naive-server.ts): GET, metadata + resize +
//              toFormat, PUT, base64, then the (buffered) response
//   hit        the variant from the cache bucket, over HTTP through the emulator
//              (generated CloudFront Function + cache bucket; edge cache off)
// then images/s at concurrency 2, quality (SSIM) of the outputs, peak RSS on
// the largest photo, cold init of the bundled handler and its size, and what a
// composed op (pad + watermark) costs against the same resize without it.
// --quality: the encoder study (bytes vs SSIM vs encode time per setting).
// --settings: sharp.cache / sharp.concurrency / MALLOC_ARENA_MAX, each in its own process.
// --first-view: what the first viewer of a negotiated 1600 px AVIF waits for (scripts/bench/first-view.ts).
// --auto-quality: quality=auto against the fixed defaults, per lossy format (scripts/bench/auto-quality.ts).
// --quality-bound: what any per-image choice of quality could save (scripts/bench/quality-bound.ts).
// The markdown report goes to stdout and .cache/bench/last.md; progress to stderr.

import { DeleteObjectCommand, CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { spawn, spawnSync } from 'node:child_process';
import { build } from 'esbuild';
import { readFileSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { cpus, loadavg, totalmem, availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { gzipSync } from 'node:zlib';
import sharp from 'sharp';
import { canonicalUri, encodeKeyPath, opsSegment, type Ops } from '../lambda/grammar';
import { variantKey } from '../lambda/origin/cache-keys';
import { DEFAULT_CACHE_CONTROL, DEFAULT_LIMITS, originConfig } from '../lambda/origin/config';
import { createOriginHandler, type OriginHandler } from '../lambda/origin/handler';
import { configureSharp } from '../lambda/origin/sharp-settings';
import { budgetFor } from '../lambda/origin/image/budget';
import { transform } from '../lambda/origin/image/transform';
import { storeVariant } from '../lambda/origin/storage';
import { commandLine, runCommand, UsageError } from '../local/harness/command-line';
import { functionUrlEvent } from '../local/emulator/function-url';
import { localS3Client } from '../local/harness/s3-client';
import type { RunningEmulator } from '../local/emulator/start';
import { CACHE_DIR, loadCorpus, PROJECT_ROOT, QUICK_KEYS, writeCacheFile, type Corpus, type Photo } from './bench/corpus';
import {
  bare, canonicalOpsOf, OPS, readBenchWatermark, reference, sampleHas, transformOptions, WATERMARK_NAME, WATERMARK_PLACEMENT,
  type BenchWatermark, type OpName, type OpSpec,
} from './bench/ops';
import { qualityStudy } from './bench/quality';
import { settingsStudy } from './bench/settings';
import { firstViewStudy } from './bench/first-view';
import { autoQualityStudy } from './bench/auto-quality';
import { qualityBoundStudy } from './bench/quality-bound';
import type { NaiveAnswer, NaiveRequest, NaiveSettings } from './bench/naive-server';
import { maxRssBytes } from './bench/rss';
import { decodePlanes, prepareReference, ssimImages } from './bench/ssim';
import { kb, markdownTable, median, ms, p95, pairedRatio, perSecond, ratio, sum } from './bench/stats';

const USAGE = `usage: npm run bench -- [--quick] [--iterations N] [--ops ${OPS.map((op) => op.name).join(',')}] [--quality] [--settings] [--first-view] [--auto-quality] [--quality-bound]
  --quick          3 photos, 1 iteration, no concurrency-2 pass (a smoke test)
  --iterations N   timed passes over the corpus per op and mode (default 2)
  --ops a,b        only these operations
  --quality        the encoder study instead: bytes vs SSIM vs encode time per setting
  --settings       the sharp settings study instead: cache, concurrency, MALLOC_ARENA_MAX
  --first-view     the first view of a negotiated AVIF instead: WebP at once, the AVIF after
  --auto-quality   quality=auto against the fixed default qualities instead: bytes, SSIMULACRA 2, SSIM, CPU
  --quality-bound  what any per-image choice of quality could save at the same mean SSIMULACRA 2 instead`;

type Mode = 'bare' | 'transform' | 'miss' | 'naive' | 'hit';
const TIMED_MODES: Mode[] = ['bare', 'transform', 'miss', 'naive'];
/** Large originals: where a miss is won or lost. */
const LARGE_MP = 8;

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
const tty = process.stderr.isTTY;
let lastProgressLine = 0;
/** One updating line on a terminal; otherwise (CI, a pipe) a line every 10 s at most. */
function progress(line: string) {
  if (tty) process.stderr.write(`\r\x1b[2K[bench] ${line}`);
  else if (performance.now() - lastProgressLine > 10_000) {
    lastProgressLine = performance.now();
    process.stderr.write(`[bench] ${line}\n`);
  }
}
function progressDone() {
  if (tty) process.stderr.write('\r\x1b[2K');
}

interface Sample {
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

class Results {
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

interface Context {
  s3: S3Client;
  endpoint: string;
  emulator: RunningEmulator;
  handler: OriginHandler;
  /** The composed op's watermark, deployed to the handler and the emulator's edge. */
  watermark: BenchWatermark;
  /** The store time of the handler's last `variant` log line. */
  lastStoreMs: number;
  missBucket: string;
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
    const variant = await transform(photo.bytes, ops, DEFAULT_LIMITS, budgetFor(DEFAULT_LIMITS.memorySizeMb, 120_000, photo.bytes.length), transformOptions(ops, ctx.watermark));
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
      photo: photo.key, iteration, ms: responded, invocationMs: invocation, bytes: Number(headers['content-length']),
      ...serverTiming(headers['server-timing']), store: ctx.lastStoreMs,
    };
  }
  if (mode === 'naive') {
    const answer = await ctx.naive.request({
      op: op.name, sourceBucket: ctx.emulator.sourceBucket, key: photo.key,
      variantBucket: ctx.naiveBucket, variantKey: `${photo.key}/${opsSegment(ops)}`, withBody: first,
    });
    if (answer.body !== undefined) ctx.naiveOutputs.set(outputId(op, photo), Buffer.from(answer.body, 'base64'));
    const { ms, fetch, transform, store, bytes } = answer;
    return { photo: photo.key, iteration, ms, invocationMs: ms, bytes, fetch, transform, store };
  }
  // hit: the variant must be in the emulator's cache bucket, as the first miss would have left it.
  if (!ctx.seeded.has(key)) {
    const body = ctx.outputs.get(outputId(op, photo)) ?? (await transform(photo.bytes, ops, DEFAULT_LIMITS, budgetFor(DEFAULT_LIMITS.memorySizeMb, 120_000, photo.bytes.length), transformOptions(ops, ctx.watermark))).body;
    const contentType = op.format === 'json' ? 'application/json' : `image/${(await sharp(body).metadata()).format.replace('heif', 'avif')}`;
    await storeVariant(ctx.s3, ctx.emulator.cacheBucket, key, { body, contentType }, { cacheControl: DEFAULT_CACHE_CONTROL, metadata: { 'source-etag': '' } });
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

const itemsOf = (corpus: Corpus, op: OpSpec) => (op.animated ? corpus.animations : corpus.photos);
/** The sample's AVIF (sharp's default effort 4) takes 5 to 25 s per photo here: it runs once, on the largest originals. */
const NAIVE_AVIF_MP = 14;
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
      log(`iteration ${iteration + 1}/${iterations} · ${op.name} done in ${((performance.now() - opStart) / 1000).toFixed(1)} s (total ${((performance.now() - started) / 1000).toFixed(0)} s)`);
    }
  }
}

/** Wall time for the items with two requests in flight. */
async function concurrent(ctx: Context, mode: Mode, op: OpSpec, items: Photo[]): Promise<number> {
  if (mode === 'miss') {
    for (const photo of items) {
      await ctx.s3.send(new DeleteObjectCommand({ Bucket: ctx.missBucket, Key: variantKey(photo.key, canonicalOpsOf(op, photo.key, ctx.watermark)) }));
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

interface Throughput {
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

interface QualityRow {
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
    const row: QualityRow = { op: op.name, photos: 0, handlerBytes: 0, naiveBytes: 0, handlerSsim: [], naiveSsim: [], handlerChroma: [], naiveChroma: [] };
    for (const photo of corpus.photos) {
      progress(`quality · ${op.name} · ${photo.key}`);
      const mine = ctx.outputs.get(outputId(op, photo));
      const theirs = ctx.naiveOutputs.get(outputId(op, photo));
      if (!mine || !theirs) continue;
      const ref = await reference(op, photo.bytes, photo.facts);
      const planes = prepareReference(await decodePlanes({ data: ref.data, width: ref.info.width, height: ref.info.height, channels: ref.info.channels as 3 }));
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

// ---------------------------------------------------------------- child processes

const BUILD_DIR = join(CACHE_DIR, 'build');

interface Bundles {
  origin: string;
  originBytes: number;
  originGzipBytes: number;
  child: string;
  coldChild: string;
}

/** The origin bundled as the CDK construct does (minified CJS, AWS SDK in, sharp out), and the two child scripts. */
async function bundles(): Promise<Bundles> {
  const common = { bundle: true, platform: 'node' as const, target: 'node20', external: ['sharp'], logLevel: 'error' as const };
  const origin = join(BUILD_DIR, 'origin.cjs');
  // As lib/image-transformer.ts has the CDK build it: minified CJS, the SDK's ES module builds.
  await build({
    ...common, entryPoints: [join(PROJECT_ROOT, 'lambda/origin/index.ts')], outfile: origin, format: 'cjs', minify: true, mainFields: ['module', 'main'],
  });
  const child = join(BUILD_DIR, 'child.mjs');
  await build({ ...common, entryPoints: [join(PROJECT_ROOT, 'scripts/bench/child.ts')], outfile: child, format: 'esm' });
  const coldChild = join(BUILD_DIR, 'cold-child.mjs');
  await build({ ...common, entryPoints: [join(PROJECT_ROOT, 'scripts/bench/cold-child.ts')], outfile: coldChild, format: 'esm' });
  return { origin, originBytes: statSync(origin).size, originGzipBytes: gzipSync(readFileSync(origin)).length, child, coldChild };
}

interface NaiveServer {
  settings: NaiveSettings;
  request(request: Omit<NaiveRequest, 'id'>): Promise<NaiveAnswer>;
  stop(): void;
}

/** Builds and starts scripts/bench/naive-server.ts, reaching LocalStack at `endpoint`. */
async function startNaiveServer(endpoint: string): Promise<NaiveServer> {
  const script = join(BUILD_DIR, 'naive-server.cjs');
  await build({
    entryPoints: [join(PROJECT_ROOT, 'scripts/bench/naive-server.ts')], outfile: script,
    bundle: true, platform: 'node', target: 'node20', format: 'cjs', external: ['sharp'], logLevel: 'error',
  });
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, AWS_ENDPOINT_URL_S3: endpoint, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const waiting = new Map<number, { resolve: (answer: NaiveAnswer) => void; reject: (error: Error) => void }>();
  let nextId = 0;
  let ready: ((settings: NaiveSettings) => void) | undefined;
  let failed: (error: Error) => void = () => {};
  const settings = new Promise<NaiveSettings>((resolve, reject) => {
    ready = resolve;
    failed = reject;
  });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    // The first line is its settings, the others answers.
    if (ready) {
      ready(JSON.parse(line) as NaiveSettings);
      ready = undefined;
      return;
    }
    const answer = JSON.parse(line) as NaiveAnswer;
    const pending = waiting.get(answer.id)!;
    waiting.delete(answer.id);
    if (answer.error) pending.reject(new Error(`naive server: ${answer.error}`));
    else pending.resolve(answer);
  });
  child.on('exit', (code) => {
    const exited = new Error(`naive server exited (${code})`);
    failed(exited);
    for (const pending of waiting.values()) pending.reject(exited);
  });
  return {
    settings: await settings,
    request: (request) =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, { resolve, reject });
        child.stdin!.write(JSON.stringify({ ...request, id }) + '\n');
      }),
    stop: () => child.kill(),
  };
}

function runChild(script: string, args: string[], env: NodeJS.ProcessEnv = process.env): any {
  const result = spawnSync(process.execPath, [script, ...args], { env, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`child ${args.join(' ')} failed: ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').pop()!);
}

interface ColdRow {
  op: OpName;
  bootMs: number;
  importMs: number;
  /** From the end of the import to the response, and to the end of the invocation. */
  firstResponseMs: number;
  firstCallMs: number;
  rssAfterImport: number;
  maxRss: number;
}

interface RssRow {
  op: OpName;
  bare: number;
  transform: number;
  naive: number | undefined;
}

async function childMeasurements(ctx: Context, corpus: Corpus, ops: OpSpec[], built: Bundles) {
  const largest = [...corpus.photos].sort((a, b) => b.megapixels - a.megapixels)[0]!;
  const env = {
    ...process.env,
    SOURCE_BUCKET: ctx.emulator.sourceBucket,
    CACHE_BUCKET: ctx.missBucket,
    AWS_ENDPOINT_URL_S3: ctx.endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    WATERMARKS: JSON.stringify({ [WATERMARK_NAME]: ctx.watermark.definition }),
  };
  const cold: ColdRow[] = [];
  const rss: RssRow[] = [];
  for (const op of ops) {
    const photo = op.animated ? corpus.animations[0]! : largest;
    const opsOf = canonicalOpsOf(op, photo.key, ctx.watermark);
    progress(`cold start and peak RSS · ${op.name} · ${photo.key}`);
    await ctx.s3.send(new DeleteObjectCommand({ Bucket: ctx.missBucket, Key: variantKey(photo.key, opsOf) }));
    const coldRun = runChild(built.coldChild, [built.origin, canonicalUri(photo.key, opsOf)], env);
    if (coldRun.status !== 200) throw new Error(`cold miss for ${op.name}: ${coldRun.status}`);
    cold.push({ op: op.name, ...coldRun });
    if (op.animated) continue;
    progress(`peak RSS · ${op.name} · ${photo.key}`);
    const row: RssRow = {
      op: op.name,
      bare: runChild(built.child, ['bare', op.name, photo.path, ctx.watermark.definition.file]).maxRss,
      transform: runChild(built.child, ['transform', op.name, photo.path, ctx.watermark.definition.file]).maxRss,
      naive: sampleHas(op) ? runChild(built.child, ['naive', op.name, photo.path]).maxRss : undefined,
    };
    rss.push(row);
  }
  progressDone();
  return { largest, cold, rss };
}

// ---------------------------------------------------------------- report

function machine(): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  return `${availableParallelism()} × ${cpu}, ${(totalmem() / 1024 ** 3).toFixed(0)} GB RAM`;
}

function versions(): string {
  return `Node ${process.version}, sharp ${sharp.versions.sharp}, libvips ${sharp.versions.vips}`;
}

function report(args: {
  command: string;
  corpus: Corpus;
  ops: OpSpec[];
  iterations: number;
  results: Results;
  throughput?: Throughput;
  quality: QualityRow[];
  children: Awaited<ReturnType<typeof childMeasurements>>;
  decode: Awaited<ReturnType<typeof decodeCheck>>;
  built: Bundles;
  loads: [number, number];
  wallSeconds: number;
  bytesMismatch: string[];
  naiveSettings: NaiveSettings;
}): string {
  const { results, corpus, ops } = args;
  const lines: string[] = [];
  const date = new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
  lines.push(`### Benchmark, ${date}`);
  lines.push('');
  lines.push(`- Machine: ${machine()}; load average ${args.loads[0].toFixed(1)} at start, ${args.loads[1].toFixed(1)} at end (shared machine: compare ratios, measured in the same run).`);
  lines.push(`- ${versions()}; sharp.concurrency() ${sharp.concurrency()}, libvips cache ${sharp.cache().memory.max ? 'on' : 'off'}, MALLOC_ARENA_MAX ${process.env.MALLOC_ARENA_MAX ?? 'unset'} (the handler's settings, lambda/origin/sharp-settings.ts); the AWS sample runs in its own process with sharp's defaults (concurrency ${args.naiveSettings.concurrency}, libvips cache ${args.naiveSettings.cacheMb} MB).`);
  lines.push(`- Corpus: ${corpus.description}.`);
  lines.push(`- \`${args.command}\`: ${args.iterations} iteration(s) per photo, modes interleaved in rotating order; ${Math.round(args.wallSeconds)} s in all.`);
  if (corpus.kind === 'generated') lines.push('- **GENERATED IMAGES, NOT PHOTOS**: these figures do not describe real photos.');
  lines.push('');

  const msCell = (values: number[]) => (values.length ? `${ms(median(values))} / ${ms(p95(values))}` : '—');
  const times = (op: OpName, mode: Mode) => results.of(op, mode).map((sample) => sample.ms);
  const photoRatio = (x: Map<string, number>, y: Map<string, number>) => {
    const keys = [...x.keys()].filter((key) => y.has(key));
    return pairedRatio(keys.map((key) => x.get(key)!), keys.map((key) => y.get(key)!));
  };
  const perPhotoRatio = (op: OpName, a: Mode, b: Mode, filter?: (s: Sample) => boolean) => photoRatio(results.perPhoto(op, a, filter), results.perPhoto(op, b, filter));

  lines.push(
    '**Latency per request**, milliseconds, median / p95 over photos × iterations. "handler miss" is the time to the response (fetch from LocalStack and transform: the variant is written after it), ' +
      '"miss invocation" the time until the write is done and the invocation ends. Ratios: median of the per-photo ratios of medians.',
  );
  lines.push('');
  lines.push(
    markdownTable(
      ['operation', 'n', 'bare sharp', 'handler transform', 'handler miss', 'miss invocation', 'hit (cache bucket)', 'naive miss (AWS sample)', 'transform / bare', 'miss / bare', 'naive / miss'],
      ops.map((op) => [
        op.label,
        String(itemsOf(corpus, op).length),
        msCell(times(op.name, 'bare')),
        msCell(times(op.name, 'transform')),
        msCell(times(op.name, 'miss')),
        msCell(results.of(op.name, 'miss').map((sample) => sample.invocationMs ?? NaN)),
        msCell(times(op.name, 'hit')),
        msCell(times(op.name, 'naive')),
        ratio(perPhotoRatio(op.name, 'transform', 'bare')),
        ratio(perPhotoRatio(op.name, 'miss', 'bare')),
        ratio(perPhotoRatio(op.name, 'naive', 'miss')),
      ]),
    ),
  );
  lines.push('');

  // What Lambda bills for a miss: the whole invocation (until the variant's write ends) at the memory size.
  const gigabytes = DEFAULT_LIMITS.memorySizeMb / 1024;
  lines.push(`**Lambda GB-seconds per miss** at the default memory size (${DEFAULT_LIMITS.memorySizeMb} MB): the median "miss invocation" × ${gigabytes} GB.`);
  lines.push('');
  lines.push(
    markdownTable(
      ['operation', 'miss invocation (median)', 'GB-s per miss'],
      ops.map((op) => {
        const invocation = median(results.of(op.name, 'miss').map((sample) => sample.invocationMs ?? NaN));
        return [op.label, ms(invocation), ((invocation / 1000) * gigabytes).toFixed(3)];
      }),
    ),
  );
  lines.push('');

  const composed = ops.filter((op) => op.baseline && ops.some((other) => other.name === op.baseline));
  if (composed.length) {
    lines.push(
      '**Composition** against the same resize without it, on the same photos (median of the per-photo ratios of medians). ' +
        'The miss invocation is what Lambda bills, so its ratio is the ratio of GB-seconds; CPU time (all threads) is steadier than wall time on a shared machine:',
    );
    lines.push('');
    lines.push(
      markdownTable(
        ['operation', 'against', 'bare / bare', 'bare CPU / same', 'transform / transform', 'transform CPU / same', 'miss invocation (GB-s) / same', 'transform / against\'s bare'],
        composed.map((op) => {
          const against = op.baseline!;
          const of = (mode: Mode, a: OpName, b: OpName, what: 'ms' | 'invocationMs' | 'cpuMs' = 'ms') =>
            ratio(photoRatio(results.perPhoto(a, mode, undefined, what), results.perPhoto(b, mode, undefined, what)));
          return [
            op.name,
            against,
            of('bare', op.name, against),
            of('bare', op.name, against, 'cpuMs'),
            of('transform', op.name, against),
            of('transform', op.name, against, 'cpuMs'),
            of('miss', op.name, against, 'invocationMs'),
            ratio(photoRatio(results.perPhoto(op.name, 'transform'), results.perPhoto(against, 'bare'))),
          ];
        }),
      ),
    );
    lines.push('');
  }

  const pooled = (a: Mode, b: Mode) => {
    const ratios: number[] = [];
    for (const op of ops) {
      const x = results.perPhoto(op.name, a);
      const y = results.perPhoto(op.name, b);
      for (const [photo, value] of x) if (y.has(photo)) ratios.push(value / y.get(photo)!);
    }
    return median(ratios);
  };
  lines.push(
    `All operations together (median of the per-photo ratios): transform / bare ${ratio(pooled('transform', 'bare'))}, miss / bare ${ratio(pooled('miss', 'bare'))}.`,
  );
  lines.push('');
  if (ops.some((op) => op.format === 'avif')) {
    lines.push(
      `The naive AVIF row is sharp's default effort 4 (what the sample runs): it ran once, on the originals of ${NAIVE_AVIF_MP} MP or more only (${results.of('avif', 'naive').length} photos), so compare it in the table below.`,
    );
    lines.push('');
  }
  const large = (sample: Sample) => (corpus.photos.find((photo) => photo.key === sample.photo)?.megapixels ?? 0) >= LARGE_MP;
  const largeCount = corpus.photos.filter((photo) => photo.megapixels >= LARGE_MP).length;
  if (largeCount > 0) {
    lines.push(`**Large originals** (the ${largeCount} photos of ${LARGE_MP} MP or more), median ms; transform CPU: CPU time of the transform (all threads), median and max, i.e. what one core needs:`);
    lines.push('');
    const largeMs = (op: OpName, mode: Mode) => ms(median(results.of(op, mode, large).map((sample) => sample.ms)));
    const largeCpu = (op: OpName) => {
      const cpu = results.of(op, 'transform', large).map((sample) => sample.cpuMs ?? NaN);
      return `${ms(median(cpu))} / ${ms(Math.max(...cpu))}`;
    };
    lines.push(
      markdownTable(
        ['operation', 'bare', 'transform', 'transform CPU median / max', 'miss', 'naive miss', 'transform / bare', 'miss / bare', 'naive / miss'],
        ops.filter((op) => !op.animated).map((op) => [
          op.name,
          largeMs(op.name, 'bare'),
          largeMs(op.name, 'transform'),
          largeCpu(op.name),
          largeMs(op.name, 'miss'),
          largeMs(op.name, 'naive'),
          ratio(perPhotoRatio(op.name, 'transform', 'bare', large)),
          ratio(perPhotoRatio(op.name, 'miss', 'bare', large)),
          ratio(perPhotoRatio(op.name, 'naive', 'miss', large)),
        ]),
      ),
    );
    lines.push('');
  }

  lines.push(
    '**Where a miss goes** (median ms: the handler\'s Server-Timing, and the write from its log; "rest" is the event, validation and headers before the response. The naive pipeline responds after its PUT and base64):',
  );
  lines.push('');
  lines.push(
    markdownTable(
      ['operation', 'fetch', 'transform', 'rest', 'store (after the response)', 'naive: fetch', 'naive: transform', 'naive: store'],
      ops.map((op) => {
        const miss = results.of(op.name, 'miss');
        const naiveSamples = results.of(op.name, 'naive');
        const part = (samples: Sample[], field: 'fetch' | 'transform' | 'store') => ms(median(samples.map((s) => s[field] ?? NaN).filter(Number.isFinite)));
        const rest = median(miss.map((s) => s.ms - (s.fetch ?? 0) - (s.transform ?? 0)));
        return [op.name, part(miss, 'fetch'), part(miss, 'transform'), ms(rest), part(miss, 'store'), part(naiveSamples, 'fetch'), part(naiveSamples, 'transform'), part(naiveSamples, 'store')];
      }),
    ),
  );
  lines.push('');

  lines.push(
    '**Throughput**, images per second at concurrency 1 / 2 (c=1: photos ÷ the sum of their median times, for a miss the whole invocation; c=2: two requests in flight over the corpus, wall clock):',
  );
  lines.push('');
  const c1 = (op: OpName, mode: Mode) => {
    const perPhoto = [...results.perPhoto(op, mode, undefined, 'invocationMs').values()];
    return perPhoto.length ? perPhoto.length / (sum(perPhoto) / 1000) : NaN;
  };
  const tp = (op: OpName, mode: Mode) => `${perSecond(c1(op, mode))} / ${perSecond(args.throughput?.c2.get(`${op}/${mode}`) ?? NaN)}`;
  lines.push(
    markdownTable(
      ['operation', 'bare sharp', 'handler transform', 'handler miss', 'naive miss'],
      ops.map((op) => [op.name, tp(op.name, 'bare'), `${perSecond(c1(op.name, 'transform'))} / —`, tp(op.name, 'miss'), tp(op.name, 'naive')]),
    ),
  );
  lines.push('');

  if (args.quality.length) {
    lines.push('**Output and quality**: bytes summed over the photos both pipelines made at the same size (the sample enlarges sources smaller than the request; those are left out), SSIM against the uncompressed resize, mean over photos (Y: luma; C: mean of Cb and Cr):');
    lines.push('');
    const mean = (values: number[]) => (values.length ? (sum(values) / values.length).toFixed(4) : '—');
    lines.push(
      markdownTable(
        ['operation', 'photos', 'handler bytes', 'naive bytes', 'handler / naive bytes', 'handler SSIM Y / C', 'naive SSIM Y / C'],
        args.quality.map((row) => [
          row.op,
          String(row.photos),
          kb(row.handlerBytes),
          kb(row.naiveBytes),
          ratio(row.handlerBytes / row.naiveBytes),
          `${mean(row.handlerSsim)} / ${mean(row.handlerChroma)}`,
          `${mean(row.naiveSsim)} / ${mean(row.naiveChroma)}`,
        ]),
      ),
    );
    lines.push('');
  }

  const { decode } = args;
  const thumbOf = (mode: Mode) => results.perPhoto('thumb', mode).get(decode.photo.key);
  if (thumbOf('bare') !== undefined) {
    lines.push(
      `**One decode, shrink-on-load kept:** decoding all of ${decode.photo.key} (${decode.photo.megapixels.toFixed(0)} MP) takes ${ms(decode.fullDecodeMs)} ms; ` +
        `its 200x200 thumbnail takes ${ms(thumbOf('bare')!)} ms in bare sharp and ${ms(thumbOf('transform')!)} ms in the handler's transform (median), ` +
        `which reads the header with metadata() (${ms(decode.metadataMs)} ms) and then runs one pipeline on the same sharp instance.`,
    );
    lines.push('');
  }

  const { largest, cold, rss } = args.children;
  lines.push(
    `**Memory and cold start.** Peak RSS of a fresh process doing one request on the largest photo (${largest.key}, ${largest.width}x${largest.height}, ${kb(largest.bytes.length)}); ` +
      `"handler cold miss" is the bundled Lambda entry point (run through local/harness/lambda-runtime.ts: fetch from LocalStack, transform, the streamed response, then the write), the others work on bytes read from disk:`,
  );
  lines.push('');
  lines.push(
    markdownTable(
      ['operation', 'bare sharp', 'handler transform', 'naive transform', 'handler cold miss', 'cold miss: first response / invocation ms'],
      ops.map((op) => {
        const r = rss.find((row) => row.op === op.name);
        const c = cold.find((row) => row.op === op.name);
        return [op.name, r ? kb(r.bare) : '—', r ? kb(r.transform) : '—', r?.naive ? kb(r.naive) : '—', c ? kb(c.maxRss) : '—', c ? `${ms(c.firstResponseMs)} / ${ms(c.firstCallMs)}` : '—'];
      }),
    ),
  );
  lines.push('');
  const boot = median(cold.map((row) => row.bootMs));
  const imported = median(cold.map((row) => row.importMs));
  const rssAfterImport = median(cold.map((row) => row.rssAfterImport));
  lines.push(
    `Cold init (median of ${cold.length} fresh processes): Node boot ${ms(boot)} ms, then importing the bundled handler ${ms(imported)} ms (sharp and libvips included; RSS ${kb(rssAfterImport)} after import). ` +
      `Bundle: lambda/origin/index.ts with esbuild as the CDK construct builds it (minified CJS, the AWS SDK's ES module builds bundled, sharp external) is ${kb(args.built.originBytes)}, ${kb(args.built.originGzipBytes)} gzipped; sharp and libvips come beside it as node_modules.`,
  );
  lines.push(`Peak RSS of the whole bench process: ${kb(maxRssBytes())}.`);
  if (args.bytesMismatch.length) {
    lines.push('');
    lines.push(`Bare and handler outputs differ in size by more than 1% for: ${args.bytesMismatch.join(', ')} (the bare row is then not quite the same work).`);
  }
  return lines.join('\n') + '\n';
}

// ---------------------------------------------------------------- main

async function createBucket(s3: S3Client, name: string) {
  await s3.send(new CreateBucketCommand({ Bucket: name }));
}

async function main() {
  const values = commandLine(USAGE, {
    quick: { type: 'boolean', default: false },
    iterations: { type: 'string' },
    ops: { type: 'string' },
    quality: { type: 'boolean', default: false },
    settings: { type: 'boolean', default: false },
    'first-view': { type: 'boolean', default: false },
    'auto-quality': { type: 'boolean', default: false },
    'quality-bound': { type: 'boolean', default: false },
  });
  if (!values) return;
  const iterations = values.iterations ? Number(values.iterations) : values.quick ? 1 : 2;
  if (!Number.isInteger(iterations) || iterations < 1) throw new UsageError(`--iterations must be a positive integer, not "${values.iterations}"`);
  const names = values.ops ? values.ops.split(',').map((name) => name.trim()) : OPS.map((op) => op.name);
  const unknown = names.filter((name) => !OPS.some((op) => op.name === name));
  if (unknown.length) throw new UsageError(`unknown operation(s) ${unknown.join(', ')}`);
  const ops = OPS.filter((op) => names.includes(op.name));
  const command = ['npm run bench', ...process.argv.slice(2).length ? ['--', ...process.argv.slice(2)] : []].join(' ');

  // The Lambda's own sharp settings (cache off, threads per vCPU; here as for the default memory).
  // They are per process, so bare sharp, which runs beside the handler, gets them too.
  configureSharp({});
  const started = performance.now();
  const loadStart = loadavg()[0]!;
  const corpus = await loadCorpus(log);
  if (values.quick) corpus.photos = corpus.photos.filter((photo) => QUICK_KEYS.includes(photo.key)).concat(corpus.kind === 'generated' ? corpus.photos.slice(0, 3) : []);
  log(`${corpus.photos.length} photos (${corpus.photos.map((photo) => `${photo.key} ${photo.megapixels.toFixed(1)} MP`).join(', ')}) + ${corpus.animations.map((animation) => animation.key).join(', ')}`);
  log(`${machine()}; ${versions()}; sharp.concurrency() ${sharp.concurrency()}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);

  if (values.quality) {
    const text = await qualityStudy(corpus, { quick: values.quick, ops: names, log, progress, progressDone, header: `${machine()}; ${versions()}` });
    process.stdout.write(text);
    log(`written to ${await writeCacheFile('quality.md', text)}`);
    return;
  }
  const study = values['auto-quality'] ? { run: autoQualityStudy, file: 'auto-quality.md' } : values['quality-bound'] ? { run: qualityBoundStudy, file: 'quality-bound.md' } : undefined;
  if (study) {
    const text = await study.run(corpus, { log, progress, progressDone, header: `${machine()}; ${versions()}`, command });
    process.stdout.write(text);
    log(`written to ${await writeCacheFile(study.file, text)}`);
    return;
  }
  if (values.settings) {
    const built = await bundles();
    const text = await settingsStudy(corpus, { quick: values.quick, childScript: built.child, log, progress, progressDone, header: `${machine()}; ${versions()}` });
    process.stdout.write(text);
    log(`written to ${await writeCacheFile('settings.md', text)}`);
    return;
  }

  // Imported here: --quality, --settings, --auto-quality and --quality-bound need neither LocalStack nor the emulator.
  const { startLocalStack } = await import('../local/harness/localstack');
  const { startEmulator, writeSampleWatermark } = await import('../local/emulator/start');
  const localStack = await startLocalStack({ log: (line) => log(`localstack: ${line}`) });
  const s3 = localS3Client(localStack.endpoint);
  const id = Date.now().toString(36);
  let emulator: RunningEmulator | undefined;
  let naiveServer: NaiveServer | undefined;
  // Rendered now (an SVG), never a file of the repository.
  const watermark = await readBenchWatermark(await writeSampleWatermark());
  try {
    emulator = await startEmulator({
      s3,
      port: 0,
      images: corpus.dir,
      edgeCache: false,
      watermarks: { [WATERMARK_NAME]: { file: watermark.definition.file, ...WATERMARK_PLACEMENT } },
      buckets: { source: `bench-src-${id}`, cache: `bench-cache-${id}` },
      watchIntervalMs: 3_600_000,
      log: (line) => log(`emulator: ${line}`),
    });
    const missBucket = `bench-miss-${id}`;
    const naiveBucket = `bench-naive-${id}`;
    await createBucket(s3, missBucket);
    if (values['first-view']) {
      const config = originConfig({ sourceBucket: emulator.sourceBucket, cacheBucket: missBucket });
      const firstViewHandler = createOriginHandler({ s3, config, log: () => {} });
      const text = await firstViewStudy(corpus, { s3, cacheBucket: missBucket, handler: firstViewHandler, iterations, log, header: `${machine()}; ${versions()}` });
      process.stdout.write(text);
      log(`written to ${await writeCacheFile('first-view.md', text)}`);
      return;
    }
    await createBucket(s3, naiveBucket);
    const handler = createOriginHandler({
      s3,
      config: originConfig({ sourceBucket: emulator.sourceBucket, cacheBucket: missBucket }, { watermarkDefinitions: { [WATERMARK_NAME]: watermark.definition } }),
      log: (entry) => {
        if (entry.event === 'variant') ctx.lastStoreMs = entry.store as number;
        else log(`handler: ${JSON.stringify(entry)}`);
      },
    });
    naiveServer = await startNaiveServer(localStack.endpoint);
    const ctx: Context = {
      s3, endpoint: localStack.endpoint, emulator, handler, watermark, lastStoreMs: NaN, missBucket, naiveBucket, naive: naiveServer,
      outputs: new Map(), naiveOutputs: new Map(), bareBytes: new Map(), seeded: new Set(),
    };

    // Warm-up, untimed: every mode once per op on the smallest photo (JIT, libvips, sockets).
    const smallest = [...corpus.photos].sort((a, b) => a.megapixels - b.megapixels)[0]!;
    for (const op of ops) {
      const photo = op.animated ? corpus.animations[0]! : smallest;
      for (const mode of [...TIMED_MODES, 'hit'] as Mode[]) {
        if (mode === 'naive' && (op.format === 'avif' || !naiveRuns(op, 0, photo))) continue;
        await measure(ctx, mode, op, photo, -1);
      }
    }
    log('warmed up; measuring');

    const results = new Results();
    await interleaved(ctx, corpus, ops, iterations, results);
    const throughput = values.quick ? undefined : await concurrency2(ctx, corpus, ops);
    log('quality of the outputs (SSIM)');
    const quality = await qualityOfOutputs(ctx, corpus, ops);
    log('bundling the handler; cold starts and peak RSS in fresh processes');
    const built = await bundles();
    const children = await childMeasurements(ctx, corpus, ops, built);
    const decode = await decodeCheck(corpus);

    const bytesMismatch: string[] = [];
    for (const [id, bytes] of ctx.bareBytes) {
      const handlerBytes = ctx.outputs.get(id)?.length;
      if (handlerBytes !== undefined && !id.startsWith('json:') && Math.abs(handlerBytes - bytes) > 0.01 * bytes) bytesMismatch.push(`${id} (${bytes} vs ${handlerBytes})`);
    }
    const text = report({
      command, corpus, ops, iterations, results, throughput, quality, children, decode, built,
      loads: [loadStart, loadavg()[0]!], wallSeconds: (performance.now() - started) / 1000, bytesMismatch, naiveSettings: ctx.naive.settings,
    });
    process.stdout.write(text);
    log(`written to ${await writeCacheFile('last.md', text)}`);
  } finally {
    naiveServer?.stop();
    await emulator?.close();
    await localStack.stop();
    await rm(dirname(watermark.definition.file), { recursive: true });
  }
}

runCommand(USAGE, main, progressDone);
