// The validator: what an upload's S3 ObjectCreated event on the staging
// prefix runs. It reads the staged object with the origin's own bounded
// readers (the byte limit; format by content, not by name or Content-Type;
// container sizes as the decoder will decode them; the pixel and frame
// limits: image/input.ts), prices one decode as the origin prices its
// `format=json` previews (image/budget.ts), and makes it: the first frame
// shrunk on load to a small copy, which a truncated or corrupt file fails.
// Then the object is copied to its key (ready: its Content-Type kept, and
// its size and format in its user metadata; with manageStripLocation, its
// bytes without their location put there instead: strip-location.ts) or to
// the quarantine prefix with a record of why, and the staged object is deleted.
// Every copy (and the stripped put) is conditional on the ETag that was
// read, so a file replaced meanwhile is never stored unread: its own event
// validates it.

import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { S3Event } from 'aws-lambda';
import type { Readable } from 'node:stream';
import { decodedEventKey, isBridgeEvent, type S3BridgeEvent } from '../invalidate/events';
import type { Limits } from '../origin/config';
import { HttpError, type ErrorCode } from '../origin/errors';
import { budgetFor, previewsFit } from '../origin/image/budget';
import { decodeError, openSource, type SourceInfo } from '../origin/image/input';
import { readBounded } from '../origin/storage';
import type { ManageConfig } from './config';
import { sourceKey } from './body';
import { isMissing, ManageError, storageUnavailable, type S3Failure } from './errors';
import { NotStrippable } from './location-blocks';
import { READY_METADATA, type QuarantineRecord } from './records';
import { stripLocation } from './strip-location';

/** The side of the copy the validator decodes (shrunk on load where the format can), in pixels. */
const DECODED_SIDE = 64;

export type UploadOutcome =
  | { status: 'ready'; key: string; width: number; height: number; format: string }
  | { status: 'quarantined'; key: string; reason: ErrorCode; message: string }
  /** The staged object was gone (an event delivered twice), or replaced while read (its own event follows). */
  | { status: 'gone' | 'superseded'; key: string };

/** The staged object as read: its bytes, or the origin's refusal of them (a size over the limit, unread). */
interface Staged {
  etag: string;
  contentType?: string;
  metadata: Record<string, string>;
  uploadedAt: Date;
  bytes: number;
  body?: Buffer;
  refusal?: HttpError;
}

/** Reads the staged object within the byte limit; undefined when it is gone. */
async function readStaged(s3: S3Client, bucket: string, key: string, maxBytes: number): Promise<Staged | undefined> {
  let response;
  try {
    response = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw storageUnavailable(error);
  }
  const staged: Staged = {
    etag: response.ETag ?? '',
    contentType: response.ContentType,
    metadata: response.Metadata ?? {},
    uploadedAt: response.LastModified ?? new Date(),
    bytes: response.ContentLength ?? 0,
  };
  try {
    staged.body = await readBounded(response.Body as Readable, response.ContentLength, maxBytes);
  } catch (error) {
    if (!(error instanceof HttpError)) throw storageUnavailable(error);
    staged.refusal = error;
  }
  return staged;
}

/** The image's size and format when the origin would serve it; the origin's refusal otherwise. */
export async function checkImage(bytes: Buffer, limits: Limits): Promise<SourceInfo> {
  const opened = await openSource(bytes, limits);
  const { info } = opened;
  const budget = budgetFor(limits.memorySizeMb, limits.timeBudgetMs, bytes.length);
  if (!previewsFit(info, DECODED_SIDE, budget, limits.maxDimension)) {
    throw new HttpError('too_costly', `Decoding this ${info.width}x${info.height} ${info.format} would not fit the origin's budget.`);
  }
  try {
    const frame = await opened.firstFrame();
    await frame
      .autoOrient()
      .resize(DECODED_SIDE, DECODED_SIDE, { fit: 'inside' })
      .timeout({ seconds: Math.max(1, Math.ceil(budget.seconds)) })
      .raw()
      .toBuffer();
  } catch (error) {
    throw error instanceof HttpError ? error : decodeError(error, limits);
  }
  return info;
}

/** The image without its location (strip-location.ts), or the refusal of one whose structure it does not read. */
function strippedOrRefused(bytes: Buffer, info: SourceInfo): Buffer {
  try {
    return stripLocation(bytes, info.format);
  } catch (error) {
    if (!(error instanceof NotStrippable)) throw error;
    throw new HttpError('unsupported_media_type', `Its location cannot be removed: ${error.message}.`);
  }
}

