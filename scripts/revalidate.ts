// `npm run revalidate -- --bucket NAME [options]`
//
// The uploads whose validation failed for good (their event is in the
// validator's failure queue, stack output UploadValidationFailureQueueUrl),
// validated again. An upload still staged under `_uploads/` some minutes after
// it arrived has not been validated; each is copied onto itself (its bytes,
// Content-Type and metadata unchanged), which is a new Object Created event:
// the deployed validator runs on it with the deployment's own settings (and
// `npm start`'s source watcher sees it too). One line per upload, then a
// summary; exits 1 if any copy failed, 2 on a usage error.

import { parseArgs } from 'node:util';
import { CopyObjectCommand, HeadObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { describeError } from '../lambda/common/log';
import { STAGING_PREFIX } from '../lambda/common/staging';
import { localS3Client } from '../local/harness/s3-client';
import { UsageError } from '../local/harness/command-line';
import { operatorMain, runIfMain, type Output } from './operator-command';

/** Most uploads one run sends to the validator again: each is a validator run (the origin's memory, up to a minute). */
export const MAX_REVALIDATIONS = 1000;

export const USAGE = `usage: npm run revalidate -- --bucket NAME [options]

Sends the uploads still staged under ${STAGING_PREFIX} after --older-than minutes to
the validator again: each is copied onto itself (bytes, Content-Type and
metadata unchanged), a new Object Created event that the validator runs on.

options:
  --bucket NAME            the source bucket (stack output SourceBucketName; or $SOURCE_BUCKET)
  --older-than MINUTES     only uploads staged at least this long ago (default 15: past the
                           validator's own attempts; younger ones may still be on their way)
  --limit N                at most N uploads, oldest first (default 100, at most ${MAX_REVALIDATIONS})
  --endpoint URL           an S3 endpoint such as LocalStack's (path-style, test credentials)
  --region REGION          the bucket's region (default: the AWS SDK's)
  -h, --help               this text

exit status: 0 when every upload was sent again (or none was waiting), 1 when any failed, 2 on a usage error.`;

export interface RevalidateOptions {
  bucket: string;
  olderThanMinutes: number;
  limit: number;
  endpoint?: string;
  region?: string;
  /** The time ages are counted to (tests). */
  now?: Date;
}

function wholeNumber(text: string | undefined, name: string, fallback: number, max: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) > max)
    throw new UsageError(`${name} must be a whole number from 0 to ${max}, not ${JSON.stringify(text)}.`);
  return Number(text);
}

/** Options from the command line (and the environment); `undefined` for --help. */
export function parseRevalidateArgs(argv: string[], env: Record<string, string | undefined> = process.env): RevalidateOptions | undefined {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        bucket: { type: 'string' },
        'older-than': { type: 'string' },
        limit: { type: 'string' },
        endpoint: { type: 'string' },
        region: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) return undefined;
  const bucket = values.bucket ?? env.SOURCE_BUCKET;
  if (!bucket) throw new UsageError('the source bucket is needed: --bucket NAME (or $SOURCE_BUCKET).');
  if (values.endpoint && !/^https?:\/\/[^/]/.test(values.endpoint)) {
    throw new UsageError(`--endpoint must be an http(s) URL, not ${JSON.stringify(values.endpoint)}.`);
  }
  return {
    bucket,
    olderThanMinutes: wholeNumber(values['older-than'], '--older-than', 15, 60 * 24 * 14),
    limit: Math.max(1, wholeNumber(values.limit, '--limit', 100, MAX_REVALIDATIONS)),
    endpoint: values.endpoint,
    region: values.region,
  };
}

/** The staged uploads last written before `before`, oldest first, at most `limit`. */
async function staleUploads(s3: S3Client, bucket: string, before: Date, limit: number): Promise<string[]> {
  const stale: { key: string; at: number }[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: STAGING_PREFIX, ContinuationToken: token }));
    for (const object of page.Contents ?? []) {
      const at = object.LastModified?.getTime() ?? 0;
      if (object.Key && at <= before.getTime()) stale.push({ key: object.Key, at });
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return stale
    .sort((a, b) => a.at - b.at)
    .slice(0, limit)
    .map(({ key }) => key);
}

/** Copies `key` onto itself as it is: S3 refuses a copy onto itself that changes nothing, so its metadata is written again. */
async function touch(s3: S3Client, bucket: string, key: string): Promise<void> {
  const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
  await s3.send(
    new CopyObjectCommand({
      Bucket: bucket,
      Key: key,
      CopySource: `${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`,
      CopySourceIfMatch: head.ETag,
      MetadataDirective: 'REPLACE',
      ContentType: head.ContentType,
      Metadata: head.Metadata,
    }),
  );
}

/** Sends the stale staged uploads to the validator again; prints a line for each. True when all were sent. */
export async function revalidate(options: RevalidateOptions, s3: S3Client, output: Output): Promise<boolean> {
  const before = new Date((options.now ?? new Date()).getTime() - options.olderThanMinutes * 60_000);
  const keys = await staleUploads(s3, options.bucket, before, options.limit);
  let failures = 0;
  for (const key of keys) {
    try {
      await touch(s3, options.bucket, key);
      output.out(`ok    ${key.slice(STAGING_PREFIX.length)}: sent to the validator again`);
    } catch (error) {
      failures++;
      output.out(`FAIL  ${key.slice(STAGING_PREFIX.length)}: ${describeError(error)}`);
    }
  }
  output.out(
    keys.length === 0
      ? `No upload has been staged for ${options.olderThanMinutes} minutes or more.`
      : `${keys.length - failures} of ${keys.length} staged upload(s) sent to the validator again; see each one's status (GET /images/{key}).`,
  );
  return failures === 0;
}

/** The command: returns its exit status. */
export const main = operatorMain({
  name: 'revalidate',
  usage: USAGE,
  parse: parseRevalidateArgs,
  clients: (options: RevalidateOptions) => ({
    s3: options.endpoint
      ? localS3Client(options.endpoint)
      : new S3Client({ ...(options.region ? { region: options.region } : {}), followRegionRedirects: true }),
  }),
  async run(options, { s3 }, output) {
    output.out(`revalidate: bucket ${options.bucket}, uploads staged ${options.olderThanMinutes}+ minutes ago, at most ${options.limit}`);
    try {
      return (await revalidate(options, s3, output)) ? 0 : 1;
    } catch (error) {
      output.err(`revalidate: could not list the staged uploads: ${describeError(error)}`);
      return 1;
    }
  },
});

runIfMain(import.meta.url, (argv) => main(argv));
