// The one CloudFront call this Lambda makes, behind a small interface.
//
// Everything else in this Lambda runs against real S3 (LocalStack in tests),
// but LocalStack's free edition has no CloudFront, so the handler takes an
// InvalidationClient instead of a CloudFrontClient: tests pass a recording
// double, production passes cloudFrontInvalidations(new CloudFrontClient()).
// The adapter below is itself tested against a local HTTP server speaking
// CloudFront's REST-XML, so the request that leaves the SDK is checked too.

import { CreateInvalidationCommand, type CloudFrontClient } from '@aws-sdk/client-cloudfront';

export interface InvalidationRequest {
  distributionId: string;
  /** Paths starting with '/', a '*' only at the end (see paths.ts). */
  paths: string[];
  /** Unique per request: CloudFront treats a repeated reference as the same invalidation. */
  callerReference: string;
}

export interface InvalidationResult {
  id: string;
  status?: string;
}

export interface InvalidationClient {
  createInvalidation(request: InvalidationRequest): Promise<InvalidationResult>;
}

export function cloudFrontInvalidations(client: CloudFrontClient): InvalidationClient {
  return {
    async createInvalidation({ distributionId, paths, callerReference }) {
      const output = await client.send(
        new CreateInvalidationCommand({
          DistributionId: distributionId,
          InvalidationBatch: { CallerReference: callerReference, Paths: { Quantity: paths.length, Items: paths } },
        }),
      );
      return { id: output.Invalidation?.Id ?? '', status: output.Invalidation?.Status };
    },
  };
}
