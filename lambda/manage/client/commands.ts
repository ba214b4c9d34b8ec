// The management command line's commands (cli.ts runs them): each parses
// its own options, does its work with the client it is given, writes each
// item's outcome and a summary to stdout and its progress to stderr, and
// returns the exit status (1 when any item failed).

import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { UsageError } from '../../common/usage-error';
import { contentTypeOf } from '../../../local/emulator/content-types';
import { IMPORT_BODY } from '../api-schema';
import type { ImportStarted, ImportStatus, ManageClient } from './index';
import { ManifestError, readManifest } from './manifest';
import { createProgress, type ProgressStream } from './progress';

export interface CliIo {
  stdout: ProgressStream;
  stderr: ProgressStream;
  env: Record<string, string | undefined>;
  /** Makes the client of an endpoint (by default with the AWS SDK's credential chain). */
  client(options: { endpoint: string; region?: string }): ManageClient;
}

export type CliValues = Record<string, string | boolean | undefined>;

export interface Command {
  usage: string;
  options: Record<string, { type: 'string' | 'boolean' }>;
  run(values: CliValues, positionals: string[], client: ManageClient, io: CliIo): Promise<number>;
}

const COMMON = `  --endpoint URL      the API's URL: the stack's ManageApiUrl output, or the emulator's
                      http://127.0.0.1:3000/_manage (or $EDGE_IMAGE_MANAGE_URL)
  --region REGION     the API's region (default: an execute-api URL's own, else $AWS_REGION)
  -h, --help          this text

Calls are signed with the AWS SDK's credential chain (AWS_PROFILE, AWS_ACCESS_KEY_ID...).
exit status: 0 when every item succeeded, 1 when any failed or the API refused, 2 on a usage error.`;

/** The lines of a file of keys, one a line; blank lines are skipped. */
async function keysOfFile(path: string): Promise<string[]> {
  const text = await readFile(path, 'utf8');
  return text.split(/\r?\n/).filter((line) => line.trim() !== '');
}

const deleteCommand: Command = {
  usage: `usage: edge-image-transformer delete <key...> | --from-file FILE [options]

Deletes images (their variants go by the deployment's invalidation path), 100 keys a call.
Every key is checked before anything is deleted.

  --from-file FILE    the keys, one a line
${COMMON}`,
  options: { 'from-file': { type: 'string' } },
  async run(values, positionals, client, io) {
    const fromFile = values['from-file'] as string | undefined;
    if (fromFile && positionals.length > 0) throw new UsageError('name keys or --from-file, not both.');
    const keys = fromFile ? await keysOfFile(fromFile) : positionals;
    if (keys.length === 0) throw new UsageError('name at least one key (or --from-file FILE).');
    const progress = createProgress(io.stderr, 'delete', keys.length);
    let done = 0;
    const report = await client.delete(keys, {
      onBatch: (batch) => progress.update((done += batch.failed_count + batch.succeeded_count)),
    });
    progress.end();
    for (const { key, reason } of report.failed_files) io.stdout.write(`FAIL  ${key}: ${reason}\n`);
    io.stdout.write(`${report.succeeded_count} key(s) deleted, ${report.failed_count} failed.\n`);
    return report.failed_count === 0 ? 0 : 1;
  },
};

