// S3 event notifications, locally: LocalStack runs S3 alone here, so changes
// to a source bucket (from the playground or any S3 client) are found by
// comparing listings, and handed on as the invalidation Lambda would receive
// them: the default bucket's as an S3 notification, a bucket mapped to a
// prefix's as EventBridge events, one per object.

import { paginateListObjectsV2, type S3Client } from '@aws-sdk/client-s3';
import type { S3Event } from 'aws-lambda';
import type { S3BridgeEvent, SourceEvent } from '../../lambda/invalidate/events';

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

type Change = [key: string, eventName: 'ObjectCreated:Put' | 'ObjectRemoved:Delete'];

/** How a bucket's changes reach the invalidation Lambda. */
export type Delivery = 'notification' | 'eventbridge';

function events(delivery: Delivery, bucket: string, changes: Change[]): SourceEvent[] {
  if (delivery === 'notification') {
    return [
      {
        Records: changes.map(([key, eventName]) => ({ eventName, s3: { bucket: { name: bucket }, object: { key: eventKey(key) } } })),
      } as S3Event,
    ];
  }
  // EventBridge names the change in words and the key as it is.
  return changes.map(([key, eventName]): S3BridgeEvent => ({
    source: 'aws.s3',
    'detail-type': eventName === 'ObjectCreated:Put' ? 'Object Created' : 'Object Deleted',
    detail: { bucket: { name: bucket }, object: { key } },
  }));
}

export async function watchSources(options: {
  s3: S3Client;
  bucket: string;
  delivery: Delivery;
  intervalMs: number;
  onEvent(event: SourceEvent): Promise<unknown>;
}): Promise<SourceWatcher> {
  let known = await listing(options.s3, options.bucket);
  let running: Promise<void> = Promise.resolve();

  async function compare() {
    const now = await listing(options.s3, options.bucket);
    const changes: Change[] = [];
    for (const [key, version] of now) if (known.get(key) !== version) changes.push([key, 'ObjectCreated:Put']);
    for (const key of known.keys()) if (!now.has(key)) changes.push([key, 'ObjectRemoved:Delete']);
    known = now;
    for (const event of changes.length ? events(options.delivery, options.bucket, changes) : []) await options.onEvent(event);
  }

  // One comparison at a time, so a change is never reported twice.
  const poll = () => (running = running.then(compare, compare));
  const timer = setInterval(() => poll().catch((error) => console.error('[emulator] watching sources:', error)), options.intervalMs);
  timer.unref();
  return { poll, stop: () => clearInterval(timer) };
}
