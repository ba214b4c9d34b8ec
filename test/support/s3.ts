// Helpers for tests that use the LocalStack S3 started by test/global-setup.ts.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  PutObjectCommand,
  paginateListObjectsV2,
  type PutObjectCommandOutput,
  type S3Client,
} from '@aws-sdk/client-s3';
import { inject } from 'vitest';
import { localS3Client } from '../../local/harness/s3-client';

let client: S3Client | undefined;

/** The S3 client for this run's LocalStack (one per test worker). */
export function testS3Client(): S3Client {
  client ??= localS3Client(inject('s3Endpoint'));
  return client;
}

export interface TestBuckets {
  s3: S3Client;
  sourceBucket: string;
  cacheBucket: string;
  /** Empties and deletes both buckets. Safe to call twice. */
  cleanup(): Promise<void>;
}

/**
 * Creates a fresh source and cache bucket, named after `label` and unique per
 * call, so test files and tests running in parallel never share state.
 */
export async function createTestBuckets(label: string): Promise<TestBuckets> {
  const s3 = testS3Client();
  const prefix = `t-${bucketLabel(label)}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
  const sourceBucket = `${prefix}-src`;
  const cacheBucket = `${prefix}-cache`;
  await s3.send(new CreateBucketCommand({ Bucket: sourceBucket }));
  await s3.send(new CreateBucketCommand({ Bucket: cacheBucket }));
  return {
    s3,
    sourceBucket,
    cacheBucket,
    cleanup: () => Promise.all([sourceBucket, cacheBucket].map((bucket) => deleteBucket(s3, bucket))).then(() => {}),
  };
}

// Bucket names: 3-63 characters of a-z, 0-9 and '-', starting and ending with a
// letter or digit. The label is squeezed into 30 so the whole name stays <= 56.
function bucketLabel(label: string): string {
  const cleaned = label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 30)
    .replace(/^-+|-+$/g, '');
  return cleaned || 'test';
}

/** Empties and deletes `bucket`; nothing when it is gone already. */
export async function deleteBucket(s3: S3Client, bucket: string): Promise<void> {
  try {
    const keys = await listKeys(s3, bucket);
    for (let i = 0; i < keys.length; i += 1000) {
      const { Errors } = await s3.send(
        new DeleteObjectsCommand({
          Bucket: bucket,
          Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true },
        }),
      );
      if (Errors?.length) throw new Error(`could not empty ${bucket}: ${Errors[0]?.Key}: ${Errors[0]?.Message}`);
    }
    await s3.send(new DeleteBucketCommand({ Bucket: bucket }));
  } catch (error) {
    if ((error as { name?: string }).name !== 'NoSuchBucket') throw error; // already gone
  }
}

/** Every key in the bucket, in S3's (UTF-8 byte) order. */
export async function listKeys(s3: S3Client, bucket: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const page of paginateListObjectsV2({ client: s3 }, { Bucket: bucket })) {
    for (const object of page.Contents ?? []) if (object.Key !== undefined) keys.push(object.Key);
  }
  return keys;
}

export function putObject(
  s3: S3Client,
  bucket: string,
  key: string,
  body: Uint8Array | string,
  contentType?: string,
): Promise<PutObjectCommandOutput> {
  return s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType }));
}

/** An S3 endpoint on the loopback interface that nothing listens on: every connection is refused. */
export async function unreachableS3Endpoint(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return `http://127.0.0.1:${address.port}`;
}
