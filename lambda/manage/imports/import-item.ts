// The per-key function of an import: one (url, key) fetched from the legacy
// server with the web origins' guards (web/fetch.ts: public addresses only,
// checked again on every redirect, no credentials sent, at most the source
// size limit read, the type told by the bytes) within a deadline, then judged
// as an upload is (validate.ts's judgeImage) and stored: ready at its key, or
// quarantined with its reason. The bytes are put where they go, not staged
// under `_uploads/`: a staged object would also fire the validator's own
// event, which would validate it a second time and race this function's move.

import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { HttpError } from '../../origin/errors';
import { fetchWebSource, type WebFetchOptions } from '../../origin/web/fetch';
import { SVG_TYPE } from '../api-schema';
import type { ManageConfig } from '../config';
import { ManageError, storageUnavailable } from '../errors';
import { READY_METADATA } from '../records';
import { clearQuarantine, judgeImage, outcomeOf, writeQuarantineRecord, type Verdict } from '../validate';
import { checkItem, type ImportItem } from './items';

/** How long a fetch may take, name resolution to the last byte. */
export const IMPORT_FETCH_MS = 20_000;

/** The test seams of the web origins' guard (loopback, a resolver, a trusted certificate); none deployed. */
export type ImportFetchRules = Pick<WebFetchOptions, 'allowLoopback' | 'resolve' | 'trustedCertificates'>;

export type ImportOutcome =
  | { status: 'ready'; url: string; key: string; width: number; height: number; format: string }
  | { status: 'quarantined'; url: string; key: string; reason: string; message: string }
  /** Not fetched, nothing stored; `temporary` when trying again later may succeed (the server or the storage failed). */
  | { status: 'failed'; url: string; key: string; reason: string; message: string; temporary: boolean };

/** The fetch's refusals that are the image's own (a page that is no image, one over the size limit): quarantined, as an upload would be. */
const CONTENT_REFUSALS = new Set(['unsupported_media_type', 'source_too_large']);

/** The fetch's failures that may pass: the server did not answer in time, or failed. */
const TEMPORARY_FAILURES = new Set(['source_unavailable', 'timeout']);

const contentTypeOf = (format: string) => (format === 'svg' ? SVG_TYPE : `image/${format}`);

/** Stores a verdict: the image at its key, or its quarantine (the bytes when they were read whole, and the record). */
async function store(s3: S3Client, config: ManageConfig, key: string, bytes: Buffer | undefined, verdict: Verdict): Promise<void> {
  const importedAt = new Date().toISOString();
  const put = async (Key: string, Body: Buffer, ContentType?: string, Metadata?: Record<string, string>) => {
    try {
      await s3.send(new PutObjectCommand({ Bucket: config.sourceBucket, Key, Body, ContentType, Metadata }));
    } catch (error) {
      throw storageUnavailable(error);
    }
  };
  if (verdict.info) {
    await put(key, verdict.stored, contentTypeOf(verdict.info.format), READY_METADATA.write(verdict.info, importedAt));
    await clearQuarantine(s3, config, key);
    return;
  }
  if (bytes) await put(config.quarantinePrefix + key, bytes);
  const { code: reason, message } = verdict.refusal;
  await writeQuarantineRecord(s3, config, key, { reason, message, uploadedAt: importedAt, bytes: bytes?.length ?? 0, etag: '' });
}

/** Fetches the item's image: its bytes, a refusal of them (quarantined), or a failure (nothing stored). */
async function fetchItem(item: ImportItem, config: ManageConfig, rules: ImportFetchRules) {
  const url = new URL(item.url);
  try {
    // Redirects stay on the item's host: the caller named that server, not others.
    const options = {
      ...rules,
      allowedHosts: [url.hostname],
      maxBytes: config.limits.maxSourceBytes,
      signal: AbortSignal.timeout(IMPORT_FETCH_MS),
    };
    const result = await fetchWebSource(url, options);
    if (result.status !== 'fetched') throw new HttpError('source_unavailable', 'The server answered 304 to an unconditional request.');
    return { bytes: result.bytes };
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    if (CONTENT_REFUSALS.has(error.code)) return { refusal: error };
    const message = error.detail ? `${error.message} (${error.detail})` : error.message;
    return { failure: { reason: error.code, message, temporary: TEMPORARY_FAILURES.has(error.code) } };
  }
}

/**
 * Imports one item: `value` is checked first (a manifest's row may be
 * anything), then fetched, judged and stored. Never throws for the item's
 * own faults; a storage failure is a temporary failure.
 */
export async function importItem(
  clients: { s3: S3Client },
  config: ManageConfig,
  value: unknown,
  rules: ImportFetchRules = {},
): Promise<ImportOutcome> {
  const named = value as Partial<ImportItem> | undefined;
  const [url, key] = [String(named?.url ?? ''), String(named?.key ?? '')];
  let item: ImportItem;
  try {
    item = checkItem(config, value, 'The item');
  } catch (error) {
    if (!(error instanceof ManageError)) throw error;
    return { status: 'failed', url, key, reason: error.code, message: error.message, temporary: false };
  }
  try {
    const fetched = await fetchItem(item, config, rules);
    if (fetched.failure) return { status: 'failed', ...item, ...fetched.failure };
    const verdict = fetched.refusal
      ? { refusal: fetched.refusal }
      : await judgeImage(item.key, fetched.bytes, undefined, config.limits, config.stripLocation);
    await store(clients.s3, config, item.key, fetched.bytes, verdict);
    return { ...outcomeOf(item.key, verdict), url: item.url } as ImportOutcome;
  } catch (error) {
    if (!(error instanceof ManageError)) throw error;
    return { status: 'failed', ...item, reason: error.code, message: error.message, temporary: true };
  }
}
