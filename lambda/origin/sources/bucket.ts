// The bucket source: a key's original is an object of the default source
// bucket, or, under a prefix mapped to another bucket, that bucket's object
// named by the rest of the key (lambda/common/sources.ts). Its variant is
// written once under the canonical URI, where the cache bucket answers the
// next request; a changed source's variants are purged by its event.

import { variantKey } from '../../grammar';
import { HttpError } from '../errors';
import { fetchSource, storeVariant } from '../storage';
import type { SourceKind } from './source';

export interface BucketRoute {
  /** The bucket holding this prefix's objects, named without the prefix. */
  bucket: string;
}

function withDeadline<T>(work: Promise<T>, deadline: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HttpError('timeout', 'The image took too long to transform.')), Math.max(0, deadline - performance.now()));
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

export const bucketSource: SourceKind<BucketRoute> = {
  routes: ({ sourceBucket, sourceBuckets }) => ({
    ...Object.fromEntries(Object.entries(sourceBuckets).map(([prefix, bucket]) => [prefix, { bucket }])),
    '': { bucket: sourceBucket },
  }),
  ownBehavior: false,
  records: () => [],
  answer: (job, { prefix, settings }, { s3, config }, make) => {
    const { request } = job;
    return make(job, {
      fetch: (deadline) => withDeadline(fetchSource(s3, settings.bucket, request.key.slice(prefix.length), config.maxSourceBytes), deadline),
      store: (variant, abortSignal) =>
        storeVariant(
          s3,
          config.cacheBucket,
          variantKey(request.key, request.ops),
          variant,
          { cacheControl: config.cacheControl, metadata: { 'source-etag': variant.sourceEtag } },
          abortSignal,
        ),
      cacheControl: config.cacheControl,
      redirectsLarge: true,
    });
  },
};
