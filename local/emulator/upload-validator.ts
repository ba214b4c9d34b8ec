// Validation on arrival, locally: the default source bucket's watcher
// (source-watcher.ts) hands each of its S3 notifications here too, as the
// deployed bucket's ObjectCreated notification on the staging prefix invokes
// the validator. Each upload it names is validated (lambda/manage/validate.ts)
// while the watcher goes on; the validations in flight can be waited for.

import type { S3Client } from '@aws-sdk/client-s3';
import type { S3Event } from 'aws-lambda';
import { isBridgeEvent, type SourceEvent } from '../../lambda/invalidate/events';
import type { ManageConfig } from '../../lambda/manage/config';
import { stagedKeys, validateEvent, type UploadOutcome } from '../../lambda/manage/validate';
import { runningWork } from './emulator';

export interface UploadValidator {
  /** Starts the validation of each staged upload the event names; other records are passed over. */
  onEvent(event: SourceEvent): void;
  /** Resolves when the validations started so far have ended; true when any was started since the last call. */
  settled(): Promise<boolean>;
}

/** An outcome as the emulator logs it. */
export function outcomeLine(outcome: UploadOutcome): string {
  switch (outcome.status) {
    case 'ready':
      return `upload ${outcome.key}: ready (${outcome.width}x${outcome.height} ${outcome.format})`;
    case 'quarantined':
      return `upload ${outcome.key}: quarantined (${outcome.reason}: ${outcome.message})`;
    default:
      return `upload ${outcome.key}: ${outcome.status}, passed over`;
  }
}

export function createUploadValidator(s3: S3Client, config: ManageConfig, log: (line: string) => void): UploadValidator {
  const { track, settled } = runningWork();
  let started = 0;
  let seen = 0;
  return {
    onEvent(event) {
      if (isBridgeEvent(event) || stagedKeys(config, event as S3Event).length === 0) return;
      started++;
      // A storage failure is logged: the staged upload stays pending, and is validated when it is uploaded again.
      void track(
        validateEvent({ s3 }, config, event as S3Event).then(
          (outcomes) => outcomes.forEach((outcome) => log(outcomeLine(outcome))),
          (error: unknown) => log(`validating uploads failed: ${(error as Error).message}`),
        ),
      );
    },
    async settled() {
      const any = started > seen;
      seen = started;
      await settled();
      return any;
    },
  };
}
