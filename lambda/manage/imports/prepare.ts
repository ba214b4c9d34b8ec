// A manifest of any size (`url,key` lines, or JSON) written again in S3 Batch
// Operations' CSV, `_imports/<id>/manifest.csv`, by the importer Lambda
// (asynchronously invoked by the API, whose time and memory are too small for
// millions of rows). A CSV is read in ranges, line by line, and written in
// parts of a multipart upload, so memory stays at a range and a part whatever
// the manifest's size; a JSON manifest is read whole. The outcome is recorded beside it,
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
import { StringDecoder } from 'node:string_decoder';
import type { ManageConfig } from '../config';
import { ManageError, type S3Failure } from '../errors';
import { batchLine, csvRow, isJsonManifest, parseManifest } from './items';
import { importFolder } from './jobs';

/** A part of the converted manifest: S3's multipart parts are 5 MiB at least, but the last. */
export const PART_BYTES = 8 * 1024 * 1024;

/** A range of the manifest read at once. */
const RANGE_BYTES = 8 * 1024 * 1024;

/** What the importer is invoked with to convert an import's manifest. */
export interface PrepareImportEvent {
  prepareImport: { id: string; manifestKey: string };
}

/** The record of a conversion: the converted manifest's rows and ETag, or why there is none. */
export type PreparedManifest = { total: number; etag: string } | { error: string };

export const preparedKey = (id: string) => importFolder(id) + 'prepared.json';
export const batchManifestKey = (id: string) => importFolder(id) + 'manifest.csv';

/** The bytes of an object read in ranges, each whole before it is used: no download waits, paused, on an upload. */
async function* rangesOf(s3: S3Client, bucket: string, key: string): AsyncGenerator<Uint8Array> {
  for (let start = 0, size = Infinity; start < size;) {
    let response;
    try {
      response = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${start}-${start + RANGE_BYTES - 1}` }));
    } catch (error) {
      // An empty object has no range to read.
      if ((error as S3Failure).$metadata?.httpStatusCode === 416) return;
      throw error;
    }
    size = Number(response.ContentRange?.split('/')[1] ?? response.ContentLength ?? 0);
    const bytes = await response.Body!.transformToByteArray();
    if (bytes.length === 0) return;
    start += bytes.length;
    yield bytes;
  }
}

/** The lines of `chunks`, a line cut between two chunks made whole. */
async function* linesOf(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  for await (const chunk of chunks) {
    const lines = (rest + decoder.write(Buffer.from(chunk))).split('\n');
    rest = lines.pop()!;
    yield* lines;
  }
  rest += decoder.end();
  if (rest !== '') yield rest;
}

/** The manifest's rows, one at a time: a CSV's lines as they arrive, a JSON list once read. */
async function* manifestRows(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<unknown> {
  let first = true;
  const lines: string[] = [];
  for await (const line of linesOf(chunks)) {
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
  const converted = async function* () {
    for await (const row of manifestRows(rangesOf(s3, bucket, manifestKey))) yield batchLine(bucket, row);
  };
  let prepared: PreparedManifest;
  try {
    prepared = await uploadInParts(s3, bucket, batchManifestKey(id), converted());
    if (prepared.total === 0) prepared = { error: `The manifest ${manifestKey} lists no items.` };
  } catch (error) {
    if (!(error instanceof ManageError)) throw error;
    prepared = { error: error.message };
  }
  await s3.send(
    new PutObjectCommand({ Bucket: bucket, Key: preparedKey(id), Body: JSON.stringify(prepared), ContentType: 'application/json' }),
  );
  return prepared;
}
