// The CloudFront Functions: viewer-request (validate, canonicalise, check
// signatures; the secrets, its data and presets read from its KeyValueStore) and
// viewer-response (the browser's Cache-Control). Built in the
// ImageTransformer's own scope (logical IDs unchanged).

import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import type { Construct } from 'constructs';
import { viewerRequestFunctionCode } from '../edge-function';
import type { DeploymentPlan } from '../plan';
import type { ResolvedSettings } from '../resolved-settings';
import { viewerResponseFunctionCode } from '../viewer-response-function';
import { buildEdgeData } from './edge-data';

export interface EdgeFunctionsProps extends Pick<ResolvedSettings, 'logRetention' | 'removalPolicy'> {
  readonly plan: Pick<DeploymentPlan, 'viewerRequest' | 'storeEntries' | 'viewerResponse'>;
}

export interface EdgeFunctions {
  readonly viewerRequest: cloudfront.Function;
  readonly viewerResponse: cloudfront.Function;
  /** The viewer-request function's store: its data, presets and signing secrets. */
  readonly keyValueStore: cloudfront.KeyValueStore;
}

/**
 * Creates in `scope`: `SigningKeys` (the store, in every deployment: the
 * function's data is there; the name is from when it held only secrets, and a
 * new one would replace the store and lose them), the edge data writer
 * (lib/parts/edge-data.ts), `ViewerRequest`, `ViewerResponse`.
 */
export function buildEdgeFunctions(scope: Construct, props: EdgeFunctionsProps): EdgeFunctions {
  const { viewerRequest: settings, storeEntries: entries } = props.plan;
  const keyValueStore = new cloudfront.KeyValueStore(scope, 'SigningKeys', {
    comment: settings.signing
      ? 'edge-image-transformer URL signing secrets (put them in after deploying)'
      : "edge-image-transformer: the edge function's data, sizes and presets (written on every deploy)",
  });
  const viewerRequest = new cloudfront.Function(scope, 'ViewerRequest', {
    comment: 'edge-image-transformer: validate, canonicalise and sign-check image requests',
    runtime: cloudfront.FunctionRuntime.JS_2_0,
    code: cloudfront.FunctionCode.fromInline(viewerRequestFunctionCode({ ...settings, keyValueStoreId: keyValueStore.keyValueStoreId })),
    keyValueStore,
    autoPublish: true,
  });
  // The new entries are in the store before a function that reads them is published.
  viewerRequest.node.addDependency(buildEdgeData(scope, { ...props, keyValueStore, entries }));

  const viewerResponse = new cloudfront.Function(scope, 'ViewerResponse', {
    comment: 'edge-image-transformer: browsers keep variants for browserMaxAge, CloudFront for cacheControl',
    runtime: cloudfront.FunctionRuntime.JS_2_0,
    code: cloudfront.FunctionCode.fromInline(viewerResponseFunctionCode(props.plan.viewerResponse)),
    autoPublish: true,
  });
  return { viewerRequest, viewerResponse, keyValueStore };
}
