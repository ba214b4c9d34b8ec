// `edge-image-transformer/manage`: a typed client of the management API for
// servers, each call signed with SigV4 (service execute-api) with the AWS
// SDK's credential chain unless credentials are given. Its types are the
// ones the API's records declare (../api-schema.ts). Bounds: a wait polls at
// most until its timeout (60 s by default); a delete sends its keys 100 at a
// time, one batch after another; a throttled or unavailable call is tried
// again at most 3 times (signed-fetch.ts).

import {
  DELETE_BODY,
  type DeleteReport,
  type ImageListing,
  type ImageStatus,
  type ImportItem,
  type ImportStarted,
  type ImportStatus,
  type UploadTicket,
} from '../api-schema';
import { sourceKey } from '../body';
import { ManageError } from '../errors';
import { ManageApiError, signedFetch, type CredentialSource } from './signed-fetch';

export { ManageApiError, type CredentialSource, type Credentials } from './signed-fetch';
export type { DeleteReport, ImageListing, ImageStatus, ImportItem, ImportStarted, ImportStatus, UploadTicket } from '../api-schema';

export interface ManageClientOptions {
  /** The API's URL: the stack's ManageApiUrl output, or the emulator's `http://127.0.0.1:3000/_manage`. */
  endpoint: string;
  /** The API's region: by default the one in an execute-api endpoint's host name, else $AWS_REGION. */
  region?: string;
  /** Who signs: by default the AWS SDK's credential chain (environment, profile, SSO, instance role...). */
  credentials?: CredentialSource;
  /** The fetch the calls go through; the global one by default. */
  fetch?: typeof fetch;
}

export interface WaitOptions {
  /** How long to wait for the validator, in ms (default 60 000). */
  timeoutMs?: number;
  /** How often to ask, in ms (default 1000). */
  intervalMs?: number;
}

export interface UploadOptions {
  contentType: string;
  /** How long the presigned POST may be used, in seconds (the API's default 900). */
  expiresIn?: number;
  /** Wait for the validator's verdict (ready or quarantined) after the upload. */
  waitUntilReady?: boolean | WaitOptions;
}

export interface UploadResult {
  ticket: UploadTicket;
  /** With waitUntilReady: the status the wait ended on, `ready` or `quarantined`. */
  status?: ImageStatus;
}

export type ListedImage = ImageListing['images'][number];

export interface ManageClient {
  /** Asks for a presigned POST, posts the file to S3 with its form fields, and optionally waits for the validator. */
  upload(key: string, file: Uint8Array | Blob, options: UploadOptions): Promise<UploadResult>;
  /** Polls the key's status until it is not pending; a timeout is an Error. */
  waitUntilReady(key: string, options?: WaitOptions): Promise<ImageStatus>;
  status(key: string): Promise<ImageStatus>;
  /** One page of the ready sources under `prefix`. */
  list(query?: { prefix?: string; limit?: number; cursor?: string }): Promise<ImageListing>;
  /** Every ready source under `prefix`, page after page (`limit` a page). */
  images(query?: { prefix?: string; limit?: number }): AsyncIterable<ListedImage>;
  /**
   * Deletes the keys 100 at a time and merges the batches' reports. Every key is checked first:
   * one that is not a source key refuses the whole call (a ManageApiError 400) before anything is deleted.
   */
  delete(keys: readonly string[], options?: { onBatch?(report: DeleteReport): void }): Promise<DeleteReport>;
  startImport(source: readonly ImportItem[] | { manifestKey: string }): Promise<ImportStarted>;
  importStatus(id: string): Promise<ImportStatus>;
}

/** The region of an execute-api endpoint's host name. */
const endpointRegion = (endpoint: string) => /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com$/.exec(new URL(endpoint).hostname)?.[1];

const MAX_DELETE_KEYS = DELETE_BODY[0].schema.maxItems;

const emptyReport = (): DeleteReport => ({ failed_count: 0, failed_files: [], succeeded_count: 0, succeeded_files: [] });

function mergeReports(into: DeleteReport, report: DeleteReport): void {
  into.failed_count += report.failed_count;
  into.failed_files.push(...report.failed_files);
  into.succeeded_count += report.succeeded_count;
  into.succeeded_files.push(...report.succeeded_files);
}

