// The source-changed Lambda: an S3 event notification from the source bucket
// in; the changed sources' variants invalidated in CloudFront and deleted
// from the cache bucket, and (for new sources) the eager presets requested
// once through the distribution.
//
// One pass: list each source's variants, invalidate exactly those URIs (one
// CloudFront invalidation for the event, see paths.ts), then delete them.
// Listing first gives the exact paths; deleting last keeps them findable: if
// CloudFront refuses the invalidation (TooManyInvalidationsInProgress during
// a bulk change), nothing is deleted, the handler rejects, and the retry
// lists the same variants again. Deleted right after the invalidation is
// sent, they are gone before any edge has acted on it, so CloudFront's next
// request finds nothing old in the cache bucket and the Lambda makes a new
// variant.
//
// A miss that read the old source just before the change may still be
// running, though: it would store its variant after the purge, and CloudFront
// could cache its answer after the invalidation. So, with SETTLE_MS, once
// such a miss must be over, a second pass lists again and invalidates what it
// finds together with the first pass's paths. Warming comes last, and only
// for keys whose purges and invalidations succeeded.
//
// Failures: each key is listed and purged whatever happens to the others.
// Warming failures are logged and otherwise ignored. A failed purge or
// invalidation, though, would leave viewers with a stale image, so after
// doing everything it can the handler rejects: Lambda's asynchronous retries
// then run the event again (every step is idempotent), and the failure queue
// keeps the event if those fail too (`npm run replay-invalidations`).

import { randomUUID } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import type { S3Event } from 'aws-lambda';
import type { InvalidationClient } from './cloudfront';
import type { InvalidateConfig } from './config';
import { sourceChanges, type Change, type IgnoredRecord, type SourceChange } from './events';
import { describeError, type Logger } from '../common/log';
import { invalidationPaths, type FoundVariants } from './paths';
import { deleteKeys, listVariants, type DeleteError } from './purge';
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
  /** The paths sent to CloudFront, every pass's (none when no changed source had variants). */
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

