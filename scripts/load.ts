// `npm run load -- [--requests N] [--concurrency C] [--miss-ratio F] [--no-edge-cache] [--seed S]`
//
// Drives the local edge emulator (LocalStack S3, the generated CloudFront
// Function, the edge cache, the cache bucket and the real origin handler with
// the production S3 client, all in this process but LocalStack) over loopback
// HTTP with a bounded number of requests at a fixed concurrency, then stops
// and prints what it saw: throughput, latency percentiles (all and by who
// answered), status counts and errors, the hit/miss split from X-Cache and
// X-Origin, and this process's memory over the run.
//
// The mix: each request is, with probability --miss-ratio, a variant never
// asked for before (a new source x width x format: a true miss that reaches
// the Lambda), otherwise one already answered, through an equivalent URL
// spelling (w= or width=) and the same Accept (an edge hit, or with
// --no-edge-cache a read from the cache bucket). Formats are negotiated from
// Accept (format=auto): AVIF, WebP, or the source's own.

import { request as httpRequest, Agent, type IncomingHttpHeaders } from 'node:http';
import { availableParallelism, loadavg } from 'node:os';
import { originS3Client } from '../lambda/origin/storage';
import { commandLine, runCommand, UsageError } from '../local/harness/command-line';
import { startLocalStack } from '../local/harness/localstack';
import { startEmulator } from '../local/emulator/start';

const USAGE = `usage: npm run load -- [--requests N] [--concurrency C] [--miss-ratio F] [--no-edge-cache] [--seed S]
  --requests N      requests to send, then stop (default 3000)
  --concurrency C   requests in flight at once (default 16)
  --miss-ratio F    share of requests for a variant not asked for before (default 0.1)
  --no-edge-cache   no edge cache: repeats are read from the cache bucket
  --seed S          seed of the request mix, for a repeatable run (default 1)`;

const ACCEPT = {
  avif: 'image/avif,image/webp,image/apng,image/*,*/*;q=0.8',
  webp: 'image/webp,image/apng,image/*,*/*;q=0.8',
  plain: 'image/png,image/*;q=0.8,*/*;q=0.5',
} as const;
type Client = keyof typeof ACCEPT;
const CLIENTS = Object.keys(ACCEPT) as Client[];

/** What each image format starts with, to check every body is the image its Content-Type says. */
const MAGIC: Record<string, (body: Buffer) => boolean> = {
  'image/jpeg': (b) => b[0] === 0xff && b[1] === 0xd8,
  'image/png': (b) => b.subarray(1, 4).toString('latin1') === 'PNG',
  'image/webp': (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
  'image/avif': (b) => b.subarray(4, 8).toString('latin1') === 'ftyp',
  'image/gif': (b) => b.subarray(0, 3).toString('latin1') === 'GIF',
};

interface Variant {
  key: string;
  width: number;
  client: Client;
}

interface Result {
  status: number;
  ms: number;
  answeredBy: 'edge' | 'cache-bucket' | 'lambda' | 'function' | 'none';
  bytes: number;
  error?: string;
}

interface MemorySample {
  ms: number;
  done: number;
  rss: number;
  heapUsed: number;
  external: number;
}

const fail = (message: string): never => {
  throw new UsageError(message);
};

/** mulberry32: a small seeded PRNG, so a run's mix can be repeated. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pathOf = (key: string) => '/' + key.split('/').map(encodeURIComponent).join('/');
const DECILES = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1];
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function latencyLine(label: string, results: Result[]): string {
  const sorted = results.map((r) => r.ms).sort((a, b) => a - b);
  if (sorted.length === 0) return `  ${label.padEnd(14)} -`;
  const f = (ms: number) => ms.toFixed(1).padStart(7);
  return (
    `  ${label.padEnd(14)} n=${String(sorted.length).padEnd(6)}` +
    `p50 ${f(percentile(sorted, 50))}  p90 ${f(percentile(sorted, 90))}  p99 ${f(percentile(sorted, 99))}  max ${f(sorted.at(-1)!)}`
  );
}

interface LoadOptions {
  total: number;
  concurrency: number;
  missRatio: number;
  seed: number;
  edgeCache: boolean;
}

function loadOptions(): LoadOptions | undefined {
  const args = commandLine(USAGE, {
    requests: { type: 'string', default: '3000' },
    concurrency: { type: 'string', default: '16' },
    'miss-ratio': { type: 'string', default: '0.1' },
    'no-edge-cache': { type: 'boolean', default: false },
    seed: { type: 'string', default: '1' },
  });
  if (!args) return undefined;
  const total = Number(args.requests);
  const concurrency = Number(args.concurrency);
  const missRatio = Number(args['miss-ratio']);
  const seed = Number(args.seed);
  if (!Number.isInteger(total) || total < 1 || total > 1_000_000) fail(`--requests must be 1 to 1000000, not "${args.requests}"`);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1024)
    fail(`--concurrency must be 1 to 1024, not "${args.concurrency}"`);
  if (!(missRatio >= 0 && missRatio <= 1)) fail(`--miss-ratio must be 0 to 1, not "${args['miss-ratio']}"`);
  if (!Number.isInteger(seed)) fail(`--seed must be an integer, not "${args.seed}"`);
  return { total, concurrency, missRatio, seed, edgeCache: !args['no-edge-cache'] };
}

/** Who answered, from X-Cache and X-Origin. */
function answeredBy(headers: IncomingHttpHeaders): Result['answeredBy'] {
  const cache = String(headers['x-cache'] ?? '');
  const origin = String(headers['x-origin']);
  if (cache.startsWith('Hit')) return 'edge';
  if (cache.startsWith('FunctionGenerated')) return 'function';
  return origin === 'lambda' || origin === 'cache-bucket' ? origin : 'none';
}

/** One GET over `agent`, timed from the request sent to the body's last byte, its body checked against its Content-Type. */
function get(base: URL, agent: Agent, path: string, accept: string): Promise<Result> {
  const start = performance.now();
  return new Promise((resolve) => {
    const done = (result: Omit<Result, 'ms'>) => resolve({ ...result, ms: performance.now() - start });
    const outgoing = httpRequest({ host: '127.0.0.1', port: base.port, path, headers: { accept }, agent, timeout: 60_000 }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', (error) => done({ status: 0, answeredBy: 'none', bytes: 0, error: error.message }));
      response.on('end', () => {
        const body = Buffer.concat(chunks);
        const status = response.statusCode ?? 0;
        const type = String(response.headers['content-type']);
        let error: string | undefined;
        if (status !== 200) error = `${status} ${body.toString('utf8').slice(0, 200)}`;
        else if (Number(response.headers['content-length']) !== body.length) error = 'content-length is not the body length';
        else if (!MAGIC[type]?.(body)) error = `the body is not ${type}`;
        done({ status, answeredBy: answeredBy(response.headers), bytes: body.length, error });
      });
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error('no answer in 60 s')));
    outgoing.on('error', (error) => done({ status: 0, answeredBy: 'none', bytes: 0, error: error.message }));
    outgoing.end();
  });
}

