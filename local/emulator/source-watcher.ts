// S3 event notifications, locally: LocalStack runs S3 alone here, so changes
// to the source bucket (from the playground or any S3 client) are found by
// comparing listings, and handed on as the S3 event Lambda would receive.

import { paginateListObjectsV2, type S3Client } from '@aws-sdk/client-s3';
import type { S3Event } from 'aws-lambda';

export interface SourceWatcher {
  /** Compares the bucket with the last listing now and reports what changed. */
  poll(): Promise<void>;
  stop(): void;
}

/**
 * Each object's version as a listing tells it: its ETag and its last write.
 * The ETag alone misses a copy onto itself that only replaces the metadata
 * (a new focal point): the bytes, and so the ETag, stay the same. The write
 * time is to the second, so a second such copy within the same second as
 * the first is seen only with the next change.
 */
async function listing(s3: S3Client, bucket: string): Promise<Map<string, string>> {
  const versions = new Map<string, string>();
  for await (const page of paginateListObjectsV2({ client: s3 }, { Bucket: bucket })) {
    for (const object of page.Contents ?? []) versions.set(object.Key!, `${object.ETag ?? ''} ${object.LastModified?.toISOString() ?? ''}`);
  }
  return versions;
}

/** S3 writes event keys form-encoded: a space is '+'. */
const eventKey = (key: string) => encodeURIComponent(key).replace(/%20/g, '+');

function s3Event(bucket: string, changes: [string, 'ObjectCreated:Put' | 'ObjectRemoved:Delete'][]): S3Event {
  return {
    Records: changes.map(([key, eventName]) => ({ eventName, s3: { bucket: { name: bucket }, object: { key: eventKey(key) } } })),
  } as S3Event;
}

export async function watchSources(options: {
  s3: S3Client;
  bucket: string;
  intervalMs: number;
  onEvent(event: S3Event): Promise<unknown>;
}): Promise<SourceWatcher> {
  let known = await listing(options.s3, options.bucket);
  let running: Promise<void> = Promise.resolve();

  async function compare() {
    const now = await listing(options.s3, options.bucket);
    const changes: [string, 'ObjectCreated:Put' | 'ObjectRemoved:Delete'][] = [];
    for (const [key, version] of now) if (known.get(key) !== version) changes.push([key, 'ObjectCreated:Put']);
    for (const key of known.keys()) if (!now.has(key)) changes.push([key, 'ObjectRemoved:Delete']);
    known = now;
    if (changes.length) await options.onEvent(s3Event(options.bucket, changes));
  }

  // One comparison at a time, so a change is never reported twice.
  const poll = () => (running = running.then(compare, compare));
  const timer = setInterval(() => poll().catch((error) => console.error('[emulator] watching sources:', error)), options.intervalMs);
  timer.unref();
  return { poll, stop: () => clearInterval(timer) };
}
