// GET /images/{key}: where an image is in its life (pending while its upload
// is validated, ready, or quarantined with the origin's reason); and
// GET /images: the ready sources under a prefix, a page at a time.

import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { isUnservedKey } from '../common/staging';
import { LIST_QUERY, type ImageListing, type ImageStatus } from './api-schema';
import { sourceKey } from './body';
import { objectOf, type ManageConfig } from './config';
import { isMissing, ManageError, storageUnavailable, type S3Failure } from './errors';
import { READY_METADATA, type QuarantineRecord } from './records';

export type { ImageListing, ImageStatus };

/** An object's HEAD, or undefined when it is not there. */
async function head(s3: S3Client, bucket: string, key: string) {
  try {
    return await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw storageUnavailable(error);
  }
}

/** A quarantined upload's record, or undefined when there is none (or it cannot be read as one). */
async function quarantineRecord(s3: S3Client, bucket: string, key: string): Promise<QuarantineRecord | undefined> {
  let text: string;
  try {
    const response = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    text = (await response.Body?.transformToString()) ?? '';
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw storageUnavailable(error);
  }
  try {
    return JSON.parse(text) as QuarantineRecord;
  } catch {
    return undefined;
  }
}

/**
 * The status of `key`, or undefined when nothing has it. An upload being
 * validated is `pending` whatever else is there; otherwise the latest of the
 * source at the key (`ready`) and a quarantined upload of it (a later upload
 * refused leaves the earlier source served, and is what the status tells).
 */
export async function imageStatus(clients: { s3: S3Client }, config: ManageConfig, rawKey: string): Promise<ImageStatus | undefined> {
  const key = sourceKey(rawKey);
  const { s3 } = clients;
  const object = objectOf(config, key);
  if (!object) throw new ManageError('invalid_key', `The key ${JSON.stringify(key)} is a web origin's, not a bucket's.`);
  const uploads = object.bucket === config.sourceBucket;
  const [ready, staged, record] = await Promise.all([
    head(s3, object.bucket, object.objectKey),
    uploads ? head(s3, config.sourceBucket, config.stagingPrefix + key) : undefined,
    uploads ? quarantineRecord(s3, config.sourceBucket, config.quarantinePrefix + key + '.json') : undefined,
  ]);
  if (staged) {
    const uploadedAt = (staged.LastModified ?? new Date()).toISOString();
    return { key, status: 'pending', bytes: staged.ContentLength ?? 0, etag: staged.ETag ?? '', uploadedAt };
  }
  const fields = ready ? READY_METADATA.read(ready.Metadata ?? {}) : undefined;
  const readyAt = fields?.uploadedAt ?? ready?.LastModified?.toISOString();
  if (record && !(readyAt && readyAt > record.uploadedAt)) {
    const { reason, uploadedAt, bytes, etag } = record;
    return { key, status: 'quarantined', reason, bytes, etag, uploadedAt };
  }
  if (!ready) return undefined;
  return { key, status: 'ready', ...fields, bytes: ready.ContentLength ?? 0, etag: ready.ETag ?? '', uploadedAt: readyAt! };
}

export interface ListQuery {
  prefix?: string;
  limit?: string;
  cursor?: string;
}

const LIMIT = LIST_QUERY[1].schema;

/** Listings a page may take: past the staging and quarantine objects, which are never listed. */
const LISTINGS_PER_PAGE = 5;

function readLimit(text: string | undefined): number {
  if (text === undefined) return LIMIT.default;
  const limit = /^\d{1,4}$/.test(text) ? Number(text) : NaN;
  if (!(limit >= LIMIT.minimum && limit <= LIMIT.maximum)) {
    throw new ManageError(
      'invalid_query',
      `The limit must be a whole number from ${LIMIT.minimum} to ${LIMIT.maximum}, not ${JSON.stringify(text)}.`,
    );
  }
  return limit;
}

function readPrefix(prefix: string | undefined): string {
  if (!prefix) return '';
  // A prefix is checked as a key would be, with something after it (`photos/` is a prefix, not a key).
  sourceKey(prefix + 'x', 'The prefix (with a name after it)');
  return prefix;
}

const invalidCursor = (detail?: string) => new ManageError('invalid_cursor', 'The cursor is not one a listing gave.', detail);

/**
 * The ready sources of the source bucket under `prefix`, in S3's order, at
 * most `limit`: a page may hold fewer when it had to pass over staged or
 * quarantined objects, and a cursor then still says more may follow.
 */
export async function listImages(clients: { s3: S3Client }, config: ManageConfig, query: ListQuery): Promise<ImageListing> {
  const limit = readLimit(query.limit);
  const prefix = readPrefix(query.prefix);
  const images: ImageListing['images'] = [];
  let cursor = query.cursor || undefined;
  // S3's tokens are base64 (LocalStack's with `.` and `_`); S3 refuses a wrong one with a 400, which is answered alike.
  if (cursor !== undefined && !/^[A-Za-z0-9+/=._]{1,4096}$/.test(cursor)) throw invalidCursor();
  for (let listing = 0; listing < LISTINGS_PER_PAGE && images.length < limit; listing++) {
    let page;
    try {
      const request = {
        Bucket: config.sourceBucket,
        Prefix: prefix || undefined,
        MaxKeys: limit - images.length,
        ContinuationToken: cursor,
      };
      page = await clients.s3.send(new ListObjectsV2Command(request));
    } catch (error) {
      const status = (error as S3Failure).$metadata?.httpStatusCode;
      if (cursor && status === 400) throw invalidCursor(String(error));
      throw storageUnavailable(error);
    }
    for (const object of page.Contents ?? []) {
      if (object.Key === undefined || isUnservedKey(object.Key)) continue;
      const uploadedAt = (object.LastModified ?? new Date()).toISOString();
      images.push({ key: object.Key, status: 'ready', bytes: object.Size ?? 0, etag: object.ETag ?? '', uploadedAt });
    }
    cursor = page.IsTruncated ? page.NextContinuationToken : undefined;
    if (!cursor) break;
  }
  return cursor ? { images, cursor } : { images };
}
