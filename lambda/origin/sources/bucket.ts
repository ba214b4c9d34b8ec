// The bucket source: a key's original is an object of the default source
// bucket, or, under a prefix mapped to another bucket, that bucket's object
// named by the rest of the key (lambda/common/sources.ts). Its variant is
// written once under the canonical URI, where the cache bucket answers the
// next request; a changed source's variants are purged by its event. The
// management API's staging and quarantine objects are refused as missing.

import { isUnservedKey } from '../../common/staging';
import { facesKey, subjectKey, variantKey } from '../cache-keys';
import { HttpError } from '../errors';
import { timed } from '../request';
import { fetchSource, storeVariant } from '../storage';
import type { SourceKind } from './source';

export interface BucketRoute {
  /** The bucket holding this prefix's objects, named without the prefix. */
  bucket: string;
}

export const bucketSource: SourceKind<BucketRoute> = {
  routes: ({ sourceBucket, sourceBuckets }) => ({
    ...Object.fromEntries(Object.entries(sourceBuckets).map(([prefix, bucket]) => [prefix, { bucket }])),
    '': { bucket: sourceBucket },
  }),
  ownBehavior: false,
  records: () => [],
  sourcing: (ctx, { prefix, settings }) => {
    const { s3, config } = ctx.services;
    const { key, ops } = ctx.request;
    return {
      fetch: async () => {
        const objectKey = key.slice(prefix.length);
        // Uploads not yet validated, and those refused, are in the default bucket but are no source (lambda/common/staging.ts).
        if (prefix === '' && isUnservedKey(objectKey)) {
          throw new HttpError('not_found', 'No source image has this key.', 'a staging or quarantine key');
        }
        return {
          source: await timed(ctx, 'fetch', () => ctx.deadline.race(fetchSource(s3, settings.bucket, objectKey, config.maxSourceBytes))),
        };
      },
      store: (variant, abortSignal) =>
        storeVariant(
          s3,
          config.cacheBucket,
          variantKey(key, ops),
          variant,
          { cacheControl: config.cacheControl, metadata: { 'source-etag': variant.sourceEtag } },
          abortSignal,
        ),
      cacheControl: config.cacheControl,
      redirectsLarge: true,
      facesKey: facesKey(key, false),
      subjectKey: subjectKey(key, false),
    };
  },
};
