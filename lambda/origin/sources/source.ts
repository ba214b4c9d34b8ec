// The seam every kind of source sits behind (a bucket, a web site): what key
// prefixes it serves, how it fetches a source within its bound, how it stores
// a variant and when it asks its source again, how long a variant is kept,
// whether a large one is answered by a redirect, and whether CloudFront may
// answer its keys from the cache bucket. The handler reaches a source only
// through sourcingFor (../sourcing.ts), which asks the resolver (index.ts);
// the construct and the emulator only through the resolver. "Adding a
// source kind" in docs/development.md says how.

import type { OriginConfig, SourceKindSettings } from '../config';
import type { RequestContext } from '../request';
import type { Sourcing } from '../sourcing';

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
  /** Where the source of a request for a key under `prefix` comes from, and how its variant is kept and answered. */
  sourcing(ctx: RequestContext, route: { prefix: string; settings: Settings }): Sourcing;
}
