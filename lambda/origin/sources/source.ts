// The seam every kind of source sits behind (a bucket, a web site): what key
// prefixes it serves, how it fetches a source within its bound, how it stores
// a variant and when it asks its source again, how long a variant is kept,
// whether a large one is answered by a redirect, and whether CloudFront may
// answer its keys from the cache bucket. The handler, the construct and the
// emulator reach a source only through this interface and the resolver
// (index.ts); "Adding a source kind" in docs/development.md says how.

import type { S3Client } from '@aws-sdk/client-s3';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import type { Logger } from '../../common/log';
import type { CanonicalRequest } from '../../grammar';
import type { OriginConfig, SourceKindSettings } from '../config';
import type { Phase, RequestMetrics } from '../metrics';
import type { FunctionUrlResponse } from '../responses';
import type { Source, StoreOutcome, Variant } from '../storage';

/** Where a request's source comes from, and how its variant is kept and answered. */
export interface Sourcing {
  /** The source's bytes, within the origin's maxSourceBytes and by `deadline` (performance.now() time). */
  fetch(deadline: number): Promise<Source>;
  store(variant: Variant & { sourceEtag: string }, abortSignal?: AbortSignal): Promise<StoreOutcome>;
  /** The variant's Cache-Control: how long CloudFront keeps it. */
  cacheControl: string;
  /**
   * Whether a variant too large to return inline is answered by a redirect to
   * itself, which CloudFront then finds in the cache bucket. A source whose
   * variants are kept where no cache-bucket origin looks answers them inline,
   * whichever behavior the request came by.
   */
  redirectsLarge: boolean;
}

/** One request's work, as the handler hands it on. */
export interface Job {
  event: LambdaFunctionURLEvent;
  request: CanonicalRequest;
  budgetMs: number;
  measured: RequestMetrics;
  /** When the invocation ends (performance.now() time). */
  endsAt: number;
  respond: (response: FunctionUrlResponse) => FunctionUrlResponse;
  /** Aborted, with the error to answer, when this URI's transform is remembered to fail. */
  failed: AbortSignal;
}

/** The handler's transform and answer of a source's bytes (its `serve`). */
export type MakeVariant = (job: Job, sourcing: Sourcing) => Promise<FunctionUrlResponse>;

/** What a source may use: the origin's clients and settings. */
export interface SourceServices {
  s3: S3Client;
  config: OriginConfig;
  log: Logger;
  /** Web origins on loopback addresses: for tests and the local emulator only. */
  allowLoopbackWebOrigins: boolean;
}

/** The settings every kind's prefixes are read from: the origin's, the construct's, the emulator's. */
export type SourceSettings = Pick<OriginConfig, 'sourceBucket' | 'sourceBuckets'> & SourceKindSettings;

/**
 * How a kind's prefixes are configured, under one name: the construct's prop,
 * the context key (a JSON object) and the origin's config field (written to
 * its environment variable as JSON). The default kind, whose buckets the
 * construct holds as CDK objects, has none of its own.
 */
export interface SourceSetting<Settings> {
  name: keyof SourceKindSettings;
  env: string;
  /** The context key's meaning, with an example (lib/context.ts's CONTEXT_KEYS). */
  description: string;
  /**
   * `given` (prefix to settings, as a prop, the context or the environment has
   * them) checked, with defaults applied; `name` words the setting, `fail`
   * makes the error. Synth, the emulator and the origin's start run the same check.
   */
  check(given: Record<string, unknown>, name: string, fail: (message: string) => Error): Record<string, Settings>;
}

/** One kind of source; `Settings` is what one of its prefixes is configured with. */
export interface SourceKind<Settings> {
  /** Its own setting; none for the default kind. */
  setting?: SourceSetting<Settings>;
  /** The key prefixes it serves, each with its settings; `''` (every other key) for the default kind only. */
  routes(settings: SourceSettings): Record<string, Settings>;
  /**
   * Whether its variants change in place, so that the cache bucket may not
   * answer for them: CloudFront then sends its prefixes to the Lambda alone,
   * by a cache behavior of their own.
   */
  ownBehavior: boolean;
  /** The cache-bucket key prefixes of what the origin stores for `prefix` and reads back (its IAM grant). */
  records(prefix: string): string[];
  /** Answers a request for a key under `prefix`: from a variant it keeps while current, or by `make` from its Sourcing. */
  answer(job: Job, route: { prefix: string; settings: Settings }, services: SourceServices, make: MakeVariant): Promise<FunctionUrlResponse>;
}

/** Work after the answer may not outlive the invocation: at its end, it is abandoned. */
export function abortAt(endsAt: number): AbortSignal | undefined {
  const left = endsAt - performance.now();
  return Number.isFinite(left) ? AbortSignal.timeout(Math.max(1, Math.floor(left))) : undefined;
}

/** Adds `work`'s time to its phase: a phase may run twice (a web source fetched before the transform is planned, a WebP then its AVIF). */
export async function timed<T>(timings: RequestMetrics['timings'], name: Phase, work: () => Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    return await work();
  } finally {
    timings[name] = (timings[name] ?? 0) + performance.now() - start;
  }
}
