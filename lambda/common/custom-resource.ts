// What the project's custom resources (lambda/concurrency, lambda/edge-data)
// share: how a request is handled and answered.

import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { describeError, jsonLogger } from './log';

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

/** What a custom resource did: `Message` (the stack event's reason) and any other attributes, and the fields to log. */
export interface CustomResourceOutcome {
  data: { Message: string } & Record<string, string>;
  log: Record<string, unknown>;
}

export interface CustomResourceWork {
  /** Done on Create and Update, with the resource's properties (strings, as CloudFormation passes them). */
  apply(properties: Record<string, unknown>): Promise<CustomResourceOutcome>;
  /** The Message of a Delete, which does nothing. */
  deleted: string;
}

/**
 * A custom resource's handler: `work` on Create and Update, nothing on
 * Delete, and every failure answered FAILED with its reason (CloudFormation
 * would otherwise wait an hour). Logs `name` on success, `<name>_failed` on failure.
 */
export function customResourceHandler(name: string, work: CustomResourceWork, fetchFn: typeof fetch = fetch) {
  return async function handle(event: CloudFormationCustomResourceEvent): Promise<void> {
    try {
      if (event.RequestType === 'Delete') {
        await respond(event, { status: 'SUCCESS', data: { Message: work.deleted } }, fetchFn);
        return;
      }
      const outcome = await work.apply(event.ResourceProperties);
      jsonLogger({ event: name, ...outcome.log });
      await respond(event, { status: 'SUCCESS', data: outcome.data }, fetchFn);
    } catch (error) {
      const reason = describeError(error);
      jsonLogger({ event: `${name}_failed`, error: reason });
      await respond(event, { status: 'FAILED', reason }, fetchFn);
    }
  };
}
