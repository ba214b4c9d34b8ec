// The phases of a request, in the order handler.ts runs them: parse, check,
// (look up remembered failures: failures.ts), fetch the source (sourcing.ts),
// make the variant, answer, store, log. Each is a function of the request's
// context and what the phase before it gave.

import type { LambdaFunctionURLEvent } from 'aws-lambda';
import {
  encodeKeyPath,
  isGrammarError,
  DIALECT_REQUEST,
  parseCanonicalUri,
  queryText,
  viewerQuery,
  type CanonicalRequest,
  type Ops,
} from '../grammar';
import { errorStack, type Logger } from '../common/log';
import type { Limits, OriginConfig } from './config';
import { HttpError } from './errors';
import { rememberIfCostly } from './failures';
import { budgetFor } from './image/budget';
import type { TransformOptions } from './image/transform';
import type { RequestMetrics } from './metrics';
import { answerOf, failureDetail, noteFor, timed, type RequestContext } from './request';
import { errorResponse, redirectResponse, variantResponse, type FunctionUrlResponse } from './responses';
import type { Sourcing } from './sourcing';
import { withSourceFocus } from './source-focus';
import type { Source, StoreOutcome, Variant } from './storage';
import type { TransformResult } from './transform-process';
import { checkCardImages, checkRequiredWatermark, watermarkImages } from './watermarks';
import { checkCard } from './card-fills';

/** The canonical request a Function URL event asks for: a GET or HEAD of a canonical URI. */
export function parse(event: LambdaFunctionURLEvent, config: OriginConfig): CanonicalRequest {
  const method = event.requestContext.http.method;
  if (method !== 'GET' && method !== 'HEAD') {
    throw new HttpError('method_not_allowed', `${method} is not allowed; use GET or HEAD.`);
  }
  try {
    return parseCanonicalUri(event.rawPath, config);
  } catch (error) {
    if (isGrammarError(error)) throw new HttpError(error.code, error.message);
    throw error;
  }
}

/** The deployment's rules a well-formed request must still meet: a watermark its prefix requires, a card's fills. */
export function check(request: CanonicalRequest, config: OriginConfig): void {
  const card = checkCard(request, config.templateDefinitions);
  // A card's URL key is one of its images; an image of any other slot is its fills'.
  if (card) checkCardImages(Object.values(card.images), config.requireWatermark);
  else checkRequiredWatermark(request.key, request.ops, config.requireWatermark);
}

/** Makes a variant of the fetched source in a transform process, by the request's deadline. */
export type Transformer = (options: TransformOptions) => Promise<TransformResult>;

/** The transform of `source` as the request asks it, the source's own focal point applied; a remembered failure stops it. */
export function transformerFor(ctx: RequestContext, source: Source): Promise<Transformer> {
  const ops = withSourceFocus(ctx.request.ops, source.metadata, ctx.services.config, ctx.note);
  return transformerOf(ctx, source.bytes, ops, ctx.services.config, ctx.failed);
}

/** The transform of `bytes` by `ops` within `limits`: the ops' watermark read, the budget priced, stopped by `cancel`. */
export async function transformerOf(
  ctx: RequestContext,
  bytes: Buffer,
  ops: Ops,
  limits: Limits,
  cancel?: AbortSignal,
): Promise<Transformer> {
  const { services, deadline } = ctx;
  const { config, transforms } = services;
  const watermarks = await watermarkImages(ops, services.watermarkImage);
  // The watermarks' bytes travel to the transform as the source's do; the fallbacks kept stay in the handler.
  const sourceBytes = Object.values(watermarks).reduce((sum, mark) => sum + mark.bytes.length, bytes.length);
  const budget = budgetFor(config.memorySizeMb, config.timeBudgetMs, sourceBytes, services.fallbackImage?.heldBytes);
  return (options) =>
    transforms.run({ bytes, ops, limits, budget, options: { ...options, watermarks, fonts: config.fonts } }, deadline.answerBy, cancel);
}

/** One transform, timed as the `transform` phase; a failure that cost the invocation is remembered. */
export async function makeVariant(ctx: RequestContext, transform: Transformer, options: TransformOptions): Promise<TransformResult> {
  try {
    return await timed(ctx, 'transform', () => transform(options));
  } catch (error) {
    await rememberIfCostly(ctx, error);
    throw error;
  }
}

/** Whether `body` is answered inline rather than by a redirect to its stored copy. */
export const fitsInline = (ctx: RequestContext, sourcing: Sourcing, body: Buffer) =>
  body.length <= ctx.services.config.maxInlineBytes || !sourcing.redirectsLarge;

