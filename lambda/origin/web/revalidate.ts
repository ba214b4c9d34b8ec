// A web source's variant, revalidated: the stored one while it is younger
// than the origin's revalidation time; then the source is asked
// conditionally, and a 304 renews the stored copy, a new body is transformed
// and replaces it, and an unreachable source leaves the stored copy served
// briefly.

import { facesKey, subjectKey, webVariantKey } from '../cache-keys';
import { HttpError } from '../errors';
import { answerOf, failureDetail, timed, type RequestContext } from '../request';
import { variantResponse, type FunctionUrlResponse } from '../responses';
import type { Sourcing } from '../sourcing';
import type { StoreOutcome, Variant } from '../storage';
import { fetchWebSource, type WebFetchResult } from './fetch';
import type { WebSource } from './origins';
import { readWebVariant, storeWebVariant, type StoredWebVariant } from './variants';

/** What a stale web variant is served with while its source cannot be reached: a minute. */
const STALE_CACHE_CONTROL = 'public, max-age=60';

/** A stored web variant that answers the request without a transform. */
export interface StoredAnswer {
  variant: Variant;
  /** current: young enough; revalidated: the source answered 304; stale: the source could not be reached. */
  served: 'current' | 'revalidated' | 'stale';
  cacheControl: string;
  /** After the answer: rewrites the stored copy, which renews its write time. */
  renew?: (abortSignal?: AbortSignal) => Promise<StoreOutcome>;
}

/** The source asked within the request's deadline, conditionally when a copy is stored. */
function askSource(ctx: RequestContext, web: WebSource, stored: StoredWebVariant | undefined): Promise<WebFetchResult> {
  const { config, allowLoopbackWebOrigins } = ctx.services;
  return timed(ctx, 'fetch', () =>
    fetchWebSource(web.url, {
      allowedHosts: [web.host],
      maxBytes: config.maxSourceBytes,
      signal: AbortSignal.timeout(ctx.deadline.left()),
      validators: stored?.validators,
      allowLoopback: allowLoopbackWebOrigins,
    }),
  );
}

export function webSourcing(ctx: RequestContext, web: WebSource): Sourcing {
  const { s3, config } = ctx.services;
  const key = webVariantKey(ctx.request.key, ctx.request.ops);
  const revalidate = web.origin.revalidateSeconds;
  const freshCacheControl = `public, max-age=${revalidate}`;
  let validators: StoredWebVariant['validators'] = {};
  const store = (variant: Variant, abortSignal?: AbortSignal) =>
    storeWebVariant(s3, config.cacheBucket, key, variant, validators, freshCacheControl, abortSignal);

  async function fetch() {
    const stored = await readWebVariant(s3, config.cacheBucket, key, ctx.deadline.endSignal());
    const age = stored ? (Date.now() - stored.checkedAt) / 1000 : Infinity;
    if (stored && age < revalidate) {
      const cacheControl = `public, max-age=${Math.ceil(revalidate - age)}`;
      return { stored: { variant: stored.variant, served: 'current', cacheControl } as const };
    }
    let fetched;
    try {
      fetched = await askSource(ctx, web, stored);
    } catch (error) {
      if (!(stored && error instanceof HttpError && error.status >= 500)) throw error;
      ctx.note('warn', 'web_source_unavailable', { code: error.code, detail: error.detail });
      return { stored: { variant: stored.variant, served: 'stale', cacheControl: STALE_CACHE_CONTROL } as const };
    }
    if (fetched.status === 'not-modified') {
      // Only a stored copy's validators are sent, so only a stored copy is ever confirmed.
      const current = stored as StoredWebVariant;
      validators = current.validators;
      const renew = (abortSignal?: AbortSignal) => store(current.variant, abortSignal);
      return { stored: { variant: current.variant, served: 'revalidated', cacheControl: freshCacheControl, renew } as const };
    }
    validators = { etag: fetched.etag, lastModified: fetched.lastModified };
    return { source: { bytes: fetched.bytes, etag: fetched.etag ?? fetched.lastModified ?? '', metadata: {} } };
  }

  return {
    fetch,
    store,
    cacheControl: freshCacheControl,
    redirectsLarge: false,
    facesKey: facesKey(ctx.request.key, true),
    subjectKey: subjectKey(ctx.request.key, true),
  };
}

/** Answers with a stored web variant and logs it; then renews the stored copy if the source confirmed it. */
export async function answerStored(ctx: RequestContext, stored: StoredAnswer): Promise<FunctionUrlResponse> {
  const { measured } = ctx;
  const response = ctx.respond(variantResponse(stored.variant, { ...answerOf(ctx), cacheControl: stored.cacheControl }));
  const { served, variant } = stored;
  ctx.note('info', 'web_variant', { served, bytes: variant.body.length, ...measured.timings, ...measured.done(response.statusCode) });
  await stored
    .renew?.(ctx.deadline.endSignal())
    .catch((error: unknown) => ctx.note('error', 'store_failed', { detail: failureDetail(error) }));
  return response;
}
