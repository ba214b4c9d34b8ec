// The ImageTransformer construct: everything `cdk deploy` creates.
//
//   viewer ─▶ CloudFront (viewer-request CloudFront Function: validate,
//             canonicalise, verify signatures) ─▶ edge cache (key = canonical URI)
//          ─▶ origin group: 1. cache bucket (S3, OAC)
//                           2. on 403/404: the origin Lambda's `live` alias, through
//                              its Function URL (OAC, AWS_IAM)
//   source bucket ─ created/removed events ─▶ invalidation Lambda
//   sourceBuckets (by key prefix) ─ EventBridge: Object Created/Deleted ─▶ the same
//             (purge the source's variants, invalidate CloudFront, eager presets)
//             ─ an event still failing after Lambda's retries ─▶ failure queue (SQS),
//               alarmed, replayed with `npm run replay-invalidations`
//   caller (SigV4) ─▶ management HTTP API (IAM, throttled) ─▶ its Lambda: presigned
//             uploads to source bucket _uploads/, status, listing, bulk delete
//   source bucket _uploads/ ─ EventBridge: Object Created ─▶ validator Lambda
//             ─▶ the upload to its key (ready), or to _quarantine/ with its reason
//
// Operating it (lib/monitoring.ts): the origin's metrics in Embedded Metric
// Format, a dashboard, alarms (optionally to SNS), and CodeDeploy canaries
// that move the `live` alias and roll back when a deployment alarm fires.
//
// This file is the wiring: lib/props/ documents the props, lib/resolved-settings.ts
// resolves them once, and each part in lib/parts/ builds its resources.

import type { CustomResource } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import type * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as codedeploy from 'aws-cdk-lib/aws-codedeploy';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { ImageTransformerAlarms } from './monitoring';
import { buildBuckets } from './parts/buckets';
import { buildDelivery } from './parts/delivery';
import { buildEdgeFunctions } from './parts/edge-functions';
import { buildInvalidation } from './parts/invalidation';
import { buildManageApi } from './parts/manage';
import { buildOperations } from './parts/operations';
import { buildOriginFunction } from './parts/origin-function';
import { deploymentPlan } from './plan';
import type { ImageTransformerProps } from './props';
import { resolveSettings } from './resolved-settings';

/**
 * A serverless image transformer: CloudFront with a viewer-request
 * CloudFront Function, an S3 cache bucket of variants and a sharp Lambda
 * behind a Function URL that makes missing variants.
 */
export class ImageTransformer extends Construct {
  /** The CloudFront distribution viewers request images from. */
  public readonly distribution: cloudfront.Distribution;
  /** The bucket of original images (created or imported). */
  public readonly sourceBucket: s3.IBucket;
  /** The buckets of originals mapped to key prefixes (props.sourceBuckets). */
  public readonly sourceBuckets: { [prefix: string]: s3.IBucket };
  /** The bucket of generated variants, keyed by canonical URI. */
  public readonly cacheBucket: s3.Bucket;
  /** The sharp Lambda that makes variants (the fallback origin). */
  public readonly originFunction: nodejs.NodejsFunction;
  /** The published version of the origin Lambda that this deployment made. */
  public readonly originVersion: lambda.IVersion;
  /** The origin Lambda's `live` alias: what the Function URL invokes and canary deployments shift. */
  public readonly originAlias: lambda.Alias;
  /** The live alias's Function URL (AuthType AWS_IAM, reached only through CloudFront OAC). */
  public readonly originFunctionUrl: lambda.FunctionUrl;
  /** The Lambda that purges and invalidates a source's variants when the source changes. */
  public readonly invalidationFunction: nodejs.NodejsFunction;
  /**
   * Where a source-change event goes when the invalidation Lambda still fails after
   * Lambda's two retries (Lambda's on-failure destination record: the S3 event and
   * the error). Kept 14 days; `npm run replay-invalidations` runs them again.
   */
  public readonly invalidationFailureQueue: sqs.Queue;
  /**
   * The management API (docs/manage.md): an HTTP API, IAM-authorised on every route, its
   * `$default` stage at `apiEndpoint` (stack output ManageApiUrl); only when `manageApi` is on.
   */
  public readonly manageApi?: apigwv2.HttpApi;
  /** The Lambda behind the management API's routes; only when `manageApi` is on. */
  public readonly manageFunction?: nodejs.NodejsFunction;
  /** The Lambda that validates each upload staged under `_uploads/`; only when `manageApi` is on. */
  public readonly uploadValidatorFunction?: nodejs.NodejsFunction;
  /**
   * Where an upload's event goes when its validation still fails after Lambda's two
   * retries (the upload stays staged, pending), kept 14 days; only when `manageApi` is on.
   */
  public readonly uploadValidationFailureQueue?: sqs.Queue;
  /** The viewer-request CloudFront Function. */
  public readonly viewerRequestFunction: cloudfront.Function;
  /** The viewer-response CloudFront Function that gives viewers browserMaxAge. */
  public readonly viewerResponseFunction: cloudfront.Function;
  /** The viewer-request function's store: its data and presets, which each deploy writes, and with `signing` the URL signing secrets. */
  public readonly keyValueStore: cloudfront.KeyValueStore;
  /** The access log bucket; only when `accessLogging` is on. */
  public readonly logBucket?: s3.Bucket;
  /** CloudWatch namespace of the origin's metrics. */
  public readonly metricsNamespace: string;
  /** The CloudWatch dashboard; only when `dashboard` is on. */
  public readonly dashboard?: cloudwatch.Dashboard;
  /** The alarms; only when `alarms` is on. */
  public readonly alarms?: ImageTransformerAlarms;
  /** The topic the alarms notify: alarmTopic, or the one made for alarmEmail. */
  public readonly alarmTopic?: sns.ITopic;
  /**
   * The deploy-time concurrency cap of the origin; absent with an explicit
   * originReservedConcurrency. Its attribute `Message` says what it reserved.
   */
  public readonly originConcurrencyCap?: CustomResource;
  /** The CodeDeploy deployment group that shifts the live alias; only when `canaryDeployments` is on. */
  public readonly deploymentGroup?: codedeploy.LambdaDeploymentGroup;

