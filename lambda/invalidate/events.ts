// S3 event notifications -> the source keys that changed. S3 writes an event's
// object key form-encoded (a space is '+', a literal '+' is '%2B', other bytes
// are UTF-8 percent escapes), so it is decoded here before anything else sees it.

import type { S3EventRecord } from 'aws-lambda';
import { isGrammarError, validateKey } from '../grammar';

export type Change = 'created' | 'removed';

export interface SourceChange {
  /** The source key, decoded. */
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

/** Decodes an S3 event key: `+` is a space and `%XX` are UTF-8 bytes, as in a form. */
export function decodeEventKey(rawKey: string): string {
  return decodeURIComponent(rawKey.replace(/\+/g, '%20'));
}

/** ObjectCreated:* makes a new source; ObjectRemoved:* and lifecycle expirations end one. */
function changeOf(eventName: string): Change | undefined {
  if (eventName.startsWith('ObjectCreated:')) return 'created';
  if (eventName.startsWith('ObjectRemoved:') || eventName.startsWith('LifecycleExpiration:')) return 'removed';
  return undefined;
}

/**
 * The distinct source keys an event's records change, in first-seen order.
 * Records this Lambda has nothing to do for (other event types, keys the
 * edge would never serve, records from the cache bucket itself) are returned
 * apart, with the reason, so the handler can log them.
 *
 * Records are not ordered by `sequencer`: every key is purged and invalidated
 * whatever happened last, and a key is warmed if any record created it
 * (warming a key that was then removed costs one logged 404). S3 sends one
 * record per notification to Lambda in practice.
 */
export function sourceChanges(
  records: S3EventRecord[] | undefined,
  cacheBucket: string,
): { changes: SourceChange[]; ignored: IgnoredRecord[] } {
  const byKey = new Map<string, SourceChange>();
  const ignored: IgnoredRecord[] = [];
  for (const record of records ?? []) {
    const eventName = record.eventName ?? '';
    const rawKey = record.s3?.object?.key ?? '';
    const ignore = (reason: string) => ignored.push({ eventName, rawKey, reason });

    const change = changeOf(eventName);
    if (!change) {
      ignore('not an object created or removed event');
      continue;
    }
    if (record.s3?.bucket?.name === cacheBucket) {
      // A notification on the cache bucket would make this Lambda chase its own deletions.
      ignore('the event is from the cache bucket, not a source bucket');
      continue;
    }
    let key: string;
    try {
      key = validateKey(decodeEventKey(rawKey));
    } catch (error) {
      // A key the edge refuses (empty segment, "..", a folder marker ending in "/") has no variants.
      ignore(isGrammarError(error) ? error.message : `the key is not valid percent-encoded UTF-8`);
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
