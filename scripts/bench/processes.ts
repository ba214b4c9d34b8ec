// The miss study's work in fresh processes: the origin bundled as the CDK
// construct builds it, its cold start and peak RSS, and the AWS sample's
// pipeline as a server of its own (scripts/bench/naive-server.ts).

import { DeleteObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { canonicalUri } from '../../lambda/grammar';
import { variantKey } from '../../lambda/origin/cache-keys';
import { FACE_DETECTOR_EXTERNALS } from '../../lib/face-detector';
import { CACHE_DIR, PROJECT_ROOT, type Corpus } from './corpus';
import type { NaiveAnswer, NaiveRequest, NaiveSettings } from './naive-server';
import { canonicalOpsOf, sampleHas, WATERMARK_NAME, type BenchWatermark, type OpName, type OpSpec } from './ops';
import { progress, progressDone } from './session';

/** What the child measurements need of the miss study's setup. */
export interface ChildContext {
  s3: S3Client;
  endpoint: string;
  sourceBucket: string;
  missBucket: string;
  watermark: BenchWatermark;
}

const BUILD_DIR = join(CACHE_DIR, 'build');

export interface Bundles {
  origin: string;
  originBytes: number;
  originGzipBytes: number;
  child: string;
  coldChild: string;
}

/** sharp and the face detector's runtime are native: required from node_modules, never bundled. */
const EXTERNAL = ['sharp', ...FACE_DETECTOR_EXTERNALS];

/** The origin bundled as the CDK construct does (minified CJS, AWS SDK in, sharp out), and the two child scripts. */
export async function bundles(): Promise<Bundles> {
  const common = { bundle: true, platform: 'node' as const, target: 'node20', external: EXTERNAL, logLevel: 'error' as const };
  const origin = join(BUILD_DIR, 'origin.cjs');
  // As lib/parts/origin-function.ts has the CDK build it: minified CJS, the SDK's ES module builds.
  await build({
    ...common,
    entryPoints: [join(PROJECT_ROOT, 'lambda/origin/index.ts')],
    outfile: origin,
    format: 'cjs',
    minify: true,
    mainFields: ['module', 'main'],
  });
  const child = join(BUILD_DIR, 'child.mjs');
  await build({ ...common, entryPoints: [join(PROJECT_ROOT, 'scripts/bench/child.ts')], outfile: child, format: 'esm' });
  const coldChild = join(BUILD_DIR, 'cold-child.mjs');
  await build({ ...common, entryPoints: [join(PROJECT_ROOT, 'scripts/bench/cold-child.ts')], outfile: coldChild, format: 'esm' });
  return { origin, originBytes: statSync(origin).size, originGzipBytes: gzipSync(readFileSync(origin)).length, child, coldChild };
}

export interface NaiveServer {
  settings: NaiveSettings;
  request(request: Omit<NaiveRequest, 'id'>): Promise<NaiveAnswer>;
  stop(): void;
}

/** Builds and starts scripts/bench/naive-server.ts, reaching LocalStack at `endpoint`. */
export async function startNaiveServer(endpoint: string): Promise<NaiveServer> {
  const script = join(BUILD_DIR, 'naive-server.cjs');
  await build({
    entryPoints: [join(PROJECT_ROOT, 'scripts/bench/naive-server.ts')],
    outfile: script,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: EXTERNAL,
    logLevel: 'error',
  });
  const child = spawn(process.execPath, [script], {
    env: {
      ...process.env,
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    },
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

function runChild<T>(script: string, args: string[], env: NodeJS.ProcessEnv = process.env): T {
  const result = spawnSync(process.execPath, [script, ...args], { env, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`child ${args.join(' ')} failed: ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').pop()!) as T;
}

export interface ColdRow {
  op: OpName;
  bootMs: number;
  importMs: number;
  /** From the end of the import to the response, and to the end of the invocation. */
  firstResponseMs: number;
  firstCallMs: number;
  rssAfterImport: number;
  maxRss: number;
}

export interface RssRow {
  op: OpName;
  bare: number;
  transform: number;
  naive: number | undefined;
}

export async function childMeasurements(ctx: ChildContext, corpus: Corpus, ops: OpSpec[], built: Bundles) {
  const largest = [...corpus.photos].sort((a, b) => b.megapixels - a.megapixels)[0]!;
  const env = {
    ...process.env,
    SOURCE_BUCKET: ctx.sourceBucket,
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
    const coldRun = runChild<Omit<ColdRow, 'op'> & { status: number }>(
      built.coldChild,
      [built.origin, canonicalUri(photo.key, opsOf)],
      env,
    );
    if (coldRun.status !== 200) throw new Error(`cold miss for ${op.name}: ${coldRun.status}`);
    cold.push({ op: op.name, ...coldRun });
    if (op.animated) continue;
    progress(`peak RSS · ${op.name} · ${photo.key}`);
    const row: RssRow = {
      op: op.name,
      bare: runChild<{ maxRss: number }>(built.child, ['bare', op.name, photo.path, ctx.watermark.definition.file]).maxRss,
      transform: runChild<{ maxRss: number }>(built.child, ['transform', op.name, photo.path, ctx.watermark.definition.file]).maxRss,
      naive: sampleHas(op) ? runChild<{ maxRss: number }>(built.child, ['naive', op.name, photo.path]).maxRss : undefined,
    };
    rss.push(row);
  }
  progressDone();
  return { largest, cold, rss };
}
