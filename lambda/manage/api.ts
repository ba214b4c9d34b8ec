// The management API's Lambda entry point, behind the HTTP API (payload 2.0,
// IAM-authorised: lib/parts/manage.ts). Its settings are read from the
// environment and its S3 client made on the first request, as in the origin;
// the client's bounds are the origin's, so a storage that does not answer is
// a 503 in seconds, far inside the API's 30-second integration timeout.

import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { jsonLogger } from '../common/log';
import { originS3Client } from '../origin/storage';
import { readManageConfig } from './config';
import { createManageHandler, type ManageHandler, type ManageResponse } from './handler';

let handle: ManageHandler | undefined;

export async function handler(event: APIGatewayProxyEventV2): Promise<ManageResponse> {
  handle ??= createManageHandler({ s3: originS3Client() }, readManageConfig(process.env), jsonLogger);
  return handle(event);
}
