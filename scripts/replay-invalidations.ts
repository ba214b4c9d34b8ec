// `npm run replay-invalidations -- [options]`
//
// The source changes the invalidation Lambda gave up on, run again. An event
// that still fails after Lambda's two retries lands in the failure queue
// (stack output InvalidationFailureQueueUrl) as Lambda's on-failure record:
// the S3 event and the error. This command reads each record, runs its event
// through the invalidation Lambda's own code (lambda/invalidate/handler.ts:
// list the variants, invalidate them, delete them), and deletes the message
// only once that succeeded; a failure stays in the queue for the next run.
// One line per message (`ok` or `FAIL`), then a summary; exits 1 if anything
// failed, 2 on a usage error.
//
// It does not warm eager presets (the first viewer makes them), and runs one
// pass: the misses that raced the original change are long over.

import { parseArgs } from 'node:util';
import { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import { S3Client } from '@aws-sdk/client-s3';
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { describeError } from '../lambda/common/log';
import { cloudFrontInvalidations, type InvalidationClient } from '../lambda/invalidate/cloudfront';
import { readSourceBuckets, type PrefixBuckets } from '../lambda/common/sources';
import { invalidateConfig } from '../lambda/invalidate/config';
import { isBridgeEvent, type SourceEvent } from '../lambda/invalidate/events';
import { createInvalidationHandler, SourceChangeError } from '../lambda/invalidate/handler';
import { UsageError } from '../local/harness/command-line';
import { operatorMain, runIfMain, type Output } from './operator-command';

export const USAGE = `usage: npm run replay-invalidations -- [options]

Reads the source changes the invalidation Lambda gave up on from its failure
queue, runs each again (list the source's variants, invalidate them in
CloudFront, delete them from the cache bucket), and deletes a message only
once its change is applied. What fails stays in the queue for the next run.

options:
  --queue-url URL          the failure queue (stack output InvalidationFailureQueueUrl; or $FAILURE_QUEUE_URL)
  --cache-bucket NAME      the cache bucket (stack output CacheBucketName; or $CACHE_BUCKET)
  --distribution-id ID     the distribution (stack output DistributionId; or $DISTRIBUTION_ID)
  --source-buckets JSON    the buckets mapped to key prefixes, as the invalidation Lambda's SOURCE_BUCKETS
                           has them, e.g. '{"archive/":"my-archive"}' (or $SOURCE_BUCKETS; default: none)
  --region REGION          the stack's region (default: the AWS SDK's)
  -h, --help               this text

exit status: 0 when every message was replayed (or none was waiting), 1 when any failed, 2 on a usage error.`;

export interface ReplayOptions {
  queueUrl: string;
  cacheBucket: string;
  distributionId: string;
  sourceBuckets: PrefixBuckets;
  region?: string;
}

/** One message of the failure queue. */
export interface QueuedFailure {
  id: string;
  /** What deletes this delivery of the message. */
  receipt: string;
  body: string;
}

/** The failure queue, as this command uses it: SQS in production, an in-memory queue in tests. */
export interface FailureQueue {
  /** Up to 10 messages, hidden from other readers for long enough to replay them. */
  receive(): Promise<QueuedFailure[]>;
  delete(receipt: string): Promise<void>;
}

/** Long enough for a replay of 10 events; a message left undeleted shows up again after it. */
const VISIBILITY_SECONDS = 600;

export function sqsFailureQueue(client: SQSClient, queueUrl: string): FailureQueue {
  return {
    async receive() {
      const { Messages } = await client.send(
        // A short long-poll: a plain receive may sample too few servers and answer "empty" early.
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          VisibilityTimeout: VISIBILITY_SECONDS,
        }),
      );
      return (Messages ?? []).map((message) => ({
        id: message.MessageId ?? '',
        receipt: message.ReceiptHandle ?? '',
        body: message.Body ?? '',
      }));
    },
    async delete(receipt) {
      await client.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: receipt }));
    },
  };
}

export interface ReplayDependencies {
  s3: S3Client;
  cloudFront: InvalidationClient;
  queue: FailureQueue;
}

/** Options from the command line (and the environment); `undefined` for --help. */
export function parseReplayArgs(argv: string[], env: Record<string, string | undefined> = process.env): ReplayOptions | undefined {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        'queue-url': { type: 'string' },
        'cache-bucket': { type: 'string' },
        'distribution-id': { type: 'string' },
        'source-buckets': { type: 'string' },
        region: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) return undefined;
  const queueUrl = values['queue-url'] ?? env.FAILURE_QUEUE_URL;
  const cacheBucket = values['cache-bucket'] ?? env.CACHE_BUCKET;
  const distributionId = values['distribution-id'] ?? env.DISTRIBUTION_ID;
  if (!queueUrl) throw new UsageError('the failure queue is needed: --queue-url URL (or $FAILURE_QUEUE_URL).');
  if (!/^https:\/\/[^/]+\/\d+\/[^/]+$/.test(queueUrl)) {
    throw new UsageError(
      `--queue-url must be an SQS queue URL (https://sqs.<region>.amazonaws.com/<account>/<name>), not ${JSON.stringify(queueUrl)}.`,
    );
  }
  if (!cacheBucket) throw new UsageError('the cache bucket is needed: --cache-bucket NAME (or $CACHE_BUCKET).');
  if (!distributionId) throw new UsageError('the distribution is needed: --distribution-id ID (or $DISTRIBUTION_ID).');
  const sourceBuckets = readSourceBuckets(
    { SOURCE_BUCKETS: values['source-buckets'] ?? env.SOURCE_BUCKETS },
    (message) => new UsageError(`--source-buckets: ${message}`),
  );
  return { queueUrl, cacheBucket, distributionId, sourceBuckets, region: values.region };
}

