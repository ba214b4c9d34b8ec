// The CloudFront Functions: viewer-request (validate, canonicalise, check
// signatures against the KeyValueStore) and viewer-response (the browser's
// Cache-Control). Built in the ImageTransformer's own scope (logical IDs unchanged).

import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import type { Construct } from 'constructs';
import { viewerRequestFunctionCode } from '../edge-function';
import type { ResolvedSettings } from '../resolved-settings';
import { browserCacheControl, viewerResponseFunctionCode } from '../viewer-response-function';

export type EdgeFunctionsProps = Pick<ResolvedSettings, 'grammar' | 'avif' | 'signing' | 'cacheControl' | 'browserMaxAgeSeconds'>;

export interface EdgeFunctions {
  readonly viewerRequest: cloudfront.Function;
  readonly viewerResponse: cloudfront.Function;
  /** The store of URL signing secrets; only with signing. */
  readonly keyValueStore?: cloudfront.KeyValueStore;
}

/** Creates in `scope`: `SigningKeys` (with signing), `ViewerRequest`, `ViewerResponse`. */
export function buildEdgeFunctions(scope: Construct, props: EdgeFunctionsProps): EdgeFunctions {
  const keyValueStore = props.signing
    ? new cloudfront.KeyValueStore(scope, 'SigningKeys', {
        comment: 'edge-image-transformer URL signing secrets (put them in after deploying)',
      })
    : undefined;
  const viewerRequest = new cloudfront.Function(scope, 'ViewerRequest', {
    comment: 'edge-image-transformer: validate, canonicalise and sign-check image requests',
    runtime: cloudfront.FunctionRuntime.JS_2_0,
    code: cloudfront.FunctionCode.fromInline(
      viewerRequestFunctionCode({
        grammar: props.grammar,
        avif: props.avif,
        signing: !!props.signing,
        keyValueStoreId: keyValueStore?.keyValueStoreId,
      }),
    ),
    keyValueStore,
    autoPublish: true,
  });

  const viewerResponse = new cloudfront.Function(scope, 'ViewerResponse', {
    comment: 'edge-image-transformer: browsers keep variants for browserMaxAge, CloudFront for cacheControl',
    runtime: cloudfront.FunctionRuntime.JS_2_0,
    code: cloudfront.FunctionCode.fromInline(
      viewerResponseFunctionCode({
        variantCacheControl: props.cacheControl,
        browserCacheControl: browserCacheControl(props.browserMaxAgeSeconds),
      }),
    ),
    autoPublish: true,
  });
  return { viewerRequest, viewerResponse, ...(keyValueStore ? { keyValueStore } : {}) };
}
