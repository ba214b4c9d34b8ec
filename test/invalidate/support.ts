// Test doubles and builders for the invalidation Lambda. S3 is always the
// real LocalStack (test/support/s3.ts); CloudFront and the distribution's
// HTTP endpoint are the only things replaced, because LocalStack's free
// edition has neither: a recording InvalidationClient and a recording fetch.

import type { S3Client } from '@aws-sdk/client-s3';
import type { S3Event, S3EventRecord } from 'aws-lambda';
import { expect } from 'vitest';
import { encodeKeyPath } from '../../lambda/grammar';
import type { InvalidationClient, InvalidationRequest, InvalidationResult } from '../../lambda/invalidate/cloudfront';
import { invalidateConfig, type InvalidateConfig } from '../../lambda/invalidate/config';
import type { S3BridgeEvent } from '../../lambda/invalidate/events';
import { createInvalidationHandler } from '../../lambda/invalidate/handler';
import type { Fetch } from '../../lambda/invalidate/warm';

export const DISTRIBUTION_ID = 'E2QWRUHEXAMPLE';
export const DISTRIBUTION_ORIGIN = 'https://d111111abcdef8.cloudfront.net';

export function testConfig(cacheBucket: string, overrides: Partial<InvalidateConfig> = {}): InvalidateConfig {
  return invalidateConfig({ cacheBucket, distributionId: DISTRIBUTION_ID, distributionOrigin: DISTRIBUTION_ORIGIN }, overrides);
}

/**
 * A key as S3 writes it in an event: form-encoded, a space as '+', '/' kept.
 * `escapeAll` also escapes the characters encodeURIComponent leaves alone
 * (! ' ( ) * ~), as S3 may: either way must decode to the same key.
 */
