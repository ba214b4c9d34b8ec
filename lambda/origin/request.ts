// One request as its phases see it (handler.ts runs them): what the origin
// shares between requests, the canonical request, its one deadline, what it
// measured, how it answers and how it logs.

import type { S3Client } from '@aws-sdk/client-s3';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import type { CanonicalRequest } from '../grammar';
import type { Logger } from '../common/log';
import type { OriginConfig } from './config';
import type { Deadline } from './deadline';
import type { FallbackImage } from './fallback';
import type { Phase, RequestMetrics } from './metrics';
import type { FunctionUrlResponse, ResponseTimings } from './responses';
import type { SourceRoute } from './sources';
import type { TransformProcesses } from './transform-process';
import type { WatermarkImage } from './watermarks';

/** What every request of one origin shares. */
export interface OriginServices {
  s3: S3Client;
  config: OriginConfig;
  log: Logger;
  /** The key prefixes and the sources that serve them (sources/index.ts), of `config`. */
  routes: SourceRoute[];
  transforms: TransformProcesses;
  /** The watermark image a request names (watermarks.ts), read once per process. */
  watermarkImage(name: string): Promise<WatermarkImage>;
  /** The fallback image (fallback.ts): its bytes read once per process, and what it was made into; absent without one. */
  fallbackImage?: FallbackImage;
  /** Web origins on loopback addresses are let through (tests and the emulator only). */
  allowLoopbackWebOrigins: boolean;
}

export type LogLevel = 'info' | 'warn' | 'error';

/** A request's log line: always `{ level, event, uri, ...fields }`. */
export type Note = (level: LogLevel, event: string, fields?: Record<string, unknown>) => void;

export const noteFor =
  (log: Logger, uri: string): Note =>
  (level, event, fields) =>
    log({ level, event, uri, ...fields });

/** One request, from its parse to its last log line. */
export interface RequestContext {
  readonly services: OriginServices;
  readonly event: LambdaFunctionURLEvent;
  readonly request: CanonicalRequest;
  readonly deadline: Deadline;
  readonly measured: RequestMetrics;
  /** Aborted, with the error to answer, when this URI's transform is remembered to fail. */
  readonly failed: AbortSignal;
  /** Sends `response` unless one was sent already; returns the one sent. */
  respond(response: FunctionUrlResponse): FunctionUrlResponse;
  note: Note;
}

/** What a variant's response needs of its request: the method, the viewer's validator and the timings so far. */
export const answerOf = ({ event, measured }: RequestContext) => ({
  method: event.requestContext.http.method,
  ifNoneMatch: event.headers?.['if-none-match'],
  timings: measured.timings as ResponseTimings,
});

/** Adds `work`'s time to its phase: a phase may run twice (a WebP, then its AVIF). */
export async function timed<T>({ measured }: RequestContext, name: Phase, work: () => Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    return await work();
  } finally {
    measured.timings[name] = (measured.timings[name] ?? 0) + performance.now() - start;
  }
}

/** What a failure says in a log line: an HttpError's detail (the SDK's or libvips' words), else the error as text. */
export function failureDetail(error: unknown): string {
  const detail = (error as { detail?: unknown } | null)?.detail;
  return typeof detail === 'string' ? detail : String(error);
}
