// The Lambda entry point, subscribed to the source bucket's ObjectCreated:*
// and ObjectRemoved:* notifications. Clients and configuration are made on
// the first invocation rather than at import, as in the origin.

import { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import { S3Client } from '@aws-sdk/client-s3';
import type { S3Event } from 'aws-lambda';
import { cloudFrontInvalidations } from './cloudfront';
import { readConfig } from './config';
import { createInvalidationHandler, type InvalidationHandler } from './handler';
import { jsonLogger } from '../common/log';

let handle: InvalidationHandler | undefined;

export async function handler(event: S3Event): Promise<void> {
  handle ??= createInvalidationHandler({
    s3: new S3Client({}),
    cloudFront: cloudFrontInvalidations(new CloudFrontClient({})),
    config: readConfig(process.env),
    log: jsonLogger,
  });
  await handle(event);
}
