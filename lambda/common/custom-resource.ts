// What the project's custom resources (lambda/concurrency, lambda/edge-data)
// share: the answer CloudFormation waits for after each request.

import type { CloudFormationCustomResourceEvent } from 'aws-lambda';

/** The answer CloudFormation waits for, PUT to the pre-signed ResponseURL. */
export async function respond(
  event: CloudFormationCustomResourceEvent,
  outcome: { status: 'SUCCESS' | 'FAILED'; reason?: string; data?: Record<string, string> },
  fetchFn: typeof fetch = fetch,
): Promise<void> {
  const body = JSON.stringify({
    Status: outcome.status,
    Reason: outcome.reason ?? outcome.data?.Message ?? outcome.status,
    // One stable id: an update never looks like a replacement (which would delete the old one).
    PhysicalResourceId: event.RequestType === 'Create' ? event.LogicalResourceId : event.PhysicalResourceId,
    StackId: event.StackId,
    RequestId: event.RequestId,
    LogicalResourceId: event.LogicalResourceId,
    Data: outcome.data ?? {},
  });
  // The URL is signed without a content type: sending one would break the signature.
  const response = await fetchFn(event.ResponseURL, { method: 'PUT', body, headers: { 'content-type': '' } });
  if (!response.ok) throw new Error(`CloudFormation's response URL answered ${response.status}.`);
}