/** Checks every key as the API would, naming it by its index in `keys`. */
function checkKeys(keys: readonly string[]): void {
  if (keys.length === 0) throw new ManageApiError(400, 'invalid_field', 'Name at least one key to delete.');
  keys.forEach((key, index) => {
    try {
      sourceKey(key, `keys[${index}]`);
    } catch (error) {
      if (error instanceof ManageError) throw new ManageApiError(error.status, error.code, error.message);
      throw error;
    }
  });
}

/** Posts `file` to S3 with the ticket's form fields before it, as a browser's form would. */
async function postForm(send: typeof fetch, ticket: UploadTicket, file: Uint8Array | Blob, contentType: string): Promise<void> {
  const form = new FormData();
  for (const [name, value] of Object.entries(ticket.fields)) form.append(name, value);
  // The file goes last: S3 ignores any field after it.
  form.append('file', file instanceof Blob ? file : new Blob([file], { type: contentType }), 'upload');
  const response = await send(ticket.url, { method: 'POST', body: form });
  if (response.ok) return void (await response.body?.cancel());
  const xml = await response.text();
  // S3's error is XML with flat <Code> and <Message>; read by position, in linear time.
  const tag = (name: string) => {
    const start = xml.indexOf(`<${name}>`);
    const end = start < 0 ? -1 : xml.indexOf(`</${name}>`, start);
    return end < 0 ? undefined : xml.slice(start + name.length + 2, end);
  };
  throw new ManageApiError(response.status, tag('Code') ?? `http_${response.status}`, `S3 refused the upload: ${tag('Message') ?? xml}`);
}

export function createManageClient(options: ManageClientOptions): ManageClient {
  const region = options.region ?? endpointRegion(options.endpoint) ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  if (!region) throw new Error(`The region of ${options.endpoint} is needed: give region (or set AWS_REGION).`);
  const call = signedFetch({ ...options, region });
  const send = options.fetch ?? fetch;
  const keyPath = (key: string) => `/images/${encodeURIComponent(key)}`;

  const client: ManageClient = {
    async status(key) {
      return (await call<ImageStatus>('GET', keyPath(key))).body;
    },
    async waitUntilReady(key, { timeoutMs = 60_000, intervalMs = 1000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const status = await client.status(key);
        if (status.status !== 'pending') return status;
        if (Date.now() + intervalMs > deadline) throw new Error(`${key} was still pending after ${timeoutMs} ms.`);
        await new Promise((resolve) => setTimeout(resolve, intervalMs));
      }
    },
    async upload(key, file, { contentType, expiresIn, waitUntilReady }) {
      const contentLength = file instanceof Blob ? file.size : file.byteLength;
      const request = { key, contentType, contentLength, ...(expiresIn === undefined ? {} : { expiresIn }) };
      const ticket = (await call<UploadTicket>('POST', '/uploads', { body: request })).body;
      await postForm(send, ticket, file, contentType);
      if (!waitUntilReady) return { ticket };
      return { ticket, status: await client.waitUntilReady(key, waitUntilReady === true ? {} : waitUntilReady) };
    },
    async list({ prefix, limit, cursor } = {}) {
      const query = Object.entries({ prefix, limit: limit === undefined ? undefined : String(limit), cursor }).filter(
        (entry): entry is [string, string] => entry[1] !== undefined,
      );
      return (await call<ImageListing>('GET', '/images', { query: Object.fromEntries(query) })).body;
    },
    async *images({ prefix, limit } = {}) {
      let cursor: string | undefined;
      do {
        const page = await client.list({ prefix, limit, cursor });
        yield* page.images;
        cursor = page.cursor;
      } while (cursor !== undefined);
    },
    async delete(keys, { onBatch } = {}) {
      checkKeys(keys);
      const merged = emptyReport();
      for (let start = 0; start < keys.length; start += MAX_DELETE_KEYS) {
        const batch = keys.slice(start, start + MAX_DELETE_KEYS);
        const report = (await call<DeleteReport>('DELETE', '/images', { body: { keys: batch } })).body;
        mergeReports(merged, report);
        onBatch?.(report);
      }
      return merged;
    },
    async startImport(source) {
      const body = 'manifestKey' in source ? { manifestKey: source.manifestKey } : { items: source };
      return (await call<ImportStarted>('POST', '/imports', { body })).body;
    },
    async importStatus(id) {
      return (await call<ImportStatus>('GET', `/imports/${encodeURIComponent(id)}`)).body;
    },
  };
  return client;
}
