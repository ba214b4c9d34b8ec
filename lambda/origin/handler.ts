// The origin: a Function URL request for a canonical URI in, the variant out.
// Only reached on a true miss (neither CloudFront nor the cache bucket had it).
// A request runs as named phases (phases.ts) over one context (request.ts)
// with one deadline (deadline.ts); when they fail for want of a readable
// source, the fallback image answers (fallback.ts).

import type { S3Client } from '@aws-sdk/client-s3';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import type { Logger } from '../common/log';
import { followWithAvif } from './avif-claims';
import { cardTransformer } from './card';
import type { OriginConfig } from './config';
import { deadlineOf, type InvocationContext } from './deadline';
import { answerFallback, fallbackImageOf } from './fallback';
import { lookUpFailure } from './failures';
import { keepFindings, recallFindings } from './findings-memory';
import { requestMetrics, type MetricsOptions } from './metrics';
import {
  answerError,
  answerInline,
  check,
  fitsInline,
  logVariant,
  madeFields,
  makeVariant,
  parse,
  redirectToStored,
  store,
  transformerFor,
} from './phases';
import { answerOf, noteFor, type OriginServices, type RequestContext } from './request';
import { DEFERRED_AVIF_CACHE_CONTROL, variantResponse, type FunctionUrlResponse } from './responses';
import { sourcingFor } from './sourcing';
import { sourceRoutes } from './sources';
import { transformProcesses, type TransformProcesses } from './transform-process';
import { watermarkFiles } from './watermarks';
import { answerStored } from './web/revalidate';

export type { InvocationContext };

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

/**
 * Receives the response as soon as it is ready: for a miss, before the variant
 * is written to the cache bucket, so a caller that can answer early (the
 * streaming Lambda entry, the emulator) does not keep the viewer waiting for
 * that write. Called exactly once per request.
 */
export type Respond = (response: FunctionUrlResponse) => void;

/** Settles once all the request's work is done (the variant stored, the log written), with the response. */
export type OriginHandler = (event: LambdaFunctionURLEvent, context?: InvocationContext, respond?: Respond) => Promise<FunctionUrlResponse>;

/** A miss once parsed and checked: fetch the source, make the variant, answer, store, log. */
async function serve(ctx: RequestContext): Promise<FunctionUrlResponse> {
  const sourcing = sourcingFor(ctx);
  const fetching = sourcing.fetch();
  // Read beside the source: a later size of an image searched before costs no search.
  const recalled = recallFindings(ctx, sourcing, fetching);
  const fetched = await fetching;
  if ('stored' in fetched) return answerStored(ctx, fetched.stored);
  ctx.measured.sourceBytes = fetched.source.bytes.length;
  const transform = ctx.request.ops.template ? await cardTransformer(ctx, fetched.source) : await transformerFor(ctx, fetched.source);
  const remembered = await recalled;
  let made = await makeVariant(ctx, transform, { deferAvif: ctx.request.ops.accept === 'avif', remembered });
  const known = { ...remembered, ...made.variant.searched };
  const remembering = keepFindings(ctx, sourcing, fetched.source.etag, made.variant.searched ?? {});
  if (made.variant.avifDeferred && fitsInline(ctx, sourcing, made.variant.body)) {
    // The first viewer gets WebP at once, which browsers keep briefly and shared caches not
    // at all; the AVIF follows the response and is stored for the next viewer.
    const sent = ctx.respond(variantResponse(made.variant, { ...answerOf(ctx), cacheControl: DEFERRED_AVIF_CACHE_CONTROL }));
    const avif = await followWithAvif(ctx, () => transform({ remembered: known }));
    await remembering;
    if (!avif) return logVariant(ctx, sent, { stored: 'none', bytes: made.variant.body.length });
    made = avif;
  } else if (made.variant.avifDeferred) {
    // Too large to answer inline, the WebP could only be stored under the AVIF's key: the AVIF is made now.
    made = await makeVariant(ctx, transform, { remembered: known });
  }
  const variant = { body: made.variant.body, contentType: made.variant.contentType, sourceEtag: fetched.source.etag };
  ctx.measured.transformRssMb = made.report.peakRssMb;
  // After a WebP answer the AVIF is only stored: respond() keeps the answer already sent.
  const inline = answerInline(ctx, sourcing, variant);
  const stored = await store(ctx, sourcing, variant);
  await remembering;
  const response = inline ?? redirectToStored(ctx, stored);
  ctx.measured.outputBytes = variant.body.length;
  ctx.measured.contentType = variant.contentType;
  return logVariant(ctx, response, madeFields(made, stored));
}

/** Sends the first response it is given, to `onResponse` too; returns the one sent. */
function answerOnce(onResponse?: Respond): (response: FunctionUrlResponse) => FunctionUrlResponse {
  let sent: FunctionUrlResponse | undefined;
  return (response) => {
    if (!sent) {
      sent = response;
      onResponse?.(response);
    }
    return sent;
  };
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
  const services: OriginServices = {
    s3,
    config,
    log,
    routes: sourceRoutes(config),
    transforms,
    watermarkImage,
    fallbackImage: fallbackImageOf(config.fallbackImage),
    allowLoopbackWebOrigins,
  };

  return async function handle(event, invocation, onResponse) {
    const respond = answerOnce(onResponse);
    const measured = requestMetrics(metrics, invocation?.awsRequestId);
    let uri = event.rawPath;
    try {
      const request = parse(event, config);
      uri = request.uri;
      check(request, config);
      const failure = lookUpFailure(services, uri);
      try {
        const deadline = deadlineOf(config.timeBudgetMs, invocation);
        const ctx: RequestContext = {
          services,
          event,
          request,
          deadline,
          measured,
          failed: failure.failed,
          respond,
          note: noteFor(log, uri),
        };
        return await serve(ctx).catch((error: unknown) => answerFallback(ctx, error));
      } finally {
        await failure.settled; // its S3 call does not outlive the request
      }
    } catch (error) {
      return respond(answerError(log, uri, measured, error));
    }
  };
}
