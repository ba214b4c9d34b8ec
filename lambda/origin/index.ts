// The Lambda entry point. Dependencies are made on the first request rather
// than at import, so a cold start does no work it does not need.

import type { LambdaFunctionURLEvent } from 'aws-lambda';
import sharp from 'sharp';
import { readConfig } from './config';
import { createOriginHandler, type InvocationContext, type OriginHandler } from './handler';
import { jsonLogger } from './log';
import { originS3Client } from './storage';

/** Lambda gives a function one vCPU per 1769 MB of memory. */
const MB_PER_VCPU = 1769;

/**
 * sharp for a Lambda that serves one request at a time, as measured with
 * `npm run bench -- --settings` (README "Performance"):
 * - no libvips operation cache: each miss reads a new source, so it never hits;
 *   without it peak RSS was 95 MB lower at the same speed;
 * - one libvips thread per vCPU the memory buys: on a second free core, two
 *   threads cut AVIF time by 25% for 19% more CPU and did nothing for JPEG or
 *   WebP, so at the default 2048 MB (1.16 vCPU) a second thread only adds CPU.
 *   Explicit, so that setting MALLOC_ARENA_MAX (which makes sharp pick one
 *   thread per core) does not change it.
 */
export function configureSharp(env: Record<string, string | undefined> = process.env): void {
  sharp.cache(false);
  const memoryMb = Number(env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE) || MB_PER_VCPU;
  sharp.concurrency(Math.max(1, Math.floor(memoryMb / MB_PER_VCPU)));
}

configureSharp();

let handle: OriginHandler | undefined;

export function handler(event: LambdaFunctionURLEvent, context: InvocationContext) {
  handle ??= createOriginHandler({
    // Bounded attempts and timeouts: a storage fault is a 503 in seconds, never a hung invocation.
    s3: originS3Client(),
    config: readConfig(process.env),
    log: jsonLogger,
    // METRICS_NAMESPACE and METRICS are set by the construct (lib/image-transformer.ts).
    metrics: {
      namespace: process.env.METRICS_NAMESPACE,
      enabled: process.env.METRICS !== 'false',
      functionVersion: process.env.AWS_LAMBDA_FUNCTION_VERSION,
    },
  });
  return handle(event, context);
}
