// The deployment's import runner: an S3 Batch Operations job (S3 Control
// CreateJob) whose LambdaInvoke operation runs the per-key function
// (importer.ts) on every line of a manifest, and writes a completion report
// of the failed tasks under `_imports/<id>/report/`. The S3 Control calls
// come in as an interface, the SDK's CreateJob and DescribeJob, whose inputs
// and outputs these types name as the SDK does.

import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { ManageConfig } from '../config';
import { isMissing, storageUnavailable } from '../errors';
import { batchManifest, parseManifest, taskItem, type ImportItem } from './items';
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
  total: number | null;
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

export function s3ControlJobs(s3: S3Client, control: S3ControlCalls, config: ManageConfig, settings: BatchJobSettings): ImportJobs {
  const bucket = config.sourceBucket;
  const read = async (key: string) => {
    try {
      return await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToString();
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw storageUnavailable(error);
    }
  };
  const put = async (key: string, body: string, contentType: string) => {
    try {
      return await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType }));
    } catch (error) {
      throw storageUnavailable(error);
    }
  };

  /** The first failures of a complete job's report: its manifest.json names the result files. */
  async function failures(jobId: string, id: string): Promise<{ failures: ImportFailure[]; reportKey?: string }> {
    const reportKey = `${importFolder(id)}report/job-${jobId}/manifest.json`;
    const manifest = await read(reportKey);
    if (manifest === undefined) return { failures: [] };
    const found: ImportFailure[] = [];
    for (const result of (JSON.parse(manifest) as { Results?: { Key?: string; TaskExecutionStatus?: string }[] }).Results ?? []) {
      if (found.length >= MAX_LISTED_FAILURES || result.TaskExecutionStatus !== 'failed' || !result.Key) continue;
      for (const line of ((await read(result.Key)) ?? '').split('\n')) {
        const failure = reportFailure(line);
        if (failure && found.length < MAX_LISTED_FAILURES) found.push(failure);
      }
    }
    return { failures: found, reportKey };
  }

  return {
    async start(id: string, source: ImportSource) {
      // A manifest's rows are written in Batch Operations' own CSV here, in the API Lambda's time;
      // each row is checked by the per-key function, which reports a bad one as failed.
      const rows = 'items' in source ? source.items : (parseManifest((await read(source.manifestKey)) ?? '') as ImportItem[]);
      const manifestKey = importFolder(id) + 'manifest.csv';
      const written = await put(manifestKey, batchManifest(bucket, rows), 'text/csv');
      const { JobId } = await control.createJob({
        AccountId: settings.accountId,
        ConfirmationRequired: false,
        Operation: { LambdaInvoke: { FunctionArn: settings.functionArn, InvocationSchemaVersion: '2.0', UserArguments: { importId: id } } },
        Manifest: {
          Spec: { Format: 'S3BatchOperations_CSV_20180820', Fields: ['Bucket', 'Key'] },
          Location: { ObjectArn: `${settings.bucketArn}/${manifestKey}`, ETag: written.ETag ?? '' },
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
      const record: JobRecord = { jobId: JobId ?? '', total: rows.length };
      await put(importFolder(id) + 'job.json', JSON.stringify(record), 'application/json');
      return { total: record.total };
    },
    async status(id: string) {
      const text = await read(importFolder(id) + 'job.json');
      if (text === undefined) return undefined;
      const record = JSON.parse(text) as JobRecord;
      const { Job } = await control.describeJob({ AccountId: settings.accountId, JobId: record.jobId });
      const progress = Job?.ProgressSummary ?? {};
      const state = FINAL[Job?.Status ?? ''] ?? 'running';
      const total = progress.TotalNumberOfTasks ?? record.total;
      const base = { id, status: state, total, succeeded: progress.NumberOfTasksSucceeded ?? 0, failed: progress.NumberOfTasksFailed ?? 0 };
      return { ...base, ...(state === 'running' ? { failures: [] } : await failures(record.jobId, id)) };
    },
  };
}
