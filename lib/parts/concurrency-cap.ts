// The custom resource that reserves min(cap, what the account can spare) of
// concurrency on the origin at deploy time (lambda/concurrency). Reserved
// concurrency is the function's, shared by all its versions: during a
// canary, both versions behind the live alias draw from it.

import { CustomResource, Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type { Construct } from 'constructs';
import type { ResolvedSettings } from '../resolved-settings';
import { PROJECT_FUNCTION, SMALL_BUNDLING, lambdaEntry, ownLogsAndRole } from './lambda-project';
import { acknowledge } from './nag';

export interface ConcurrencyCapProps extends Pick<ResolvedSettings, 'logRetention' | 'removalPolicy'> {
  /** The most to reserve; 0 removes any reservation the cap made. */
  readonly cap: number;
  /** The least to reserve: the provisioned concurrency, which needs that much. */
  readonly floor: number;
  readonly originFunction: lambda.IFunction;
  /** A new version means the function was updated: the cap is applied again after it. */
  readonly originVersion: lambda.IVersion;
}

/** Creates in `scope`: `ConcurrencyCapLogs`, `ConcurrencyCapRole`, `ConcurrencyCapFunction`, `OriginConcurrencyCap`. */
export function buildConcurrencyCap(scope: Construct, props: ConcurrencyCapProps): CustomResource {
  const { logGroup, role } = ownLogsAndRole(
    scope,
    'ConcurrencyCap',
    "edge-image-transformer concurrency cap: read the account's concurrency, set the origin's reservation",
    props,
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'ReadAccountConcurrency',
      actions: ['lambda:GetAccountSettings'],
      // An account-level read: it has no resource to name.
      resources: ['*'],
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'SetOriginReservation',
      actions: ['lambda:GetFunctionConcurrency', 'lambda:PutFunctionConcurrency', 'lambda:DeleteFunctionConcurrency'],
      resources: [props.originFunction.functionArn],
    }),
  );
  const provider = new nodejs.NodejsFunction(scope, 'ConcurrencyCapFunction', {
    description: "edge-image-transformer: caps the origin's concurrency at what the account can spare (deploy time)",
    entry: lambdaEntry('concurrency'),
    ...PROJECT_FUNCTION,
    memorySize: 256,
    timeout: Duration.seconds(30),
    role,
    logGroup,
    bundling: SMALL_BUNDLING,
  });
  acknowledge(
    role,
    'AwsSolutions-IAM5[Resource::*]',
    'lambda:GetAccountSettings (the only action on "*") reads the account-wide concurrency quota and what is unreserved; ' +
      'it is account-level and takes no resource ARN.',
  );
  return new CustomResource(scope, 'OriginConcurrencyCap', {
    serviceToken: provider.functionArn,
    resourceType: 'Custom::OriginConcurrencyCap',
    properties: {
      FunctionName: props.originFunction.functionName,
      Cap: props.cap,
      Floor: props.floor,
      Version: props.originVersion.version,
    },
  });
}
