// scripts/replay-invalidations.ts: the source changes the invalidation Lambda
// gave up on, replayed from its failure queue. S3 is this run's LocalStack;
// CloudFront is the recording double of test/invalidate, and the queue an
// in-memory one with SQS's receive/delete semantics (the shared LocalStack
// runs S3 only). The SQS adapter itself is checked against a local server
// speaking SQS's JSON protocol, as the CloudFront adapter is.

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { S3Event } from 'aws-lambda';
import { readBody } from '../support/http';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { localS3Client } from '../../local/harness/s3-client';
import type { S3BridgeEvent } from '../../lambda/invalidate/events';
import { failedEvent, main, sqsFailureQueue, USAGE, type FailureQueue, type QueuedFailure } from '../../scripts/replay-invalidations';
import {
  bridgeEvent,
  created,
  DISTRIBUTION_ID,
  recordingCloudFront,
  removed,
  s3Event,
  type RecordingCloudFront,
} from '../invalidate/support';
import { createTestBuckets, listKeys, putObject, type TestBuckets } from '../support/s3';

const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/Images-InvalidationFailures';

/** What Lambda puts in an on-failure destination for an event that failed every attempt. */
function failureRecord(event: S3Event | S3BridgeEvent): string {
  return JSON.stringify({
    version: '1.0',
    timestamp: '2026-11-23T10:00:00.000Z',
    requestContext: {
      requestId: 'c9a3f4b6-0000-4000-8000-000000000000',
      functionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:Images-InvalidationFunction:$LATEST',
      condition: 'RetriesExhausted',
      approximateInvokeCount: 3,
    },
    requestPayload: event,
    responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
    responsePayload: {
      errorType: 'SourceChangeError',
      errorMessage: 'Source change not fully applied: the CloudFront invalidation failed.',
    },
  });
}

/** A queue in memory: a received message is hidden until deleted (for the rest of the run: SQS's visibility timeout). */
function memoryQueue(bodies: string[]): { queue: FailureQueue; waiting: () => string[]; receives: () => number } {
  const messages = bodies.map((body, i) => ({ id: `m${i + 1}`, body, hidden: false }));
  let receives = 0;
  return {
    waiting: () => messages.map((message) => message.id),
    receives: () => receives,
    queue: {
      async receive(): Promise<QueuedFailure[]> {
        receives++;
        const batch = messages.filter((message) => !message.hidden).slice(0, 10);
        for (const message of batch) message.hidden = true;
        return batch.map(({ id, body }) => ({ id, receipt: `receipt-${id}`, body }));
      },
      async delete(receipt) {
        const index = messages.findIndex((message) => `receipt-${message.id}` === receipt);
        if (index === -1) throw new Error(`ReceiptHandleIsInvalid: ${receipt}`);
        messages.splice(index, 1);
      },
    },
  };
}

let buckets: TestBuckets;

beforeEach(async () => {
  buckets = await createTestBuckets('replay');
  return () => buckets.cleanup();
});

async function run(bodies: string[], options: { cloudFront?: RecordingCloudFront; args?: string[] } = {}) {
  const cloudFront = options.cloudFront ?? recordingCloudFront();
  const memory = memoryQueue(bodies);
  const out: string[] = [];
  const err: string[] = [];
  const status = await main(
    ['--queue-url', QUEUE_URL, '--cache-bucket', buckets.cacheBucket, '--distribution-id', DISTRIBUTION_ID, ...(options.args ?? [])],
    { out: (line) => out.push(line), err: (line) => err.push(line) },
    () => ({ s3: localS3Client(inject('s3Endpoint')), cloudFront: cloudFront.client, queue: memory.queue }),
    {},
  );
  return { status, out, err, cloudFront, ...memory };
}

async function putVariants(keys: string[]): Promise<void> {
  await Promise.all(keys.map((key) => putObject(buckets.s3, buckets.cacheBucket, key, 'variant', 'image/webp')));
}

