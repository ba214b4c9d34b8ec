// The management API (docs/manage.md): an API Gateway HTTP API, IAM-authorised
// (SigV4) on every route, throttled and access-logged, in front of the API
// Lambda (lambda/manage/api.ts); and the validator Lambda
// (lambda/manage/validator.ts), which EventBridge's Object Created events under
// the staging prefix of the source bucket invoke. Never behind CloudFront.
// Built in the ImageTransformer's own scope, as the other parts.

import { Duration } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpIamAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { QUARANTINE_PREFIX, STAGING_PREFIX } from '../../lambda/common/staging';
import { manageEnvironment } from '../../lambda/manage/config';
import type { DeploymentPlan } from '../plan';
import type { ResolvedSettings } from '../resolved-settings';
import { bucketNames } from './buckets';
import { addJwtRoutes, jwtCorsPreflight, jwtEnvironment, jwtPath, type ManageJwtSettings } from './manage-jwt';
import { PROJECT_FUNCTION, SMALL_BUNDLING, lambdaEntry, ownLogsAndRole } from './lambda-project';
import { buildManageImports } from './manage-imports';
import { acknowledge, wildcardFinding } from './nag';
import { sharpBundling } from './origin-function';

export interface ManageApiProps extends Pick<
  ResolvedSettings,
  'sourceBuckets' | 'memorySize' | 'timeout' | 'logRetention' | 'removalPolicy' | 'manageStripLocation' | keyof ManageJwtSettings
> {
  /** Where uploads are staged, validated and kept; its EventBridge delivery is turned on. */
  readonly sourceBucket: s3.IBucket;
  /** The origin's settings, whose sources and limits the API and the validator read. */
  readonly plan: Pick<DeploymentPlan, 'origin'>;
}

export interface ManageApi {
  /** The HTTP API, its `$default` stage at `apiEndpoint`. */
  readonly api: apigwv2.HttpApi;
  /** The Lambda behind every route. */
  readonly apiFunction: nodejs.NodejsFunction;
  /** The Lambda that validates each upload staged under `_uploads/`. */
  readonly validator: nodejs.NodejsFunction;
  /** Where an upload's event goes when its validation failed for good: its upload stays staged (pending). */
  readonly validatorFailureQueue: sqs.Queue;
  /** The per-key Lambda of imports, which S3 Batch Operations invokes. */
  readonly importer: nodejs.NodejsFunction;
}

/**
 * The stage's throttle, for every route: 100 requests a second sustained,
 * 200 at once. The API's calls are a back end's or an uploader's, not
 * viewers': that is 6,000 a minute, half again what the reference team's
 * management API held (4,000 a minute), at about 10 API Lambdas at once
 * (~100 ms a call), far from the account's 10,000 a second, which the
 * images never share (they are served through CloudFront, not this API).
 */
export const MANAGE_THROTTLE = { rateLimit: 100, burstLimit: 200 } as const;

/**
 * `DELETE /images` alone: one batch (up to 100 keys) a second, 5 at once.
 * Each deleted key's variants are purged and invalidated in CloudFront,
 * which allows 3,000 exact paths in progress per distribution (docs/operations.md,
 * "Invalidation batching"): a few batches a second of images with several
 * variants each would fill that, and the invalidations would be retried.
 */
export const MANAGE_DELETE_THROTTLE = { rateLimit: 1, burstLimit: 5 } as const;

/** The API Lambda's memory and timeout: a handful of S3 calls a request, well inside the HTTP API's 30-second integration timeout. */
const API_FUNCTION = { memorySize: 256, timeout: Duration.seconds(15) };

/**
 * The validator's time beyond the origin's timeout (which covers reading a
 * source and one transform within the time budget): for copying the upload,
 * as large as the source limit, to its key and deleting it.
 */
const VALIDATOR_EXTRA_SECONDS = 30;

/** EventBridge's retries of delivering an upload's event to Lambda (its defaults, written out): a day, at most 185 tries. */
const VALIDATOR_DELIVERY = { maxEventAge: Duration.hours(24), retryAttempts: 185 };

/** The routes, each to the API Lambda. A key has slashes: `{key+}` takes the rest of the path. */
const ROUTES: [apigwv2.HttpMethod, string][] = [
  [apigwv2.HttpMethod.POST, '/uploads'],
  [apigwv2.HttpMethod.GET, '/images/{key+}'],
  [apigwv2.HttpMethod.GET, '/images'],
  [apigwv2.HttpMethod.DELETE, '/images'],
];

