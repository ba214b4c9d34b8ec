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
import { integerField, required, sourceKey, stringField } from './body';
import { maxUploadBytes, objectOf, uploadTypes, type ManageConfig } from './config';
import { ManageError } from './errors';

/** How long an upload's policy may be used, in seconds. */
export const UPLOAD_EXPIRY = { min: 120, max: 6 * 60 * 60, default: 900 } as const;

/** The fields of a POST /uploads body. */
export const UPLOAD_FIELDS = ['key', 'contentType', 'contentLength', 'expiresIn'] as const;

export interface UploadRequest {
  key: string;
  contentType: string;
  contentLength: number;
  /** Seconds; UPLOAD_EXPIRY.default when absent. */
  expiresIn: number;
}

export interface UploadTicket {
  /** Where the form is posted (the bucket's URL). */
  url: string;
  /** The form's fields, sent before the file (`key`, `Content-Type`, the policy and its signature). */
  fields: Record<string, string>;
  /** The source key the upload will have once ready. */
  key: string;
  /** When the policy stops working, ISO 8601. */
  expiresAt: string;
}

/** A POST /uploads body, every field checked: a refusal names the first that is wrong. */
export function readUploadRequest(body: Record<string, unknown>, config: ManageConfig): UploadRequest {
  const key = sourceKey(stringField(required(body, 'key'), 'key'));
  if (objectOf(config, key)?.bucket !== config.sourceBucket) {
    throw new ManageError('key_not_uploadable', `The key ${JSON.stringify(key)} is served from another source than the source bucket.`);
  }
  const types = uploadTypes(config.limits);
  const contentType = stringField(required(body, 'contentType'), 'contentType');
  if (!types.includes(contentType)) {
    throw new ManageError('unsupported_content_type', `The content type ${JSON.stringify(contentType)} is not one of ${types.join(', ')}.`);
  }
  const contentLength = integerField(required(body, 'contentLength'), 'contentLength');
  const max = maxUploadBytes(config.limits, contentType);
  if (contentLength < 1) throw new ManageError('invalid_field', `The field "contentLength" must be at least 1, not ${contentLength}.`);
  if (contentLength > max) {
    throw new ManageError('too_large', `The upload's ${contentLength} bytes are over the ${max}-byte limit for ${contentType}.`);
  }
  const expiresIn = body.expiresIn === undefined ? UPLOAD_EXPIRY.default : integerField(body.expiresIn, 'expiresIn');
  if (expiresIn < UPLOAD_EXPIRY.min || expiresIn > UPLOAD_EXPIRY.max) {
    throw new ManageError(
      'invalid_expiry',
      `The field "expiresIn" must be from ${UPLOAD_EXPIRY.min} to ${UPLOAD_EXPIRY.max} seconds, not ${expiresIn}.`,
    );
  }
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
