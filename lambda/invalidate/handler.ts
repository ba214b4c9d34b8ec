// The source-changed Lambda: an S3 event notification from the source bucket,
// or an EventBridge S3 event from a bucket mapped to a prefix, in; the changed sources' variants invalidated in CloudFront and deleted
// from the cache bucket, and (for new sources) the eager presets requested
// once through the distribution.
//
// The purge is purge.ts's, by exact paths: list each source's variants,
// invalidate exactly those URIs (one CloudFront invalidation for the event,
// see paths.ts), then delete them; with SETTLE_MS, once a miss that read the
// old source must be over, a second pass (purge.ts says why). Warming comes
// last, and only for keys whose purges and invalidations succeeded.
//
// Failures: each key is listed and purged whatever happens to the others.
// Warming failures are logged and otherwise ignored. A failed purge or
// invalidation, though, would leave viewers with a stale image, so after
// doing everything it can the handler rejects: Lambda's asynchronous retries
// then run the event again (every step is idempotent), and the failure queue
// keeps the event if those fail too (`npm run replay-invalidations`).

import type { S3Client } from '@aws-sdk/client-s3';
import type { InvalidationClient } from './cloudfront';
import type { InvalidateConfig } from './config';
import { sourceChanges, type Change, type IgnoredRecord, type SourceEvent } from './events';
import type { Logger } from '../common/log';
import { purgeFailed, purgeSources, type SourcePurge } from './purge';
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

export interface KeyReport extends SourcePurge {
  change: Change;
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

export type InvalidationHandler = (event: SourceEvent) => Promise<InvalidationReport>;

export function createInvalidationHandler({
  s3,
  cloudFront,
  config,
  log,
  fetch = globalThis.fetch,
  settle,
}: InvalidationDependencies): InvalidationHandler {
  const settled = settle ?? (config.settleMs ? () => new Promise<void>((resolve) => setTimeout(resolve, config.settleMs)) : undefined);

  return async function handle(event) {
    const { changes, ignored } = sourceChanges(event, config.cacheBucket, config.sourceBuckets);
    for (const record of ignored) log({ level: 'info', event: 'ignored', ...record });

    const { sources, ...invalidationResult } = await purgeSources(changes, {
      s3,
      cacheBucket: config.cacheBucket,
      invalidation: { cloudFront, distributionId: config.distributionId, paths: 'exact', reference: 'source-change' },
      log,
      settle: settled,
    });
    const keys: KeyReport[] = changes.map(({ change }, index) => ({ ...sources[index]!, change }));
    const result: InvalidationReport = { keys, ignored, ...invalidationResult, warmed: [] };

    // Warm the eager presets of new sources whose old variants are gone everywhere.
    if (config.eagerPresets.length > 0) {
      const created = keys.filter((key) => key.change === 'created');
      const ready = created.filter((key) => !purgeFailed(key) && !result.invalidationError);
      for (const key of created) {
        if (!ready.includes(key)) {
          log({ level: 'warn', event: 'warm_skipped', key: key.key, reason: 'its purge or the invalidation failed; a retry will warm it' });
        }
      }
      const requests = ready.flatMap((key) => warmRequests(key.key, config));
      result.warmed = await warm(requests, fetch, config.warmTimeoutMs, log);
    }

    const purgeFailures = keys.filter(purgeFailed);
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
