// Where a request's source comes from, and how its variant is kept and
// answered: a source bucket, or a web origin (web/revalidate.ts). The handler
// knows sources only through `sourcingFor` and the Sourcing it returns.

import { sourceObject } from '../common/sources';
import { facesKey, variantKey } from './cache-keys';
import { timed, type RequestContext } from './request';
import { fetchSource as readSource, storeVariant, type Source, type StoreOutcome, type Variant } from './storage';
import { webSourceFor } from './web/origins';
import { webSourcing, type StoredAnswer } from './web/revalidate';

/** What fetching gives a request: the source to transform, or a stored variant that answers it. */
export type Fetched = { source: Source } | { stored: StoredAnswer };

export interface Sourcing {
  /** Reads the source within the request's deadline (its time counted as the `fetch` phase). */
  fetch(): Promise<Fetched>;
  /** Keeps the variant made of the fetched source, until `abortSignal`. */
  store(variant: Variant & { sourceEtag: string }, abortSignal?: AbortSignal): Promise<StoreOutcome>;
  /** The Cache-Control of a variant made now. */
  cacheControl: string;
  /**
   * Whether a variant too large to return inline is answered by a redirect to
   * itself, which CloudFront then finds in the cache bucket. A web source's
   * variants are kept where no cache-bucket origin looks (cache-keys.ts), so
   * they are always answered inline, whichever behavior the request came by.
   */
  redirectsLarge: boolean;
  /** Where the source's faces are remembered (face-memory.ts). */
  facesKey: string;
}

/** A bucket's source: read from S3, its variant written once (a change is purged by its event). */
function bucketSourcing(ctx: RequestContext): Sourcing {
  const { s3, config } = ctx.services;
  const { key, ops } = ctx.request;
  return {
    fetch: async () => {
      const { bucket, objectKey } = sourceObject(key, config.sourceBucket, config.sourceBuckets);
      const source = await timed(ctx, 'fetch', () => ctx.deadline.race(readSource(s3, bucket, objectKey, config.maxSourceBytes)));
      return { source };
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
  };
}

/** The request's source: a web origin's when one serves its key's prefix, else a bucket's. */
export function sourcingFor(ctx: RequestContext): Sourcing {
  const web = webSourceFor(ctx.request.key, ctx.services.config.webOrigins);
  return web ? webSourcing(ctx, web) : bucketSourcing(ctx);
}
