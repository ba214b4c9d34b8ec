// What the project's custom resources (lambda/concurrency, lambda/edge-data)
// share: the onEvent handler CDK's Provider framework invokes. The framework
// answers CloudFormation (the result returned, or FAILED with the reason of
// what is thrown), so a handler only does its work.

import type { CdkCustomResourceEvent, CdkCustomResourceResponse } from 'aws-lambda';
import { describeError, jsonLogger } from './log';

/** What a custom resource did: `Message` (the stack event's reason) and any other attributes, and the fields to log. */
export interface CustomResourceOutcome {
  data: { Message: string } & Record<string, string>;
  log: Record<string, unknown>;
}

/** Done on Create and Update, with the resource's properties (strings, as CloudFormation passes them). */
export type CustomResourceWork = (properties: Record<string, unknown>, event: CdkCustomResourceEvent) => Promise<CustomResourceOutcome>;

/**
 * A custom resource's onEvent handler: `work` on Create and Update, nothing
 * on Delete. The physical id is the framework's: one per resource, kept on
 * Update, so an update never looks like a replacement. Logs `name` on
 * success, `<name>_failed` on failure, and throws the failure on for the
 * framework to answer FAILED with.
 */
export function customResourceHandler(name: string, work: CustomResourceWork) {
  return async function onEvent(event: CdkCustomResourceEvent): Promise<CdkCustomResourceResponse<CustomResourceOutcome['data']>> {
    if (event.RequestType === 'Delete') return {};
    try {
      const outcome = await work(event.ResourceProperties, event);
      jsonLogger({ event: name, ...outcome.log });
      return { Data: outcome.data };
    } catch (error) {
      jsonLogger({ event: `${name}_failed`, error: describeError(error) });
      throw error;
    }
  };
}
