// The imports routes: `POST /imports` checks a request (its items, or the key
// of a manifest under `_imports/`) and hands it to a job runner, which runs the
// per-key function over it; `GET /imports/{id}` asks the runner how it goes.
// Deployed, the runner is an S3 Batch Operations job (s3-control-jobs.ts);
// in the emulator, a loop in the process (local-jobs.ts).

import { HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { randomUUID } from 'node:crypto';
import { IMPORTS_PREFIX } from '../../common/staging';
import { IMPORT_BODY } from '../api-schema';
import { stringField } from '../body';
import type { ManageConfig } from '../config';
import { isMissing, ManageError, storageUnavailable } from '../errors';
import { checkItems, type ImportItem } from './items';

/** What to import: the items themselves, or a manifest in the source bucket. */
export type ImportSource = { items: ImportItem[] } | { manifestKey: string };

export interface ImportFailure {
  key: string;
  url: string;
  reason: string;
}

/** Failures a status lists at most; the report has them all. */
export const MAX_LISTED_FAILURES = 100;

export interface ImportStatus {
  id: string;
  status: 'running' | 'complete' | 'failed';
  /** Items to import; null while a manifest is not yet counted. */
  total: number | null;
  succeeded: number;
  failed: number;
  failures: ImportFailure[];
  /** The key, in the source bucket, of the list of every failure. */
  reportKey?: string;
}

/** Runs imports: the deployment's S3 Batch Operations, or the emulator's loop. */
export interface ImportJobs {
  /** Starts import `id`; resolves with its items' count when known. */
  start(id: string, source: ImportSource): Promise<{ total: number | null }>;
  /** The import's progress, or undefined when there is no import `id`. */
  status(id: string): Promise<ImportStatus | undefined>;
}

/** Where import `id` keeps its manifest, status and report. */
export const importFolder = (id: string) => `${IMPORTS_PREFIX}${id}/`;

const [, MANIFEST_KEY] = IMPORT_BODY;

const ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The source a request body names: `items` or `manifestKey`, exactly one. */
async function readImportSource(s3: S3Client, config: ManageConfig, body: Record<string, unknown>): Promise<ImportSource> {
  const [items, manifest] = [body.items !== undefined, body.manifestKey !== undefined];
  if (!items && !manifest) {
    throw new ManageError(
      'missing_field',
      'The field "items" (1 to 10000 {url, key}) or "manifestKey" (a manifest under _imports/) is required.',
    );
  }
  if (items && manifest) throw new ManageError('invalid_body', 'The body has "items" or "manifestKey", not both.');
  if (body.items !== undefined) return { items: checkItems(config, body.items) };
  const manifestKey = stringField(body, MANIFEST_KEY)!; // present: checked above
  if (!manifestKey.startsWith(IMPORTS_PREFIX) || manifestKey.includes('..')) {
    throw new ManageError('invalid_manifest', `The manifestKey ${JSON.stringify(manifestKey)} must be a key under ${IMPORTS_PREFIX}.`);
  }
  try {
    await s3.send(new HeadObjectCommand({ Bucket: config.sourceBucket, Key: manifestKey }));
  } catch (error) {
    if (isMissing(error))
      throw new ManageError('manifest_not_found', `No manifest is at ${JSON.stringify(manifestKey)} in the source bucket.`);
    throw storageUnavailable(error);
  }
  return { manifestKey };
}

/** `POST /imports`: the import started, `{id, status: 'running', total}`. */
export async function createImport(s3: S3Client, config: ManageConfig, jobs: ImportJobs, body: Record<string, unknown>) {
  const source = await readImportSource(s3, config, body);
  const id = randomUUID();
  const { total } = await jobs.start(id, source);
  return { id, status: 'running' as const, total };
}

/** `GET /imports/{id}`: the import's status, or a 404 for an id no import has. */
export async function importStatus(jobs: ImportJobs, id: string): Promise<ImportStatus> {
  const status = ID_PATTERN.test(id) ? await jobs.status(id) : undefined;
  if (!status) throw new ManageError('not_found', `No import has the id ${JSON.stringify(id.slice(0, 100))}.`);
  return status;
}
