// The one purge: what CloudFront and the cache bucket hold of some sources,
// invalidated and deleted. The invalidation Lambda runs it when a source
// changes (handler.ts); an operator runs it by hand (`npm run purge`).
//
// A pass lists each source's variants, sends one CloudFront invalidation for
// them all, then deletes what it listed. Invalidating first keeps the
// variants findable: if CloudFront refuses (TooManyInvalidationsInProgress
// during a bulk change), nothing is deleted, the caller fails, and its retry
// lists the same variants again. Deleted first, they would be gone, and a
// retry that invalidates the variants it finds would find none: CloudFront
// would keep the old image as long as its Cache-Control allows (a year).
//
// The price is a window: an edge may act on the invalidation before the
// delete lands (one S3 call later) and fetch the old variant from the cache
// bucket again. With `settle`, a second pass, once every miss that may have
// read an old source is over, lists again and invalidates what it finds
// together with the first pass's paths. That invalidation comes after the
// first delete, so it removes what an edge fetched in the window as well as
// what a racing miss stored. Without `settle`, running the purge again does
// the same.
//
// Failures are reported, never thrown: each source is purged whatever happens
// to the others, and the caller decides (the Lambda rejects so that Lambda
// retries it; the command exits 1). Every step is safe to repeat.

import { randomUUID } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import { describeError, type Logger } from '../common/log';
import type { InvalidationClient } from './cloudfront';
import { EVERYTHING, foldedWildcards, invalidationPaths, overLimit, type FoundVariants } from './paths';
import { deleteKeys, listVariants, type DeleteResult } from './variants';

/** A source to purge; its other fields go into its `purged` log line (the Lambda's change and events). */
export interface PurgeSource {
  key: string;
}

export interface PurgeOptions {
  s3: S3Client;
  cacheBucket: string;
  /** Where and how to invalidate; without it the variants are only deleted. */
  invalidation?: {
    cloudFront: InvalidationClient;
    distributionId: string;
    /**
     * `exact`: the URIs of the variants found, a source's wildcards only where
     * they are unknown or too many, and nothing for a source without variants
     * (paths.ts). `wildcard`: `/<key>/*` for every source, which also reaches
     * copies CloudFront holds that the cache bucket no longer has. `everything`:
     * `/*`, the whole distribution, only ever when a person asks for it.
     */
    paths: 'exact' | 'wildcard' | 'everything';
    /** Begins each caller reference, so CloudFront's history says who asked. */
    reference: string;
  };
  log?: Logger;
  /** Resolves when the second pass may run; one pass without it. */
  settle?: () => Promise<void>;
}

/** What became of one source. `failure` is a whole S3 call that failed, listing or deleting. */
export interface SourcePurge extends DeleteResult {
  key: string;
}

export interface PurgeReport {
  /** One per source, in the order given. */
  sources: SourcePurge[];
  /** The paths sent to CloudFront, every pass's. */
  paths: string[];
  invalidationId?: string;
  invalidationError?: string;
}

/** Whether some of a source's variants may still be in the cache bucket. */
export function purgeFailed(source: SourcePurge): boolean {
  return source.failure !== undefined || source.errors.length > 0;
}

/** Per-source errors logged in full; beyond this only their number. */
const LOGGED_ERRORS = 20;

const TILDE =
  "CloudFront refuses a literal '~' in an invalidation path, so the paths spell it %7E; the cache key has it literal, " +
  'and CloudFront may not match the two: its variants can stay at the edge until their Cache-Control ends';

function pathsFor(mode: 'exact' | 'wildcard' | 'everything', found: FoundVariants[]): string[] {
  if (mode === 'everything') return [EVERYTHING];
  return mode === 'exact' ? invalidationPaths(found) : foldedWildcards(found.map(({ key }) => key));
}

