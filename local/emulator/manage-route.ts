// The management API in `npm start`: `/_manage/<route>` on the emulator's
// port is the deployed HTTP API's `/<route>`. As API Gateway with IAM
// authorisation does, a request is first checked for a SigV4 signature made
// with the emulator's credentials (sigv4.ts; a refusal is a 403 and the
// handler never runs), then handed to the same handler (lambda/manage) as an
// HTTP API event of payload 2.0, built with the emulator's S3 client and the
// deployment's source bucket, prefixes and limits. With a JWT issuer, the
// `/_manage/user/` routes take a Bearer token (jwt.ts) in place of SigV4.
// The source bucket's CORS lets the playground's page post its uploads to
// LocalStack's S3. Imports run in this process (S3 Batch Operations does not
// run in LocalStack): the same per-key function over the items, a few at a
// time (lambda/manage/imports/local-jobs.ts).

import { PutBucketCorsCommand, type S3Client } from '@aws-sdk/client-s3';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { Logger } from '../../lambda/common/log';
import type { ManageConfig } from '../../lambda/manage/config';
import { createManageHandler } from '../../lambda/manage/handler';
import { JWT_ROUTE_PREFIX } from '../../lambda/manage/confine';
import { UPLOAD_CORS_RULE } from '../../lib/parts/buckets';
import type { ImportJobs } from '../../lambda/manage/imports/jobs';
import { functionUrlEvent } from './function-url';
import { verifyJwt, type JwtSettings } from './jwt';
import { EMULATOR_CREDENTIALS, verifySigV4, type ArrivedRequest, type SigV4Credentials } from './sigv4';

/** Where the routes are on the emulator's port: `/_manage/uploads` is the API's `/uploads`. */
export const MANAGE_PREFIX = '/_manage';

/** The largest request body read: Lambda's for a synchronous invocation (6 MB), which the deployed API's bodies pass through; 10,000 import items of about 600 bytes fit. */
export const MAX_MANAGE_BODY_BYTES = 6 * 1024 * 1024;

export interface ManageAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type ManageRoute = (request: ArrivedRequest) => Promise<ManageAnswer>;

/** The types API Gateway passes as text; any other body is base64 in the event. */
const TEXT_TYPES = /^(application\/(json|[\w.+-]+\+json|x-www-form-urlencoded|xml)|text\/)/i;

/** A header's values as API Gateway gives them to a payload 2.0 event: lower-case names, repeated values joined by commas. */
function eventHeaders(headers: ArrivedRequest['headers']): Record<string, string> {
  const joined: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) joined[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  }
  return joined;
}

/** The query's parameters, decoded, a repeated one's values joined by commas; undefined when there are none. */
function queryParameters(query: string): Record<string, string> | undefined {
  const parameters: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(query)) parameters[name] = name in parameters ? `${parameters[name]},${value}` : value;
  return Object.keys(parameters).length > 0 ? parameters : undefined;
}

/** The HTTP API event (payload 2.0) of a request to `/_manage<path>`: the path the deployed API would see, the rest as sent. */
export function manageEvent(request: ArrivedRequest): APIGatewayProxyEventV2 {
  const rawPath = request.path.slice(MANAGE_PREFIX.length) || '/';
  const headers = eventHeaders(request.headers);
  const base = functionUrlEvent(rawPath + (request.query ? '?' + request.query : ''), request.method.toUpperCase(), headers);
  const text = request.body.length === 0 || TEXT_TYPES.test(headers['content-type'] ?? 'application/json');
  return {
    ...base,
    routeKey: '$default',
    queryStringParameters: queryParameters(request.query),
    body: request.body.length === 0 ? undefined : request.body.toString(text ? 'utf8' : 'base64'),
    isBase64Encoded: !text,
  };
}

/** `event` as API Gateway's JWT authoriser hands it on, having verified a token with `claims`. */
export function withJwtClaims(event: APIGatewayProxyEventV2, claims: Record<string, unknown>): APIGatewayProxyEventV2 {
  const requestContext = { ...event.requestContext, authorizer: { jwt: { claims, scopes: null } } };
  return { ...event, requestContext } as APIGatewayProxyEventV2;
}

const refused = (status: 401 | 403, error: string, message: string): ManageAnswer => ({
  status,
  headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
  body: JSON.stringify({ error, message }),
});

/**
 * The `/_manage/` routes: a signed request answered by the management handler,
 * any other a 403 `{error, message}` saying what is wrong with its signature.
 * With `jwt`, the `/_manage/user/` routes take a Bearer token instead, as the
 * deployed JWT authoriser's do: one it refuses is a 401 `{error, message}`.
 */
export function createManageRoute(options: {
  s3: S3Client;
  config: ManageConfig;
  /** The emulator's import runner. */
  imports: ImportJobs;
  credentials?: SigV4Credentials;
  jwt?: JwtSettings;
  log?: Logger;
  /** The time signatures and tokens are checked against (tests). */
  now?: () => number;
}): ManageRoute {
  const credentials = options.credentials ?? EMULATOR_CREDENTIALS;
  const handle = createManageHandler({ s3: options.s3, imports: options.imports }, options.config, options.log);
  return async (request) => {
    const now = options.now?.() ?? Date.now();
    let event = manageEvent(request);
    if (options.jwt && request.path.startsWith(MANAGE_PREFIX + JWT_ROUTE_PREFIX + '/')) {
      const verified = verifyJwt(event.headers.authorization, options.jwt, now);
      if ('refusal' in verified) return refused(401, verified.refusal.error, verified.refusal.message);
      event = withJwtClaims(event, verified.claims);
    } else {
      const refusal = verifySigV4(request, credentials, now);
      if (refusal) return refused(403, refusal.error, refusal.message);
    }
    const response = await handle(event);
    return { status: response.statusCode, headers: response.headers, body: response.body };
  };
}

/**
 * The source bucket's CORS for the playground's upload: the construct's rule for
 * `manageCorsOrigins`, here for the emulator's own origins, so that a page it
 * serves may post a presigned upload straight to LocalStack's S3 and read the
 * answer. An S3 without bucket CORS (some S3-compatible servers) only costs the
 * playground its upload: logged, not fatal.
 */
export async function allowUploadsFrom(s3: S3Client, bucket: string, origins: string[], log: (line: string) => void): Promise<void> {
  const rule = UPLOAD_CORS_RULE;
  const CORSRules = [
    {
      ID: rule.id,
      AllowedMethods: [rule.method],
      AllowedOrigins: origins,
      ExposeHeaders: [...rule.exposedHeaders],
      MaxAgeSeconds: rule.maxAgeSeconds,
    },
  ];
  try {
    await s3.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules } }));
  } catch (error) {
    log(`the playground cannot upload: S3 refused the CORS of bucket ${bucket} (${(error as Error).message})`);
  }
}

/** A request body over the limit: refused before it is read to its end, and not signed-checked. */
export const tooLargeAnswer = (): ManageAnswer => ({
  status: 413,
  headers: { 'content-type': 'application/json', 'cache-control': 'no-store', connection: 'close' },
  body: JSON.stringify({ error: 'body_too_large', message: `A management request's body is at most ${MAX_MANAGE_BODY_BYTES} bytes.` }),
});