export function createInvalidationHandler({ s3, cloudFront, config, log, fetch = globalThis.fetch, settle }: InvalidationDependencies): InvalidationHandler {
  const settled = settle ?? (config.settleMs ? () => new Promise<void>((resolve) => setTimeout(resolve, config.settleMs)) : undefined);

  /** 1. Lists each changed source's variants: what CloudFront can hold of it. */
  function find(changes: SourceChange[], reports: KeyReport[]): Promise<FoundVariants[]> {
    return Promise.all(
      changes.map(async ({ key }, index) => {
        const listed = await listVariants(s3, config.cacheBucket, key);
        if (listed.failure) reports[index]!.failure ??= listed.failure;
        // A list cut short is unknown: that source gets its wildcard path.
        return { key, variants: listed.failure ? undefined : listed.keys };
      }),
    );
  }
  /** 2. One invalidation for every path; false when CloudFront refused it. */
  async function invalidate(result: InvalidationReport, paths: string[], pass: number): Promise<boolean> {
    if (paths.length === 0) {
      log({ level: 'info', event: 'nothing_to_invalidate', pass, reason: 'no variant of these sources was found in the cache bucket' });
      return true;
    }
    const callerReference = `${Date.now()}-${randomUUID()}`;
    try {
      const answer = await cloudFront.createInvalidation({ distributionId: config.distributionId, paths, callerReference });
      result.invalidationId = answer.id;
      result.paths.push(...paths.filter((path) => !result.paths.includes(path)));
      log({
        level: 'info',
        event: 'invalidated',
        pass,
        distributionId: config.distributionId,
        invalidationId: answer.id,
        status: answer.status,
        paths,
        callerReference,
      });
      return true;
    } catch (error) {
      result.invalidationError ??= describeError(error);
      log({
        level: 'error',
        event: 'invalidation_failed',
        pass,
        distributionId: config.distributionId,
        paths,
        callerReference,
        error: describeError(error),
        // Deleting them now would leave a retry nothing to find, and so nothing to invalidate.
        reason: 'the variants stay in the cache bucket until a retry invalidates them',
      });
      return false;
    }
  }

  /** 3. Deletes what was found. */
  function purge(changes: SourceChange[], found: FoundVariants[], reports: KeyReport[], pass: number): Promise<void[]> {
    return Promise.all(
      changes.map(async ({ key, change, events }, index) => {
        const purged = await deleteKeys(s3, config.cacheBucket, found[index]!.variants ?? []);
        const keyReport = reports[index]!;
        keyReport.deleted += purged.deleted;
        keyReport.errors.push(...purged.errors);
        if (purged.failure) keyReport.failure ??= purged.failure;
        const failure = purged.failure ?? (found[index]!.variants ? undefined : keyReport.failure);
        const failed = failure !== undefined || purged.errors.length > 0;
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
          ...(failure ? { failure } : {}),
        });
      }),
    );
  }

  return async function handle(event) {
    const { changes, ignored } = sourceChanges(event?.Records, config.cacheBucket);
    for (const record of ignored) log({ level: 'info', event: 'ignored', ...record });

    const keys: KeyReport[] = changes.map(({ key, change }) => ({ key, change, deleted: 0, errors: [] }));
    const result: InvalidationReport = { keys, ignored, paths: [], warmed: [] };
    if (changes.length > 0) {
      const first = await find(changes, keys);
      if (await invalidate(result, invalidationPaths(first), 1)) {
        await purge(changes, first, keys, 1);
        if (settled) {
          // Once every miss that may have read an old source is over: what it stored, and
          // anything CloudFront cached from it after the first invalidation, go too.
          log({ level: 'info', event: 'settling', ms: config.settleMs, keys: keys.length });
          await settled();
          const second = await find(changes, keys);
          const both = second.map(({ key, variants }, index) => {
            const before = first[index]!.variants;
            return { key, variants: variants && before ? [...before, ...variants] : undefined };
          });
          if (await invalidate(result, invalidationPaths(both), 2)) await purge(changes, second, keys, 2);
        }
      }
    }

    // 4. Warm the eager presets of new sources whose old variants are gone everywhere.
    if (config.eagerPresets.length > 0) {
      const created = keys.filter((key) => key.change === 'created');
      const ready = created.filter((key) => key.failure === undefined && key.errors.length === 0 && !result.invalidationError);
      for (const key of created) {
        if (!ready.includes(key)) {
          log({ level: 'warn', event: 'warm_skipped', key: key.key, reason: 'its purge or the invalidation failed; a retry will warm it' });
        }
      }
      const requests = ready.flatMap((key) => warmRequests(key.key, config));
      result.warmed = await warm(requests, fetch, config.warmTimeoutMs, log);
    }

    const purgeFailures = keys.filter((key) => key.failure !== undefined || key.errors.length > 0);
    const failed = purgeFailures.length > 0 || result.invalidationError !== undefined;
    log({
      level: failed ? 'error' : 'info',
      event: 'source_changed',
      keys: keys.length,
      ignored: ignored.length,
      deleted: keys.reduce((total, key) => total + key.deleted, 0),
      purgeFailures: purgeFailures.length,
      invalidationId: result.invalidationId,
      invalidationFailed: result.invalidationError !== undefined,
      warmed: result.warmed.filter((outcome) => outcome.ok).length,
      warmFailures: result.warmed.filter((outcome) => !outcome.ok).length,
    });
    if (failed) {
      const reasons = [
        purgeFailures.length ? `the variants of ${purgeFailures.length} source(s) were not all deleted` : '',
        result.invalidationError ? `the CloudFront invalidation failed (${result.invalidationError})` : '',
      ].filter(Boolean);
      throw new SourceChangeError(`Source change not fully applied: ${reasons.join('; ')}.`, result);
    }
    return result;
  };
}
