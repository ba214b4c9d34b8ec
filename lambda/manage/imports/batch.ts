// What the per-key function answers S3 Batch Operations (invocation schema
// 2.0): one result per task, `Succeeded` for an image ready at its key,
// `PermanentFailure` for one quarantined or refused (the reason, which the
// completion report lists), `TemporaryFailure` for a server or a storage
// that failed, which Batch Operations tries again before the job completes.

import type { S3Client } from '@aws-sdk/client-s3';
import type { S3BatchEvent, S3BatchResult, S3BatchResultResult } from 'aws-lambda';
import type { ManageConfig } from '../config';
import { importItem, type ImportFetchRules, type ImportOutcome } from './import-item';
import { taskItem } from './items';

/** The task's result for an outcome. */
function taskResult(taskId: string, outcome: ImportOutcome): S3BatchResultResult {
  if (outcome.status === 'ready') {
    return { taskId, resultCode: 'Succeeded', resultString: `ready: ${outcome.width}x${outcome.height} ${outcome.format}` };
  }
  const temporary = outcome.status === 'failed' && outcome.temporary;
  return { taskId, resultCode: temporary ? 'TemporaryFailure' : 'PermanentFailure', resultString: `${outcome.reason}: ${outcome.message}` };
}

/** Imports each task's item (its key column: items.ts's taskKey), one after another. */
export async function runBatchTasks(
  clients: { s3: S3Client },
  config: ManageConfig,
  event: S3BatchEvent,
  rules: ImportFetchRules = {},
): Promise<S3BatchResult> {
  const results: S3BatchResultResult[] = [];
  for (const task of event.tasks) results.push(taskResult(task.taskId, await importItem(clients, config, taskItem(task.s3Key), rules)));
  return {
    invocationSchemaVersion: event.invocationSchemaVersion,
    treatMissingKeysAs: 'PermanentFailure',
    invocationId: event.invocationId,
    results,
  };
}