describe('replay', () => {
  it('runs each failed change again, then deletes its message: the variants invalidated and gone', async () => {
    await putVariants(['a.jpg/original', 'a.jpg/width=320', 'gone.png/original', 'kept.jpg/original']);

    const result = await run([failureRecord(s3Event(created('a.jpg'))), failureRecord(s3Event(removed('gone.png')))]);

    expect(result.status).toBe(0);
    expect(result.err).toEqual([]);
    expect(result.out).toEqual([
      `replay-invalidations: queue ${QUEUE_URL}, cache bucket ${buckets.cacheBucket}, distribution ${DISTRIBUTION_ID}`,
      'ok    m1: a.jpg (2 variant(s) deleted); invalidated 2 path(s) (I1EXAMPLE)',
      'ok    m2: gone.png (1 variant(s) deleted); invalidated 1 path(s) (I2EXAMPLE)',
      '2 source change(s) replayed and removed from the queue.',
    ]);
    expect(result.cloudFront.calls.map((call) => call.paths)).toEqual([['/a.jpg/original', '/a.jpg/width=320'], ['/gone.png/original']]);
    expect(await listKeys(buckets.s3, buckets.cacheBucket)).toEqual(['kept.jpg/original']);
    expect(result.waiting()).toEqual([]);
  });

  it('leaves what fails again in the queue, with the variants for the next run (exit 1)', async () => {
    await putVariants(['a.jpg/original', 'b.jpg/original']);
    const busy = recordingCloudFront(async (request) => {
      if (request.paths.some((path) => path.startsWith('/b.jpg'))) {
        throw Object.assign(new Error('Your request contains too many invalidations.'), { name: 'TooManyInvalidationsInProgress' });
      }
      return { id: 'I1EXAMPLE', status: 'InProgress' };
    });

    const result = await run([failureRecord(s3Event(created('a.jpg'))), failureRecord(s3Event(created('b.jpg')))], { cloudFront: busy });

    expect(result.status).toBe(1);
    expect(result.out.slice(1)).toEqual([
      'ok    m1: a.jpg (1 variant(s) deleted); invalidated 1 path(s) (I1EXAMPLE)',
      'FAIL  m2: Source change not fully applied: the CloudFront invalidation failed (TooManyInvalidationsInProgress: Your request contains too many invalidations.).; left in the queue',
      '1 of 2 source change(s) failed again; they stay in the queue.',
    ]);
    expect(result.waiting()).toEqual(['m2']);
    expect(await listKeys(buckets.s3, buckets.cacheBucket)).toEqual(['b.jpg/original']);
  });

  it('says so for a message that is not an on-failure record, and leaves it', async () => {
    const result = await run(['{"Records":[]}', 'not json']);
    expect(result.status).toBe(1);
    expect(result.out.slice(1)).toEqual([
      'FAIL  m1: Error: no requestPayload.Records: not an on-failure record of the invalidation Lambda; left in the queue',
      'FAIL  m2: Error: not JSON, so not an on-failure record of the invalidation Lambda; left in the queue',
      '2 of 2 source change(s) failed again; they stay in the queue.',
    ]);
    expect(result.waiting()).toEqual(['m1', 'm2']);
    expect(result.cloudFront.calls).toEqual([]);
  });

  it("replays a mapped bucket's EventBridge event with --source-buckets, and keeps one it cannot map", async () => {
    await putVariants(['archive/2020/a.jpg/original', '2020/a.jpg/original']);
    const record = failureRecord(bridgeEvent('Object Deleted', 'my-archive', '2020/a.jpg'));

    const unmapped = await run([record]);
    expect(unmapped.status).toBe(1);
    expect(unmapped.out[1]).toBe(
      'FAIL  m1: Error: an EventBridge event of bucket "my-archive", which --source-buckets does not map to a prefix; left in the queue',
    );
    expect(unmapped.waiting()).toEqual(['m1']);

    const mapped = await run([record], { args: ['--source-buckets', '{"archive/":"my-archive"}'] });
    expect(mapped.status).toBe(0);
    expect(mapped.out[1]).toBe('ok    m1: archive/2020/a.jpg (1 variant(s) deleted); invalidated 1 path(s) (I1EXAMPLE)');
    // The default bucket's key of the same name was not this object's.
    expect(await listKeys(buckets.s3, buckets.cacheBucket)).toEqual(['2020/a.jpg/original']);
  });

  it('reads the queue until it is empty (more than the 10 messages of one receive)', async () => {
    const keys = Array.from({ length: 12 }, (_, i) => `many/${i}.jpg`);
    await putVariants(keys.map((key) => `${key}/original`));
    const result = await run(keys.map((key) => failureRecord(s3Event(created(key)))));
    expect(result.status).toBe(0);
    expect(result.out.filter((line) => line.startsWith('ok '))).toHaveLength(12);
    expect(result.receives()).toBe(3);
    expect(result.waiting()).toEqual([]);
    expect(await listKeys(buckets.s3, buckets.cacheBucket)).toEqual([]);
  });

  it('with nothing waiting, says so (exit 0)', async () => {
    const result = await run([]);
    expect(result).toMatchObject({ status: 0, err: [] });
    expect(result.out[1]).toBe('No failed source change is waiting in the queue.');
  });

  it('takes the S3 event out of the record as Lambda wrote it', () => {
    const event = s3Event(created('x/y z.jpg'));
    expect(failedEvent(failureRecord(event))).toEqual(event);
  });
});

