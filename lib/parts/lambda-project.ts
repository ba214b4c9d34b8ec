// What the project's own Lambdas (origin, invalidation, concurrency cap, edge data, management) share:
// bundled at synth from their TypeScript sources (a checkout's, or those the package
// ships), on arm64, each with its own log group and a role of its own that writes only there.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type CfnElement, CfnResource, Duration, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as customResources from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { PROJECT_ROOT } from '../project-root';
import type { ResolvedSettings } from '../resolved-settings';
import { acknowledge, wildcardFinding } from './nag';

export { PROJECT_ROOT };

/**
 * A checkout bundles with its own lock file. An installed package has none (npm
 * never publishes one): CDK then takes the app's lock file, found from the
 * working directory, and that folder as the project root.
 */
const LOCK_FILE = join(PROJECT_ROOT, 'package-lock.json');
const BUNDLING_ROOT = existsSync(LOCK_FILE) ? { projectRoot: PROJECT_ROOT, depsLockFilePath: LOCK_FILE } : {};

/** The entry file of one of the project's Lambdas, e.g. `lambdaEntry('origin')`, or `lambdaEntry('manage', 'api')` for one of a folder's several. */
export const lambdaEntry = (name: 'origin' | 'invalidate' | 'concurrency' | 'edge-data' | 'manage', file = 'index'): string =>
  join(PROJECT_ROOT, 'lambda', name, `${file}.ts`);

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
  /** The onEvent handler's entry (`lambdaEntry`). */
  readonly entry: string;
  readonly description: string;
  /** What the handler's role is for. */
  readonly roleDescription: string;
  /** What the handler's role may do besides writing its logs. */
  readonly statements: iam.PolicyStatement[];
  /** The longest one request may take. */
  readonly timeoutSeconds: number;
}

/**
 * One of the project's custom resources behind CDK's Provider framework,
 * created in `scope`: the onEvent handler `<name>Handler` (small, bundled with
 * its SDK, run once per deploy) with `<name>HandlerLogs` and `<name>HandlerRole`,
 * the only role given `statements`; and the framework's Lambda, which answers
 * CloudFormation, with `<name>Logs` and `<name>Role` (invoke the handler,
 * write its logs). Returns the provider and the handler's role.
 *
 * The framework's Lambda keeps the logical ID of `<name>Function`, the Lambda
 * that answered CloudFormation itself before: CloudFormation refuses to change
 * a custom resource's ServiceToken, so a deployed stack keeps the function its
 * resource calls, and that function gets the framework's code.
 */
export function customResourceProvider(
  scope: Construct,
  name: string,
  props: CustomResourceProviderProps,
): { provider: customResources.Provider; role: iam.Role } {
  const handler = ownLogsAndRole(scope, `${name}Handler`, props.roleDescription, props);
  for (const statement of props.statements) handler.role.addToPolicy(statement);
  const onEventHandler = new nodejs.NodejsFunction(scope, `${name}Handler`, {
    description: props.description,
    entry: props.entry,
    ...PROJECT_FUNCTION,
    memorySize: 256,
    timeout: Duration.seconds(props.timeoutSeconds),
    role: handler.role,
    logGroup: handler.logGroup,
    bundling: SMALL_BUNDLING,
  });
  const framework = ownLogsAndRole(
    scope,
    name,
    `edge-image-transformer ${name} custom resource: CDK's Provider framework, answers CloudFormation for ${name}Handler`,
    props,
  );
  const provider = new customResources.Provider(scope, `${name}Provider`, {
    onEventHandler,
    frameworkOnEventRole: framework.role,
    logGroup: framework.logGroup,
  });
  const frameworkFunction = provider.node.findChild('framework-onEvent').node.defaultChild as CfnElement;
  frameworkFunction.overrideLogicalId(formerLogicalId(scope, `${name}Function`));
  acknowledge(
    framework.role,
    wildcardFinding(scope, `${onEventHandler.functionArn}:*`),
    `CDK's Provider framework grants invoking ${name}Handler with grantInvoke, which names its versions and aliases too (":*"); ` +
      'the handler is the only function it may invoke.',
  );
  return { provider, role: handler.role };
}

/** The logical ID of the L1 resource a construct `id` made in `scope` (its `Resource`), for a successor to keep. */
function formerLogicalId(scope: Construct, id: string): string {
  const probe = new CfnResource(new Construct(scope, id), 'Resource', { type: 'AWS::CloudFormation::WaitConditionHandle' });
  const logicalId = Stack.of(scope).getLogicalId(probe);
  scope.node.tryRemoveChild(id);
  return logicalId;
}
