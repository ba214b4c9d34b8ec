// `npx tsx scripts/bench/manage.ts [--rounds N]`: what managing an image
// costs (docs/manage.md), on LocalStack, with the bench's real photos
// (scripts/bench/corpus.ts, 0.1 to 18 megapixels). Per photo and round:
// the API's POST /uploads (the ticket), the presigned POST of the file to S3
// (S3's work, not ours), the validator's run on the staged upload (read,
// decode within the origin's budget, copy to its key, delete the staged
// copy), then one DELETE /images of every key uploaded. Wall and CPU time of
// this process for the API and the validator, which run in it as each runs
// alone in its Lambda. It prints a markdown table.

import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { loadavg } from 'node:os';
import { manageConfig } from '../../lambda/manage/config';
import { createManageHandler } from '../../lambda/manage/handler';
import type { UploadTicket } from '../../lambda/manage/uploads';
import { validateUpload } from '../../lambda/manage/validate';
import { originConfig } from '../../lambda/origin/config';
import { originS3Client } from '../../lambda/origin/storage';
import { commandLine, runCommand, UsageError } from '../../local/harness/command-line';
import { startLocalStack } from '../../local/harness/localstack';
import { MANAGE_PREFIX, manageEvent } from '../../local/emulator/manage-route';
import { loadCorpus, type Photo } from './corpus';
import { maxRssBytes } from './rss';
import { log, machine, versions } from './session';
import { markdownTable, median, ms, p95 } from './stats';

const USAGE = `usage: npx tsx scripts/bench/manage.ts [--rounds N]
  --rounds N   uploads of each photo of the corpus (default 3)`;

interface Timed {
  wallMs: number;
  cpuMs: number;
}

/** Wall and CPU time of this process while `work` runs (nothing else runs meanwhile). */
async function timed<T>(work: () => Promise<T>): Promise<[T, Timed]> {
  const [cpuBefore, start] = [process.cpuUsage(), performance.now()];
  const result = await work();
  const cpu = process.cpuUsage(cpuBefore);
  return [result, { wallMs: performance.now() - start, cpuMs: (cpu.user + cpu.system) / 1000 }];
}

/** What a browser's form does with a ticket: the fields, then the file last. */
async function post(ticket: UploadTicket, photo: Photo): Promise<void> {
  const form = new FormData();
  for (const [name, value] of Object.entries(ticket.fields)) form.append(name, value);
  form.append('file', new Blob([new Uint8Array(photo.bytes)]), photo.key);
  const response = await fetch(ticket.url, { method: 'POST', body: form });
  if (response.status !== 204) throw new Error(`the presigned POST of ${photo.key} answered ${response.status}: ${await response.text()}`);
}

/** The HTTP API event of a JSON call, as the emulator makes it. */
const apiCall = (method: string, path: string, body: unknown) =>
  manageEvent({
    method,
    path: MANAGE_PREFIX + path,
    query: '',
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify(body)),
  });

const contentTypeOf = (photo: Photo) => `image/${photo.facts.format === 'jpeg' ? 'jpeg' : photo.facts.format}`;

interface Rows {
  ticket: Timed[];
  post: Timed[];
  validate: Map<string, Timed[]>;
}

function report(rows: Rows, photos: Photo[], deletion: Timed, keys: number, rounds: number, loads: number[]): string {
  const stat = (name: string, times: Timed[]) => [
    name,
    String(times.length),
    ms(median(times.map((t) => t.wallMs))),
    ms(p95(times.map((t) => t.wallMs))),
    ms(median(times.map((t) => t.cpuMs))),
  ];
  const allValidations = [...rows.validate.values()].flat();
  return [
    `Managing images, ${new Date().toISOString().slice(0, 16)} UTC: ${machine()}; ${versions()}; load average ${loads.map((load) => load.toFixed(1)).join(' to ')}. \`npx tsx scripts/bench/manage.ts --rounds ${rounds}\``,
    '',
    markdownTable(
      ['step', 'runs', 'wall ms, median', 'wall ms, p95', 'CPU ms, median'],
      [
        stat('POST /uploads (the ticket)', rows.ticket),
        stat("presigned POST to S3 (S3's work)", rows.post),
        stat('validation, every photo', allValidations),
        ...photos.map((photo) => stat(`validation, ${photo.key} (${photo.megapixels.toFixed(1)} MP)`, rows.validate.get(photo.key)!)),
        [`DELETE /images, ${keys} keys`, '1', ms(deletion.wallMs), ms(deletion.wallMs), ms(deletion.cpuMs)],
      ],
    ),
    '',
    `Peak resident memory of this process (API and validator together, after the last validation): ${Math.round(maxRssBytes() / 2 ** 20)} MB.`,
  ].join('\n');
}

async function main(): Promise<void> {
  const args = commandLine(USAGE, { rounds: { type: 'string', default: '3' } });
  if (!args) return;
  const rounds = Number(args.rounds);
  if (!Number.isInteger(rounds) || rounds < 1) throw new UsageError(`--rounds must be a whole number, at least 1, not "${args.rounds}"`);
  const corpus = await loadCorpus(log);
  const localStack = await startLocalStack({ log: (line) => console.error(`[localstack] ${line}`) });
  try {
    const id = Date.now().toString(36);
    const buckets = { sourceBucket: `manage-src-${id}`, cacheBucket: `manage-cache-${id}` };
    const s3 = originS3Client({
      endpoint: localStack.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      forcePathStyle: true,
    });
    for (const Bucket of Object.values(buckets)) await s3.send(new CreateBucketCommand({ Bucket }));
    const config = manageConfig(originConfig(buckets));
    const handle = createManageHandler({ s3 }, config);
    const rows: Rows = { ticket: [], post: [], validate: new Map(corpus.photos.map((photo) => [photo.key, []])) };
    const keys: string[] = [];
    const loads = [loadavg()[0]!];
    for (let round = 0; round < rounds; round++) {
      for (const photo of corpus.photos) {
        const key = `bench/${round}/${photo.key}`;
        const request = { key, contentType: contentTypeOf(photo), contentLength: photo.bytes.length };
        const [answer, ticketTime] = await timed(() => handle(apiCall('POST', '/uploads', request)));
        if (answer.statusCode !== 200) throw new Error(`POST /uploads for ${key} answered ${answer.statusCode}: ${answer.body}`);
        const [, postTime] = await timed(() => post(JSON.parse(answer.body) as UploadTicket, photo));
        const [outcome, validateTime] = await timed(() => validateUpload({ s3 }, config, config.stagingPrefix + key));
        if (outcome.status !== 'ready') throw new Error(`${key} was ${outcome.status}, not ready: ${JSON.stringify(outcome)}`);
        // The first round warms the SDK's connections and sharp: untimed.
        if (round === 0 && rounds > 1) continue;
        rows.ticket.push(ticketTime);
        rows.post.push(postTime);
        rows.validate.get(photo.key)!.push(validateTime);
        keys.push(key);
      }
    }
    const batch = keys.slice(0, 100);
    const [deleted, deletion] = await timed(() => handle(apiCall('DELETE', '/images', { keys: batch })));
    if (deleted.statusCode !== 200) throw new Error(`DELETE /images answered ${deleted.statusCode}: ${deleted.body}`);
    loads.push(loadavg()[0]!);
    console.log(report(rows, corpus.photos, deletion, batch.length, rounds, loads));
  } finally {
    await localStack.stop();
  }
}

runCommand(USAGE, main);
