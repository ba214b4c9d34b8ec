// What the project's own Lambdas (origin, invalidation, concurrency cap) share:
// bundled from this checkout, on arm64, each with its own log group and a role
// of its own that writes only there.

import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { ResolvedSettings } from '../resolved-settings';

/** Where the project lives: entries, lock file and package.json are found from here. */
export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The entry file of one of the project's Lambdas, e.g. `lambdaEntry('origin')`. */
export const lambdaEntry = (name: 'origin' | 'invalidate' | 'concurrency'): string => join(PROJECT_ROOT, 'lambda', name, 'index.ts');

/** The newest Node.js Lambda runtime in aws-cdk-lib 2.276 (nodejs24.x). */
const RUNTIME = lambda.Runtime.NODEJS_24_X;

/** What every Lambda of the project shares: bundled from this checkout, on arm64. */
export const PROJECT_FUNCTION = {
  handler: 'handler',
  projectRoot: PROJECT_ROOT,
  depsLockFilePath: join(PROJECT_ROOT, 'package-lock.json'),
  runtime: RUNTIME,
  architecture: lambda.Architecture.ARM_64,
};

/** How the small Lambdas (invalidation, concurrency cap) are bundled: the SDK with them, as tested. */
export const SMALL_BUNDLING = { minify: true, sourceMap: true, sourcesContent: false, bundleAwsSDK: true };

/**
 * `<name>Logs` and `<name>Role`, created in `scope`: a log group and a Lambda
 * role that may write to it. Own roles, without AWSLambdaBasicExecutionRole:
 * each Lambda logs to its own log group only.
 */
export function ownLogsAndRole(
  scope: Construct,
  name: string,
  description: string,
  settings: Pick<ResolvedSettings, 'logRetention' | 'removalPolicy'>,
): { logGroup: logs.LogGroup; role: iam.Role } {
  const logGroup = new logs.LogGroup(scope, `${name}Logs`, { retention: settings.logRetention, removalPolicy: settings.removalPolicy });
  const role = new iam.Role(scope, `${name}Role`, { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'), description });
  logGroup.grantWrite(role);
  return { logGroup, role };
}