const listCommand: Command = {
  usage: `usage: edge-image-transformer list [--prefix P] [--limit N] [--json] [options]

Lists the ready images, one a line: key, bytes, uploadedAt (tab-separated).

  --prefix P          only keys that start with P
  --limit N           at most N images (default: all)
  --json              one JSON object a line: {key, status, bytes, etag, uploadedAt}
${COMMON}`,
  options: { prefix: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
  async run(values, _positionals, client, io) {
    const limitText = values.limit as string | undefined;
    const limit = limitText === undefined ? Infinity : Number(limitText);
    if (!(Number.isSafeInteger(limit) && limit >= 1) && limit !== Infinity) {
      throw new UsageError(`--limit must be a whole number of at least 1, not ${JSON.stringify(limitText)}.`);
    }
    let listed = 0;
    const pageSize = Math.min(limit, 1000);
    for await (const image of client.images({ prefix: values.prefix as string | undefined, limit: pageSize })) {
      io.stdout.write(values.json ? `${JSON.stringify(image)}\n` : `${image.key}\t${image.bytes}\t${image.uploadedAt}\n`);
      if (++listed >= limit) break;
    }
    return 0;
  },
};

/** How many files are uploaded at once. */
const UPLOADS_AT_ONCE = 4;

/** Runs `work` on each item, at most `width` at once. */
async function inPool<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

const uploadCommand: Command = {
  usage: `usage: edge-image-transformer upload <file...> [--prefix P] [--wait] [options]

Uploads each file through a presigned POST, to the key P + the file's name; the
validator then makes it ready or quarantines it. ${UPLOADS_AT_ONCE} files at a time.

  --prefix P          the keys' prefix, e.g. photos/2026/
  --wait              wait for each file's verdict (at most 60 s each): a quarantined file fails
${COMMON}`,
  options: { prefix: { type: 'string' }, wait: { type: 'boolean' } },
  async run(values, files, client, io) {
    if (files.length === 0) throw new UsageError('name at least one file to upload.');
    const prefix = (values.prefix as string | undefined) ?? '';
    const progress = createProgress(io.stderr, 'upload', files.length);
    const lines = new Map<string, string>();
    let failed = 0;
    let done = 0;
    await inPool(files, UPLOADS_AT_ONCE, async (file) => {
      const key = prefix + basename(file);
      try {
        const contentType = contentTypeOf(file);
        if (!contentType?.startsWith('image/')) throw new Error('its extension names no image type.');
        const { status } = await client.upload(key, await readFile(file), { contentType, waitUntilReady: values.wait === true });
        if (status?.status === 'quarantined') throw new Error(`quarantined as ${key}: ${status.reason}`);
        const verdict = status ? `ready (${status.width}x${status.height} ${status.format})` : 'uploaded, being validated';
        lines.set(file, `ok    ${file} -> ${key}: ${verdict}`);
      } catch (error) {
        failed++;
        lines.set(file, `FAIL  ${file} -> ${key}: ${messageOf(error)}`);
      }
      progress.update(++done);
    });
    progress.end();
    for (const file of files) io.stdout.write(lines.get(file) + '\n');
    io.stdout.write(`${files.length - failed} file(s) uploaded${values.wait ? ' and ready' : ''}, ${failed} failed.\n`);
    return failed === 0 ? 0 : 1;
  },
};

/** The most items one POST /imports takes: a longer manifest is sent as several imports. */
export const MAX_IMPORT_ITEMS = IMPORT_BODY[0].schema.maxItems;

/** How often a waiting import command asks for its imports' progress. */
const IMPORT_POLL_MS = 2000;

/** Asks for each import's status until none is running, showing their progress. */
async function waitForImports(client: ManageClient, started: ImportStarted[], io: CliIo): Promise<ImportStatus[]> {
  const total = started.reduce((sum, { total }) => sum + (total ?? 0), 0);
  const progress = createProgress(io.stderr, 'import', total);
  for (;;) {
    const statuses = await Promise.all(started.map(({ id }) => client.importStatus(id)));
    progress.update(statuses.reduce((sum, status) => sum + status.succeeded + status.failed, 0));
    if (statuses.every((status) => status.status !== 'running')) {
      progress.end();
      return statuses;
    }
    await new Promise((resolve) => setTimeout(resolve, IMPORT_POLL_MS));
  }
}

const importCommand: Command = {
  usage: `usage: edge-image-transformer import <manifest.csv|manifest.json> [--wait] [options]
       edge-image-transformer import --manifest-key KEY [--wait] [options]

Imports images from a legacy server: each URL is fetched, validated as an upload and
stored at its key. A manifest file is a CSV of url,key rows (a header line url,key is
optional; quote a field that holds a comma) or a JSON array of {"url", "key"}; it is
checked whole before anything is sent, and sent ${MAX_IMPORT_ITEMS} items per import.
For millions of rows, put the manifest in the source bucket under _imports/ and name it.

  --manifest-key KEY  a manifest already in the source bucket, under _imports/
  --wait              wait until the imports end (Ctrl-C stops waiting, not the imports)
${COMMON}`,
  options: { 'manifest-key': { type: 'string' }, wait: { type: 'boolean' } },
  async run(values, positionals, client, io) {
    const manifestKey = values['manifest-key'] as string | undefined;
    if ((manifestKey === undefined) === (positionals.length !== 1)) throw new UsageError('name one manifest file, or --manifest-key KEY.');
    const sources: Parameters<ManageClient['startImport']>[0][] = [];
    if (manifestKey !== undefined) sources.push({ manifestKey });
    else {
      const path = positionals[0]!;
      let items;
      try {
        items = readManifest(path, await readFile(path, 'utf8'));
      } catch (error) {
        if (!(error instanceof ManifestError)) throw error;
        io.stderr.write(`import: ${path}: ${error.message} Nothing was sent.\n`);
        return 1;
      }
      for (let start = 0; start < items.length; start += MAX_IMPORT_ITEMS) sources.push(items.slice(start, start + MAX_IMPORT_ITEMS));
    }
    const started: ImportStarted[] = [];
    for (const source of sources) {
      const import_ = await client.startImport(source);
      started.push(import_);
      io.stdout.write(`started import ${import_.id}: ${import_.total ?? 'not yet counted'} item(s)\n`);
    }
    if (!values.wait) return 0;
    const statuses = await waitForImports(client, started, io);
    for (const status of statuses) {
      for (const { key, url, reason } of status.failures) io.stdout.write(`FAIL  ${key} (${url}): ${reason}\n`);
      if (status.failed > status.failures.length) io.stdout.write(`      and ${status.failed - status.failures.length} more failures\n`);
      const report = status.reportKey ? `; report: ${status.reportKey}` : '';
      io.stdout.write(`import ${status.id}: ${status.status}, ${status.succeeded} imported, ${status.failed} failed${report}.\n`);
    }
    return statuses.every((status) => status.status === 'complete' && status.failed === 0) ? 0 : 1;
  },
};

export const COMMANDS: Record<string, Command> = { upload: uploadCommand, delete: deleteCommand, list: listCommand, import: importCommand };
