// The management handlers on this run's LocalStack, each test file with its
// own buckets: API Gateway HTTP API (payload 2.0) events in, JSON out, and
// a browser's presigned POST made with Node's fetch and FormData.

import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll } from 'vitest';
import { functionUrlEvent } from '../../local/emulator/function-url';
import { withJwtClaims } from '../../local/emulator/manage-route';
import { originConfig, type OriginConfig } from '../../lambda/origin/config';
import { manageConfig, type ManageConfig, type ManageSettings } from '../../lambda/manage/config';
import { createManageHandler } from '../../lambda/manage/handler';
import type { ImportFetchRules } from '../../lambda/manage/imports/import-item';
import { createLocalImportJobs, type LocalImportJobs } from '../../lambda/manage/imports/local-jobs';
import type { UploadTicket } from '../../lambda/manage/uploads';
import { validateUpload } from '../../lambda/manage/validate';
import { createTestBuckets, listKeys, putObject, type TestBuckets } from '../support/s3';

export interface ManageAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
}

export interface TestManage extends TestBuckets {
  config: ManageConfig;
  logs: Record<string, unknown>[];
  /** The emulator's import runner, fetching with `importRules`. */
  imports: LocalImportJobs;
  /**
   * Calls the handler as API Gateway would: `path` may carry a query. `body` is sent as JSON unless a string.
   * With `claims`, as the JWT authoriser would, having verified a token that has them.
   */
  call(method: string, path: string, body?: unknown, claims?: Record<string, unknown>): Promise<ManageAnswer>;
  /** Asks for an upload of `key`, expecting a 200, and returns its ticket. */
  ticket(key: string, contentType: string, contentLength: number): Promise<UploadTicket>;
  /** Runs the validator on `key`'s staged upload, as its S3 event would. */
  validate(key: string): ReturnType<typeof validateUpload>;
  /** Puts an object at `key` of the source bucket as is. */
  put(key: string, body: Buffer | string, contentType?: string): Promise<void>;
  sourceKeys(): Promise<string[]>;
}

/**
 * An API Gateway HTTP API event (payload 2.0): a Function URL event's shape,
 * which is the same payload, with the query decoded as API Gateway decodes it.
 */
export function apiEvent(method: string, pathAndQuery: string, body?: string): APIGatewayProxyEventV2 {
  const event = functionUrlEvent(pathAndQuery, method, body === undefined ? {} : { 'content-type': 'application/json' });
  const query = event.rawQueryString ? { queryStringParameters: Object.fromEntries(new URLSearchParams(event.rawQueryString)) } : {};
  return { ...event, ...query, body };
}

/** Buckets and a handler of their own; `jwtPrefix` confines the calls made with claims, `importRules` are the imports' fetch seams. */
export async function createTestManage(
  label: string,
  overrides: Partial<OriginConfig> = {},
  { jwtPrefix, importRules = {}, ...settings }: Partial<ManageSettings> & { jwtPrefix?: string; importRules?: ImportFetchRules } = {},
): Promise<TestManage> {
  const buckets = await createTestBuckets(label);
  afterAll(() => buckets.cleanup());
  const config: ManageConfig = {
    ...manageConfig(originConfig(buckets, overrides), { stripLocation: settings.stripLocation ?? false }),
    ...(jwtPrefix ? { jwtPrefix } : {}),
  };
  const clients = { s3: buckets.s3 };
  const logs: Record<string, unknown>[] = [];
  const imports = createLocalImportJobs(clients, config, { rules: importRules, log: (entry) => logs.push(entry) });
  const handle = createManageHandler({ ...clients, imports }, config, (entry) => logs.push(entry));
  const call: TestManage['call'] = async (method, path, body, claims) => {
    const text = body === undefined || typeof body === 'string' ? body : JSON.stringify(body);
    const event = apiEvent(method, path, text);
    const response = await handle(claims ? withJwtClaims(event, claims) : event);
    return { status: response.statusCode, headers: response.headers, body: JSON.parse(response.body) };
  };
  return {
    ...buckets,
    config,
    logs,
    imports,
    call,
    ticket: async (key, contentType, contentLength) => {
      const answer = await call('POST', '/uploads', { key, contentType, contentLength });
      if (answer.status !== 200) throw new Error(`POST /uploads answered ${answer.status}: ${JSON.stringify(answer.body)}`);
      return answer.body as UploadTicket;
    },
    validate: (key) => validateUpload(clients, config, config.stagingPrefix + key),
    put: async (key, body, contentType) => {
      await putObject(buckets.s3, buckets.sourceBucket, key, body, contentType);
    },
    sourceKeys: () => listKeys(buckets.s3, buckets.sourceBucket),
  };
}

/** Posts `file` with the ticket's fields as a browser's form would; `fields` changes or adds some. */
export async function postUpload(
  ticket: UploadTicket,
  file: Buffer | string,
  fields: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  const form = new FormData();
  for (const [name, value] of Object.entries({ ...ticket.fields, ...fields })) form.append(name, value);
  // The file goes last: S3 ignores any field after it.
  form.append('file', new Blob([typeof file === 'string' ? file : new Uint8Array(file)]), 'upload');
  const response = await fetch(ticket.url, { method: 'POST', body: form });
  return { status: response.status, text: await response.text() };
}
