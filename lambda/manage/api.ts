// The management API's Lambda entry point, behind the HTTP API (payload 2.0,
// IAM-authorised: lib/parts/manage.ts). Its settings are read from the
// environment and its clients made on the first request, as in the origin;
// the S3 client's bounds are the origin's, so a storage that does not answer
// is a 503 in seconds, far inside the API's 30-second integration timeout.
// Imports run as S3 Batch Operations jobs (imports/s3-control-jobs.ts) where
// the construct gave the importer's and the job role's ARNs.

import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { CreateJobCommand, DescribeJobCommand, S3ControlClient } from '@aws-sdk/client-s3-control';
import type { S3Client } from '@aws-sdk/client-s3';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { Env } from '../common/env';
import { jsonLogger } from '../common/log';
import { originS3Client } from '../origin/storage';
import { readManageConfig, type ManageConfig } from './config';
import { createManageHandler, type ManageHandler, type ManageResponse } from './handler';
import type { ImportJobs } from './imports/jobs';
import { s3ControlJobs, type CreateJobInput } from './imports/s3-control-jobs';

let handle: ManageHandler | undefined;

/** S3 Batch Operations' runner, when the construct deployed imports: its account is the importer's (its ARN's fifth field). */
function batchImports(s3: S3Client, config: ManageConfig, env: Env): ImportJobs | undefined {
  const [functionArn, roleArn] = [env.IMPORT_FUNCTION_ARN, env.IMPORT_ROLE_ARN];
  if (!functionArn || !roleArn) return undefined;
  const control = new S3ControlClient({});
  const lambda = new LambdaClient({});
  const services = {
    control: {
      createJob: (input: CreateJobInput) => control.send(new CreateJobCommand(input)),
      describeJob: (input: { AccountId: string; JobId: string }) => control.send(new DescribeJobCommand(input)),
    },
    prepare: async (event: object) => {
      await lambda.send(new InvokeCommand({ FunctionName: functionArn, InvocationType: 'Event', Payload: JSON.stringify(event) }));
    },
  };
  const settings = {
    accountId: functionArn.split(':')[4]!,
    functionArn,
    roleArn,
    bucketArn: `arn:aws:s3:::${config.sourceBucket}`,
  };
  return s3ControlJobs(s3, services, config, settings);
}

export async function handler(event: APIGatewayProxyEventV2): Promise<ManageResponse> {
  if (!handle) {
    const s3 = originS3Client();
    const config = readManageConfig(process.env);
    handle = createManageHandler({ s3, imports: batchImports(s3, config, process.env) }, config, jsonLogger);
  }
  return handle(event);
}
