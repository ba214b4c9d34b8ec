// DELETE /images {keys}: deletes up to 100 sources, each from the bucket its
// key is read from, with one S3 DeleteObjects per bucket, and reports each
// key: 200 when all were deleted, 207 when any was not. S3 deletes a key that
// is already gone without complaint, and so does this: it counts as deleted.
//
// Variants: deleting a source is enough. Every ObjectRemoved event of the
// source buckets already reaches the invalidation Lambda (lambda/invalidate:
// the default bucket's S3 notifications, a mapped bucket's through
// EventBridge), which deletes the key's variants from the cache bucket and
// invalidates its paths in CloudFront; the emulator's source watcher does
// the same locally. So no purge is called here, and a delete made any other
// way (the console, the CLI) is purged alike.

import { DeleteObjectsCommand, type S3Client } from '@aws-sdk/client-s3';
import { DELETE_BODY, type DeleteReport } from './api-schema';
import { fieldValue, sourceKey } from './body';
import { objectOf, type ManageConfig } from './config';
import { ManageError, type S3Failure } from './errors';

const [KEYS] = DELETE_BODY;

/** Most keys a DELETE /images takes. */
export const MAX_DELETE_KEYS = KEYS.schema.maxItems;

export type { DeleteReport };

/** The keys of a DELETE /images body, each a source key of a bucket, without repeats; any refusal refuses the whole batch. */
export function readDeleteKeys(body: Record<string, unknown>, config: ManageConfig): string[] {
  const keys = fieldValue(body, KEYS);
  if (!Array.isArray(keys) || keys.length === 0) {
    throw new ManageError('invalid_field', 'The field "keys" must be an array of at least one source key.');
  }
  if (keys.length > MAX_DELETE_KEYS) {
    throw new ManageError('too_many_keys', `The field "keys" has ${keys.length} keys; at most ${MAX_DELETE_KEYS} are deleted at once.`);
  }
  keys.forEach((key, index) => {
    if (typeof key !== 'string') throw new ManageError('invalid_field', `keys[${index}] must be a string, not ${JSON.stringify(key)}.`);
    sourceKey(key, `keys[${index}]`);
    if (!objectOf(config, key)) {
      throw new ManageError('key_not_deletable', `keys[${index}] ${JSON.stringify(key)} is a web origin's, which has no object to delete.`);
    }
  });
  return [...new Set(keys as string[])];
}

/** Deletes `keys` (from readDeleteKeys), each bucket's in one call, and reports each key. */
export async function deleteImages(clients: { s3: S3Client }, config: ManageConfig, keys: string[]): Promise<DeleteReport> {
  const byBucket = new Map<string, { key: string; objectKey: string }[]>();
  for (const key of keys) {
    const { bucket, objectKey } = objectOf(config, key)!;
    byBucket.set(bucket, [...(byBucket.get(bucket) ?? []), { key, objectKey }]);
  }
  const failed = new Map<string, string>();
  await Promise.all(
    [...byBucket].map(async ([bucket, objects]) => {
      try {
        const { Errors } = await clients.s3.send(
          new DeleteObjectsCommand({
            Bucket: bucket,
            Delete: { Objects: objects.map(({ objectKey }) => ({ Key: objectKey })), Quiet: true },
          }),
        );
        for (const error of Errors ?? []) {
          const source = objects.find(({ objectKey }) => objectKey === error.Key);
          if (source) failed.set(source.key, `${error.Code ?? 'Error'}: ${error.Message ?? 'not deleted'}`);
        }
      } catch (error) {
        const failure = error as S3Failure;
        for (const { key } of objects) failed.set(key, `${failure.name ?? 'Error'}: ${failure.message ?? 'the storage failed'}`);
      }
    }),
  );
  const succeeded = keys.filter((key) => !failed.has(key));
  return {
    failed_count: failed.size,
    failed_files: keys.filter((key) => failed.has(key)).map((key) => ({ key, reason: failed.get(key)! })),
    succeeded_count: succeeded.length,
    succeeded_files: succeeded,
  };
}
