// The custom resource that writes the deployment's sizes and presets into the
// viewer-request function's KeyValueStore on every deploy (lambda/edge-data).
// CloudFormation imports a store's data only when it creates the store, so a
// later change of presets would otherwise never reach the edge. The operator's
// `signing-secrets` in the same store is never written nor deleted.

import { CustomResource } from 'aws-cdk-lib';
import type * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import type { ResolvedSettings } from '../resolved-settings';
import { customResourceProvider, lambdaEntry } from './lambda-project';

export interface EdgeDataProps extends Pick<ResolvedSettings, 'logRetention' | 'removalPolicy'> {
  /** The viewer-request function's store. */
  readonly keyValueStore: cloudfront.IKeyValueStore;
  /** The deployment's entries (`deploymentEntries(grammar)`); none: the deployment keys a previous deploy wrote are deleted. */
  readonly entries: Record<string, string>;
}

/** Creates in `scope`: `EdgeDataHandler` and the Provider framework's Lambda (customResourceProvider), `EdgeData`. */
export function buildEdgeData(scope: Construct, props: EdgeDataProps): CustomResource {
  const { provider } = customResourceProvider(scope, 'EdgeData', {
    ...props,
    entry: lambdaEntry('edge-data'),
    description: "edge-image-transformer: writes the deployment's sizes and presets into the edge's KeyValueStore (deploy time)",
    roleDescription:
      "edge-image-transformer edge data: write the deployment's sizes and presets into the viewer-request function's KeyValueStore",
    // A few calls per attempt, five attempts at most when the store keeps changing.
    timeoutSeconds: 60,
    statements: [
      new iam.PolicyStatement({
        sid: 'WriteDeploymentEntries',
        actions: [
          'cloudfront-keyvaluestore:DescribeKeyValueStore',
          'cloudfront-keyvaluestore:ListKeys',
          'cloudfront-keyvaluestore:UpdateKeys',
        ],
        resources: [props.keyValueStore.keyValueStoreArn],
      }),
    ],
  });
  return new CustomResource(scope, 'EdgeData', {
    serviceToken: provider.serviceToken,
    resourceType: 'Custom::EdgeData',
    properties: {
      KeyValueStoreArn: props.keyValueStore.keyValueStoreArn,
      Entries: props.entries,
    },
  });
}
