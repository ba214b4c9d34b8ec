// The deployment's import runner against this run's LocalStack S3, with S3
// Control's two calls and the importer's asynchronous invocation recorded
// (S3 Batch Operations does not run in LocalStack): the manifest it writes in
// Batch Operations' CSV, the CreateJob request (LambdaInvoke with invocation
// schema 2.0, the report of failed tasks under the import's folder), the
// status it reads back from DescribeJob and from a completion report written
// as Batch Operations writes one; and a manifest converted in parts by the
// importer (prepareManifest, on LocalStack), its job created once it is.

import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { taskItem, taskKey } from '../../lambda/manage/imports/items';
import { PART_BYTES, prepareManifest, type PrepareImportEvent } from '../../lambda/manage/imports/prepare';
import { s3ControlJobs, type CreateJobInput, type JobDescription, type JobServices } from '../../lambda/manage/imports/s3-control-jobs';
import { createTestManage, type TestManage } from './support';

let manage: TestManage;
const created: CreateJobInput[] = [];
let description: JobDescription = {};

const prepared: PrepareImportEvent[] = [];
const services: JobServices = {
  control: {
    async createJob(input) {
      created.push(input);
      return { JobId: `job-${created.length}` };
    },
    async describeJob() {
      return { Job: description };
    },
  },
  async prepare(event) {
    prepared.push(event);
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
    const jobs = s3ControlJobs(manage.s3, services, manage.config, settings);
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
    const jobs = s3ControlJobs(manage.s3, services, manage.config, settings);
    description = { Status: 'Active', ProgressSummary: { TotalNumberOfTasks: 2, NumberOfTasksSucceeded: 1, NumberOfTasksFailed: 0 } };
    expect(await jobs.status(id)).toEqual({ id, status: 'running', total: 2, succeeded: 1, failed: 0, failures: [] });
  });

  it('is complete with the failures of its completion report', async () => {
    const jobs = s3ControlJobs(manage.s3, services, manage.config, settings);
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

  it('for a manifest, has the importer convert it (total null, running), then is created once it is', async () => {
    const rows = 110_000; // over 8 MiB: read in two ranges (a line cut between them), written in two parts
    const lines = [
      'url,key',
      ...Array.from({ length: rows }, (_, i) => `https://old.example.com/photos/${i}/IMG_${i}.jpg,legacy/photos/${i}/IMG_${i}.jpg`),
    ];
    await put('_imports/big.csv', lines.join('\r\n') + '\r\n\r\n');
    expect(lines.join('\r\n').length).toBeGreaterThan(8 * 1024 * 1024);
    const jobs = s3ControlJobs(manage.s3, services, manage.config, settings);
    const other = '1b6f2d1e-4a1c-4f7e-9d59-3c2a1b0e9f11';
    const before = created.length;
    expect(await jobs.start(other, { manifestKey: '_imports/big.csv' })).toEqual({ total: null });
    expect(prepared).toEqual([{ prepareImport: { id: other, manifestKey: '_imports/big.csv' } }]);
    expect(await jobs.status(other)).toEqual({ id: other, status: 'running', total: null, succeeded: 0, failed: 0, failures: [] });
    expect(created).toHaveLength(before);

    const result = (await prepareManifest({ s3: manage.s3 }, manage.config, prepared[0]!)) as { total: number; etag: string };
    expect(result).toEqual({ total: rows, etag: expect.stringMatching(/-\d+"?$/) });
    const converted = await read(`_imports/${other}/manifest.csv`);
    expect(Buffer.byteLength(converted)).toBeGreaterThan(PART_BYTES);
    const convertedLines = converted.trim().split('\n');
    expect(convertedLines).toHaveLength(rows);
    // Every row whole and in its place, the one cut between two ranges too.
    const wrong = convertedLines.findIndex(
      (line, i) =>
        JSON.stringify(taskItem(line.split(',')[1]!)) !==
        JSON.stringify({ url: `https://old.example.com/photos/${i}/IMG_${i}.jpg`, key: `legacy/photos/${i}/IMG_${i}.jpg` }),
    );
    expect(wrong).toBe(-1);
    description = { Status: 'Active', ProgressSummary: { TotalNumberOfTasks: rows, NumberOfTasksSucceeded: 0, NumberOfTasksFailed: 0 } };
    expect(await jobs.status(other)).toMatchObject({ status: 'running', total: rows });
    expect(created.slice(before)).toEqual([
      expect.objectContaining({
        ClientRequestToken: other,
        Manifest: expect.objectContaining({
          Location: { ObjectArn: `${settings.bucketArn}/_imports/${other}/manifest.csv`, ETag: result.etag },
        }),
      }),
    ]);
    // Asked again, the job is not created again.
    await jobs.status(other);
    expect(created).toHaveLength(before + 1);
  }, 60_000);

  it('converts a JSON manifest, carrying a bad row as it is; an empty manifest, or one that is not one, fails the import', async () => {
    await put('_imports/list.json', JSON.stringify([{ url: 'https://old.example.com/a.jpg', key: 'a.jpg' }, 'b.jpg']));
    const json = await prepareManifest({ s3: manage.s3 }, manage.config, {
      prepareImport: { id: 'json', manifestKey: '_imports/list.json' },
    });
    expect(json).toMatchObject({ total: 2 });
    const keys = (await read('_imports/json/manifest.csv'))
      .trim()
      .split('\n')
      .map((line) => taskItem(line.split(',')[1]!));
    expect(keys).toEqual([{ url: 'https://old.example.com/a.jpg', key: 'a.jpg' }, {}]);

    for (const [name, text] of [
      ['empty.csv', ''],
      ['header.csv', 'url,key\n\n'],
    ] as const) {
      await put(`_imports/${name}`, text);
      const prepared = await prepareManifest({ s3: manage.s3 }, manage.config, {
        prepareImport: { id: name, manifestKey: `_imports/${name}` },
      });
      expect(prepared, name).toEqual({ error: `The manifest _imports/${name} lists no items.` });
    }

    const broken = '3b6f2d1e-4a1c-4f7e-9d59-3c2a1b0e9f11';
    await put('_imports/broken.json', '[{"url": ');
    const jobs = s3ControlJobs(manage.s3, services, manage.config, settings);
    await jobs.start(broken, { manifestKey: '_imports/broken.json' });
    expect(await prepareManifest({ s3: manage.s3 }, manage.config, prepared.at(-1)!)).toEqual({ error: expect.stringMatching(/not JSON/) });
    expect(await jobs.status(broken)).toEqual({
      id: broken,
      status: 'failed',
      total: null,
      succeeded: 0,
      failed: 0,
      failures: [{ key: '_imports/broken.json', url: '', reason: expect.stringMatching(/^invalid_manifest: The manifest is not JSON/) }],
    });
  });

  it('is unknown (undefined, a 404) without its record', async () => {
    expect(
      await s3ControlJobs(manage.s3, services, manage.config, settings).status('2b6f2d1e-4a1c-4f7e-9d59-3c2a1b0e9f11'),
    ).toBeUndefined();
  });
});
