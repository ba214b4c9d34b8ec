// `npm run purge -- [options] <source-key> [<source-key> ...]`
//
// Purges sources by hand with the invalidation Lambda's purge
// (lambda/invalidate/purge.ts), in its order: list each source's variants,
// one CloudFront invalidation, then delete what was listed. Unlike the
// Lambda, it invalidates the wildcard /<key>/* per source, which also reaches
// copies CloudFront holds that the cache bucket no longer has; with
// --everything, /* instead, the only way this project ever sends it. For when
// a variant must go now: a source replaced while the Lambda was failing, a
// bad deploy's variants, a takedown. Reports per key what succeeded and what
// failed; exits 1 if anything failed, 2 on a usage error.

import { parseArgs } from 'node:util';
import { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import { S3Client } from '@aws-sdk/client-s3';
import { decodeKeyPath, isGrammarError, validateKey } from '../lambda/grammar';
import { cloudFrontInvalidations, type InvalidationClient } from '../lambda/invalidate/cloudfront';
import { covers, EVERYTHING, sourceWildcards } from '../lambda/invalidate/paths';
import { purgeFailed, purgeSources, type SourcePurge } from '../lambda/invalidate/purge';
import { deleteKeys, listVariants } from '../lambda/invalidate/variants';
import { webVariantPrefix } from '../lambda/origin/cache-keys';
import { localS3Client } from '../local/harness/s3-client';
import { UsageError } from '../local/harness/command-line';
import { operatorMain, runIfMain } from './operator-command';

export const USAGE = `usage: npm run purge -- [options] <source-key> [<source-key> ...]
       npm run purge -- [options] --everything [<source-key> ...]

Invalidates each source in CloudFront (one invalidation, /<key>/* per source;
more than 15 sources of one folder are folded into /<folder>/*), then deletes
its variants from the cache bucket, and reports per key.

A source key is the object key in the source bucket, as is ("photos/my cat.jpg";
in a bucket of sourceBuckets, after its prefix: "archive/2020/a.jpg"), or the
image's URL or URL path, percent-encoded ("/photos/my%20cat.jpg",
"https://img.example.com/photos/my%20cat.jpg?w=640").

options:
  --cache-bucket NAME      the cache bucket (stack output CacheBucketName; or $CACHE_BUCKET)
  --distribution-id ID     the distribution (stack output DistributionId; or $DISTRIBUTION_ID)
  --no-invalidation        delete the variants only (e.g. against LocalStack, which has no CloudFront)
  --everything             invalidate /*, every cached response of the distribution (source keys optional)
  --endpoint URL           an S3 endpoint such as LocalStack's (path-style, test credentials)
  --region REGION          the cache bucket's region (default: the AWS SDK's)
  -h, --help               this text

exit status: 0 when every key was purged and invalidated, 1 when anything failed, 2 on a usage error.`;

export interface PurgeOptions {
  cacheBucket: string;
  /** Absent with --no-invalidation. */
  distributionId?: string;
  /** --everything: invalidate /* rather than the keys' paths. */
  everything: boolean;
  keys: string[];
  endpoint?: string;
  region?: string;
}

export interface KeyOutcome {
  /** As given on the command line. */
  arg: string;
  /** The source key it names; absent when it names none. */
  key?: string;
  /** Why the argument names no source key. */
  invalid?: string;
  purge?: SourcePurge;
  /** The wildcard paths of this key's variants (covered by the invalidation's paths). */
  paths?: string[];
}

export interface PurgeReport {
  keys: KeyOutcome[];
  /** The paths sent to CloudFront; empty without invalidation or when no key was valid. */
  paths: string[];
  invalidationId?: string;
  invalidationError?: string;
  ok: boolean;
}

export interface PurgeDependencies {
  s3: S3Client;
  /** Absent with --no-invalidation. */
  cloudFront?: InvalidationClient;
}

/** Options from the command line (and $CACHE_BUCKET / $DISTRIBUTION_ID); `undefined` for --help. */
export function parsePurgeArgs(argv: string[], env: Record<string, string | undefined> = process.env): PurgeOptions | undefined {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        'cache-bucket': { type: 'string' },
        'distribution-id': { type: 'string' },
        'no-invalidation': { type: 'boolean' },
        everything: { type: 'boolean' },
        endpoint: { type: 'string' },
        region: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return undefined;
  const cacheBucket = values['cache-bucket'] ?? env.CACHE_BUCKET;
  if (!cacheBucket) throw new UsageError('the cache bucket is needed: --cache-bucket NAME (or $CACHE_BUCKET).');
  const distributionId = values['distribution-id'] ?? env.DISTRIBUTION_ID;
  if (values['no-invalidation'] && values['distribution-id']) {
    throw new UsageError('--no-invalidation and --distribution-id contradict each other.');
  }
  if (!values['no-invalidation'] && !distributionId) {
    throw new UsageError('the distribution is needed: --distribution-id ID (or $DISTRIBUTION_ID), or --no-invalidation.');
  }
  if (values['no-invalidation'] && values.everything) throw new UsageError('--no-invalidation and --everything contradict each other.');
  if (positionals.length === 0 && !values.everything) throw new UsageError('name at least one source key (or --everything).');
  if (values.endpoint && !/^https?:\/\/[^/]/.test(values.endpoint)) {
    throw new UsageError(`--endpoint must be an http(s) URL, not ${JSON.stringify(values.endpoint)}.`);
  }
  return {
    cacheBucket,
    distributionId: values['no-invalidation'] ? undefined : distributionId,
    everything: values.everything ?? false,
    keys: positionals,
    endpoint: values.endpoint,
    region: values.region,
  };
}

/** The source key an argument names: a key as is, or a URL / URL path, percent-decoded. */
export function sourceKeyOf(arg: string): string {
  if (/^https?:\/\//i.test(arg)) {
    let url: URL;
    try {
      url = new URL(arg);
    } catch {
      throw new UsageError(`${JSON.stringify(arg)} is not a URL.`);
    }
    return decodeKeyPath(url.pathname);
  }
  if (arg.startsWith('/')) return decodeKeyPath(arg);
  return validateKey(arg);
}

/**
 * Deletes what the cache bucket holds of `key` as a web origin's source: its variants are kept
 * under `/` (lambda/origin/web/variants.ts), where no CloudFront path reaches them, and the origin
 * serves them until it asks the site again. Which prefixes are web origins is not known here, so
 * every key is looked up there too: one more listing.
 */
async function purgeWebVariants(s3: S3Client, cacheBucket: string, key: string, report: SourcePurge): Promise<void> {
  const listed = await listVariants(s3, cacheBucket, webVariantPrefix(key));
  const removed = await deleteKeys(s3, cacheBucket, listed.keys);
  report.deleted += removed.deleted;
  report.errors.push(...removed.errors);
  report.failure ??= listed.failure ?? removed.failure;
}

/** Purges every key (each whatever happens to the others) with one invalidation for all. */
export async function purge(options: PurgeOptions, deps: PurgeDependencies): Promise<PurgeReport> {
  const keys: KeyOutcome[] = options.keys.map((arg) => {
    try {
      return { arg, key: sourceKeyOf(arg) };
    } catch (error) {
      if (isGrammarError(error) || error instanceof UsageError) return { arg, invalid: error.message };
      throw error;
    }
  });
  const valid = keys.filter((outcome) => outcome.key !== undefined);
  const { cloudFront } = deps;
  const { distributionId } = options;
  const paths = options.everything ? ('everything' as const) : ('wildcard' as const);
  const invalidation = cloudFront && distributionId ? { cloudFront, distributionId, paths, reference: 'purge' } : undefined;
  const { sources, ...invalidationResult } = await purgeSources(
    valid.map((outcome) => ({ key: outcome.key! })),
    { s3: deps.s3, cacheBucket: options.cacheBucket, invalidation },
  );
  valid.forEach((outcome, index) => {
    outcome.purge = sources[index];
    if (invalidation) outcome.paths = options.everything ? [EVERYTHING] : sourceWildcards(outcome.key!);
  });
  if (invalidationResult.invalidationError === undefined) {
    await Promise.all(valid.map((outcome) => purgeWebVariants(deps.s3, options.cacheBucket, outcome.key!, outcome.purge!)));
  }
  const ok = keys.every((outcome) => outcome.purge && !purgeFailed(outcome.purge)) && invalidationResult.invalidationError === undefined;
  return { keys, ...invalidationResult, ok };
}

/** Errors listed in full per key; beyond this only their number. */
const LISTED_ERRORS = 5;

/** A key's own paths, and the paths sent that cover them where those differ (the key's folder, or /*). */
function coveredPaths(own: string[], sent: string[]): string {
  if (own.every((path) => sent.includes(path))) return own.join(' ');
  const covering = sent.filter((path) => own.some((ownPath) => covers(path, ownPath.slice(0, -1))));
  return `${own.join(' ')}, within ${covering.join(' ')}`;
}

/** One line per key (`ok` or `FAIL`), then a summary line. */
export function formatReport(report: PurgeReport, options: PurgeOptions): string[] {
  const lines: string[] = [];
  const invalidated = options.distributionId !== undefined;
  for (const outcome of report.keys) {
    const name =
      outcome.key !== undefined && outcome.key !== outcome.arg ? `${outcome.arg} (key ${JSON.stringify(outcome.key)})` : outcome.arg;
    if (outcome.invalid !== undefined) {
      lines.push(`FAIL  ${name}: not a source key: ${outcome.invalid}`);
      continue;
    }
    const purge = outcome.purge!;
    const parts: string[] = [];
    let failed = false;
    if (report.invalidationError) {
      parts.push('nothing deleted until CloudFront accepts the invalidation');
    } else if (purge.failure) {
      failed = true;
      parts.push(`${purge.deleted} variant(s) deleted, then the cache bucket failed: ${purge.failure}`);
    } else if (purge.errors.length > 0) {
      failed = true;
      const listed = purge.errors
        .slice(0, LISTED_ERRORS)
        .map((error) => `${error.key} ${error.code}${error.message ? ` (${error.message})` : ''}`);
      const more = purge.errors.length > LISTED_ERRORS ? `, and ${purge.errors.length - LISTED_ERRORS} more` : '';
      parts.push(`${purge.deleted} variant(s) deleted, ${purge.errors.length} not: ${listed.join('; ')}${more}`);
    } else {
      parts.push(`${purge.deleted} variant(s) deleted`);
    }
    if (!invalidated) {
      parts.push('not invalidated (--no-invalidation)');
    } else if (report.invalidationError) {
      failed = true;
      parts.push(`invalidating ${outcome.paths!.join(' ')} failed: ${report.invalidationError}`);
    } else {
      parts.push(`invalidated ${coveredPaths(outcome.paths!, report.paths)} (${report.invalidationId})`);
    }
    lines.push(`${failed ? 'FAIL' : 'ok  '}  ${name}: ${parts.join('; ')}`);
  }
  if (options.everything) {
    const error = report.invalidationError;
    lines.push(error ? `FAIL  /*: ${error}` : `ok    /*: every cached response invalidated (${report.invalidationId})`);
  }
  const failures = lines.filter((line) => line.startsWith('FAIL')).length;
  const finishing = `(${report.invalidationId}; CloudFront takes a few minutes to finish)`;
  if (failures > 0) lines.push(`${failures} of ${lines.length} ${options.everything ? 'line(s)' : 'key(s)'} failed.`);
  else if (options.everything) lines.push(`${report.keys.length} key(s) purged, and everything invalidated ${finishing}.`);
  else lines.push(`${report.keys.length} key(s) purged${invalidated ? ` and invalidated ${finishing}` : ''}.`);
  return lines;
}

export function createPurgeDependencies(options: PurgeOptions): PurgeDependencies {
  const s3 = options.endpoint
    ? localS3Client(options.endpoint)
    : new S3Client({ ...(options.region ? { region: options.region } : {}), followRegionRedirects: true });
  // CloudFront is global; its API is signed for us-east-1.
  const cloudFront = options.distributionId ? cloudFrontInvalidations(new CloudFrontClient({ region: 'us-east-1' })) : undefined;
  return { s3, cloudFront };
}

/** The command: returns its exit status. */
export const main = operatorMain({
  name: 'purge',
  usage: USAGE,
  parse: parsePurgeArgs,
  clients: createPurgeDependencies,
  async run(options, deps, output) {
    output.out(
      `purge: cache bucket ${options.cacheBucket}` +
        (options.distributionId ? `, distribution ${options.distributionId}` : ', no invalidation') +
        (options.endpoint ? `, S3 at ${options.endpoint}` : ''),
    );
    const report = await purge(options, deps);
    for (const line of formatReport(report, options)) output.out(line);
    return report.ok ? 0 : 1;
  },
});

runIfMain(import.meta.url, (argv) => main(argv));
