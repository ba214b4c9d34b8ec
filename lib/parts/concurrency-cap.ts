// The custom resource that reserves min(cap, what the account can spare) of
// concurrency on the origin at deploy time (lambda/concurrency). Reserved
// concurrency is the function's, shared by all its versions: during a
// canary, both versions behind the live alias draw from it.

import { CustomResource } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import type { ResolvedSettings } from '../resolved-settings';
import { customResourceProvider, lambdaEntry } from './lambda-project';
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

/** Creates in `scope`: `ConcurrencyCapHandler` and the Provider framework's Lambda (customResourceProvider), `OriginConcurrencyCap`. */
export function buildConcurrencyCap(scope: Construct, props: ConcurrencyCapProps): CustomResource {
  const { provider, role } = customResourceProvider(scope, 'ConcurrencyCap', {
    ...props,
    entry: lambdaEntry('concurrency'),
    description: "edge-image-transformer: caps the origin's concurrency at what the account can spare (deploy time)",
    roleDescription: "edge-image-transformer concurrency cap: read the account's concurrency, set the origin's reservation",
    timeoutSeconds: 30,
    statements: [
      new iam.PolicyStatement({
        sid: 'ReadAccountConcurrency',
        actions: ['lambda:GetAccountSettings'],
        // An account-level read: it has no resource to name.
        resources: ['*'],
      }),
      new iam.PolicyStatement({
        sid: 'SetOriginReservation',
        actions: ['lambda:GetFunctionConcurrency', 'lambda:PutFunctionConcurrency', 'lambda:DeleteFunctionConcurrency'],
        resources: [props.originFunction.functionArn],
      }),
    ],
  });
  acknowledge(
    role,
    'AwsSolutions-IAM5[Resource::*]',
    'lambda:GetAccountSettings (the only action on "*") reads the account-wide concurrency quota and what is unreserved; ' +
      'it is account-level and takes no resource ARN.',
  );
  return new CustomResource(scope, 'OriginConcurrencyCap', {
    serviceToken: provider.serviceToken,
    resourceType: 'Custom::OriginConcurrencyCap',
    properties: {
      FunctionName: props.originFunction.functionName,
      Cap: props.cap,
      Floor: props.floor,
      Version: props.originVersion.version,
    },
  });
}
