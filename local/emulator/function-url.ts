// Function URL events and results: how CloudFront (through a Lambda Function
// URL) hands a request to the origin handler, and how its answer comes back.
// Used by the local emulator to invoke the real handler in-process.

import type { LambdaFunctionURLEvent } from 'aws-lambda';
import type { ErrorCode } from '../../lambda/origin/errors';
import type { Description } from '../../lambda/origin/image/describe';
import type { FunctionUrlResponse } from '../../lambda/origin/responses';

/** The JSON body of every error response. */
export interface ErrorBody {
  error: ErrorCode;
  message: string;
}

export interface OriginResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The JSON body: an error's by default, or format=json's `Description` when the caller names it. */
  json<Body extends ErrorBody | Description = ErrorBody>(): Body;
}

/** A Function URL event for `uri` (path and optional `?query`), as Lambda builds it. */
export function functionUrlEvent(uri: string, method = 'GET', headers: Record<string, string> = {}): LambdaFunctionURLEvent {
  const [rawPath = '', rawQueryString = ''] = uri.split('?');
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    headers,
    isBase64Encoded: false,
    requestContext: {
      accountId: 'anonymous',
      apiId: 'test',
      domainName: 'test.lambda-url.us-east-1.on.aws',
      domainPrefix: 'test',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'vitest' },
      requestId: 'test',
      routeKey: '$default',
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
  };
}

/** The handler's result as status, lower-case headers and body bytes. */
export function decodeResult({ statusCode, headers, body }: FunctionUrlResponse): OriginResponse {
  return { status: statusCode, headers, body, json: <Body>() => JSON.parse(body.toString('utf8')) as Body };
}