/** The imports' routes: IAM callers' only (a JWT caller's prefix could not bound a manifest's keys), none under /user. */
const IMPORT_ROUTES: [apigwv2.HttpMethod, string][] = [
  [apigwv2.HttpMethod.POST, '/imports'],
  [apigwv2.HttpMethod.GET, '/imports/{id}'],
];

/** One JSON line per request: who called (the IAM principal), what, and how it went. */
const ACCESS_LOG_FORMAT = apigateway.AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    time: '$context.requestTime',
    ip: '$context.identity.sourceIp',
    caller: '$context.identity.userArn',
    // A JWT caller's subject (the JWT routes).
    subject: '$context.authorizer.claims.sub',
    routeKey: '$context.routeKey',
    path: '$context.path',
    status: '$context.status',
    responseLength: '$context.responseLength',
    latency: '$context.responseLatency',
    integrationLatency: '$context.integrationLatency',
    error: '$context.error.message',
  }),
);

/**
 * Creates in `scope`: `ManageApiLogs`, `ManageApiRole`, `ManageApiFunction`, the HTTP API `ManageApi`
 * with its `ManageApiStage` and `ManageApiAccessLogs`; `ManageValidatorLogs`, `ManageValidatorRole`,
 * `ManageValidatorFunction`, the EventBridge rule `ManageUploadEvents` and the queue `ManageValidatorFailures`;
 * with a JWT issuer, `ManageJwtAuthorizer` and its routes.
 */
export function buildManageApi(scope: Construct, props: ManageApiProps): ManageApi {
  const { sourceBucket } = props;
  // The management Lambdas read the origin's sources and limits; the cache bucket is not theirs (manageEnvironment leaves it out).
  const environment = manageEnvironment(
    props.plan.origin({ sourceBucket: sourceBucket.bucketName, sourceBuckets: bucketNames(props.sourceBuckets), cacheBucket: '' }),
    { stripLocation: props.manageStripLocation },
  );

  const apiFunction = manageFunction(scope, props, 'Api', {
    description: 'edge-image-transformer management API: uploads, status, listing, bulk delete',
    roleDescription: 'edge-image-transformer management API: sign uploads, read, list and delete sources, write its own logs',
    grant: (role) => grantApiAccess(role, props),
    function: { environment: { ...environment, ...jwtEnvironment(props) }, ...API_FUNCTION, bundling: SMALL_BUNDLING },
  });
  // The origin's memory and more than its timeout: the validator prices and makes one decode of an
  // upload as large as the origin's limits allow, in its own memory (lambda/manage/config.ts).
  const validatorBundling = sharpBundling({ packagedFiles: [], models: false });
  const validator = manageFunction(scope, props, 'Validator', {
    description: 'edge-image-transformer upload validator: an upload staged under _uploads/ to its key, or to quarantine',
    roleDescription:
      'edge-image-transformer upload validator: read staged uploads, move them to their key or to quarantine, write its own logs',
    grant: (role) => grantValidatorAccess(role, sourceBucket),
    function: {
      environment,
      memorySize: props.memorySize,
      timeout: props.timeout.plus(Duration.seconds(VALIDATOR_EXTRA_SECONDS)),
      bundling: validatorBundling,
    },
  });
  const validatorFailureQueue = validateUploadsOnArrival(scope, props, validator);
  const { importer } = buildManageImports(scope, {
    ...props,
    apiFunction,
    makeImporter: (made) =>
      manageFunction(scope, props, 'Importer', { ...made, function: { environment, ...made.function, bundling: validatorBundling } }),
  });

  const api = buildHttpApi(scope, props, apiFunction);
  acknowledgeManageFindings(scope, props, apiFunction.role!, validator.role!);
  return { api, apiFunction, validator, validatorFailureQueue, importer };
}

/**
 * `Manage<name>Logs`, `Manage<name>Role` (writes those logs; `grant` gives it the rest) and
 * `Manage<name>Function`, from lambda/manage/<name in lower case>.ts.
 */
function manageFunction(
  scope: Construct,
  settings: Pick<ResolvedSettings, 'logRetention' | 'removalPolicy'>,
  name: 'Api' | 'Validator' | 'Importer',
  made: {
    description: string;
    roleDescription: string;
    grant: (role: iam.Role) => void;
    function: Pick<nodejs.NodejsFunctionProps, 'environment' | 'memorySize' | 'timeout' | 'bundling'>;
  },
): nodejs.NodejsFunction {
  const { logGroup, role } = ownLogsAndRole(scope, `Manage${name}`, made.roleDescription, settings);
  made.grant(role);
  return new nodejs.NodejsFunction(scope, `Manage${name}Function`, {
    description: made.description,
    entry: lambdaEntry('manage', name.toLowerCase()),
    ...PROJECT_FUNCTION,
    ...made.function,
    role,
    logGroup,
  });
}

