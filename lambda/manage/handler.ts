// The management API's handler: an API Gateway HTTP API event (payload 2.0)
// in, a JSON answer out. It routes to the handlers of uploads.ts, images.ts,
// delete.ts and imports/jobs.ts, which take their clients as arguments (an
// import's job runner among them); every refusal is a
// precise status with `{error, message}`, an unknown path a 404 and a known
// path's other methods a 405 that says which it allows.

import type { S3Client } from '@aws-sdk/client-s3';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { errorStack, type Logger } from '../common/log';
import { readBody } from './body';
import type { ManageConfig } from './config';
import { DELETE_FIELDS, deleteImages, readDeleteKeys } from './delete';
import { ManageError } from './errors';
import { imageStatus, listImages } from './images';
import { createImport, IMPORT_FIELDS, importStatus, type ImportJobs } from './imports/jobs';
import { createUpload, readUploadRequest, UPLOAD_FIELDS } from './uploads';

export interface ManageClients {
  s3: S3Client;
  /** Runs imports (in the emulator, a loop in its process); without it, the API has no /imports routes. */
  imports?: ImportJobs;
}

export type ManageResponse = APIGatewayProxyStructuredResultV2 & { statusCode: number; body: string; headers: Record<string, string> };

export type ManageHandler = (event: APIGatewayProxyEventV2) => Promise<ManageResponse>;

/** A JSON answer; never cached (a status changes as an upload is validated). */
export const jsonResponse = (statusCode: number, body: unknown, headers: Record<string, string> = {}): ManageResponse => ({
  statusCode,
  headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
  body: JSON.stringify(body),
});

const errorResponse = (error: ManageError, headers?: Record<string, string>) =>
  jsonResponse(error.status, { error: error.code, message: error.message }, headers);

type Route = (event: APIGatewayProxyEventV2, path: string) => Promise<ManageResponse>;

/** The key of a `/images/{key}` path (or the id of an `/imports/{id}` one), percent-decoded. */
function pathKey(path: string, route = '/images/'): string {
  try {
    return decodeURIComponent(path.slice(route.length));
  } catch {
    throw new ManageError('invalid_key', 'The key in the path is not valid percent-encoded UTF-8.');
  }
}

/** The query's parameters, none but `names`. */
function query(event: APIGatewayProxyEventV2, names: readonly string[]): Record<string, string | undefined> {
  const parameters = event.queryStringParameters ?? {};
  const unknown = Object.keys(parameters).find((name) => !names.includes(name));
  if (unknown !== undefined)
    throw new ManageError('invalid_query', `The query parameter ${JSON.stringify(unknown)} is not one of ${names.join(', ')}.`);
  return parameters;
}

/** The routes by path (a `/images/{key}` path is `/images/*`, an `/imports/{id}` one `/imports/*`), then by method. */
function routes(clients: ManageClients, config: ManageConfig): Record<string, Record<string, Route>> {
  return {
    '/uploads': {
      POST: async (event) => {
        const request = readUploadRequest(readBody(event.body, event.isBase64Encoded, UPLOAD_FIELDS), config);
        return jsonResponse(200, await createUpload(clients, config, request));
      },
    },
    '/images': {
      GET: async (event) => jsonResponse(200, await listImages(clients, config, query(event, ['prefix', 'limit', 'cursor']))),
      DELETE: async (event) => {
        const keys = readDeleteKeys(readBody(event.body, event.isBase64Encoded, DELETE_FIELDS), config);
        const report = await deleteImages(clients, config, keys);
        return jsonResponse(report.failed_count === 0 ? 200 : 207, report);
      },
    },
    '/images/*': {
      GET: async (event, path) => {
        query(event, []);
        const status = await imageStatus(clients, config, pathKey(path));
        if (status) return jsonResponse(200, status);
        throw new ManageError('not_found', `No image, upload or quarantined upload has the key ${JSON.stringify(pathKey(path))}.`);
      },
    },
    ...(clients.imports && importRoutes(clients.s3, config, clients.imports)),
  };
}

/** `/imports` and `/imports/{id}`, run by `imports`. */
function importRoutes(s3: S3Client, config: ManageConfig, imports: ImportJobs): Record<string, Record<string, Route>> {
  return {
    '/imports': {
      POST: async (event) =>
        jsonResponse(202, await createImport(s3, config, imports, readBody(event.body, event.isBase64Encoded, IMPORT_FIELDS))),
    },
    '/imports/*': {
      GET: async (event, path) => {
        query(event, []);
        return jsonResponse(200, await importStatus(imports, pathKey(path, '/imports/')));
      },
    },
  };
}

/** The routes of `path`: its own, or its pattern's (`/images/*`, `/imports/*`). */
function routesOf(table: ReturnType<typeof routes>, path: string): Record<string, Route> | undefined {
  const pattern = ['/images/', '/imports/'].find((prefix) => path.startsWith(prefix) && path.length > prefix.length);
  return table[path] ?? (pattern === undefined ? undefined : table[pattern + '*']);
}

export function createManageHandler(clients: ManageClients, config: ManageConfig, log: Logger = () => {}): ManageHandler {
  const table = routes(clients, config);
  return async (event) => {
    const method = event.requestContext.http.method;
    const path = event.rawPath;
    const byMethod = routesOf(table, path);
    try {
      if (!byMethod) {
        const paths = Object.keys(table).map((known) => known.replace('/images/*', '/images/{key}').replace('/imports/*', '/imports/{id}'));
        throw new ManageError('route_not_found', `No route is ${path}; the API has ${paths.join(', ')}.`);
      }
      const route = byMethod[method];
      if (!route) {
        const allowed = Object.keys(byMethod).join(', ');
        return errorResponse(new ManageError('method_not_allowed', `${method} is not allowed on ${path}; use ${allowed}.`), {
          allow: allowed,
        });
      }
      return await route(event, path);
    } catch (error) {
      if (error instanceof ManageError) {
        if (error.status >= 500) log({ level: 'error', event: 'manage_error', method, path, code: error.code, detail: error.detail });
        return errorResponse(error);
      }
      log({ level: 'error', event: 'unexpected', method, path, detail: errorStack(error) });
      return errorResponse(new ManageError('internal_error', 'The service failed unexpectedly; try again shortly.'));
    }
  };
}
