// The origin: a Function URL request for a canonical URI in, the variant out.
// Only reached on a true miss (neither CloudFront nor the cache bucket had it).

import type { S3Client } from '@aws-sdk/client-s3';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { encodeKeyPath, isGrammarError, parseCanonicalUri, viewerQuery, type CanonicalRequest } from '../grammar';
import { claimAvif } from './avif-claims';
import type { OriginConfig } from './config';
import { HttpError } from './errors';
import { rememberedFailure, rememberFailure, worthRemembering } from './failures';
import { budgetFor } from './image/budget';
import type { TransformOptions } from './image/transform';
import { errorStack, type Logger } from '../common/log';
import { requestMetrics, type MetricsOptions } from './metrics';
import {
  DEFERRED_AVIF_CACHE_CONTROL,
  errorResponse,
  redirectResponse,
  variantResponse,
  type FunctionUrlResponse,
  type ResponseTimings,
} from './responses';
import { withSourceFocus } from './source-focus';
import type { StoreOutcome } from './storage';
import { transformProcesses, type TransformProcesses } from './transform-process';
import { checkRequiredWatermark, watermarkFiles } from './watermarks';
import { answerFrom, routeFor, sourceRoutes } from './sources';
import { abortAt, timed, type Job, type Sourcing } from './sources/source';

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

export function createOriginHandler({
  s3,
  config,
  log,
  metrics,
  transforms = transformProcesses(),
  allowLoopbackWebOrigins = false,
}: OriginDependencies): OriginHandler {
  const watermarkImage = watermarkFiles(config.watermarkDefinitions);
  const routes = sourceRoutes(config);
  const services = { s3, config, log, allowLoopbackWebOrigins };

  async function serve({ event, request, budgetMs, measured, endsAt, respond, failed }: Job, sourcing: Sourcing) {
    const timings = measured.timings;
    const deadline = performance.now() + budgetMs;
    const watermark = request.ops.watermark === undefined ? undefined : await watermarkImage(request.ops.watermark);
    const source = await timed(timings, 'fetch', () => sourcing.fetch(deadline));
    measured.sourceBytes = source.bytes.length;
    // A watermark's bytes travel to the transform as the source's do.
    const budget = budgetFor(config.memorySizeMb, config.timeBudgetMs, source.bytes.length + (watermark?.bytes.length ?? 0));
    const ops = withSourceFocus(request.ops, source.metadata, config, log, request.uri);
    const make = (options: TransformOptions) =>
      transforms.run({ bytes: source.bytes, ops, limits: config, budget, options: { ...options, watermark } }, deadline, failed);
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
    try {
      made = await timed(timings, 'transform', () => make({ deferAvif: request.ops.accept === 'avif' }));
      if (made.variant.avifDeferred && answeredInline(made.variant.body)) {
        // The first viewer gets WebP at once, which browsers keep briefly and shared caches not
        // at all; the AVIF follows the response and is stored for the next viewer.
        const sent = respond(variantResponse(made.variant, { ...answer, cacheControl: DEFERRED_AVIF_CACHE_CONTROL }));
        const avif = await followWithAvif();
        if (!avif) {
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
      throw error;
    }
    const { predicted, ...variant } = { ...made.variant, sourceEtag: source.etag };
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
        return await answerFrom(routeFor(request.key, routes), job, services, serve);
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
