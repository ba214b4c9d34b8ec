// The per-key Lambda of an import: S3 Batch Operations invokes it for each
// line of an import's manifest (lib/parts/manage-imports.ts) and reads its
// answer (imports/batch.ts). The API also invokes it, asynchronously, to
// convert a manifest for Batch Operations (imports/prepare.ts): Lambda tries
// that again on a storage failure. Its settings are read from the environment
// and its S3 client made on the first invocation, as the validator's.

import { S3Client } from '@aws-sdk/client-s3';
import type { S3BatchEvent, S3BatchResult } from 'aws-lambda';
import { jsonLogger } from '../common/log';
import { readManageConfig, type ManageConfig } from './config';
import { runBatchTasks } from './imports/batch';
import { prepareManifest, type PrepareImportEvent } from './imports/prepare';

let clients: { s3: S3Client } | undefined;
let config: ManageConfig | undefined;

export async function handler(event: S3BatchEvent | PrepareImportEvent): Promise<S3BatchResult | void> {
  clients ??= { s3: new S3Client({}) };
  config ??= readManageConfig(process.env);
  if ('prepareImport' in event) {
    jsonLogger({ level: 'info', event: 'import_prepared', ...event.prepareImport, ...(await prepareManifest(clients, config, event)) });
    return;
  }
  const result = await runBatchTasks(clients, config, event);
  for (const task of result.results) jsonLogger({ level: 'info', event: 'import_task', job: event.job.id, ...task });
  return result;
}
