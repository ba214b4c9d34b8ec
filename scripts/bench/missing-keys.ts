// `npx tsx scripts/bench/missing-keys.ts [--keys N]`: what a flood of
// distinct missing keys costs with a fallback image, against the JSON 404
// without one (docs/operations.md#the-fallback-image). Two origin handlers
// on one LocalStack, each with its own transform process, one with a
// fallback (a 560x560 PNG of noise, as large as the synth allows), one
// without; N distinct missing keys asked of each at one size, and of the
// one with a fallback N more each at its own width (what the fallback's
// pricing bounds), interleaved (the order rotated every key), in one run.
// Per request: the CPU
// seconds of the handler and of its transform process together, and the
// wall time to the answer. The fallback's first request, which makes it, is
// reported apart. It prints a markdown table.

import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { originConfig } from '../../lambda/origin/config';
import { createOriginHandler, type OriginHandler } from '../../lambda/origin/handler';
import { originS3Client } from '../../lambda/origin/storage';
import { transformProcesses, type TransformProcesses } from '../../lambda/origin/transform-process';
import { commandLine, runCommand, UsageError } from '../../local/harness/command-line';
import { functionUrlEvent } from '../../local/emulator/function-url';
import { startLocalStack } from '../../local/harness/localstack';
import { noiseImage } from '../../test/support/images';
import { cpuSecondsOf } from './proc-stat';
import { machine, versions } from './session';
import { markdownTable, median, ms, p95, ratio, sum } from './stats';

const USAGE = `usage: npx tsx scripts/bench/missing-keys.ts [--keys N]
  --keys N   distinct missing keys asked of each handler (default 300)`;

/** What a page would ask: one width, in the format a browser negotiates. */
const WIDTH = 640;
const opsAt = (width: number) => `width=${width},accept=webp`;

interface Measured {
  /** Milliseconds to the answer. */
  wallMs: number;
  status: number;
  contentType: string;
}

interface Origin {
  handle: OriginHandler;
  transforms: TransformProcesses;
  requests: Measured[];
  /** CPU seconds of the handler's requests (this process) and of its transform process, summed over them. */
  handlerCpu: number;
  transformCpu: number;
}

const s3Client = (endpoint: string) =>
  originS3Client({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, forcePathStyle: true });

async function originOf(buckets: { sourceBucket: string; cacheBucket: string }, endpoint: string, fallbackImage?: string): Promise<Origin> {
  const s3 = s3Client(endpoint);
  const transforms = transformProcesses();
  await transforms.ready();
  const handle = createOriginHandler({ s3, config: originConfig(buckets, { fallbackImage }), log: () => {}, transforms });
  return { handle, transforms, requests: [], handlerCpu: 0, transformCpu: 0 };
}

/** One request for a missing key, its CPU added to the origin's. */
async function ask(origin: Origin, key: string, width = WIDTH): Promise<Measured> {
  const transformCpu = () => sum(origin.transforms.pids().map(cpuSecondsOf));
  const [cpuBefore, childBefore, start] = [process.cpuUsage(), transformCpu(), performance.now()];
  const response = await origin.handle(functionUrlEvent(`/${key}/${opsAt(width)}`));
  const wallMs = performance.now() - start;
  const used = process.cpuUsage(cpuBefore);
  origin.handlerCpu += (used.user + used.system) / 1e6;
  origin.transformCpu += transformCpu() - childBefore;
  return { wallMs, status: response.statusCode, contentType: response.headers['content-type'] ?? '' };
}

async function main(): Promise<void> {
  const args = commandLine(USAGE, { keys: { type: 'string', default: '300' } });
  if (!args) return;
  const keys = Number(args.keys);
  if (!Number.isInteger(keys) || keys < 10) throw new UsageError(`--keys must be a whole number, at least 10, not "${args.keys}"`);
  const folder = await mkdtemp(join(tmpdir(), 'missing-keys-'));
  const fallbackImage = join(folder, 'placeholder.png');
  await writeFile(fallbackImage, await noiseImage(560, 560, 'png'));
  const localStack = await startLocalStack({ log: (line) => console.error(`[localstack] ${line}`) });
  try {
    const id = Date.now().toString(36);
    const buckets = { sourceBucket: `missing-src-${id}`, cacheBucket: `missing-cache-${id}` };
    const s3 = s3Client(localStack.endpoint);
    await s3.send(new CreateBucketCommand({ Bucket: buckets.sourceBucket }));
    await s3.send(new CreateBucketCommand({ Bucket: buckets.cacheBucket }));
    const json = await originOf(buckets, localStack.endpoint);
    const fallback = await originOf(buckets, localStack.endpoint, fallbackImage);
    const loads = [loadavg()[0]!];
    // Untimed: the SDK's first connection, for both alike.
    await ask(json, 'warm/json.jpg');
    const making: Origin = { ...fallback, requests: [], handlerCpu: 0, transformCpu: 0 };
    const first = await ask(making, 'first/made.jpg');
    // The same handler and transform process as `fallback`, its requests counted apart.
    const sized: Origin = { ...fallback, requests: [], handlerCpu: 0, transformCpu: 0 };
    const asks: [Origin, number][] = [
      [json, WIDTH],
      [fallback, WIDTH],
      [sized, 0],
    ];
    for (let i = 0; i < keys; i++) {
      for (let turn = 0; turn < asks.length; turn++) {
        const [origin, width] = asks[(i + turn) % asks.length]!;
        origin.requests.push(await ask(origin, `missing/${i}.jpg`, width || WIDTH + 1 + i));
      }
    }
    loads.push(loadavg()[0]!);
    json.transforms.close();
    fallback.transforms.close();
    const cpuMs = (origin: Origin) => ((origin.handlerCpu + origin.transformCpu) / origin.requests.length) * 1000;
    const row = (name: string, origin: Origin) => {
      const walls = origin.requests.map((request) => request.wallMs);
      const answer = `${origin.requests[0]!.status} ${origin.requests[0]!.contentType}`;
      return [
        name,
        answer,
        String(origin.requests.length),
        ms(cpuMs(origin)),
        ms((origin.transformCpu / origin.requests.length) * 1000),
        ms(median(walls)),
        ms(p95(walls)),
      ];
    };
    const lines = [
      `Missing keys, ${new Date().toISOString().slice(0, 16)} UTC: ${machine()}; ${versions()}; load average ${loads.map((load) => load.toFixed(1)).join(' to ')}. \`npx tsx scripts/bench/missing-keys.ts --keys ${keys}\`, \`${opsAt(WIDTH)}\``,
      '',
      markdownTable(
        [
          'origin',
          'answer',
          'requests',
          'CPU ms per request (handler + transform)',
          'of which transform',
          'wall ms, median',
          'wall ms, p95',
        ],
        [
          row('no fallback (JSON 404)', json),
          row('fallback, distinct missing keys', fallback),
          row(`fallback, distinct keys and widths (${WIDTH + 1} px and up)`, sized),
        ],
      ),
      '',
      `Distinct missing keys with a fallback against the JSON 404: CPU ${ratio(cpuMs(fallback) / cpuMs(json))}, median wall time ${ratio(
        median(fallback.requests.map((request) => request.wallMs)) / median(json.requests.map((request) => request.wallMs)),
      )}. The fallback's first request, which made it: ${ms(first.wallMs)} ms, ${ms((making.handlerCpu + making.transformCpu) * 1000)} CPU ms (${first.status} ${first.contentType}).`,
    ];
    console.log(lines.join('\n'));
  } finally {
    await localStack.stop();
  }
}

runCommand(USAGE, main);