export function s3EventKey(key: string, escapeAll = false): string {
  return key
    .split('/')
    .map((segment) => {
      const encoded = encodeURIComponent(segment).replace(/%20/g, '+');
      return escapeAll ? encoded.replace(/[!'()*~]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase()) : encoded;
    })
    .join('/');
}

export interface RecordSpec {
  eventName: string;
  /** The key as it appears in the event (already encoded; see s3EventKey). */
  rawKey: string;
  bucket?: string;
}

export function s3Event(records: RecordSpec[]): S3Event {
  return {
    Records: records.map(({ eventName, rawKey, bucket = 'source-bucket' }, index): S3EventRecord => ({
      eventVersion: '2.1',
      eventSource: 'aws:s3',
      awsRegion: 'us-east-1',
      eventTime: new Date().toISOString(),
      eventName,
      userIdentity: { principalId: 'EXAMPLE' },
      requestParameters: { sourceIPAddress: '127.0.0.1' },
      responseElements: { 'x-amz-request-id': `REQ${index}`, 'x-amz-id-2': 'EXAMPLE' },
      s3: {
        s3SchemaVersion: '1.0',
        configurationId: 'source-changed',
        bucket: { name: bucket, ownerIdentity: { principalId: 'EXAMPLE' }, arn: `arn:aws:s3:::${bucket}` },
        object: { key: rawKey, size: 1024, eTag: '0123456789abcdef0123456789abcdef', sequencer: `0A1B2C3D4E5F6${index}` },
      },
    })),
  };
}

/** An S3 event as EventBridge delivers it to a rule's Lambda target: one object, its key encoded as S3 would (s3EventKey). */
export function bridgeEvent(detailType: string, bucket: string, key: string): S3BridgeEvent {
  return {
    version: '0',
    id: '17793124-05d4-b198-2fde-7ededc63b103',
    'detail-type': detailType,
    source: 'aws.s3',
    account: '111122223333',
    time: new Date().toISOString(),
    region: 'us-east-1',
    resources: [`arn:aws:s3:::${bucket}`],
    detail: {
      version: '0',
      bucket: { name: bucket },
      object: { key: s3EventKey(key), size: 1024, etag: '0123456789abcdef0123456789abcdef', sequencer: '00617F08299329D189' },
      'request-id': 'N4N7GDK58NMKJ12R',
      requester: '123456789012',
      reason: detailType === 'Object Created' ? 'PutObject' : 'DeleteObject',
    },
  } as S3BridgeEvent;
}

/** One record per key, each key encoded as S3 would. */
export const created = (...keys: string[]) => keys.map((key) => ({ eventName: 'ObjectCreated:Put', rawKey: s3EventKey(key) }));
export const removed = (...keys: string[]) => keys.map((key) => ({ eventName: 'ObjectRemoved:Delete', rawKey: s3EventKey(key) }));

export interface RecordingCloudFront {
  client: InvalidationClient;
  calls: InvalidationRequest[];
}

/** Records every CreateInvalidation request; `answer` decides the outcome (success by default). */
export function recordingCloudFront(answer?: (request: InvalidationRequest) => Promise<InvalidationResult>): RecordingCloudFront {
  const calls: InvalidationRequest[] = [];
  return {
    calls,
    client: {
      async createInvalidation(request) {
        calls.push(structuredClone(request));
        return answer ? answer(request) : { id: `I${calls.length}EXAMPLE`, status: 'InProgress' };
      },
    },
  };
}

/**
 * CloudFront's limits on invalidations in progress (15 wildcard paths, 3,000
 * exact paths per distribution), as CreateInvalidation enforces them: a request
 * that would exceed either is refused with TooManyInvalidationsInProgress.
 * Invalidations stay in progress until `finish()`.
 */
export function limitedCloudFront(): RecordingCloudFront & { refused: number; finish(): void } {
  let inProgress: string[] = [];
  const recording = recordingCloudFront(async (request) => {
    const all = [...inProgress, ...request.paths];
    if (all.filter((path) => path.endsWith('*')).length > 15 || all.filter((path) => !path.endsWith('*')).length > 3000) {
      limited.refused++;
      throw Object.assign(
        new Error('Processing your request will cause you to exceed the maximum number of in-progress wildcard invalidations.'),
        {
          name: 'TooManyInvalidationsInProgress',
        },
      );
    }
    inProgress = all;
    return { id: `I${recording.calls.length}EXAMPLE`, status: 'InProgress' };
  });
  const limited = { ...recording, refused: 0, finish: () => void (inProgress = []) };
  return limited;
}

export interface FetchCall {
  url: string;
  headers: Record<string, string>;
}

export interface RecordingFetch {
  fetch: Fetch;
  calls: FetchCall[];
}

/** Records every warming request; `answer` makes the response (a small 200 image by default). */
export function recordingFetch(answer?: (call: FetchCall) => Response | Promise<Response>): RecordingFetch {
  const calls: FetchCall[] = [];
  return {
    calls,
    fetch: async (url, init) => {
      const call = { url, headers: { ...init.headers } };
      calls.push(call);
      if (answer) return answer(call);
      return new Response(new Uint8Array(123), {
        status: 200,
        headers: { 'content-type': 'image/webp', 'x-cache': 'Miss from cloudfront' },
      });
    },
  };
}

export type LogEntry = Record<string, unknown>;

export function recordingLog(): { log: (entry: LogEntry) => void; entries: LogEntry[]; events: (name: string) => LogEntry[] } {
  const entries: LogEntry[] = [];
  return {
    entries,
    log: (entry) => entries.push(JSON.parse(JSON.stringify(entry)) as LogEntry),
    events: (name) => entries.filter((entry) => entry.event === name),
  };
}

/**
 * CloudFront's invalidation path matching, as its Developer Guide states it,
 * written here apart from lambda/invalidate/paths.ts: a path starts with '/',
 * is at most 4000 characters, may hold '*' only as its last character (then
 * it matches every cache key it prefixes), and otherwise names one cache key;
 * the comparison is case-sensitive. Throws on a path CreateInvalidation would
 * refuse: any of those rules broken, a literal '~' (reported refused), a
 * character the guide says must be escaped left literal, or a broken escape.
 */
export function invalidates(paths: string[], cacheKey: string): boolean {
  for (const path of paths) {
    if (!path.startsWith('/') || path.length > 4000 || path.slice(0, -1).includes('*'))
      throw new Error(`invalid invalidation path ${path}`);
    if (/[^A-Za-z0-9\-_.!$&'()*+,:;=@/%]|%(?![0-9A-F]{2})/.test(path))
      throw new Error(`invalidation path with an unescaped character: ${path}`);
  }
  return paths.some((path) => matches(path, cacheKey));
}

function matches(path: string, cacheKey: string): boolean {
  return path.endsWith('*') ? cacheKey.startsWith(path.slice(0, -1)) : cacheKey === path;
}

/** Characters the guide wants literal in a path (RFC 1738's safe and reserved ones); all else is escaped, as UTF-8. */
const GUIDE_LITERAL = /[A-Za-z0-9\-_.!$&'()*+,:;=@/]/;

/** A URI as the guide spells it: every escape decoded, then only non-ASCII and RFC 1738's unsafe characters escaped. */
export function guideSpelling(uri: string): string {
  return [...decodeURIComponent(uri)]
    .map((character) =>
      GUIDE_LITERAL.test(character)
        ? character
        : [...Buffer.from(character)].map((byte) => '%' + byte.toString(16).toUpperCase().padStart(2, '0')).join(''),
    )
    .join('');
}

/**
 * How CloudFront may compare an invalidation path with a cached variant's
 * canonical URI; its guide does not say. `byte`: as they are. `stored`: the
 * cache key kept in the guide's spelling. `normalised`: both brought to the
 * guide's spelling (the wildcard parsed first).
 */
export const READINGS = {
  byte: (paths: string[], uri: string) => invalidates(paths, uri),
  stored: (paths: string[], uri: string) => invalidates(paths, guideSpelling(uri)),
  normalised: (paths: string[], uri: string) => {
    invalidates(paths, uri); // the paths as sent must be valid
    const normalised = paths.map((path) => (path.endsWith('*') ? guideSpelling(path.slice(0, -1)) + '*' : guideSpelling(path)));
    return normalised.some((path) => matches(path, guideSpelling(uri)));
  },
};
export type Reading = keyof typeof READINGS;

/** Where a key's own variants stay out of reach in a reading: '~' is never sent literal, '*' never literal before the end. */
export function unreachable(key: string, reading: Reading): boolean {
  return (reading === 'byte' && key.includes('~')) || (reading === 'stored' && key.includes('*'));
}

/** The canonical URI CloudFront caches a cache-bucket variant under: its source key encoded, then its ops. */
export function variantUri(variantKey: string): string {
  const slash = variantKey.lastIndexOf('/');
  return encodeKeyPath(variantKey.slice(0, slash)) + variantKey.slice(slash);
}

/**
 * That CloudFront, matching `paths` in each way it may read spellings, drops
 * the cached copies of the `own` variants, [source key, canonical URI], where
 * that reading allows, and not one of the `others` (canonical URIs).
 */
export function expectExactly(paths: string[], own: [string, string][], others: string[]): void {
  for (const reading of Object.keys(READINGS) as Reading[]) {
    for (const [source, uri] of own) expect(READINGS[reading](paths, uri), `${reading}: ${uri}`).toBe(!unreachable(source, reading));
    for (const uri of others) expect(READINGS[reading](paths, uri), `${reading}: ${uri}`).toBe(false);
  }
}

/** The invalidation Lambda's handler as deployed, on a test's buckets (an origin's), with a recording CloudFront and log. */
export function invalidationOf(buckets: { s3: S3Client; cacheBucket: string }, overrides: Partial<InvalidateConfig> = {}) {
  const cloudFront = recordingCloudFront();
  const logs = recordingLog();
  const config = testConfig(buckets.cacheBucket, overrides);
  const handle = createInvalidationHandler({ s3: buckets.s3, cloudFront: cloudFront.client, config, log: logs.log });
  return { handle, cloudFront, logs };
}
