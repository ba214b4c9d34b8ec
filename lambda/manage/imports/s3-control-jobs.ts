// The deployment's import runner: an S3 Batch Operations job (S3 Control
// CreateJob) whose LambdaInvoke operation runs the per-key function
// (importer.ts) on every line of a manifest, and writes a completion report
// of the failed tasks under `_imports/<id>/report/`. Items are written as the
// job's manifest here; a manifest is converted by the importer, invoked
// asynchronously (prepare.ts), and its job created by the first status asked
// once it is (ClientRequestToken: the import's id, so twice is once). The S3
// Control calls come in as an interface, the SDK's CreateJob and DescribeJob,
// whose inputs and outputs these types name as the SDK does.

import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { ManageConfig } from '../config';
import { isMissing, storageUnavailable } from '../errors';
import { batchManifest, taskItem, type ImportItem } from './items';
import { batchManifestKey, preparedKey, type PreparedManifest, type PrepareImportEvent } from './prepare';
import { importFolder, MAX_LISTED_FAILURES, type ImportFailure, type ImportJobs, type ImportSource, type ImportStatus } from './jobs';

/** The fields of S3 Control's CreateJob request this runner sends. */
export interface CreateJobInput {
  AccountId: string;
  ConfirmationRequired: boolean;
  Operation: { LambdaInvoke: { FunctionArn: string; InvocationSchemaVersion: '2.0'; UserArguments: Record<string, string> } };
  Manifest: {
    Spec: { Format: 'S3BatchOperations_CSV_20180820'; Fields: ['Bucket', 'Key'] };
    Location: { ObjectArn: string; ETag: string };
  };
  Report: { Enabled: true; Bucket: string; Prefix: string; Format: 'Report_CSV_20180820'; ReportScope: 'FailedTasksOnly' };
  ClientRequestToken: string;
  Priority: number;
  RoleArn: string;
  Description: string;
}

/** What this runner reads of S3 Control's DescribeJob answer. */
export interface JobDescription {
  Status?: string;
  ProgressSummary?: { TotalNumberOfTasks?: number; NumberOfTasksSucceeded?: number; NumberOfTasksFailed?: number };
}

export interface S3ControlCalls {
  createJob(input: CreateJobInput): Promise<{ JobId?: string }>;
  describeJob(input: { AccountId: string; JobId: string }): Promise<{ Job?: JobDescription }>;
}

export interface JobServices {
  control: S3ControlCalls;
  /** Invokes the importer asynchronously to convert a manifest (Lambda's Invoke, InvocationType Event). */
  prepare(event: PrepareImportEvent): Promise<void>;
}

export interface BatchJobSettings {
  accountId: string;
  /** The per-key function Batch Operations invokes. */
  functionArn: string;
  /** The role Batch Operations takes: read the manifest, invoke the function, write the report. */
  roleArn: string;
  /** The source bucket's ARN (`arn:aws:s3:::<name>`), which holds manifests and reports. */
  bucketArn: string;
}

/** Batch Operations' states that are over; any other is still running. */
const FINAL: Record<string, ImportStatus['status']> = { Complete: 'complete', Failed: 'failed', Cancelled: 'failed' };

/** The record of import `id` beside its manifest: the Batch Operations job that runs it. */
interface JobRecord {
  jobId: string;
  total: number;
}

/** The fields of a CSV line, quoted ones unquoted. */
function csvFields(line: string): string[] {
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let at = 0; at < line.length; at++) {
    const char = line[at];
    if (quoted && char === '"' && line[at + 1] === '"') {
      field += '"';
      at++;
    } else if (char === '"') quoted = !quoted;
    else if (char === ',' && !quoted) {
      fields.push(field);
      field = '';
    } else field += char;
  }
  return [...fields, field];
}

/** A completion report's CSV line: bucket, key, version, task status, error code, HTTP status, result message. */
function reportFailure(line: string): ImportFailure | undefined {
  const fields = csvFields(line);
  const item = taskItem(fields[1] ?? '') as Partial<ImportItem> | undefined;
  if (item?.key === undefined) return undefined;
  return { key: item.key, url: item.url ?? '', reason: fields[6] || fields[4] || 'failed' };
}

async function read(s3: S3Client, bucket: string, key: string): Promise<string | undefined> {
  try {
    return await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToString();
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw storageUnavailable(error);
  }
}

async function put(s3: S3Client, bucket: string, key: string, body: string) {
  try {
    return await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: key.endsWith('.csv') ? 'text/csv' : 'application/json' }),
    );
  } catch (error) {
    throw storageUnavailable(error);
  }
}