  constructor(scope: Construct, id: string, props: ImageTransformerProps = {}) {
    super(scope, id);
    // Every part builds its resources in this construct's own scope, as before the split:
    // logical IDs come from construct paths, and a changed one replaces the resource.
    const settings = resolveSettings(this, props);
    const plan = deploymentPlan(settings);
    this.metricsNamespace = settings.metricsNamespace;

    const buckets = buildBuckets(this, settings);
    this.sourceBucket = buckets.sourceBucket;
    this.sourceBuckets = settings.sourceBuckets;
    this.cacheBucket = buckets.cacheBucket;
    this.logBucket = buckets.logBucket;

    const origin = buildOriginFunction(this, { ...settings, plan, sourceBucket: this.sourceBucket, cacheBucket: this.cacheBucket });
    this.originFunction = origin.function;
    this.originVersion = origin.version;
    this.originAlias = origin.alias;
    this.originFunctionUrl = origin.functionUrl;
    this.originConcurrencyCap = origin.concurrencyCap;

    const edgeFunctions = buildEdgeFunctions(this, { ...settings, plan, sourceBucket: this.sourceBucket });
    this.viewerRequestFunction = edgeFunctions.viewerRequest;
    this.viewerResponseFunction = edgeFunctions.viewerResponse;
    this.keyValueStore = edgeFunctions.keyValueStore;

    this.distribution = buildDelivery(this, {
      ...settings,
      cacheBucket: this.cacheBucket,
      originFunctionUrl: this.originFunctionUrl,
      originAlias: this.originAlias,
      edgeFunctions,
      logBucket: this.logBucket,
      plan,
    });

    const invalidation = buildInvalidation(this, {
      ...settings,
      sourceBucket: this.sourceBucket,
      cacheBucket: this.cacheBucket,
      distribution: this.distribution,
      plan,
    });
    this.invalidationFunction = invalidation.function;
    this.invalidationFailureQueue = invalidation.failureQueue;

    if (settings.manageApi) {
      const manage = buildManageApi(this, { ...settings, plan, sourceBucket: this.sourceBucket });
      this.manageApi = manage.api;
      this.manageFunction = manage.apiFunction;
      this.uploadValidatorFunction = manage.validator;
      this.uploadValidationFailureQueue = manage.validatorFailureQueue;
    }

    const operations = buildOperations(this, {
      ...settings,
      distribution: this.distribution,
      originFunction: this.originFunction,
      originAlias: this.originAlias,
      invalidationFunction: this.invalidationFunction,
      invalidationFailureQueue: this.invalidationFailureQueue,
      uploadValidationFailureQueue: this.uploadValidationFailureQueue,
    });
    this.alarmTopic = operations.alarmTopic;
    this.dashboard = operations.monitoring.dashboard;
    this.alarms = operations.monitoring.alarms;
    this.deploymentGroup = operations.deploymentGroup;
  }
}