/** Whether a conditional copy found the source changed (412) or gone. */
const lostRace = (error: unknown) => (error as S3Failure).$metadata?.httpStatusCode === 412 || isMissing(error);

/** Copies the staged object (as read: its ETag) to `to`; false when it changed or went meanwhile. */
async function copyStaged(
  s3: S3Client,
  bucket: string,
  from: string,
  staged: Staged,
  to: string,
  metadata: Record<string, string>,
): Promise<boolean> {
  try {
    await s3.send(
      new CopyObjectCommand({
        Bucket: bucket,
        Key: to,
        CopySource: `${bucket}/${encodeURIComponent(from)}`,
        CopySourceIfMatch: staged.etag,
        MetadataDirective: 'REPLACE',
        ContentType: staged.contentType,
        Metadata: metadata,
      }),
    );
    return true;
  } catch (error) {
    if (lostRace(error)) return false;
    throw storageUnavailable(error);
  }
}

/**
 * Puts the stripped bytes of the staged object (as read: its ETag) at `to`;
 * false when the staged object changed or went meanwhile, as copyStaged.
 * The check is a conditional HEAD just before: a put has no condition on another object.
 */
async function putStripped(
  s3: S3Client,
  { bucket, from, to }: { bucket: string; from: string; to: string },
  staged: Staged,
  Body: Buffer,
  metadata: Record<string, string>,
): Promise<boolean> {
  try {
    await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: from, IfMatch: staged.etag }));
  } catch (error) {
    if (lostRace(error)) return false;
    throw storageUnavailable(error);
  }
  await guarded(() =>
    s3.send(new PutObjectCommand({ Bucket: bucket, Key: to, Body, ContentType: staged.contentType, Metadata: metadata })),
  );
  return true;
}

/** An S3 call whose failure is the storage's. */
async function guarded(call: () => Promise<unknown>): Promise<void> {
  try {
    await call();
  } catch (error) {
    throw storageUnavailable(error);
  }
}

/**
 * Deletes the staged object. Unconditionally: LocalStack, where this is
 * tested, refuses If-Match on a delete (it has it for directory buckets
 * only), so a file uploaded again in the moment between the copy and this
 * delete is lost, never served.
 */
async function deleteStaged(s3: S3Client, bucket: string, key: string): Promise<void> {
  await guarded(() => s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })));
}

/**
 * Why an upload's key is no source key, if it is not: only a policy this API
 * signed pins a good one, and anyone allowed to write the bucket could stage
 * another (`_uploads/_uploads/x`, which would be staged again).
 */
function keyRefusal(key: string): HttpError | undefined {
  try {
    sourceKey(key);
    return undefined;
  } catch (error) {
    if (!(error instanceof ManageError)) throw error;
    return new HttpError('invalid_key', error.message);
  }
}

/** The origin's verdict on an image to be stored at `key`: its size and format, or why it is refused. */
export type Verdict =
  /** `stored`: the bytes to keep, the body itself or, with stripLocation, the body without its location. */
  { info: SourceInfo; stored: Buffer; refusal?: undefined } | { info?: undefined; refusal: HttpError };

/**
 * The verdict on `body` for `key`: refused as it was read (`readRefusal`: over
 * the byte limit), for a key that is no source key, by checkImage, or (with
 * `stripLocation`) by a location it cannot remove. Uploads and imports are
 * judged by this one function.
 */
export async function judgeImage(
  key: string,
  body: Buffer | undefined,
  readRefusal: HttpError | undefined,
  limits: Limits,
  stripLocation = false,
): Promise<Verdict> {
  const refusal = readRefusal ?? keyRefusal(key);
  if (refusal) return { refusal };
  try {
    const info = await checkImage(body!, limits);
    return { info, stored: stripLocation ? strippedOrRefused(body!, info) : body! };
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    return { refusal: error };
  }
}

/** A key once quarantined is ready now: its quarantined copy and record would say otherwise. */
export async function clearQuarantine(s3: S3Client, config: ManageConfig, key: string): Promise<void> {
  const records = [config.quarantinePrefix + key, config.quarantinePrefix + key + '.json'].map((Key) => ({ Key }));
  await guarded(() => s3.send(new DeleteObjectsCommand({ Bucket: config.sourceBucket, Delete: { Objects: records, Quiet: true } })));
}

