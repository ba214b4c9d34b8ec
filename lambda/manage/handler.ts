// The management API's handler: an API Gateway HTTP API event (payload 2.0)
// in, a JSON answer out. It routes to the handlers of uploads.ts, images.ts,
// delete.ts and imports/jobs.ts, which take their clients as arguments (an
// import's job runner among them); every refusal is a
// precise status with `{error, message}`, an unknown path a 404 and a known
// path's other methods a 405 that says which it allows. A JWT caller's routes
// are the same under /user, and each confines it to its prefix (confine.ts).

import type { S3Client } from '@aws-sdk/client-s3';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { errorStack, type Logger } from '../common/log';
import { DELETE_BODY, IMPORT_BODY, LIST_QUERY, UPLOAD_BODY } from './api-schema';
import { readBody } from './body';
import type { ManageConfig } from './config';
import { deleteImages, readDeleteKeys } from './delete';
import { callerOf, confineKey, confinePrefix, JWT_ROUTE_PREFIX, refuseConfined, type Caller } from './confine';
import { ManageError } from './errors';
import { imageStatus, listImages } from './images';
import { createImport, importStatus, type ImportJobs } from './imports/jobs';
import type { Field } from './schema';
import { createUpload, readUploadRequest } from './uploads';

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

type Route = (event: APIGatewayProxyEventV2, path: string, caller: Caller) => Promise<ManageResponse>;

/** The key of a `/images/{key}` path (or the id of an `/imports/{id}` one), percent-decoded. */
function pathKey(path: string, route = '/images/'): string {
  try {
    return decodeURIComponent(path.slice(route.length));
  } catch {
    throw new ManageError('invalid_key', 'The key in the path is not valid percent-encoded UTF-8.');
  }
}

/** The query's parameters, none but those `declared`. */
function query(event: APIGatewayProxyEventV2, declared: readonly Field[] = []): Record<string, string | undefined> {
  const names = declared.map((field) => field.name);
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
      POST: async (event, _path, caller) => {
        const request = readUploadRequest(readBody(event.body, event.isBase64Encoded, UPLOAD_BODY), config);
        confineKey(caller, request.key);
        return jsonResponse(200, await createUpload(clients, config, request));
      },
    },
    '/images': {
      GET: async (event, _path, caller) => {
        const listing = query(event, LIST_QUERY);
        return jsonResponse(200, await listImages(clients, config, { ...listing, prefix: confinePrefix(caller, listing.prefix) }));
      },
      DELETE: async (event, _path, caller) => {
        const keys = readDeleteKeys(readBody(event.body, event.isBase64Encoded, DELETE_BODY), config);
        keys.forEach((key, index) => confineKey(caller, key, `keys[${index}]`));
        const report = await deleteImages(clients, config, keys);
        return jsonResponse(report.failed_count === 0 ? 200 : 207, report);
      },
    },
    '/images/*': {
      GET: async (event, path, caller) => {
        query(event);
        const key = pathKey(path);
        confineKey(caller, key);
        const status = await imageStatus(clients, config, key);
        if (status) return jsonResponse(200, status);
        throw new ManageError('not_found', `No image, upload or quarantined upload has the key ${JSON.stringify(key)}.`);
      },
    },
    ...(clients.imports && importRoutes(clients.s3, config, clients.imports)),
  };
}

/** `/imports` and `/imports/{id}`, run by `imports`; a JWT caller's never (its prefix could not bound a manifest's keys). */
function importRoutes(s3: S3Client, config: ManageConfig, imports: ImportJobs): Record<string, Record<string, Route>> {
  return {
    '/imports': {
      POST: async (event, _path, caller) => {
        refuseConfined(caller, 'Imports');
        return jsonResponse(202, await createImport(s3, config, imports, readBody(event.body, event.isBase64Encoded, IMPORT_BODY)));
      },
    },
    '/imports/*': {
      GET: async (event, path, caller) => {
        refuseConfined(caller, 'Imports');
        query(event);
        return jsonResponse(200, await importStatus(imports, pathKey(path, '/imports/')));
      },
    },
  };
}

/**
 * The routes' paths are under JWT_ROUTE_PREFIX for a JWT caller (the JWT
 * authoriser's routes) and not for an IAM caller, so neither reaches the
 * other's routes: such a path is an unknown route.
 */
const routesBase = (caller: Caller): string => (caller.prefix === undefined ? '' : JWT_ROUTE_PREFIX);

/** The route's path of `path` (`/images/{key}`'s as is) for a caller whose routes are under `base`, or undefined. */
function routePath(path: string, base: string): string | undefined {
  if (base === '') return path.startsWith(JWT_ROUTE_PREFIX + '/') ? undefined : path;
  return path.startsWith(base + '/') ? path.slice(base.length) : undefined;
}

/** The routes of a route's path: its own, or its pattern's (`/images/*`, `/imports/*`). */
function routesOf(table: ReturnType<typeof routes>, route: string): Record<string, Route> | undefined {
  const pattern = ['/images/', '/imports/'].find((prefix) => route.startsWith(prefix) && route.length > prefix.length);
  return table[route] ?? (pattern === undefined ? undefined : table[pattern + '*']);
}

export function createManageHandler(clients: ManageClients, config: ManageConfig, log: Logger = () => {}): ManageHandler {
  const table = routes(clients, config);
  return async (event) => {
    const method = event.requestContext.http.method;
    const path = event.rawPath;
    try {
      const caller = callerOf(event, config.jwtPrefix);
      const base = routesBase(caller);
      const route = routePath(path, base) ?? '';
      const byMethod = routesOf(table, route);
      if (!byMethod) {
        const paths = Object.keys(table).map(
          (known) => base + known.replace('/images/*', '/images/{key}').replace('/imports/*', '/imports/{id}'),
        );
        throw new ManageError('route_not_found', `No route is ${path}; the API has ${paths.join(', ')}.`);
      }
      const handle = byMethod[method];
      if (!handle) {
        const allowed = Object.keys(byMethod).join(', ');
        return errorResponse(new ManageError('method_not_allowed', `${method} is not allowed on ${path}; use ${allowed}.`), {
          allow: allowed,
        });
      }
      return await handle(event, route, caller);
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