/**
 * The S3 event (a notification, or an EventBridge event of a bucket mapped to
 * a prefix) inside a Lambda on-failure record; throws, saying why, for anything
 * else, and for an EventBridge event of a bucket `sourceBuckets` does not map,
 * which would otherwise be replayed as nothing to do and removed.
 */
export function failedEvent(body: string, sourceBuckets: PrefixBuckets = {}): SourceEvent {
  let record: unknown;
  try {
    record = JSON.parse(body);
  } catch {
    throw new Error('not JSON, so not an on-failure record of the invalidation Lambda');
  }
  const payload = (record as { requestPayload?: { Records?: unknown } } | null)?.requestPayload as SourceEvent | undefined;
  if (isBridgeEvent(payload) && payload.source === 'aws.s3') {
    const bucket = payload.detail?.bucket?.name;
    if (!Object.values(sourceBuckets).includes(bucket)) {
      throw new Error(`an EventBridge event of bucket ${JSON.stringify(bucket)}, which --source-buckets does not map to a prefix`);
    }
    return payload;
  }
  if (!payload || !Array.isArray((payload as { Records?: unknown }).Records)) {
    throw new Error('no requestPayload.Records: not an on-failure record of the invalidation Lambda');
  }
  return payload;
}

function describe(error: unknown): string {
  return error instanceof SourceChangeError ? error.message : describeError(error);
}

/** Replays every message in the queue once; prints a line for each. True when all succeeded. */
export async function replay(options: ReplayOptions, deps: ReplayDependencies, output: Output): Promise<boolean> {
  const handle = createInvalidationHandler({
    s3: deps.s3,
    cloudFront: deps.cloudFront,
    // No presets are warmed on a replay: nothing is requested from the distribution.
    config: invalidateConfig(
      { cacheBucket: options.cacheBucket, distributionId: options.distributionId, distributionOrigin: '' },
      { sourceBuckets: options.sourceBuckets },
    ),
    // The handler's structured log stays quiet: each message gets its one line below.
    log: () => {},
  });
  const seen = new Set<string>();
  let failures = 0;
  for (;;) {
    const batch = (await deps.queue.receive()).filter((message) => !seen.has(message.id));
    if (batch.length === 0) break;
    for (const message of batch) {
      seen.add(message.id);
      try {
        const report = await handle(failedEvent(message.body, options.sourceBuckets));
        await deps.queue.delete(message.receipt);
        const keys = report.keys.map((key) => `${key.key} (${key.deleted} variant(s) deleted)`).join(', ') || 'no source key';
        const invalidated = report.invalidationId
          ? `; invalidated ${report.paths.length} path(s) (${report.invalidationId})`
          : '; nothing to invalidate';
        output.out(`ok    ${message.id}: ${keys}${invalidated}`);
      } catch (error) {
        failures++;
        output.out(`FAIL  ${message.id}: ${describe(error)}; left in the queue`);
      }
    }
  }
  output.out(
    seen.size === 0
      ? 'No failed source change is waiting in the queue.'
      : failures === 0
        ? `${seen.size} source change(s) replayed and removed from the queue.`
        : `${failures} of ${seen.size} source change(s) failed again; they stay in the queue.`,
  );
  return failures === 0;
}

export function createReplayDependencies(options: ReplayOptions): ReplayDependencies {
  const region = options.region ? { region: options.region } : {};
  return {
    s3: new S3Client({ ...region, followRegionRedirects: true }),
    // CloudFront is global; its API is signed for us-east-1.
    cloudFront: cloudFrontInvalidations(new CloudFrontClient({ region: 'us-east-1' })),
    queue: sqsFailureQueue(new SQSClient(region), options.queueUrl),
  };
}

/** The command: returns its exit status. */
export const main = operatorMain({
  name: 'replay-invalidations',
  usage: USAGE,
  parse: parseReplayArgs,
  clients: createReplayDependencies,
  async run(options, deps, output) {
    output.out(
      `replay-invalidations: queue ${options.queueUrl}, cache bucket ${options.cacheBucket}, distribution ${options.distributionId}`,
    );
    return (await replay(options, deps, output)) ? 0 : 1;
  },
});

runIfMain(import.meta.url, (argv) => main(argv));
