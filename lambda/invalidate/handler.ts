// The source-changed Lambda: an S3 event notification from the source bucket
// in; the changed sources' variants deleted from the cache bucket, one
// CloudFront invalidation for all of them, and (for new sources) the eager
// presets requested once through the distribution.
//
// Order matters. Variants are deleted first, so that when CloudFront goes
// back to the origin after the invalidation, the cache bucket no longer has
// the old variant and the Lambda makes a new one. A miss that read the old
// source just before the change may still be running, though: it would store
// its variant after the purge, and CloudFront could cache its answer after the
// invalidation. So, with SETTLE_MS, once such a miss must be over, both are
// done again. Warming comes last, and only for keys whose purges and
// invalidations succeeded.
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
import { sourceChanges, type Change, type IgnoredRecord, type SourceChange } from './events';
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
  /**
   * Resolves once every miss that may have read an old source is over, when the
   * second purge and invalidation may run. By default a wait of `config.settleMs`
   * (no second pass when unset); the emulator knows exactly which misses are running.
   */
  settle?: () => Promise<void>;
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

export function createInvalidationHandler({ s3, cloudFront, config, log, fetch = globalThis.fetch, settle }: InvalidationDependencies): InvalidationHandler {
  const settled = settle ?? (config.settleMs ? () => new Promise<void>((resolve) => setTimeout(resolve, config.settleMs)) : undefined);

  /** 1. Deletes each changed source's variants. */
  function purge(changes: SourceChange[], pass: number): Promise<KeyReport[]> {
    return Promise.all(
      changes.map(async ({ key, change, events }): Promise<KeyReport> => {
        const purged = await deleteVariants(s3, config.cacheBucket, key);
        const failed = purged.failure !== undefined || purged.errors.length > 0;
        log({
          level: failed ? 'error' : 'info',
          event: failed ? 'purge_failed' : 'purged',
          pass,
          key,
          change,
          events,
          bucket: config.cacheBucket,
          deleted: purged.deleted,
          ...(purged.errors.length ? { errorCount: purged.errors.length, errors: purged.errors.slice(0, LOGGED_ERRORS) } : {}),
          ...(purged.failure ? { failure: purged.failure } : {}),
        });
        return { key, change, ...purged };
      }),
    );
  }

  /** 2. One invalidation for every changed source; its outcome goes into the report. */
  async function invalidate(report: InvalidationReport, pass: number): Promise<void> {
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
        pass,
        distributionId: config.distributionId,
        invalidationId: result.id,
        status: result.status,
        paths: report.paths,
        callerReference,
      });
    } catch (error) {
      report.invalidationError ??= describe(error);
      log({
        level: 'error',
        event: 'invalidation_failed',
        pass,
        distributionId: config.distributionId,
        paths: report.paths,
        callerReference,
        error: describe(error),
      });
    }
  }

  return async function handle(event) {
    const { changes, ignored } = sourceChanges(event?.Records, config.cacheBucket);
    for (const record of ignored) log({ level: 'info', event: 'ignored', ...record });

    const keys = await purge(changes, 1);
    const report: InvalidationReport = { keys, ignored, paths: [], warmed: [] };
    if (changes.length > 0) {
      report.paths = coveringPaths(changes.map((change) => invalidationPath(change.key)));
      await invalidate(report, 1);
      if (settled) {
        // 3. Once every miss that may have read an old source is over: its variant and CloudFront's copy go too.
        log({ level: 'info', event: 'settling', ms: config.settleMs, keys: keys.length });
        await settled();
        const again = await purge(changes, 2);
        again.forEach((second, index) => {
          const first = keys[index]!;
          first.deleted += second.deleted;
          first.errors.push(...second.errors);
          first.failure ??= second.failure;
        });
        await invalidate(report, 2);
      }
    }

    // 4. Warm the eager presets of new sources whose old variants are gone everywhere.
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
