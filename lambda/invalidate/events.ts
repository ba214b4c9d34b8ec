// What changed -> the URL keys whose variants are stale. Two shapes come in:
// S3 event notifications from the default source bucket (`Records`), whose
// object keys S3 writes form-encoded (a space is '+', a literal '+' is '%2B',
// other bytes are UTF-8 percent escapes), decoded here before anything else
// sees them; and EventBridge's "Object Created" / "Object Deleted" events from
// the buckets mapped to prefixes, one object each, its key encoded the same
// way. An object is mapped back to its URL key (lambda/common/sources.ts).

import type { S3EventRecord } from 'aws-lambda';
import { isGrammarError, validateKey } from '../grammar';
import { urlKey, type PrefixBuckets } from '../common/sources';
import { isUnservedKey } from '../common/staging';

/** An S3 event as EventBridge delivers it (the fields this Lambda reads). */
export interface S3BridgeEvent {
  source: 'aws.s3';
  'detail-type': string;
  detail: { bucket: { name: string }; object: { key: string } };
}

/** What the invalidation Lambda is invoked with: an S3 notification, or an S3 event through EventBridge. */
export type SourceEvent = { Records?: S3EventRecord[] } | S3BridgeEvent;

/** One object's change, from either shape. */
interface ObjectNotice {
  /** The S3 event name, or EventBridge's detail type. */
  eventName: string;
  bucket: string;
  /** The key as the event spelled it. */
  rawKey: string;
  /** The object key, decoded; undefined when it is not valid percent-encoded UTF-8. */
  objectKey: string | undefined;
  /** Through EventBridge, which only the buckets mapped to prefixes send to this Lambda. */
  bridged: boolean;
}

/** Whether `event` came through EventBridge. */
export function isBridgeEvent(event: SourceEvent | undefined): event is S3BridgeEvent {
  return event !== undefined && 'detail' in event;
}

export type Change = 'created' | 'removed';

export interface SourceChange {
  /** The URL key: the object's key, decoded, after its bucket's prefix if it has one. */
  key: string;
  /** `created` when any record for the key created it; warming is then worth trying. */
  change: Change;
  /** The records' event names, for the logs. */
  events: string[];
}

export interface IgnoredRecord {
  eventName: string;
  /** The key as the event spelled it. */
  rawKey: string;
  reason: string;
}

/**
 * Decodes an S3 event key: `+` is a space and `%XX` are UTF-8 bytes, as in a
 * form. EventBridge's S3 events spell keys as the notifications do (AWS's
 * Powertools for Lambda decodes both alike).
 */
export function decodeEventKey(rawKey: string): string {
  return decodeURIComponent(rawKey.replace(/\+/g, '%20'));
}

/** decodeEventKey, or undefined for a key that is not valid percent-encoded UTF-8. */
export function decodedEventKey(rawKey: string): string | undefined {
  try {
    return decodeEventKey(rawKey);
  } catch {
    return undefined;
  }
}

function notices(event: SourceEvent | undefined): ObjectNotice[] {
  if (isBridgeEvent(event)) {
    const rawKey = event.detail?.object?.key ?? '';
    return [
      {
        eventName: event['detail-type'] ?? '',
        bucket: event.detail?.bucket?.name ?? '',
        rawKey,
        objectKey: decodedEventKey(rawKey),
        bridged: true,
      },
    ];
  }
  return ((event as { Records?: S3EventRecord[] } | undefined)?.Records ?? []).map((record) => {
    const rawKey = record.s3?.object?.key ?? '';
    return {
      eventName: record.eventName ?? '',
      bucket: record.s3?.bucket?.name ?? '',
      rawKey,
      objectKey: decodedEventKey(rawKey),
      bridged: false,
    };
  });
}

/**
 * ObjectCreated:* (EventBridge: Object Created) makes a new source;
 * ObjectRemoved:*, lifecycle expirations (EventBridge: Object Deleted, either way) end one.
 */
function changeOf(eventName: string): Change | undefined {
  if (eventName.startsWith('ObjectCreated:') || eventName === 'Object Created') return 'created';
  if (eventName.startsWith('ObjectRemoved:') || eventName.startsWith('LifecycleExpiration:') || eventName === 'Object Deleted')
    return 'removed';
  return undefined;
}

/**
 * The distinct URL keys an event's records change, in first-seen order.
 * Records this Lambda has nothing to do for (other event types, keys the
 * edge would never serve, records from the cache bucket itself, keys of the
 * default bucket that a mapped prefix hides, the management API's uploads
 * under its staging and quarantine prefixes) are returned apart, with the
 * reason, so the handler can log them.
 *
 * Records are not ordered by `sequencer`: every key is purged and invalidated
 * whatever happened last, and a key is warmed if any record created it
 * (warming a key that was then removed costs one logged 404). S3 sends one
 * record per notification to Lambda in practice.
 */
export function sourceChanges(
  event: SourceEvent | undefined,
  cacheBucket: string,
  sourceBuckets: PrefixBuckets,
): { changes: SourceChange[]; ignored: IgnoredRecord[] } {
  const byKey = new Map<string, SourceChange>();
  const ignored: IgnoredRecord[] = [];
  for (const { eventName, bucket, rawKey, objectKey, bridged } of notices(event)) {
    const ignore = (reason: string) => ignored.push({ eventName, rawKey, reason });

    const change = changeOf(eventName);
    if (!change) {
      ignore('not an object created or removed event');
      continue;
    }
    if (bucket === cacheBucket) {
      // A notification on the cache bucket would make this Lambda chase its own deletions.
      ignore('the event is from the cache bucket, not a source bucket');
      continue;
    }
    if (bridged && !Object.values(sourceBuckets).includes(bucket)) {
      // Any other bucket's key would be taken for the default bucket's, and purge the wrong variants.
      ignore(`the event is from bucket "${bucket}", which no prefix maps`);
      continue;
    }
    if (objectKey === undefined) {
      ignore('the key is not valid percent-encoded UTF-8');
      continue;
    }
    const mapped = urlKey(bucket, objectKey, sourceBuckets);
    if (mapped === undefined) {
      ignore('the key is under a prefix served from another bucket');
      continue;
    }
    if (mapped === objectKey && isUnservedKey(objectKey)) {
      // The management API's staging and quarantine objects: the origin serves no variant of them, and none is warmed.
      ignore('the key is under the staging, quarantine or imports prefix, not a source');
      continue;
    }
    let key: string;
    try {
      key = validateKey(mapped);
    } catch (error) {
      // A key the edge refuses (empty segment, "..", a folder marker ending in "/") has no variants.
      if (!isGrammarError(error)) throw error;
      ignore(error.message);
      continue;
    }
    const seen = byKey.get(key);
    if (seen) {
      seen.events.push(eventName);
      if (change === 'created') seen.change = 'created';
    } else {
      byKey.set(key, { key, change, events: [eventName] });
    }
  }
  return { changes: [...byKey.values()], ignored };
}
