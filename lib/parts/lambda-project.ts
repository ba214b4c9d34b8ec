// What the project's own Lambdas (origin, invalidation, concurrency cap, edge data) share:
// bundled at synth from their TypeScript sources (a checkout's, or those the package
// ships), on arm64, each with its own log group and a role of its own that writes only there.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { PROJECT_ROOT } from '../project-root';
import type { ResolvedSettings } from '../resolved-settings';

export { PROJECT_ROOT };

/**
 * A checkout bundles with its own lock file. An installed package has none (npm
 * never publishes one): CDK then takes the app's lock file, found from the
 * working directory, and that folder as the project root.
 */
const LOCK_FILE = join(PROJECT_ROOT, 'package-lock.json');
const BUNDLING_ROOT = existsSync(LOCK_FILE) ? { projectRoot: PROJECT_ROOT, depsLockFilePath: LOCK_FILE } : {};

/** The entry file of one of the project's Lambdas, e.g. `lambdaEntry('origin')`. */
export const lambdaEntry = (name: 'origin' | 'invalidate' | 'concurrency' | 'edge-data'): string =>
  join(PROJECT_ROOT, 'lambda', name, 'index.ts');

/** The newest Node.js Lambda runtime in aws-cdk-lib 2.276 (nodejs24.x). */
const RUNTIME = lambda.Runtime.NODEJS_24_X;

/** What every Lambda of the project shares: bundled from its TypeScript sources at synth, on arm64. */
export const PROJECT_FUNCTION = {
  handler: 'handler',
  ...BUNDLING_ROOT,
  runtime: RUNTIME,
  architecture: lambda.Architecture.ARM_64,
};

/** How the small Lambdas (invalidation, concurrency cap, edge data) are bundled: the SDK with them, as tested. */
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

export interface CustomResourceProviderProps extends Pick<ResolvedSettings, 'logRetention' | 'removalPolicy'> {
  /** The Lambda's entry (`lambdaEntry`). */
  readonly entry: string;
  readonly description: string;
  readonly roleDescription: string;
  /** What its role may do besides writing its logs. */
  readonly statements: iam.PolicyStatement[];
  /** The longest one request may take. */
  readonly timeoutSeconds: number;
}

/**
 * The Lambda behind one of the project's custom resources, created in `scope`
 * with `ownLogsAndRole` and named `<name>Function`: small, bundled with its
 * SDK, run once per deploy.
 */
export function customResourceProvider(
  scope: Construct,
  name: string,
  props: CustomResourceProviderProps,
): { provider: nodejs.NodejsFunction; role: iam.Role } {
  const { logGroup, role } = ownLogsAndRole(scope, name, props.roleDescription, props);
  for (const statement of props.statements) role.addToPolicy(statement);
  const provider = new nodejs.NodejsFunction(scope, `${name}Function`, {
    description: props.description,
    entry: props.entry,
    ...PROJECT_FUNCTION,
    memorySize: 256,
    timeout: Duration.seconds(props.timeoutSeconds),
    role,
    logGroup,
    bundling: SMALL_BUNDLING,
  });
  return { provider, role };
}
