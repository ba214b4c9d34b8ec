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
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { EdgeGrammar } from '../../lambda/edge/dialects/dialect';
import { bucketNames } from './buckets';
import { buildEdgeData } from './edge-data';

export interface EdgeFunctionsProps extends Pick<ResolvedSettings, 'logRetention' | 'removalPolicy' | 'sourceBuckets'> {
  readonly plan: Pick<DeploymentPlan, 'viewerRequest' | 'storeEntries' | 'bucketEntries' | 'viewerResponse' | 'behaviors'>;
  /** The default source bucket, whose name a dialect's request may give. */
  readonly sourceBucket: s3.IBucket;
}

export interface EdgeFunctions {
  /** The default behavior's viewer-request function. */
  readonly viewerRequest: cloudfront.Function;
  /** Each behavior's, by the grammar it reads (the default's among them). */
  readonly viewerRequests: { [grammar in EdgeGrammar]?: cloudfront.Function };
  readonly viewerResponse: cloudfront.Function;
  /** The viewer-request function's store: its data, presets and signing secrets. */
  readonly keyValueStore: cloudfront.KeyValueStore;
}

/**
 * Creates in `scope`: `SigningKeys` (the store, in every deployment: the
 * function's data is there; the name is from when it held only secrets, and a
 * new one would replace the store and lose them), the edge data writer
 * (lib/parts/edge-data.ts), `ViewerRequest` (the default behavior's), one
 * `ViewerRequest-<grammar>` per dialect with a behavior of its own, `ViewerResponse`.
 */
export function buildEdgeFunctions(scope: Construct, props: EdgeFunctionsProps): EdgeFunctions {
  const { viewerRequest: settings, storeEntries: entries } = props.plan;
  const keyValueStore = new cloudfront.KeyValueStore(scope, 'SigningKeys', {
    comment: settings.signing
      ? 'edge-image-transformer URL signing secrets (put them in after deploying)'
      : "edge-image-transformer: the edge function's data, sizes and presets (written on every deploy)",
  });
  const buckets = { sourceBucket: props.sourceBucket.bucketName, sourceBuckets: bucketNames(props.sourceBuckets) };
  const edgeData = buildEdgeData(scope, { ...props, keyValueStore, entries: { ...entries, ...props.plan.bucketEntries(buckets) } });
  // One function per grammar the behaviors read: the default behavior's is `ViewerRequest`, whatever its grammar.
  const behaviors = props.plan.behaviors;
  const defaultGrammar = behaviors[behaviors.length - 1]!.grammar;
  const viewerRequests: EdgeFunctions['viewerRequests'] = {};
  [...new Set(behaviors.map((behavior) => behavior.grammar))].forEach((edgeGrammar) => {
    const id = edgeGrammar === defaultGrammar ? 'ViewerRequest' : `ViewerRequest-${edgeGrammar}`;
    const fn = new cloudfront.Function(scope, id, {
      comment: `edge-image-transformer: validate, canonicalise and sign-check image requests${edgeGrammar === 'native' ? '' : ` (${edgeGrammar} URLs)`}`,
      runtime: cloudfront.FunctionRuntime.JS_2_0,
      code: cloudfront.FunctionCode.fromInline(
        viewerRequestFunctionCode({ ...settings, keyValueStoreId: keyValueStore.keyValueStoreId, edgeGrammar }),
      ),
      keyValueStore,
      autoPublish: true,
    });
    // The new entries are in the store before a function that reads them is published.
    fn.node.addDependency(edgeData);
    viewerRequests[edgeGrammar] = fn;
  });

  const viewerResponse = new cloudfront.Function(scope, 'ViewerResponse', {
    comment: 'edge-image-transformer: browsers keep variants for browserMaxAge, CloudFront for cacheControl',
    runtime: cloudfront.FunctionRuntime.JS_2_0,
    code: cloudfront.FunctionCode.fromInline(viewerResponseFunctionCode(props.plan.viewerResponse)),
    autoPublish: true,
  });
  return { viewerRequest: viewerRequests[defaultGrammar]!, viewerRequests, viewerResponse, keyValueStore };
}
