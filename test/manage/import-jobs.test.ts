// The deployment's import runner against this run's LocalStack S3, with S3
// Control's two calls recorded (S3 Batch Operations does not run in
// LocalStack): the manifest it writes in Batch Operations' CSV, the CreateJob
// request (LambdaInvoke with invocation schema 2.0, the report of failed
// tasks under the import's folder), and the status it reads back from
// DescribeJob and from a completion report written as Batch Operations
// writes one.

import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { taskItem, taskKey } from '../../lambda/manage/imports/items';
import { s3ControlJobs, type CreateJobInput, type JobDescription, type S3ControlCalls } from '../../lambda/manage/imports/s3-control-jobs';
import { createTestManage, type TestManage } from './support';

let manage: TestManage;
const created: CreateJobInput[] = [];
let description: JobDescription = {};

const control: S3ControlCalls = {
  async createJob(input) {
    created.push(input);
    return { JobId: `job-${created.length}` };
  },
  async describeJob() {
    return { Job: description };
  },
};

const settings = {
  accountId: '123456789012',
  functionArn: 'arn:aws:lambda:us-east-1:123456789012:function:importer',
  roleArn: 'arn:aws:iam::123456789012:role/batch',
  bucketArn: '',
};

beforeAll(async () => {
  manage = await createTestManage('manage-import-jobs');
  settings.bucketArn = `arn:aws:s3:::${manage.sourceBucket}`;
});

const read = async (key: string) =>
  (await manage.s3.send(new GetObjectCommand({ Bucket: manage.sourceBucket, Key: key }))).Body!.transformToString();
const put = (key: string, body: string) => manage.s3.send(new PutObjectCommand({ Bucket: manage.sourceBucket, Key: key, Body: body }));

const id = '0b6f2d1e-4a1c-4f7e-9d59-3c2a1b0e9f11';
const items = [
  { url: 'https://old.example.com/a.jpg', key: 'photos/a.jpg' },
  { url: 'https://old.example.com/b,c.jpg?size=large&x=1', key: 'photos/b, c é.jpg' },
];

describe('an S3 Batch Operations job', () => {
  it('is created for a manifest written in its own CSV, each item in the key column', async () => {
    const jobs = s3ControlJobs(manage.s3, control, manage.config, settings);
    expect(await jobs.start(id, { items })).toEqual({ total: 2 });
    const manifest = await read(`_imports/${id}/manifest.csv`);
    const lines = manifest.trim().split('\n');
    expect(lines).toHaveLength(2);
    for (const [index, line] of lines.entries()) {
      const [bucket, key, ...rest] = line.split(',');
      expect([bucket, rest]).toEqual([manage.sourceBucket, []]);
      expect(key).toBe(taskKey(items[index]!));
      expect(taskItem(key!)).toEqual(items[index]);
    }
    expect(created).toEqual([
      {
        AccountId: '123456789012',
        ConfirmationRequired: false,
        Operation: {
          LambdaInvoke: { FunctionArn: settings.functionArn, InvocationSchemaVersion: '2.0', UserArguments: { importId: id } },
        },
        Manifest: {
          Spec: { Format: 'S3BatchOperations_CSV_20180820', Fields: ['Bucket', 'Key'] },
          Location: { ObjectArn: `${settings.bucketArn}/_imports/${id}/manifest.csv`, ETag: expect.stringMatching(/^"?[0-9a-f]{32}"?$/) },
        },
        Report: {
          Enabled: true,
          Bucket: settings.bucketArn,
          Prefix: `_imports/${id}/report`,
          Format: 'Report_CSV_20180820',
          ReportScope: 'FailedTasksOnly',
        },
        ClientRequestToken: id,
        Priority: 10,
        RoleArn: settings.roleArn,
        Description: `edge-image-transformer import ${id}`,
      },
    ]);
    expect(JSON.parse(await read(`_imports/${id}/job.json`))).toEqual({ jobId: 'job-1', total: 2 });
  });

  it('is running while Batch Operations says so, with its progress', async () => {
    const jobs = s3ControlJobs(manage.s3, control, manage.config, settings);
    description = { Status: 'Active', ProgressSummary: { TotalNumberOfTasks: 2, NumberOfTasksSucceeded: 1, NumberOfTasksFailed: 0 } };
    expect(await jobs.status(id)).toEqual({ id, status: 'running', total: 2, succeeded: 1, failed: 0, failures: [] });
  });

  it('is complete with the failures of its completion report', async () => {
    const jobs = s3ControlJobs(manage.s3, control, manage.config, settings);
    const folder = `_imports/${id}/report/job-job-1`;
    const failed = `${folder}/results/3f1c.csv`;
    await put(
      `${folder}/manifest.json`,
      JSON.stringify({
        Format: 'Report_CSV_20180820',
        ReportSchema: 'Bucket, Key, VersionId, TaskStatus, ErrorCode, HTTPStatusCode, ResultMessage',
        Results: [{ TaskExecutionStatus: 'failed', Bucket: manage.sourceBucket, Key: failed }],
      }),
    );
    await put(
      failed,
      `${manage.sourceBucket},${taskKey(items[1]!)},,failed,PermanentFailure,200,"too_many_pixels: 100000x100000, too many"\n`,
    );
    description = { Status: 'Complete', ProgressSummary: { TotalNumberOfTasks: 2, NumberOfTasksSucceeded: 1, NumberOfTasksFailed: 1 } };
    expect(await jobs.status(id)).toEqual({
      id,
      status: 'complete',
      total: 2,
      succeeded: 1,
      failed: 1,
      failures: [{ ...items[1], reason: 'too_many_pixels: 100000x100000, too many' }],
      reportKey: `${folder}/manifest.json`,
    });
  });

  it('converts a manifest of url,key lines, counting its rows', async () => {
    await put('_imports/list.csv', 'url,key\nhttps://old.example.com/a.jpg,a.jpg\nnot a url,b.jpg\n');
    const jobs = s3ControlJobs(manage.s3, control, manage.config, settings);
    const other = '1b6f2d1e-4a1c-4f7e-9d59-3c2a1b0e9f11';
    expect(await jobs.start(other, { manifestKey: '_imports/list.csv' })).toEqual({ total: 2 });
    const keys = (await read(`_imports/${other}/manifest.csv`))
      .trim()
      .split('\n')
      .map((line) => taskItem(line.split(',')[1]!));
    // A bad row is carried as it is: the per-key function reports it as failed.
    expect(keys).toEqual([
      { url: 'https://old.example.com/a.jpg', key: 'a.jpg' },
      { url: 'not a url', key: 'b.jpg' },
    ]);
  });

  it('is unknown (undefined, a 404) without its record', async () => {
    expect(await s3ControlJobs(manage.s3, control, manage.config, settings).status('2b6f2d1e-4a1c-4f7e-9d59-3c2a1b0e9f11')).toBeUndefined();
  });
});