/** This process's memory, sampled every 250 ms while `completed()` requests are done. */
function memorySampler(completed: () => number) {
  const samples: MemorySample[] = [];
  const runStart = performance.now();
  const sample = () => {
    const { rss, heapUsed, external } = process.memoryUsage();
    samples.push({ ms: performance.now() - runStart, done: completed(), rss, heapUsed, external });
  };
  sample();
  const timer = setInterval(sample, 250);
  return {
    samples,
    stop: () => {
      clearInterval(timer);
      sample();
    },
  };
}

interface LoadRun {
  options: LoadOptions;
  url: string;
  sourceCount: number;
  results: Result[];
  samples: MemorySample[];
  elapsedMs: number;
  peakRss: number;
  loads: [number, number];
  newVariants: number;
  /** Variants answered 200, and their bodies' bytes: what the edge cache keeps. */
  answered: number;
  edgeBytes: number;
  emulatorLog: string[];
}

function report(run: LoadRun): string[] {
  const { options, results, samples } = run;
  const { total, concurrency, missRatio, seed, edgeCache } = options;
  const statuses = new Map<number, number>();
  for (const r of results) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
  const errors = results.filter((r) => r.error);
  const by = (who: Result['answeredBy']) => results.filter((r) => r.answeredBy === who);
  const share = (n: number) => `${n} (${((100 * n) / results.length).toFixed(1)}%)`;
  const at = (fraction: number) => samples.find((s) => s.done >= fraction * total) ?? samples.at(-1)!;
  const afterWarmUp = samples.filter((s) => s.done >= 0.25 * total);
  const origin = run.emulatorLog.filter((line) => line.startsWith('{'));
  return [
    '',
    `load: ${total} requests at concurrency ${concurrency}, ${(missRatio * 100).toFixed(0)}% new variants (seed ${seed}), ` +
      `edge cache ${edgeCache ? 'on' : 'off'}, ${run.sourceCount} generated samples, over loopback HTTP to ${run.url}`,
    `machine        ${availableParallelism()} CPUs; 1-minute load average ${run.loads[0].toFixed(1)} at the start, ${run.loads[1].toFixed(1)} at the end ` +
      '(client, emulator, origin and LocalStack share them)',
    `throughput     ${(results.length / (run.elapsedMs / 1000)).toFixed(1)} requests/s (${results.length} in ${(run.elapsedMs / 1000).toFixed(2)} s)`,
    'latency (ms, request sent to last body byte)',
    latencyLine('all', results),
    latencyLine('edge hits', by('edge')),
    latencyLine('cache bucket', by('cache-bucket')),
    latencyLine('lambda (miss)', by('lambda')),
    `statuses       ${[...statuses].map(([status, n]) => `${status}: ${n}`).join(', ')}`,
    `errors         ${errors.length}${errors.length ? ': ' + [...new Set(errors.map((e) => e.error))].slice(0, 5).join(' | ') : ''}`,
    `answered by    edge cache ${share(by('edge').length)}, cache bucket ${share(by('cache-bucket').length)}, ` +
      `lambda ${share(by('lambda').length)}` +
      (by('function').length + by('none').length ? `, other ${by('function').length + by('none').length}` : ''),
    `new variants   ${run.newVariants} asked for, ${by('lambda').length} made by the Lambda`,
    `origin log     ${origin.length} error/warning lines${origin.length ? ': ' + origin.slice(0, 3).join(' | ') : ''}`,
    'memory of this process (emulator + origin + sharp + load client; LocalStack runs apart)',
    `  rss          ${[0.25, 0.5, 0.75, 1].map((f) => `${f * 100}%: ${mb(at(f).rss)} MB`).join(', ')}; peak (maxRSS) ${mb(run.peakRss)} MB`,
    `  rss by tenth ${DECILES.map((f) => mb(at(f).rss)).join(' ')} MB`,
    `  after 25%    rss min ${mb(Math.min(...afterWarmUp.map((s) => s.rss)))} MB, max ${mb(Math.max(...afterWarmUp.map((s) => s.rss)))} MB ` +
      `(${afterWarmUp.length} samples, every 250 ms)`,
    `  heap used    ${[0.25, 0.5, 0.75, 1].map((f) => `${f * 100}%: ${mb(at(f).heapUsed)} MB`).join(', ')}`,
    `  external     ${[0.25, 0.5, 0.75, 1].map((f) => `${f * 100}%: ${mb(at(f).external)} MB`).join(', ')} (Buffers and other memory V8 is told of)`,
    `  edge cache   ${edgeCache ? `${run.answered} responses, ${mb(run.edgeBytes)} MB of bodies kept in memory by design` : 'off'}`,
  ];
}

