// The Lambda entry point. Dependencies are made on the first request rather
// than at import, so a cold start does no work it does not need.

import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { readConfig } from './config';
import { createOriginHandler, type InvocationContext, type OriginHandler } from './handler';
import { jsonLogger } from './log';
import { originS3Client } from './storage';

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