describe('usage', () => {
  it.each([
    [[], /the failure queue is needed/],
    [['--queue-url', 'my-queue'], /--queue-url must be an SQS queue URL/],
    [['--queue-url', QUEUE_URL], /the cache bucket is needed/],
    [['--queue-url', QUEUE_URL, '--cache-bucket', 'b'], /the distribution is needed/],
    [['--queue-url', QUEUE_URL, '--cache-bucket', 'b', '--distribution-id', 'E1', 'extra'], /Unexpected argument 'extra'/],
    [
      ['--queue-url', QUEUE_URL, '--cache-bucket', 'b', '--distribution-id', 'E1', '--source-buckets', '{"archive":"x"}'],
      /--source-buckets: a SOURCE_BUCKETS prefix must be/,
    ],
  ])('%j is a usage error (exit 2, the usage on stderr)', async (argv, message) => {
    const err: string[] = [];
    const status = await main(
      argv as string[],
      { out: () => {}, err: (line) => err.push(line) },
      () => {
        throw new Error('no clients for a usage error');
      },
      {},
    );
    expect(status).toBe(2);
    expect(err[0]).toMatch(message);
    expect(err[1]).toBe(USAGE);
  });
});

describe('the command', () => {
  it('npm run replay-invalidations prints its usage for --help (exit 0), and exits 2 on a usage error', () => {
    const npm = (args: string[]) =>
      spawnSync('npm', ['run', '--silent', 'replay-invalidations', '--', ...args], {
        cwd: new URL('../..', import.meta.url),
        encoding: 'utf8',
        env: { ...process.env, FAILURE_QUEUE_URL: '', CACHE_BUCKET: '', DISTRIBUTION_ID: '' },
      });
    const help = npm(['--help']);
    expect(help.stdout).toBe(USAGE + '\n');
    expect(help.status).toBe(0);
    const bad = npm([]);
    expect(bad.stderr).toContain('replay-invalidations: the failure queue is needed');
    expect(bad.status).toBe(2);
  }, 60_000);
});

describe('sqsFailureQueue (the SQS adapter)', () => {
  let server: Server;
  let endpoint: string;
  const received: { target: string; body: Record<string, unknown> }[] = [];

  beforeAll(async () => {
    // SQS's AWS JSON 1.0 protocol: POST /, the operation in X-Amz-Target.
    server = createServer(async (request, response) => {
      const target = String(request.headers['x-amz-target'] ?? '');
      received.push({ target, body: JSON.parse(await readBody(request)) as Record<string, unknown> });
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
      const body = '{"requestPayload":{"Records":[]}}';
      const md5 = createHash('md5').update(body).digest('hex'); // the SDK checks it
      response.end(
        target === 'AmazonSQS.ReceiveMessage'
          ? JSON.stringify({ Messages: [{ MessageId: 'id-1', ReceiptHandle: 'rh-1', Body: body, MD5OfBody: md5 }] })
          : '{}',
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
  });

  it('receives up to 10 messages hidden for the run, and deletes one by its receipt', async () => {
    const client = new SQSClient({
      endpoint,
      region: 'eu-west-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      maxAttempts: 1,
    });
    const queueUrl = `${endpoint}/123456789012/Images-InvalidationFailures`;
    const queue = sqsFailureQueue(client, queueUrl);

    expect(await queue.receive()).toEqual([{ id: 'id-1', receipt: 'rh-1', body: '{"requestPayload":{"Records":[]}}' }]);
    await queue.delete('rh-1');

    expect(received).toEqual([
      {
        target: 'AmazonSQS.ReceiveMessage',
        body: { QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 600 },
      },
      { target: 'AmazonSQS.DeleteMessage', body: { QueueUrl: queueUrl, ReceiptHandle: 'rh-1' } },
    ]);
  });
});
