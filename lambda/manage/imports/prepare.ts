// A manifest of any size (`url,key` lines, or JSON) written again in S3 Batch
// Operations' CSV, `_imports/<id>/manifest.csv`, by the importer Lambda
// (asynchronously invoked by the API, whose time and memory are too small for
// millions of rows). A CSV is streamed line by line and written in parts of
// a multipart upload, so memory stays at a part whatever the manifest's size;
// a JSON manifest is read whole. The outcome is recorded beside it,
// `_imports/<id>/prepared.json`, for the API to create the job from.

import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { ManageConfig } from '../config';
import { ManageError } from '../errors';
import { batchLine, csvRow, isJsonManifest, parseManifest } from './items';
import { importFolder } from './jobs';

/** A part of the converted manifest: S3's multipart parts are 5 MiB at least, but the last. */
export const PART_BYTES = 8 * 1024 * 1024;

/** What the importer is invoked with to convert an import's manifest. */
export interface PrepareImportEvent {
  prepareImport: { id: string; manifestKey: string };
}

/** The record of a conversion: the converted manifest's rows and ETag, or why there is none. */
export type PreparedManifest = { total: number; etag: string } | { error: string };

export const preparedKey = (id: string) => importFolder(id) + 'prepared.json';
export const batchManifestKey = (id: string) => importFolder(id) + 'manifest.csv';

/** The manifest's rows, one at a time: a CSV's lines as they arrive, a JSON list once read. */
async function* manifestRows(body: Readable): AsyncGenerator<unknown> {
  let first = true;
  const lines: string[] = [];
  for await (const line of createInterface({ input: body, crlfDelay: Infinity })) {
    if (first && isJsonManifest(line)) lines.push(line);
    else if (lines.length > 0) lines.push(line);
    else {
      const row = csvRow(line);
      if (row !== undefined) yield row;
    }
    first = first && line.trim() === '';
  }
  if (lines.length > 0) yield* parseManifest(lines.join('\n'));
}

/** Writes `lines` to `key` in parts of a multipart upload; the object's ETag and the lines' count. */
async function uploadInParts(s3: S3Client, bucket: string, key: string, lines: AsyncIterable<string>) {
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: 'text/csv' }));
  const parts: { ETag?: string; PartNumber: number }[] = [];
  let buffered: string[] = [];
  let size = 0;
  let total = 0;
  const flush = async () => {
    const PartNumber = parts.length + 1;
    const { ETag } = await s3.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber, Body: buffered.join('') }));
    parts.push({ ETag, PartNumber });
    [buffered, size] = [[], 0];
  };
  try {
    for await (const line of lines) {
      buffered.push(line);
      size += Buffer.byteLength(line);
      total++;
      if (size >= PART_BYTES) await flush();
    }
    if (size > 0 || parts.length === 0) await flush();
    const done = await s3.send(
      new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId, MultipartUpload: { Parts: parts } }),
    );
    return { etag: done.ETag ?? '', total };
  } catch (error) {
    await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId })).catch(() => undefined);
    throw error;
  }
}

/**
 * Converts import `id`'s manifest and records the outcome (prepared.json).
 * A manifest that cannot be read as one is recorded as the import's error; a
 * storage failure throws, for Lambda to try the event again.
 */
export async function prepareManifest(
  clients: { s3: S3Client },
  config: ManageConfig,
  event: PrepareImportEvent,
): Promise<PreparedManifest> {
  const { s3 } = clients;
  const { id, manifestKey } = event.prepareImport;
  const bucket = config.sourceBucket;
  const response = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: manifestKey }));
  const converted = async function* () {
    for await (const row of manifestRows(response.Body as Readable)) yield batchLine(bucket, row);
  };
  let prepared: PreparedManifest;
  try {
    prepared = await uploadInParts(s3, bucket, batchManifestKey(id), converted());
  } catch (error) {
    if (!(error instanceof ManageError)) throw error;
    prepared = { error: error.message };
  }
  await s3.send(
    new PutObjectCommand({ Bucket: bucket, Key: preparedKey(id), Body: JSON.stringify(prepared), ContentType: 'application/json' }),
  );
  return prepared;
}
