// A source's variants in the cache bucket: listing and deleting them (the
// purge that runs these steps in order is purge.ts). A variant's key is
// `<source key>/<ops segment>` and an ops segment never holds a '/', so the
// variants of `a.jpg` are exactly the keys one level below `a.jpg/`. Listing
// with the delimiter '/' asks S3 for just those: the variants of another
// source `a.jpg/b.jpg` sit a level deeper and come back folded into a common
// prefix, untouched.

import { DeleteObjectsCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { describeError } from '../common/log';
import { variantPrefix } from '../origin/cache-keys';

/** DeleteObjects takes at most 1000 keys, which is also ListObjectsV2's largest page. */
export const DELETE_BATCH = 1000;

export interface DeleteError {
  key: string;
  code: string;
  message: string;
}

export interface DeleteResult {
  /** Variants S3 reported deleted (every key sent, less those it reported errors for). */
  deleted: number;
  /** Per-key errors S3 reported from DeleteObjects. */
  errors: DeleteError[];
  /** A whole call that failed, e.g. the bucket is unreachable. */
  failure?: string;
}

/** Whether a cache-bucket key is a variant of `sourceKey` (and not of a source below it). */
function isVariantOf(cacheKey: string, sourceKey: string): boolean {
  const prefix = variantPrefix(sourceKey);
  return cacheKey.startsWith(prefix) && cacheKey.length > prefix.length && !cacheKey.slice(prefix.length).includes('/');
}

export interface VariantList {
  /** The variants' keys in the cache bucket (those listed before a failure, if one happened). */
  keys: string[];
  /** Why listing stopped short, e.g. the bucket is unreachable. */
  failure?: string;
}

/** Lists every variant of `sourceKey`, page by page. Never throws: a failure is returned. */
export async function listVariants(s3: S3Client, bucket: string, sourceKey: string): Promise<VariantList> {
  const list: VariantList = { keys: [] };
  const prefix = variantPrefix(sourceKey);
  let token: string | undefined;
  try {
    do {
      const page = await s3.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, Delimiter: '/', ContinuationToken: token, MaxKeys: DELETE_BATCH }),
      );
      // The delimiter already leaves deeper keys out; the check keeps that true whatever S3 returns.
      list.keys.push(...(page.Contents ?? []).map((object) => object.Key ?? '').filter((key) => isVariantOf(key, sourceKey)));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  } catch (error) {
    list.failure = describeError(error);
  }
  return list;
}

/** Deletes these keys, at most 1000 per request. Never throws: failures are returned. */
export async function deleteKeys(s3: S3Client, bucket: string, keys: string[]): Promise<DeleteResult> {
  const result: DeleteResult = { deleted: 0, errors: [] };
  try {
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
  } catch (error) {
    result.failure = describeError(error);
  }
  return result;
}
