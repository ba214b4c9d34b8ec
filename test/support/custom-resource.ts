// What a custom resource's tests need: CloudFormation's request events, and a
// fetch that records the answers PUT to the response URL.

import type { CloudFormationCustomResourceEvent } from 'aws-lambda';

/** A request from CloudFormation for the resource `logicalId` (its physical id is the logical one, as `respond` makes it). */
export function customResourceEvent(
  requestType: 'Create' | 'Update' | 'Delete',
  resource: { logicalId: string; type: string; properties: Record<string, unknown> },
): CloudFormationCustomResourceEvent {
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
  } as CloudFormationCustomResourceEvent;
}

/** A fetch that answers 200 and keeps every request it was given, with its JSON body. */
export function recordingResponses() {
  const sent: { url: string; init: RequestInit; body: Record<string, unknown> }[] = [];
  const fetchFn = (async (url: string, init: RequestInit) => {
    sent.push({ url, init, body: JSON.parse(String(init.body)) });
    return new Response(null, { status: 200 });
  }) as typeof fetch;
  return { sent, fetchFn };
}
