// Deleting a source's variants from the cache bucket. A variant's key is
// `<source key>/<ops segment>` and an ops segment never holds a '/', so the
// variants of `a.jpg` are exactly the keys one level below `a.jpg/`. Listing
// with the delimiter '/' asks S3 for just those: the variants of another
// source `a.jpg/b.jpg` sit a level deeper and come back folded into a common
// prefix, untouched.

import { DeleteObjectsCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';

/** DeleteObjects takes at most 1000 keys, which is also ListObjectsV2's largest page. */
export const DELETE_BATCH = 1000;

export interface DeleteError {
  key: string;
  code: string;
  message: string;
}

export interface PurgeResult {
  /** Variants S3 reported deleted (every key sent, less those it reported errors for). */
  deleted: number;
  /** Per-key errors S3 reported from DeleteObjects. */
  errors: DeleteError[];
  /** A whole call that failed (listing or deleting), e.g. the bucket is unreachable. */
  failure?: string;
}

/** The prefix a source's variants share. */
export function variantPrefix(sourceKey: string): string {
  return sourceKey + '/';
}

/** Whether a cache-bucket key is a variant of `sourceKey` (and not of a source below it). */
export function isVariantOf(cacheKey: string, sourceKey: string): boolean {
  const prefix = variantPrefix(sourceKey);
  return cacheKey.startsWith(prefix) && cacheKey.length > prefix.length && !cacheKey.slice(prefix.length).includes('/');
}

function describe(error: unknown): string {
  const failure = error as { name?: string; message?: string };
  return `${failure.name ?? 'Error'}: ${failure.message ?? String(error)}`;
}

/**
 * Deletes every variant of `sourceKey`, one page (at most 1000 keys) at a
 * time: list a page, delete it, list the next. Never throws: failures are
 * returned so the caller can report them and go on with other keys.
 */
export async function deleteVariants(s3: S3Client, bucket: string, sourceKey: string): Promise<PurgeResult> {
  const result: PurgeResult = { deleted: 0, errors: [] };
  const prefix = variantPrefix(sourceKey);
  let token: string | undefined;
  try {
    do {
      const page = await s3.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, Delimiter: '/', ContinuationToken: token, MaxKeys: DELETE_BATCH }),
      );
      // The delimiter already leaves deeper keys out; the check keeps that true whatever S3 returns.
      const keys = (page.Contents ?? []).map((object) => object.Key ?? '').filter((key) => isVariantOf(key, sourceKey));
      for (let i = 0; i < keys.length; i += DELETE_BATCH) {
        const batch = keys.slice(i, i + DELETE_BATCH);
        const { Errors } = await s3.send(
          new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }),
        );
        const errors = (Errors ?? []).map((error) => ({
          key: error.Key ?? '',
          code: error.Code ?? 'Unknown',
          message: error.Message ?? '',
        }));
        result.errors.push(...errors);
        result.deleted += batch.length - errors.length;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  } catch (error) {
    result.failure = describe(error);
  }
  return result;
}
