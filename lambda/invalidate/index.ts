// The Lambda entry point, subscribed to the source bucket's ObjectCreated:*
// and ObjectRemoved:* notifications, and to EventBridge's Object Created and
// Object Deleted events of the buckets mapped to prefixes. Clients and configuration are made on
// the first invocation rather than at import, as in the origin.

import { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import { S3Client } from '@aws-sdk/client-s3';
import { cloudFrontInvalidations } from './cloudfront';
import { readConfig } from './config';
import type { SourceEvent } from './events';
import { createInvalidationHandler, type InvalidationHandler } from './handler';
import { jsonLogger } from '../common/log';

let handle: InvalidationHandler | undefined;

export async function handler(event: SourceEvent): Promise<void> {
  handle ??= createInvalidationHandler({
    s3: new S3Client({}),
    cloudFront: cloudFrontInvalidations(new CloudFrontClient({})),
    config: readConfig(process.env),
    log: jsonLogger,
  });
  await handle(event);
}
