import { S3Client } from '@aws-sdk/client-s3';

/** An S3 client for LocalStack (or another local S3) at `endpoint`, e.g. from startLocalStack(). */
export function localS3Client(endpoint: string): S3Client {
  return new S3Client({
    endpoint,
    // LocalStack serves buckets by path; virtual-host style would need DNS for <bucket>.127.0.0.1.
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
}
