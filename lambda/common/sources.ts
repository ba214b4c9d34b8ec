// Where a URL key's source is. By default, in the source bucket under the key
// itself; a deployment may map key prefixes to other buckets (`archive/` to a
// bucket of its own), whose objects are named without the prefix, so an
// existing bucket's keys work as they are. The origin, the construct and the
// emulator route a key through the source resolver (lambda/origin/sources/);
// the invalidation Lambda maps a changed object back to the URL key, whose
// variants it purges, with urlKey here. Web origins (lambda/origin/web/) map
// prefixes too, under the same rules.

import { isGrammarError, validateKey } from '../grammar';
import { mustBe } from './checks';
import { envReaders, type Env } from './env';

/** Key prefixes served from other buckets than the default source bucket, to the bucket's name. */
export type PrefixBuckets = Record<string, string>;

/**
 * Why these prefixes cannot map buckets, in the one message shape, or
 * undefined when they can. Each must end with `/` and, with any object key
 * after it, make a key the edge accepts (no empty, `.` or `..` segment, no
 * leading `/`, no control character); none may start another, or a key under
 * both could not say where it is read from. `name` is the setting, as the
 * operator wrote it.
 */
export function prefixesRefusal(name: string, prefixes: string[]): string | undefined {
  for (const prefix of prefixes) {
    let reason = prefix.endsWith('/') ? undefined : 'it does not end with "/"';
    try {
      validateKey(prefix + 'x');
    } catch (error) {
      if (!isGrammarError(error)) throw error;
      reason ??= error.message.replace(/^Invalid source key: /, '').replace(/\.$/, '');
    }
    if (reason) return mustBe(`a ${name} prefix`, `a key prefix ending with "/" such as "archive/" (${reason})`, prefix);
    const inside = prefixes.find((other) => other !== prefix && other.startsWith(prefix));
    if (inside !== undefined)
      return `${name} prefixes "${prefix}" and "${inside}" overlap: a key under both could not say where it is read from.`;
  }
  return undefined;
}

/** The prefix of `key` that maps a bucket, if any (prefixes never overlap, so at most one). */
function prefixOf(key: string, buckets: PrefixBuckets): string | undefined {
  return Object.keys(buckets).find((prefix) => key.startsWith(prefix));
}

/**
 * The URL key that reads `objectKey` of `bucket`, or undefined when none does:
 * a key of the default bucket (any bucket not mapped) under a mapped prefix
 * is served from that prefix's bucket instead.
 */
export function urlKey(bucket: string, objectKey: string, buckets: PrefixBuckets): string | undefined {
  const prefix = Object.keys(buckets).find((candidate) => buckets[candidate] === bucket);
  if (prefix !== undefined) return prefix + objectKey;
  return prefixOf(objectKey, buckets) === undefined ? objectKey : undefined;
}

/** The environment variable both Lambdas read the mapping from: a JSON object of prefixes to bucket names. */
const SOURCE_BUCKETS = 'SOURCE_BUCKETS';

/** The mapping in a Lambda's environment (none when unset), checked; `configError` is the Lambda's own (env.ts). */
export function readSourceBuckets(env: Env, configError: (message: string) => Error): PrefixBuckets {
  const value = envReaders(configError).jsonObject(env, SOURCE_BUCKETS);
  for (const [prefix, bucket] of Object.entries(value)) {
    if (typeof bucket !== 'string' || bucket.trim() === '')
      throw configError(mustBe(`the ${SOURCE_BUCKETS} bucket of "${prefix}"`, 'a bucket name', bucket));
  }
  const refusal = prefixesRefusal(SOURCE_BUCKETS, Object.keys(value));
  if (refusal) throw configError(refusal);
  return value as PrefixBuckets;
}

/** The environment readSourceBuckets reads back as `buckets`: nothing when there are none, so a single-bucket deployment's is unchanged. */
export function sourceBucketsEnvironment(buckets: PrefixBuckets): Record<string, string> {
  return Object.keys(buckets).length ? { [SOURCE_BUCKETS]: JSON.stringify(buckets) } : {};
}