/** Answers with the variant when it fits inline: the image is the answer whatever happens to its write, so it goes out first. */
export function answerInline(ctx: RequestContext, sourcing: Sourcing, variant: Variant): FunctionUrlResponse | undefined {
  if (!fitsInline(ctx, sourcing, variant.body)) return undefined;
  return ctx.respond(variantResponse(variant, { ...answerOf(ctx), cacheControl: sourcing.cacheControl }));
}

/** Stores the variant, timed as the `store` phase; a failed write is logged, and the next miss tries again. */
export async function store(
  ctx: RequestContext,
  sourcing: Sourcing,
  variant: Variant & { sourceEtag: string },
): Promise<StoreOutcome | 'failed'> {
  try {
    return await timed(ctx, 'store', () => sourcing.store(variant, ctx.deadline.endSignal()));
  } catch (error) {
    ctx.note('error', 'store_failed', { detail: failureDetail(error) });
    return 'failed';
  }
}

/** How a query that a dialect's edge function forwards starts. */
const FORWARDED = DIALECT_REQUEST + '=';

/**
 * A dialect's request as the viewer sent it, which its edge function forwards
 * as the only parameter, DIALECT_REQUEST: its URI, with its query again.
 * Undefined for one that is not a plain path of this host (`//host/...`).
 */
function dialectUrl(rawQuery: string): string | undefined {
  if (rawQuery.indexOf('&') >= 0) return undefined;
  let request: unknown;
  try {
    request = JSON.parse(decodeURIComponent(rawQuery.slice(FORWARDED.length)));
  } catch {
    return undefined;
  }
  const { uri, pairs } = (request ?? {}) as { uri?: unknown; pairs?: unknown };
  const isPair = (pair: unknown) => Array.isArray(pair) && pair.length === 2 && pair.every((side) => typeof side === 'string');
  if (typeof uri !== 'string' || !Array.isArray(pairs) || !pairs.every(isPair)) return undefined;
  const url = uri + (pairs.length ? '?' + queryText(pairs as [string, string][]) : '');
  // Printable ASCII only, as a path the edge passed on is: nothing that could end the header.
  return /^\/(?![/\\])[!-~]*$/.test(url) ? url : undefined;
}

/**
 * Answers a variant too large to return inline: once stored, the same request
 * again. The edge forwards the viewer's parameters (and signature) as the
 * query, or a dialect's request as the viewer sent it, which its function
 * reads and verifies again; without an edge in front, the ops say the same.
 */
export function redirectToStored(ctx: RequestContext, stored: StoreOutcome | 'failed'): FunctionUrlResponse {
  if (stored === 'failed') throw new HttpError('storage_unavailable', 'The image storage is unavailable; try again shortly.');
  const { event, request } = ctx;
  const raw = event.rawQueryString;
  const dialect = raw.indexOf(FORWARDED) === 0;
  // A dialect's request that cannot be followed: the native URL for the ops.
  const query = (!dialect && raw) || viewerQuery(request.ops);
  return ctx.respond(redirectResponse((dialect && dialectUrl(raw)) || encodeKeyPath(request.key) + (query ? '?' + query : '')));
}

/** The request's last line when it served a variant: what was made and stored, its timings and metrics. */
export function logVariant(ctx: RequestContext, response: FunctionUrlResponse, fields: Record<string, unknown>): FunctionUrlResponse {
  const { measured } = ctx;
  ctx.note('info', 'variant', { ...fields, ...measured.timings, ...measured.done(response.statusCode) });
  return response;
}

/** What a made variant's log line says beyond its timings: its size, and the model's prediction beside what the transform process used. */
export function madeFields({ variant, report }: TransformResult, stored: StoreOutcome | 'failed'): Record<string, unknown> {
  const { predicted } = variant;
  return {
    stored,
    bytes: variant.body.length,
    width: variant.width,
    height: variant.height,
    predictedMb: predicted && Math.round(predicted.bytes / 1024 / 1024),
    predictedSeconds: predicted && Number(predicted.seconds.toFixed(2)),
    transformStartMb: Math.round(report.startRssMb),
    transformCpuSeconds: Number(report.cpuSeconds.toFixed(3)),
  };
}

/** The answer to a failed request, logged as its last line: a contract error as it is, a bug as a 500 that tells nothing internal. */
export function answerError(log: Logger, uri: string, measured: RequestMetrics, error: unknown): FunctionUrlResponse {
  const note = noteFor(log, uri);
  if (error instanceof HttpError) {
    const { code, status, detail } = error;
    note(status >= 500 ? 'error' : 'warn', 'error', { code, status, detail, ...measured.done(status, code) });
    return errorResponse(error);
  }
  const internal = new HttpError('internal_error', 'The service failed unexpectedly; try again shortly.');
  const { code, status } = internal;
  note('error', 'unexpected', { code, status, detail: errorStack(error), ...measured.done(status, code) });
  return errorResponse(internal);
}