/** One invalidation for the paths of what was found; false when it was not made (nothing may be deleted then). */
async function invalidateFound(
  found: FoundVariants[],
  pass: number,
  invalidation: NonNullable<PurgeOptions['invalidation']>,
  report: PurgeReport,
  log: Logger,
): Promise<boolean> {
  const { cloudFront, distributionId } = invalidation;
  const paths = pathsFor(invalidation.paths, found);
  if (paths.length === 0) {
    log({ level: 'info', event: 'nothing_to_invalidate', pass, reason: 'no variant of these sources was found in the cache bucket' });
    return true;
  }
  if (pass === 1 && invalidation.paths !== 'everything') {
    for (const { key } of found.filter(({ key }) => key.includes('~')))
      log({ level: 'warn', event: 'invalidation_unconfirmed', key, reason: TILDE });
  }
  const tooMany = overLimit(paths);
  if (tooMany) {
    // CloudFront would refuse it, and wider paths would reach other sources' variants.
    report.invalidationError ??= tooMany;
    const reason = 'nothing is deleted; purge fewer sources at once';
    log({ level: 'error', event: 'invalidation_failed', pass, distributionId, paths, error: tooMany, reason });
    return false;
  }
  const callerReference = `${invalidation.reference}-${Date.now()}-${randomUUID()}`;
  try {
    const answer = await cloudFront.createInvalidation({ distributionId, paths, callerReference });
    report.invalidationId = answer.id;
    report.paths.push(...paths.filter((path) => !report.paths.includes(path)));
    log({
      level: 'info',
      event: 'invalidated',
      pass,
      distributionId,
      invalidationId: answer.id,
      status: answer.status,
      paths,
      callerReference,
    });
    return true;
  } catch (error) {
    report.invalidationError ??= describeError(error);
    log({
      level: 'error',
      event: 'invalidation_failed',
      pass,
      distributionId,
      paths,
      callerReference,
      error: describeError(error),
      // Deleting them now would leave a retry nothing to find, and so nothing to invalidate.
      reason: 'the variants stay in the cache bucket until a retry invalidates them',
    });
    return false;
  }
}

export async function purgeSources(sources: readonly PurgeSource[], options: PurgeOptions): Promise<PurgeReport> {
  const { s3, cacheBucket, invalidation, log = () => {}, settle } = options;
  const report: PurgeReport = { sources: sources.map(({ key }) => ({ key, deleted: 0, errors: [] })), paths: [] };

  /** 1. Lists each source's variants: what CloudFront can hold of it. */
  function find(): Promise<FoundVariants[]> {
    return Promise.all(
      sources.map(async ({ key }, index) => {
        const listed = await listVariants(s3, cacheBucket, key);
        if (listed.failure) report.sources[index]!.failure ??= listed.failure;
        // A list cut short is unknown: that source gets its wildcard paths.
        return { key, variants: listed.failure ? undefined : listed.keys };
      }),
    );
  }

  /** 2. One invalidation for every path; false when it was not made. */
  const invalidate = (found: FoundVariants[], pass: number) =>
    invalidation ? invalidateFound(found, pass, invalidation, report, log) : true;

  /** 3. Deletes what was found. */
  function remove(found: FoundVariants[], pass: number): Promise<void[]> {
    return Promise.all(
      sources.map(async (source, index) => {
        const purged = await deleteKeys(s3, cacheBucket, found[index]!.variants ?? []);
        const sourceReport = report.sources[index]!;
        sourceReport.deleted += purged.deleted;
        sourceReport.errors.push(...purged.errors);
        if (purged.failure) sourceReport.failure ??= purged.failure;
        const failure = purged.failure ?? (found[index]!.variants ? undefined : sourceReport.failure);
        const failed = failure !== undefined || purged.errors.length > 0;
        log({
          level: failed ? 'error' : 'info',
          event: failed ? 'purge_failed' : 'purged',
          pass,
          ...source,
          bucket: cacheBucket,
          deleted: purged.deleted,
          ...(purged.errors.length ? { errorCount: purged.errors.length, errors: purged.errors.slice(0, LOGGED_ERRORS) } : {}),
          ...(failure ? { failure } : {}),
        });
      }),
    );
  }

  if (sources.length === 0 && invalidation?.paths !== 'everything') return report;
  const first = await find();
  if (!(await invalidate(first, 1))) return report;
  await remove(first, 1);
  if (!settle) return report;

  log({ level: 'info', event: 'settling', keys: sources.length });
  await settle();
  const second = await find();
  // The first pass's paths again: this invalidation is the first to follow the first delete.
  const both = second.map(({ key, variants }, index) => {
    const before = first[index]!.variants;
    return { key, variants: variants && before ? [...before, ...variants] : undefined };
  });
  if (await invalidate(both, 2)) await remove(second, 2);
  return report;
}