/**
 * The HTTP API: IAM on every route, to `apiFunction`, and the same routes under /user with
 * the JWT authoriser when there is one; its `$default` stage throttled and access-logged.
 */
function buildHttpApi(scope: Construct, props: ManageApiProps, apiFunction: nodejs.NodejsFunction): apigwv2.HttpApi {
  const api = new apigwv2.HttpApi(scope, 'ManageApi', {
    description: 'edge-image-transformer management API (IAM-authorised): uploads, status, listing, bulk delete',
    defaultAuthorizer: new HttpIamAuthorizer(),
    // Its stage is made below, with a throttle and access logs.
    createDefaultStage: false,
    corsPreflight: jwtCorsPreflight(props),
  });
  const integration = new HttpLambdaIntegration('ManageApiIntegration', apiFunction);
  const routes = [
    ...[...ROUTES, ...IMPORT_ROUTES].flatMap(([method, path]) => api.addRoutes({ path, methods: [method], integration })),
    ...addJwtRoutes(api, integration, ROUTES, props),
  ];

  const accessLogs = new logs.LogGroup(scope, 'ManageApiAccessLogs', { retention: props.logRetention, removalPolicy: props.removalPolicy });
  const stage = new apigwv2.HttpStage(scope, 'ManageApiStage', {
    httpApi: api,
    autoDeploy: true,
    throttle: MANAGE_THROTTLE,
    accessLogSettings: { destination: new apigwv2.LogGroupLogDestination(accessLogs), format: ACCESS_LOG_FORMAT },
  });
  const cfnStage = stage.node.defaultChild as apigwv2.CfnStage;
  const deleteThrottle = { ThrottlingRateLimit: MANAGE_DELETE_THROTTLE.rateLimit, ThrottlingBurstLimit: MANAGE_DELETE_THROTTLE.burstLimit };
  const deletes = ['/images', ...(props.manageJwtIssuer === undefined ? [] : [jwtPath('/images')])];
  cfnStage.routeSettings = Object.fromEntries(deletes.map((path) => [`DELETE ${path}`, deleteThrottle]));
  // A route's settings name a route that must exist first.
  for (const route of routes) stage.node.addDependency(route);
  return api;
}

/**
 * EventBridge's Object Created events of the source bucket under `_uploads/` invoke the
 * validator. Not an S3 notification: the invalidation Lambda's ObjectCreated notification
 * of the bucket covers every key, and S3 refuses two configurations whose prefixes
 * overlap. Turning EventBridge delivery on adds to the bucket's notifications, keeping
 * them. Returns `ManageValidatorFailures`, the queue of the events that failed for good.
 */
function validateUploadsOnArrival(
  scope: Construct,
  props: Pick<ManageApiProps, 'sourceBucket' | 'removalPolicy'>,
  validator: nodejs.NodejsFunction,
): sqs.Queue {
  const { sourceBucket } = props;
  sourceBucket.enableEventBridgeNotification();
  const failures = new sqs.Queue(scope, 'ManageValidatorFailures', {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
    removalPolicy: props.removalPolicy,
  });
  // EventBridge invokes the validator asynchronously: Lambda queues the event and runs it, so a
  // validation that throws, times out or runs out of memory is Lambda's to retry (twice), then
  // its on-failure destination's. EventBridge's own retries and dead-letter queue catch only an
  // event Lambda never accepted (the function gone, its permission missing).
  validator.configureAsyncInvoke({ onFailure: new destinations.SqsDestination(failures), retryAttempts: 2 });
  new events.Rule(scope, 'ManageUploadEvents', {
    description: 'edge-image-transformer: uploads staged under _uploads/ of the source bucket, to the validator',
    eventPattern: {
      source: ['aws.s3'],
      detailType: ['Object Created'],
      detail: { bucket: { name: [sourceBucket.bucketName] }, object: { key: events.Match.prefix(STAGING_PREFIX) } },
    },
    targets: [new targets.LambdaFunction(validator, { deadLetterQueue: failures, ...VALIDATOR_DELIVERY })],
  });
  acknowledge(
    failures,
    'AwsSolutions-SQS3',
    "This queue is itself the end of the line for uploads whose validation failed for good (the validator's on-failure " +
      "destination and its EventBridge target's dead-letter queue); a message is left in it, alarmed, and its upload revalidated by an operator.",
  );
  return failures;
}