/** Writes the record of `key`'s quarantine beside its quarantined copy. */
export async function writeQuarantineRecord(s3: S3Client, config: ManageConfig, key: string, record: QuarantineRecord): Promise<void> {
  const Key = config.quarantinePrefix + key + '.json';
  const Body = JSON.stringify(record);
  await guarded(() => s3.send(new PutObjectCommand({ Bucket: config.sourceBucket, Key, Body, ContentType: 'application/json' })));
}

/** The outcome of a verdict on `key`, once stored. */
export const outcomeOf = (key: string, verdict: Verdict): UploadOutcome =>
  verdict.info
    ? { status: 'ready', key, width: verdict.info.width, height: verdict.info.height, format: verdict.info.format }
    : { status: 'quarantined', key, reason: verdict.refusal.code, message: verdict.refusal.message };

/**
 * Validates the upload at `stagingKey` and moves it to its key or to quarantine.
 * A storage failure throws (the event is delivered again); the image's own
 * faults never do.
 */
export async function validateUpload(clients: { s3: S3Client }, config: ManageConfig, stagingKey: string): Promise<UploadOutcome> {
  const { s3 } = clients;
  const { sourceBucket: bucket, stagingPrefix, quarantinePrefix, limits } = config;
  if (!stagingKey.startsWith(stagingPrefix)) throw new Error(`${stagingKey} is not under the staging prefix ${stagingPrefix}.`);
  const key = stagingKey.slice(stagingPrefix.length);
  const staged = await readStaged(s3, bucket, stagingKey, limits.maxSourceBytes);
  if (!staged) return { status: 'gone', key };
  const verdict = await judgeImage(key, staged.body, staged.refusal, limits, config.stripLocation);
  const uploadedAt = staged.uploadedAt.toISOString();
  if (verdict.info) {
    const metadata = { ...staged.metadata, ...READY_METADATA.write(verdict.info, uploadedAt) };
    const moved = !verdict.stored.equals(staged.body!)
      ? await putStripped(s3, { bucket, from: stagingKey, to: key }, staged, verdict.stored, metadata)
      : await copyStaged(s3, bucket, stagingKey, staged, key, metadata);
    if (!moved) return { status: 'superseded', key };
    await clearQuarantine(s3, config, key);
  } else {
    if (!(await copyStaged(s3, bucket, stagingKey, staged, quarantinePrefix + key, staged.metadata))) return { status: 'superseded', key };
    const { code: reason, message } = verdict.refusal;
    await writeQuarantineRecord(s3, config, key, { reason, message, uploadedAt, bytes: staged.bytes, etag: staged.etag });
  }
  await deleteStaged(s3, bucket, stagingKey);
  return outcomeOf(key, verdict);
}

/** What the validator is invoked with: an S3 notification (the emulator's, the tests'), or an S3 event through EventBridge (deployed). */
export type UploadEvent = S3Event | S3BridgeEvent;

/**
 * The staged uploads an event names, in its order: ObjectCreated (through
 * EventBridge, "Object Created") under the staging prefix of the source
 * bucket, each key decoded as the invalidation Lambda decodes it (a key that
 * is not valid percent-encoding is passed over). Other records are no uploads.
 */
export function stagedKeys(config: ManageConfig, event: UploadEvent): string[] {
  const objects = isBridgeEvent(event)
    ? [{ created: event['detail-type'] === 'Object Created', bucket: event.detail?.bucket?.name, rawKey: event.detail?.object?.key }]
    : (event.Records ?? []).map((record) => ({
        created: record.eventName.startsWith('ObjectCreated'),
        bucket: record.s3.bucket.name,
        rawKey: record.s3.object.key,
      }));
  return objects
    .filter(({ created, bucket }) => created && bucket === config.sourceBucket)
    .map(({ rawKey }) => decodedEventKey(rawKey ?? ''))
    .filter((key): key is string => key?.startsWith(config.stagingPrefix) === true);
}

/** Validates each upload an event names (stagedKeys), one after another. */
export async function validateEvent(clients: { s3: S3Client }, config: ManageConfig, event: UploadEvent): Promise<UploadOutcome[]> {
  const outcomes: UploadOutcome[] = [];
  for (const key of stagedKeys(config, event)) outcomes.push(await validateUpload(clients, config, key));
  return outcomes;
}
