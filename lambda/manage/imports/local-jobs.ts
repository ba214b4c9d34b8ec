// The emulator's import runner: S3 Batch Operations does not run in
// LocalStack, so the per-key function runs here over the items, a few at a
// time, in this process. The import's status is kept where a deployment's
// job would be asked for it: `_imports/<id>/status.json` in the source
// bucket (counts and the first failures), and every failure in
// `_imports/<id>/failures.csv` once it is complete.

import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Logger } from '../../common/log';
import type { ManageConfig } from '../config';
import { isMissing, storageUnavailable } from '../errors';
import { importItem, type ImportFetchRules, type ImportOutcome } from './import-item';
import { parseManifest } from './items';
import { importFolder, MAX_LISTED_FAILURES, type ImportFailure, type ImportJobs, type ImportSource, type ImportStatus } from './jobs';

/** Items imported at once: each holds at most one source in memory, as a Lambda would. */
export const LOCAL_IMPORT_CONCURRENCY = 4;

/** How often a running import's status is written, at most. */
const STATUS_EVERY_MS = 1_000;

export interface LocalImportJobs extends ImportJobs {
  /** Resolves when every import started so far is complete (tests, shutting down). */
  settled(): Promise<void>;
}

const csvField = (text: string) => (/[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text);

async function readText(s3: S3Client, bucket: string, key: string): Promise<string | undefined> {
  try {
    const response = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return await response.Body!.transformToString();
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw storageUnavailable(error);
  }
}

export function createLocalImportJobs(
  clients: { s3: S3Client },
  config: ManageConfig,
  options: { rules?: ImportFetchRules; concurrency?: number; log?: Logger } = {},
): LocalImportJobs {
  const { s3 } = clients;
  const bucket = config.sourceBucket;
  const running = new Set<Promise<void>>();
  const write = (key: string, body: string, contentType: string) =>
    s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType }));
  const writeStatus = (status: ImportStatus) => write(importFolder(status.id) + 'status.json', JSON.stringify(status), 'application/json');

  async function run(status: ImportStatus, rows: unknown[]): Promise<void> {
    const failures: ImportFailure[] = [];
    let next = 0;
    let writtenAt = Date.now();
    const record = async (outcome: ImportOutcome) => {
      if (outcome.status === 'ready') status.succeeded++;
      else {
        status.failed++;
        failures.push({ key: outcome.key, url: outcome.url, reason: `${outcome.reason}: ${outcome.message}` });
        if (status.failures.length < MAX_LISTED_FAILURES) status.failures.push(failures.at(-1)!);
      }
      if (Date.now() - writtenAt >= STATUS_EVERY_MS) {
        writtenAt = Date.now();
        await writeStatus(status);
      }
    };
    const worker = async () => {
      while (next < rows.length) await record(await importItem(clients, config, rows[next++], options.rules));
    };
    await Promise.all(Array.from({ length: options.concurrency ?? LOCAL_IMPORT_CONCURRENCY }, worker));
    const reportKey = importFolder(status.id) + 'failures.csv';
    const lines = failures.map((failure) => [failure.key, failure.url, failure.reason].map(csvField).join(','));
    await write(reportKey, ['key,url,reason', ...lines].join('\n') + '\n', 'text/csv');
    await writeStatus({ ...status, status: 'complete', reportKey });
  }

  /** Runs the import in the background; a storage failure ends it `failed` (when that can still be written). */
  const track = (status: ImportStatus, rows: unknown[]) => {
    const tracked = run(status, rows).catch(async (error: unknown) => {
      options.log?.({ level: 'error', event: 'import_failed', id: status.id, detail: String(error) });
      await writeStatus({ ...status, status: 'failed' }).catch(() => undefined);
    });
    running.add(tracked);
    void tracked.finally(() => running.delete(tracked));
  };

  return {
    async start(id: string, source: ImportSource) {
      const rows = 'items' in source ? source.items : parseManifest((await readText(s3, bucket, source.manifestKey)) ?? '');
      const status: ImportStatus = { id, status: 'running', total: rows.length, succeeded: 0, failed: 0, failures: [] };
      await writeStatus(status);
      track(status, rows);
      return { total: rows.length };
    },
    async status(id: string) {
      const text = await readText(s3, bucket, importFolder(id) + 'status.json');
      return text === undefined ? undefined : (JSON.parse(text) as ImportStatus);
    },
    async settled() {
      while (running.size > 0) await Promise.all(running);
    },
  };
}