/**
 * The API Lambda's S3 access: sign uploads to `_uploads/` (a presigned POST is
 * allowed as its signer's s3:PutObject on the key), read and list the sources
 * of every bucket a key may route to (a status, a listing; s3:ListBucket makes
 * a missing key S3's 404, not a 403), and delete them (DELETE /images), never
 * an upload or a quarantined one, which are the validator's.
 */
function grantApiAccess(role: iam.Role, props: ManageApiProps): void {
  const { sourceBucket } = props;
  const buckets = [sourceBucket, ...Object.values(props.sourceBuckets)];
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'SignUploads',
      actions: ['s3:PutObject'],
      resources: [sourceBucket.arnForObjects(STAGING_PREFIX + '*')],
    }),
  );
  role.addToPolicy(new iam.PolicyStatement({ sid: 'ListImages', actions: ['s3:ListBucket'], resources: buckets.map((b) => b.bucketArn) }));
  role.addToPolicy(
    new iam.PolicyStatement({ sid: 'ReadImages', actions: ['s3:GetObject'], resources: buckets.map((b) => b.arnForObjects('*')) }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({ sid: 'DeleteImages', actions: ['s3:DeleteObject'], resources: buckets.map((b) => b.arnForObjects('*')) }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'LeaveUploadsToTheValidator',
      effect: iam.Effect.DENY,
      actions: ['s3:DeleteObject'],
      resources: [STAGING_PREFIX, QUARANTINE_PREFIX].map((prefix) => sourceBucket.arnForObjects(prefix + '*')),
    }),
  );
  sourceBucket.encryptionKey?.grantEncryptDecrypt(role);
  for (const bucket of Object.values(props.sourceBuckets)) bucket.encryptionKey?.grantDecrypt(role);
}

/**
 * The validator's S3 access: read and delete the staged uploads, write the
 * ready key (any source key) and the quarantine's objects, clear a key's
 * quarantine when it is ready, and list the bucket (a staged upload already
 * gone is S3's 404, not a 403: an event delivered twice does nothing).
 */
function grantValidatorAccess(role: iam.Role, sourceBucket: s3.IBucket): void {
  const staged = sourceBucket.arnForObjects(STAGING_PREFIX + '*');
  const quarantined = sourceBucket.arnForObjects(QUARANTINE_PREFIX + '*');
  role.addToPolicy(new iam.PolicyStatement({ sid: 'ReadUploads', actions: ['s3:GetObject'], resources: [staged] }));
  role.addToPolicy(
    new iam.PolicyStatement({ sid: 'TellGoneUploadsApart', actions: ['s3:ListBucket'], resources: [sourceBucket.bucketArn] }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({ sid: 'StoreValidatedUploads', actions: ['s3:PutObject'], resources: [sourceBucket.arnForObjects('*')] }),
  );
  role.addToPolicy(new iam.PolicyStatement({ sid: 'ClearUploads', actions: ['s3:DeleteObject'], resources: [staged, quarantined] }));
  sourceBucket.encryptionKey?.grantEncryptDecrypt(role);
}

/** The deliberate cdk-nag findings of this part: each wildcard on objects, with its reason. */
function acknowledgeManageFindings(scope: Construct, props: ManageApiProps, apiRole: iam.IRole, validatorRole: iam.IRole): void {
  const { sourceBucket } = props;
  const staged = sourceBucket.arnForObjects(STAGING_PREFIX + '*');
  acknowledge(
    apiRole,
    wildcardFinding(scope, staged),
    "s3:PutObject (a single action) under _uploads/ only: a presigned POST is allowed as its signer's PutObject on the key it pins, any key.",
  );
  for (const bucket of [sourceBucket, ...Object.values(props.sourceBuckets)]) {
    acknowledge(
      apiRole,
      wildcardFinding(scope, bucket.arnForObjects('*')),
      "s3:GetObject and s3:DeleteObject on a source bucket's objects: the API reports and deletes whichever source key its IAM caller names.",
    );
  }
  acknowledge(
    validatorRole,
    wildcardFinding(scope, staged),
    's3:GetObject and s3:DeleteObject under _uploads/ only: the validator reads each staged upload, whatever its key, then deletes it.',
  );
  acknowledge(
    validatorRole,
    wildcardFinding(scope, sourceBucket.arnForObjects(QUARANTINE_PREFIX + '*')),
    "s3:DeleteObject under _quarantine/ only: an upload that is ready clears its key's earlier quarantined copy and record.",
  );
  acknowledge(
    validatorRole,
    wildcardFinding(scope, sourceBucket.arnForObjects('*')),
    's3:PutObject (a single action) on the source bucket objects: a valid upload is copied to its own key, which may be any source key.',
  );
}
