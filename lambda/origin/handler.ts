// The origin: a Function URL request for a canonical URI in, the variant out.
// Only reached on a true miss (neither CloudFront nor the cache bucket had it).

import type { S3Client } from '@aws-sdk/client-s3';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { encodeKeyPath, isGrammarError, parseCanonicalUri, variantKey, viewerQuery, type CanonicalRequest } from '../grammar';
import { claimAvif } from './avif-claims';
import type { OriginConfig } from './config';
import { HttpError } from './errors';
import { rememberedFailure, rememberFailure, worthRemembering } from './failures';
import { facesKey, rememberedFaces, rememberFaces } from './face-memory';
import { budgetFor } from './image/budget';
import type { TransformOptions } from './image/transform';
import { errorStack, type Logger } from '../common/log';
import { sourceObject } from '../common/sources';
import { requestMetrics, type MetricsOptions, type Phase, type RequestMetrics } from './metrics';
import {
  DEFERRED_AVIF_CACHE_CONTROL,
  errorResponse,
  redirectResponse,
  variantResponse,
  type FunctionUrlResponse,
  type ResponseTimings,
} from './responses';
import { withSourceFocus } from './source-focus';
import { fetchSource, storeVariant, type Source, type StoreOutcome, type Variant } from './storage';
import { transformProcesses, type TransformProcesses } from './transform-process';
import { checkRequiredWatermark, watermarkFiles } from './watermarks';
import { fetchWebSource } from './web/fetch';
import { webSourceFor, type WebSource } from './web/origins';
import { readWebVariant, storeWebVariant, webVariantKey, type StoredWebVariant } from './web/variants';

export interface OriginDependencies {
  s3: S3Client;
  config: OriginConfig;
  log: Logger;
  /** The CloudWatch metrics (EMF) on each request's last log line; on by default. */
  metrics?: MetricsOptions;
  /** Where transforms run: one warm child process by default (Lambda serves one request at a time). */
  transforms?: TransformProcesses;
  /**
   * Lets web origins on loopback addresses through: for tests and the local
   * emulator only, which set it in code. No environment variable or prop does.
   */
  allowLoopbackWebOrigins?: boolean;
}

/** The part of Lambda's context the handler uses: how long until the invocation is killed, and its id. */
export interface InvocationContext {
  getRemainingTimeInMillis(): number;
  /** Lambda's id of this invocation, logged with the request. */
  awsRequestId?: string;
}

/** Where a request's source comes from, and how its variant is kept and answered. */
interface Sourcing {
  fetch(deadline: number): Promise<Source>;
  store(variant: Variant & { sourceEtag: string }, abortSignal?: AbortSignal): Promise<StoreOutcome>;
  cacheControl: string;
  /**
   * Whether a variant too large to return inline is answered by a redirect to
   * itself, which CloudFront then finds in the cache bucket. A web source's
   * variants are kept where no cache-bucket origin looks (webVariantKey), so
   * they are always answered inline, whichever behavior the request came by.
   */
  redirectsLarge: boolean;
  /** Where the source's faces are remembered (face-memory.ts). */
  facesKey: string;
}

/** One request's work, as `handle` hands it on. */
interface Job {
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

/** What a stale web variant is served with while its source cannot be reached: a minute. */
const STALE_CACHE_CONTROL = 'public, max-age=60';

/** Time kept back from Lambda's own timeout to answer 504 and log it. */
const TIMEOUT_MARGIN_MS = 1000;

/**
 * Receives the response as soon as it is ready: for a miss, before the variant
 * is written to the cache bucket, so a caller that can answer early (the
 * streaming Lambda entry, the emulator) does not keep the viewer waiting for
 * that write. Called exactly once per request.
 */
export type Respond = (response: FunctionUrlResponse) => void;

/** Settles once all the request's work is done (the variant stored, the log written), with the response. */
export type OriginHandler = (
  event: LambdaFunctionURLEvent,
  context?: InvocationContext,
  respond?: Respond,
) => Promise<FunctionUrlResponse>;

function withDeadline<T>(work: Promise<T>, deadline: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HttpError('timeout', 'The image took too long to transform.')), Math.max(0, deadline - performance.now()));
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/** Work after the answer may not outlive the invocation: at its end, it is abandoned. */
function abortAt(endsAt: number): AbortSignal | undefined {
  const left = endsAt - performance.now();
  return Number.isFinite(left) ? AbortSignal.timeout(Math.max(1, Math.floor(left))) : undefined;
}

