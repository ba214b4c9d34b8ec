// POST /uploads: a presigned POST a browser or a back end uploads one file
// with, straight to S3 (no image bytes pass through a Lambda). Its policy pins
// the staging key exactly, the Content-Type to the one declared (a type the
// origin reads), the size to 1 byte up to the origin's source limit, and the
// time it may be used; S3 refuses an upload outside it (EntityTooLarge for a
// size, AccessDenied for another type or key). The upload lands under the
// staging prefix, where no viewer reaches it, until the validator
// (validate.ts) makes it ready or quarantines it.

import type { S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { UPLOAD_BODY, type UploadTicket } from './api-schema';
import { integerField, sourceKey, stringField } from './body';
import { maxUploadBytes, objectOf, uploadTypes, type ManageConfig } from './config';
import { ManageError } from './errors';

const [KEY, CONTENT_TYPE, CONTENT_LENGTH, EXPIRES_IN] = UPLOAD_BODY;

export type { UploadTicket };

export interface UploadRequest {
  key: string;
  contentType: string;
  contentLength: number;
  /** Seconds; the field's default when absent. */
  expiresIn: number;
}

/** A POST /uploads body, every field checked: a refusal names the first that is wrong. */
export function readUploadRequest(body: Record<string, unknown>, config: ManageConfig): UploadRequest {
  const key = sourceKey(stringField(body, KEY));
  if (objectOf(config, key)?.bucket !== config.sourceBucket) {
    throw new ManageError('key_not_uploadable', `The key ${JSON.stringify(key)} is served from another source than the source bucket.`);
  }
  const types = uploadTypes(config.limits);
  const contentType = stringField(body, CONTENT_TYPE);
  if (!types.includes(contentType)) {
    throw new ManageError('unsupported_content_type', `The content type ${JSON.stringify(contentType)} is not one of ${types.join(', ')}.`);
  }
  const contentLength = integerField(body, CONTENT_LENGTH);
  const max = maxUploadBytes(config.limits, contentType);
  if (contentLength > max) {
    throw new ManageError('too_large', `The upload's ${contentLength} bytes are over the ${max}-byte limit for ${contentType}.`);
  }
  const expiresIn = integerField(body, EXPIRES_IN)!;
  return { key, contentType, contentLength, expiresIn };
}

/** The presigned POST of an upload. `now` is when the policy starts to count. */
export async function createUpload(
  clients: { s3: S3Client },
  config: ManageConfig,
  request: UploadRequest,
  now: Date = new Date(),
): Promise<UploadTicket> {
  const { key, contentType, expiresIn } = request;
  const { url, fields } = await createPresignedPost(clients.s3, {
    Bucket: config.sourceBucket,
    // The library adds the bucket and `{key: <Key>}`, an exact match, to the conditions.
    Key: config.stagingPrefix + key,
    Conditions: [
      ['content-length-range', 1, maxUploadBytes(config.limits, contentType)],
      ['eq', '$Content-Type', contentType],
    ],
    Fields: { 'Content-Type': contentType },
    Expires: expiresIn,
  });
  return { url, fields, key, expiresAt: new Date(now.getTime() + expiresIn * 1000).toISOString() };
}