async function main() {
  const options = loadOptions();
  if (!options) return;
  const { total, concurrency, missRatio, seed, edgeCache } = options;
  const progress = (line: string) => console.error(`[load] ${line}`);
  const started = performance.now();
  const localStack = await startLocalStack({ log: progress });
  const s3 = originS3Client({
    endpoint: localStack.endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  const emulatorLog: string[] = [];
  const emulator = await startEmulator({ s3, port: 0, edgeCache, log: (line) => emulatorLog.push(line) });
  const base = new URL(emulator.url);
  if (base.hostname !== '127.0.0.1') throw new Error(`the emulator is not on 127.0.0.1: ${emulator.url}`);
  progress(`LocalStack and the emulator ready in ${((performance.now() - started) / 1000).toFixed(1)} s (${emulator.url})`);

  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const asked = new Set<string>(); // every variant ever requested (answered or in flight)
  const answered: Variant[] = []; // variants whose first request has completed: repeats come from here
  const sources = emulator.sources;

  function newVariant(): Variant {
    for (;;) {
      const variant = { key: pick(sources), width: 40 + Math.floor(next() * 1561), client: pick(CLIENTS) };
      const id = `${variant.key}|${variant.width}|${variant.client}`;
      if (!asked.has(id)) {
        asked.add(id);
        return variant;
      }
    }
  }

  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  // Equivalent spellings of one variant: the edge canonicalises both to one cache key.
  const send = (variant: Variant) =>
    get(
      base,
      agent,
      `${pathOf(variant.key)}?${next() < 0.5 ? `w=${variant.width}&format=auto` : `format=auto&width=${variant.width}`}`,
      ACCEPT[variant.client],
    );

  const results: Result[] = [];
  const memory = memorySampler(() => results.length);
  const runStart = performance.now();
  const loadBefore = loadavg()[0]!;
  let newVariants = 0;
  let edgeBytes = 0; // bodies the edge cache keeps: one per variant answered 200
  let issued = 0;
  async function worker() {
    while (issued < total) {
      issued += 1;
      const fresh = answered.length === 0 || next() < missRatio;
      const variant = fresh ? newVariant() : pick(answered);
      if (fresh) newVariants += 1;
      const result = await send(variant);
      results.push(result);
      if (fresh && result.status === 200) {
        answered.push(variant);
        edgeBytes += result.bytes;
      }
      if (results.length % Math.ceil(total / 10) === 0) progress(`${results.length}/${total}`);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsedMs = performance.now() - runStart;
  memory.stop();
  const peakRss = process.resourceUsage().maxRSS * 1024;
  const loads: [number, number] = [loadBefore, loadavg()[0]!];

  agent.destroy();
  await emulator.close();
  s3.destroy();
  await localStack.stop();

  const run: LoadRun = {
    options,
    url: emulator.url,
    sourceCount: sources.length,
    results,
    samples: memory.samples,
    elapsedMs,
    peakRss,
    loads,
    newVariants,
    answered: answered.length,
    edgeBytes,
    emulatorLog,
  };
  console.log(report(run).join('\n'));
  if (results.some((result) => result.error)) process.exitCode = 1;
}

runCommand(USAGE, main);
