// What a custom resource's tests need: the request events CDK's Provider
// framework passes on from CloudFormation.

import type { CdkCustomResourceEvent } from 'aws-lambda';

/** A request from CloudFormation for the resource `logicalId` (its physical id, after Create, the logical one). */
export function customResourceEvent(
  requestType: 'Create' | 'Update' | 'Delete',
  resource: { logicalId: string; type: string; properties: Record<string, unknown> },
): CdkCustomResourceEvent {
  return {
    RequestType: requestType,
    ServiceToken: 'arn:aws:lambda:eu-west-1:123456789012:function:provider',
    ResponseURL: 'https://cloudformation-custom-resource-response-euwest1.s3.amazonaws.com/signed?X-Amz-Signature=abc',
    StackId: 'arn:aws:cloudformation:eu-west-1:123456789012:stack/Images/1',
    RequestId: 'req-1',
    LogicalResourceId: resource.logicalId,
    ResourceType: resource.type,
    ResourceProperties: { ServiceToken: 'x', ...resource.properties },
    ...(requestType === 'Create' ? {} : { PhysicalResourceId: resource.logicalId }),
    ...(requestType === 'Update' ? { OldResourceProperties: { ServiceToken: 'x' } } : {}),
  } as CdkCustomResourceEvent;
}
