// The source-changed Lambda: an S3 event notification from the source bucket
// in; the changed sources' variants deleted from the cache bucket, one
// CloudFront invalidation for all of them, and (for new sources) the eager
// presets requested once through the distribution.
//
// Order matters. Variants are deleted first, so that when CloudFront goes
// back to the origin after the invalidation, the cache bucket no longer has
// the old variant and the Lambda makes a new one. Warming comes last, and
// only for keys whose purge and invalidation succeeded.
//
// Failures: each key is purged whatever happens to the others, and the
// invalidation is sent even when a purge failed. Warming failures are logged
// and otherwise ignored. A failed purge or invalidation, though, would leave
// viewers with a stale image for as long as the (year-long) Cache-Control, so
// after doing everything it can the handler rejects: Lambda's asynchronous
// retries then run the event again (every step is idempotent), and a
// failure destination or DLQ keeps it if those fail too.

import { randomUUID } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import type { S3Event } from 'aws-lambda';
import type { InvalidationClient } from './cloudfront';
import type { InvalidateConfig } from './config';
import { sourceChanges, type Change, type IgnoredRecord } from './events';
import type { Logger } from './log';
import { coveringPaths, invalidationPath } from './paths';
import { deleteVariants, type DeleteError } from './purge';
import { warm, warmRequests, type Fetch, type WarmOutcome } from './warm';

export interface InvalidationDependencies {
  s3: S3Client;
  cloudFront: InvalidationClient;
  config: InvalidateConfig;
  log: Logger;
  /** How warming requests are made; the global fetch by default. */
  fetch?: Fetch;
}

export interface KeyReport {
  key: string;
  change: Change;
  deleted: number;
  errors: DeleteError[];
  failure?: string;
}

export interface InvalidationReport {
  keys: KeyReport[];
  ignored: IgnoredRecord[];
  /** The paths sent to CloudFront (none when no key changed). */
  paths: string[];
  invalidationId?: string;
  invalidationError?: string;
  warmed: WarmOutcome[];
}

/** Thrown after all the work is done when a purge or the invalidation failed, so Lambda retries the event. */
export class SourceChangeError extends Error {
  override name = 'SourceChangeError';
  constructor(
    message: string,
    readonly report: InvalidationReport,
  ) {
    super(message);
  }
}

export type InvalidationHandler = (event: S3Event) => Promise<InvalidationReport>;

/** Per-key errors logged in full; beyond this only their number. */
const LOGGED_ERRORS = 20;

function describe(error: unknown): string {
  const failure = error as { name?: string; message?: string };
  return `${failure.name ?? 'Error'}: ${failure.message ?? String(error)}`;
}

export function createInvalidationHandler({ s3, cloudFront, config, log, fetch = globalThis.fetch }: InvalidationDependencies): InvalidationHandler {
  return async function handle(event) {
    const { changes, ignored } = sourceChanges(event?.Records, config.cacheBucket);
    for (const record of ignored) log({ level: 'info', event: 'ignored', ...record });

    // 1. Delete each changed source's variants.
    const keys = await Promise.all(
      changes.map(async ({ key, change, events }): Promise<KeyReport> => {
        const purge = await deleteVariants(s3, config.cacheBucket, key);
        const failed = purge.failure !== undefined || purge.errors.length > 0;
        log({
          level: failed ? 'error' : 'info',
          event: failed ? 'purge_failed' : 'purged',
          key,
          change,
          events,
          bucket: config.cacheBucket,
          deleted: purge.deleted,
          ...(purge.errors.length ? { errorCount: purge.errors.length, errors: purge.errors.slice(0, LOGGED_ERRORS) } : {}),
          ...(purge.failure ? { failure: purge.failure } : {}),
        });
        return { key, change, ...purge };
      }),
    );

    // 2. One invalidation for every changed source.
    const report: InvalidationReport = { keys, ignored, paths: [], warmed: [] };
    if (changes.length > 0) {
      report.paths = coveringPaths(changes.map((change) => invalidationPath(change.key)));
      const callerReference = `${Date.now()}-${randomUUID()}`;
      try {
        const result = await cloudFront.createInvalidation({
          distributionId: config.distributionId,
          paths: report.paths,
          callerReference,
        });
        report.invalidationId = result.id;
        log({
          level: 'info',
          event: 'invalidated',
          distributionId: config.distributionId,
          invalidationId: result.id,
          status: result.status,
          paths: report.paths,
          callerReference,
        });
      } catch (error) {
        report.invalidationError = describe(error);
        log({
          level: 'error',
          event: 'invalidation_failed',
          distributionId: config.distributionId,
          paths: report.paths,
          callerReference,
          error: report.invalidationError,
        });
      }
    }

    // 3. Warm the eager presets of new sources whose old variants are gone everywhere.
    if (config.eagerPresets.length > 0) {
      const created = keys.filter((key) => key.change === 'created');
      const ready = created.filter((key) => key.failure === undefined && key.errors.length === 0 && !report.invalidationError);
      for (const key of created) {
        if (!ready.includes(key)) {
          log({ level: 'warn', event: 'warm_skipped', key: key.key, reason: 'its purge or the invalidation failed; a retry will warm it' });
        }
      }
      const requests = ready.flatMap((key) => warmRequests(key.key, config));
      report.warmed = await warm(requests, fetch, config.warmTimeoutMs, log);
    }

    const purgeFailures = keys.filter((key) => key.failure !== undefined || key.errors.length > 0);
    const failed = purgeFailures.length > 0 || report.invalidationError !== undefined;
    log({
      level: failed ? 'error' : 'info',
      event: 'source_changed',
      keys: keys.length,
      ignored: ignored.length,
      deleted: keys.reduce((total, key) => total + key.deleted, 0),
      purgeFailures: purgeFailures.length,
      invalidationId: report.invalidationId,
      invalidationFailed: report.invalidationError !== undefined,
      warmed: report.warmed.filter((outcome) => outcome.ok).length,
      warmFailures: report.warmed.filter((outcome) => !outcome.ok).length,
    });
    if (failed) {
      const reasons = [
        purgeFailures.length ? `the variants of ${purgeFailures.length} source(s) were not all deleted` : '',
        report.invalidationError ? `the CloudFront invalidation failed (${report.invalidationError})` : '',
      ].filter(Boolean);
      throw new SourceChangeError(`Source change not fully applied: ${reasons.join('; ')}.`, report);
    }
    return report;
  };
}
