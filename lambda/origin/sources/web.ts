// The web source: a key prefix served from a site over HTTP(S)
// (lambda/origin/web/). No event says a site's image changed, so its
// variants are kept where no viewer's request can name them
// (web/variants.ts) and served by the Lambda alone: the stored one while it
// is younger than the origin's revalidation time; then the site is asked
// conditionally, and a 304 renews the stored copy, a new body is transformed
// and replaces it, and an unreachable site leaves the stored copy served briefly.

import { HttpError } from '../errors';
import { variantResponse, type FunctionUrlResponse, type ResponseTimings } from '../responses';
import { fetchWebSource } from '../web/fetch';
import { checkedWebOrigins, webSourceAt, type WebOrigin } from '../web/origins';
import { readWebVariant, storeWebVariant, WEB_VARIANTS_PREFIX, webVariantKey, type StoredWebVariant } from '../web/variants';
import { abortAt, timed, type Job, type MakeVariant, type SourceKind, type SourceServices } from './source';

/** What a stale web variant is served with while its source cannot be reached: a minute. */
const STALE_CACHE_CONTROL = 'public, max-age=60';

async function serveWeb(job: Job, prefix: string, origin: WebOrigin, { s3, config, log, allowLoopbackWebOrigins }: SourceServices, make: MakeVariant): Promise<FunctionUrlResponse> {
  const { request, measured, respond } = job;
  const web = webSourceAt(request.key, prefix, origin);
  const started = performance.now();
  const key = webVariantKey(request.key, request.ops);
  const revalidate = origin.revalidateSeconds;
  const freshCacheControl = `public, max-age=${revalidate}`;
  const stored = await readWebVariant(s3, config.cacheBucket, key, abortAt(job.endsAt));
  const answerStored = (copy: StoredWebVariant, served: 'current' | 'revalidated' | 'stale', cacheControl: string) => {
    const response = respond(
      variantResponse(copy.variant, {
        method: job.event.requestContext.http.method,
        ifNoneMatch: job.event.headers?.['if-none-match'],
        cacheControl,
        timings: measured.timings as ResponseTimings,
      }),
    );
    log({ level: 'info', event: 'web_variant', uri: request.uri, served, bytes: copy.variant.body.length, ...measured.timings, ...measured.done(response.statusCode) });
    return response;
  };
  const age = stored ? (Date.now() - stored.checkedAt) / 1000 : Infinity;
  if (stored && age < revalidate) return answerStored(stored, 'current', `public, max-age=${Math.ceil(revalidate - age)}`);

  let fetched;
  try {
    fetched = await timed(measured.timings, 'fetch', () =>
      fetchWebSource(web.url, {
        allowedHosts: [web.host],
        maxBytes: config.maxSourceBytes,
        signal: AbortSignal.timeout(Math.max(1, Math.floor(job.budgetMs))),
        validators: stored?.validators,
        allowLoopback: allowLoopbackWebOrigins,
      }),
    );
  } catch (error) {
    if (!(stored && error instanceof HttpError && error.status >= 500)) throw error;
    log({ level: 'warn', event: 'web_source_unavailable', uri: request.uri, code: error.code, detail: error.detail });
    return answerStored(stored, 'stale', STALE_CACHE_CONTROL);
  }
  if (fetched.status === 'not-modified') {
    // Only a stored copy's validators are sent, so only a stored copy is ever confirmed.
    const current = stored as StoredWebVariant;
    const response = answerStored(current, 'revalidated', freshCacheControl);
    await storeWebVariant(s3, config.cacheBucket, key, current.variant, current.validators, freshCacheControl, abortAt(job.endsAt)).catch((error: unknown) =>
      log({ level: 'error', event: 'store_failed', uri: request.uri, detail: String(error) }),
    );
    return response;
  }
  const validators = { etag: fetched.etag, lastModified: fetched.lastModified };
  return make({ ...job, budgetMs: job.budgetMs - (performance.now() - started) }, {
    fetch: async () => ({ bytes: fetched.bytes, etag: fetched.etag ?? fetched.lastModified ?? '', metadata: {} }),
    store: (variant, abortSignal) => storeWebVariant(s3, config.cacheBucket, key, variant, validators, freshCacheControl, abortSignal),
    cacheControl: freshCacheControl,
    redirectsLarge: false,
  });
}

export const webSource: SourceKind<WebOrigin> = {
  setting: {
    name: 'webOrigins',
    env: 'WEB_ORIGINS',
    description:
      'Key prefixes served from web sites, as JSON, e.g. {"shop/":{"url":"https://shop.example.com/images/","revalidateSeconds":3600}} (default: none).',
    check: checkedWebOrigins,
  },
  routes: ({ webOrigins }) => webOrigins,
  ownBehavior: true,
  records: (prefix) => [WEB_VARIANTS_PREFIX + prefix],
  answer: (job, { prefix, settings }, services, make) => serveWeb(job, prefix, settings, services, make),
};