/** The first failures of a complete job's report: its manifest.json names the result files. */
async function reportedFailures(
  s3: S3Client,
  bucket: string,
  jobId: string,
  id: string,
): Promise<{ failures: ImportFailure[]; reportKey?: string }> {
  const reportKey = `${importFolder(id)}report/job-${jobId}/manifest.json`;
  const manifest = await read(s3, bucket, reportKey);
  if (manifest === undefined) return { failures: [] };
  const found: ImportFailure[] = [];
  for (const result of (JSON.parse(manifest) as { Results?: { Key?: string; TaskExecutionStatus?: string }[] }).Results ?? []) {
    if (found.length >= MAX_LISTED_FAILURES || result.TaskExecutionStatus !== 'failed' || !result.Key) continue;
    for (const line of ((await read(s3, bucket, result.Key)) ?? '').split('\n')) {
      const failure = reportFailure(line);
      if (failure && found.length < MAX_LISTED_FAILURES) found.push(failure);
    }
  }
  return { failures: found, reportKey };
}

/** The CreateJob request of import `id`, whose manifest (Batch Operations' CSV) has `etag`. */
const jobRequest = (settings: BatchJobSettings, id: string, etag: string): CreateJobInput => ({
  AccountId: settings.accountId,
  ConfirmationRequired: false,
  Operation: { LambdaInvoke: { FunctionArn: settings.functionArn, InvocationSchemaVersion: '2.0', UserArguments: { importId: id } } },
  Manifest: {
    Spec: { Format: 'S3BatchOperations_CSV_20180820', Fields: ['Bucket', 'Key'] },
    Location: { ObjectArn: `${settings.bucketArn}/${batchManifestKey(id)}`, ETag: etag },
  },
  Report: {
    Enabled: true,
    Bucket: settings.bucketArn,
    Prefix: importFolder(id) + 'report',
    Format: 'Report_CSV_20180820',
    ReportScope: 'FailedTasksOnly',
  },
  ClientRequestToken: id,
  Priority: 10,
  RoleArn: settings.roleArn,
  Description: `edge-image-transformer import ${id}`,
});

export function s3ControlJobs(s3: S3Client, services: JobServices, config: ManageConfig, settings: BatchJobSettings): ImportJobs {
  const bucket = config.sourceBucket;
  const jobKey = (id: string) => importFolder(id) + 'job.json';
  const requestKey = (id: string) => importFolder(id) + 'request.json';

  /** Creates import `id`'s job for its written manifest, and records it. */
  async function createJob(id: string, etag: string, total: number): Promise<JobRecord> {
    const { JobId } = await services.control.createJob(jobRequest(settings, id, etag));
    const record: JobRecord = { jobId: JobId ?? '', total };
    await put(s3, bucket, jobKey(id), JSON.stringify(record));
    return record;
  }

  /** The job of import `id`: recorded, or created now from its converted manifest; else where the import is. */
  async function jobOf(id: string): Promise<JobRecord | ImportStatus | undefined> {
    const job = await read(s3, bucket, jobKey(id));
    if (job !== undefined) return JSON.parse(job) as JobRecord;
    const prepared = await read(s3, bucket, preparedKey(id));
    if (prepared !== undefined) {
      const manifest = JSON.parse(prepared) as PreparedManifest;
      if ('total' in manifest) return createJob(id, manifest.etag, manifest.total);
      const { manifestKey } = JSON.parse((await read(s3, bucket, requestKey(id))) ?? '{}') as { manifestKey?: string };
      const failures = [{ key: manifestKey ?? '', url: '', reason: `invalid_manifest: ${manifest.error}` }];
      return { id, status: 'failed', total: null, succeeded: 0, failed: 0, failures };
    }
    const requested = await read(s3, bucket, requestKey(id));
    return requested === undefined ? undefined : { id, status: 'running', total: null, succeeded: 0, failed: 0, failures: [] };
  }

  return {
    async start(id: string, source: ImportSource) {
      if ('manifestKey' in source) {
        await put(s3, bucket, requestKey(id), JSON.stringify(source));
        await services.prepare({ prepareImport: { id, manifestKey: source.manifestKey } });
        return { total: null };
      }
      const written = await put(s3, bucket, batchManifestKey(id), batchManifest(bucket, source.items));
      return { total: (await createJob(id, written.ETag ?? '', source.items.length)).total };
    },
    async status(id: string) {
      const job = await jobOf(id);
      if (job === undefined || 'status' in job) return job;
      const { Job } = await services.control.describeJob({ AccountId: settings.accountId, JobId: job.jobId });
      const progress = Job?.ProgressSummary ?? {};
      const state = FINAL[Job?.Status ?? ''] ?? 'running';
      const total = progress.TotalNumberOfTasks ?? job.total;
      const base = { id, status: state, total, succeeded: progress.NumberOfTasksSucceeded ?? 0, failed: progress.NumberOfTasksFailed ?? 0 };
      return { ...base, ...(state === 'running' ? { failures: [] } : await reportedFailures(s3, bucket, job.jobId, id)) };
    },
  };
}
