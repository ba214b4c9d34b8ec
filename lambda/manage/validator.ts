// The validator's Lambda entry point: EventBridge's "Object Created" events
// of the source bucket under the staging prefix invoke it (lib/parts/manage.ts),
// asynchronously, so a storage failure it throws is tried again by Lambda.
// Its settings are read from the environment and its S3 client made on the
// first event. The client keeps the SDK's own timeouts: the copy of an upload
// as large as the source limit takes longer than a small read.

import { S3Client } from '@aws-sdk/client-s3';
import { jsonLogger } from '../common/log';
import { readManageConfig, type ManageConfig } from './config';
import { validateEvent, type UploadEvent } from './validate';

let clients: { s3: S3Client } | undefined;
let config: ManageConfig | undefined;

export async function handler(event: UploadEvent): Promise<void> {
  clients ??= { s3: new S3Client({}) };
  config ??= readManageConfig(process.env);
  for (const outcome of await validateEvent(clients, config, event)) jsonLogger({ level: 'info', event: 'upload_validated', ...outcome });
}
