// The Lambda entry point. Dependencies are made on the first request rather
// than at import, so a cold start does no work it does not need.

import { S3Client } from '@aws-sdk/client-s3';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { readConfig } from './config';
import { createOriginHandler, type InvocationContext, type OriginHandler } from './handler';
import { jsonLogger } from './log';

let handle: OriginHandler | undefined;

export function handler(event: LambdaFunctionURLEvent, context: InvocationContext) {
  handle ??= createOriginHandler({
    s3: new S3Client({}),
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