/** Adds `work`'s time to its phase: a phase may run twice (a web source fetched before the transform is planned, a WebP then its AVIF). */
async function timed<T>(timings: RequestMetrics['timings'], name: Phase, work: () => Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    return await work();
  } finally {
    timings[name] = (timings[name] ?? 0) + performance.now() - start;
  }
}

export function createOriginHandler({
  s3,
  config,
  log,
  metrics,
  transforms = transformProcesses(),
  allowLoopbackWebOrigins = false,
}: OriginDependencies): OriginHandler {
  const watermarkImage = watermarkFiles(config.watermarkDefinitions);

  /** A bucket's source: read from S3, its variant written once (a change is purged by its event). */
  function bucketSourcing(request: CanonicalRequest): Sourcing {
    return {
      fetch: (deadline) => {
        const { bucket, objectKey } = sourceObject(request.key, config.sourceBucket, config.sourceBuckets);
        return withDeadline(fetchSource(s3, bucket, objectKey, config.maxSourceBytes), deadline);
      },
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
      facesKey: facesKey(request.key, false),
    };
  }

  /**
   * A web source's variant: the stored one while it is younger than the origin's
   * revalidation time; then the source is asked conditionally, and a 304 renews
   * the stored copy, a new body is transformed and replaces it, and an
   * unreachable source leaves the stored copy served briefly.
   */
  async function serveWeb(job: Job, web: WebSource): Promise<FunctionUrlResponse> {
    const { request, measured, respond } = job;
    const started = performance.now();
    const key = webVariantKey(request.key, request.ops);
    const revalidate = web.origin.revalidateSeconds;
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
    return serve({ ...job, budgetMs: job.budgetMs - (performance.now() - started) }, {
      fetch: async () => ({ bytes: fetched.bytes, etag: fetched.etag ?? fetched.lastModified ?? '', metadata: {} }),
      store: (variant, abortSignal) =>
        storeWebVariant(s3, config.cacheBucket, key, variant, validators, freshCacheControl, abortSignal),
      cacheControl: freshCacheControl,
      redirectsLarge: false,
      facesKey: facesKey(request.key, true),
    });
  }

  async function serve({ event, request, budgetMs, measured, endsAt, respond, failed }: Job, sourcing: Sourcing) {
    const timings = measured.timings;
    const deadline = performance.now() + budgetMs;
    const watermark = request.ops.watermark === undefined ? undefined : await watermarkImage(request.ops.watermark);
    const fetching = timed(timings, 'fetch', () => sourcing.fetch(deadline));
    // Read beside the source: a later size of an image searched before costs no detection.
    const findsFaces = request.ops.position === 'face' || request.ops.format === 'json';
    const remembered = findsFaces ? rememberedFaces(s3, config.cacheBucket, sourcing.facesKey, fetching.then(({ etag }) => etag), abortAt(endsAt)) : undefined;
    const source = await fetching;
    let faces = await remembered;
    measured.sourceBytes = source.bytes.length;
    // A watermark's bytes travel to the transform as the source's do.
    const budget = budgetFor(config.memorySizeMb, config.timeBudgetMs, source.bytes.length + (watermark?.bytes.length ?? 0));
    const ops = withSourceFocus(request.ops, source.metadata, config, log, request.uri);
    const make = (options: TransformOptions) =>
      transforms.run({ bytes: source.bytes, ops, limits: config, budget, options: { ...options, watermark, faces } }, deadline, failed);
    const answer = { method: event.requestContext.http.method, ifNoneMatch: event.headers?.['if-none-match'], timings: timings as ResponseTimings };
    const answeredInline = (body: Buffer) => body.length <= config.maxInlineBytes || !sourcing.redirectsLarge;
    /** The AVIF made after the WebP answer, or undefined when another request makes it or it failed (logged). */
    const followWithAvif = async () => {
      const started = performance.now();
      try {
        if (!(await claimAvif(s3, config.cacheBucket, request.uri, config.timeBudgetMs, abortAt(endsAt)))) {
          log({ level: 'info', event: 'avif_claimed_elsewhere', uri: request.uri });
          return undefined;
        }
        const avif = await make({});
        log({ level: 'info', event: 'avif_followed', uri: request.uri, ms: Math.round(performance.now() - started) });
        return avif;
      } catch (error) {
        log({ level: 'error', event: 'avif_follow_failed', uri: request.uri, detail: errorStack(error) });
        return undefined;
      }
    };
    let made;
    let remembering: Promise<void> | undefined;
    try {
      made = await timed(timings, 'transform', () => make({ deferAvif: request.ops.accept === 'avif' }));
      const found = made.variant.faces;
      if (found) {
        faces = found;
        // Written while the answer goes out; a failure only means another search next time.
        remembering = rememberFaces(s3, config.cacheBucket, sourcing.facesKey, source.etag, found, abortAt(endsAt)).catch((error: unknown) =>
          log({ level: 'error', event: 'remember_faces_failed', uri: request.uri, detail: String(error) }),
        );
      }
      if (made.variant.avifDeferred && answeredInline(made.variant.body)) {
        // The first viewer gets WebP at once, which browsers keep briefly and shared caches not
        // at all; the AVIF follows the response and is stored for the next viewer.
        const sent = respond(variantResponse(made.variant, { ...answer, cacheControl: DEFERRED_AVIF_CACHE_CONTROL }));
        const avif = await followWithAvif();
        if (!avif) {
          await remembering;
          log({ level: 'info', event: 'variant', uri: request.uri, stored: 'none', bytes: made.variant.body.length, ...timings, ...measured.done(sent.statusCode ?? 200) });
          return sent;
        }
        made = avif;
      } else if (made.variant.avifDeferred) {
        // Too large to answer inline, the WebP could only be stored under the AVIF's key: the AVIF is made now.
        made = await timed(timings, 'transform', () => make({}));
      }
    } catch (error) {
      const remember =
        error instanceof HttpError && error !== failed.reason && worthRemembering(error, timings.transform ?? 0, config.timeBudgetMs);
      if (remember) {
        respond(errorResponse(error));
        await rememberFailure(s3, config.cacheBucket, request.uri, error, abortAt(endsAt)).catch((failure: unknown) =>
          log({ level: 'error', event: 'remember_failed', uri: request.uri, detail: String(failure) }),
        );
      }
      await remembering;
      throw error;
    }
    const { predicted, faces: _searched, ...variant } = { ...made.variant, sourceEtag: source.etag };
    measured.transformRssMb = made.report.peakRssMb;

    // Inline, the image is the answer whatever happens to the write: it goes out first.
    const inline = answeredInline(variant.body);
    // After a WebP answer the AVIF is only stored: respond() keeps the answer already sent.
    let response = inline ? respond(variantResponse(variant, { ...answer, cacheControl: sourcing.cacheControl })) : undefined;

    let stored: StoreOutcome | 'failed';
    try {
      stored = await timed(timings, 'store', () => sourcing.store(variant, abortAt(endsAt)));
    } catch (error) {
      // The image is still good: serve it, and let the next miss try the write again.
      stored = 'failed';
      log({ level: 'error', event: 'store_failed', uri: request.uri, detail: (error as HttpError).detail });
    }
    await remembering;
    if (!response) {
      // Too large to return inline: once stored, the same request again. The edge forwards the
      // viewer's parameters (and signature) as the query; without an edge in front, the ops say the same.
      if (stored === 'failed') throw new HttpError('storage_unavailable', 'The image storage is unavailable; try again shortly.');
      const query = event.rawQueryString || viewerQuery(request.ops);
      response = respond(redirectResponse(encodeKeyPath(request.key) + (query ? '?' + query : '')));
    }
    measured.outputBytes = variant.body.length;
    measured.contentType = variant.contentType;
    log({
      level: 'info',
      event: 'variant',
      uri: request.uri,
      stored,
      bytes: variant.body.length,
      width: variant.width,
      height: variant.height,
      // The model's prediction beside what the transform process used (its own resident memory counted).
      predictedMb: predicted && Math.round(predicted.bytes / 1024 / 1024),
      predictedSeconds: predicted && Number(predicted.seconds.toFixed(2)),
      transformStartMb: Math.round(made.report.startRssMb),
      transformCpuSeconds: Number(made.report.cpuSeconds.toFixed(3)),
      ...timings,
      ...measured.done(response.statusCode ?? 200),
    });
    return response;
  }

  return async function handle(event, context, onResponse) {
    let sent: FunctionUrlResponse | undefined;
    /** Sends `response` unless one was sent already; returns the one sent. */
    const respond = (response: FunctionUrlResponse) => {
      if (!sent) {
        sent = response;
        onResponse?.(response);
      }
      return sent;
    };
    let uri = event.rawPath;
    const measured = requestMetrics(metrics, context?.awsRequestId);
    try {
      const method = event.requestContext.http.method;
      if (method !== 'GET' && method !== 'HEAD') {
        throw new HttpError('method_not_allowed', `${method} is not allowed; use GET or HEAD.`);
      }
      let request: CanonicalRequest;
      try {
        request = parseCanonicalUri(event.rawPath, config);
      } catch (error) {
        if (isGrammarError(error)) throw new HttpError(error.code, error.message);
        throw error;
      }
      uri = request.uri;
      checkRequiredWatermark(request.key, request.ops.watermark, config.requireWatermark);
      const remaining = context ? context.getRemainingTimeInMillis() - TIMEOUT_MARGIN_MS : Infinity;
      // The failure check runs beside the source's read and the transform, so a miss never waits
      // for it: a remembered failure stops the transform (and its process) as soon as it is known.
      const failed = new AbortController();
      const check = rememberedFailure(s3, config.cacheBucket, uri, config.failureTtlSeconds).then((failure) => failure && failed.abort(failure));
      try {
        const job = { event, request, budgetMs: Math.min(config.timeBudgetMs, remaining), measured, endsAt: performance.now() + remaining, respond, failed: failed.signal };
        const web = webSourceFor(request.key, config.webOrigins);
        return await (web ? serveWeb(job, web) : serve(job, bucketSourcing(request)));
      } finally {
        await check; // its S3 call does not outlive the request
      }
    } catch (error) {
      if (error instanceof HttpError) {
        log({
          level: error.status >= 500 ? 'error' : 'warn',
          event: 'error',
          code: error.code,
          status: error.status,
          uri,
          detail: error.detail,
          ...measured.done(error.status, error.code),
        });
        return respond(errorResponse(error));
      }
      // A bug, not a bad request: log all of it, tell the viewer nothing internal.
      const internal = new HttpError('internal_error', 'The service failed unexpectedly; try again shortly.');
      log({
        level: 'error',
        event: 'unexpected',
        code: internal.code,
        status: internal.status,
        uri,
        detail: errorStack(error),
        ...measured.done(internal.status, internal.code),
      });
      return respond(errorResponse(internal));
    }
  };
}
