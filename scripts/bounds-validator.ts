// `npm run bounds`' measurement of the upload validator (lambda/manage/validate.ts):
// one hostile upload staged under `_uploads/` and validated as its event
// would, in the measuring process itself (the validator decodes in its own
// process, not in a transform child), with its peak resident memory and the
// time to its outcome, the reads and writes of S3 included. The ask says
// whether the location strip (manageStripLocation) runs too.

import { CopyObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { readFileSync, writeFileSync } from 'node:fs';
import { manageConfig } from '../lambda/manage/config';
import { validateUpload } from '../lambda/manage/validate';
import type { OriginConfig } from '../lambda/origin/config';
import { HttpError } from '../lambda/origin/errors';

/** The asks of a validator case: validated as uploaded, or with its location stripped. */
export const VALIDATE = 'validate';
export const VALIDATE_STRIPPING = 'validate,strip-location';

export const isValidation = (ask: string) => ask === VALIDATE || ask === VALIDATE_STRIPPING;

/** Peak resident set (VmHWM) of a process in MB, or undefined once it is gone. */
export function peakMb(pid: number | 'self'): number | undefined {
  try {
    return Number(/VmHWM:\s*(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
  } catch {
    return undefined;
  }
}

export interface ValidationRow {
  /** 200 for ready, the refusal's status for quarantined. */
  status: number;
  answer: string;
  ms: number;
  peakMb: number;
}

/** Validates the source at `key` of `config`'s source bucket, staged again as an upload, as `ask` says. */
export async function measureValidation(s3: S3Client, config: OriginConfig, key: string, ask: string): Promise<ValidationRow> {
  const manage = manageConfig(config, { stripLocation: ask === VALIDATE_STRIPPING });
  const bucket = manage.sourceBucket;
  const staged = manage.stagingPrefix + key;
  await s3.send(new CopyObjectCommand({ Bucket: bucket, Key: staged, CopySource: `${bucket}/${key}` }));
  writeFileSync('/proc/self/clear_refs', '5');
  let peak = 0;
  const sample = setInterval(() => (peak = Math.max(peak, peakMb('self') ?? 0)), 20);
  const start = performance.now();
  const outcome = await validateUpload({ s3 }, manage, staged);
  const ms = performance.now() - start;
  clearInterval(sample);
  peak = Math.max(peak, peakMb('self') ?? 0);
  if (outcome.status === 'ready')
    return { status: 200, answer: `ready, ${outcome.width}x${outcome.height} ${outcome.format}`, ms, peakMb: peak };
  if (outcome.status === 'quarantined')
    return { status: new HttpError(outcome.reason, '').status, answer: `quarantined: ${outcome.reason}`, ms, peakMb: peak };
  return { status: 0, answer: outcome.status, ms, peakMb: peak };
}
