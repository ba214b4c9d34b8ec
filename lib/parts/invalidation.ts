// Invalidation: the Lambda that a source's created/removed events invoke
// (purge its variants, invalidate CloudFront, warm eager presets), and the
// queue an event lands in when it still fails after Lambda's retries.
// Built in the ImageTransformer's own scope (logical IDs unchanged).

import { Duration, Stack } from 'aws-cdk-lib';
import type * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3n from 'aws-cdk-lib/aws-s3-notifications';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { invalidationEnvironment } from '../../lambda/invalidate/config';
import type { DeploymentPlan } from '../plan';
import type { ResolvedSettings } from '../resolved-settings';
import { PROJECT_FUNCTION, SMALL_BUNDLING, lambdaEntry, ownLogsAndRole } from './lambda-project';
import { bucketNames } from './buckets';
import { acknowledge, wildcardFinding } from './nag';

export interface InvalidationProps extends Pick<
  ResolvedSettings,
  'sourceBuckets' | 'invalidationTimeoutSeconds' | 'logRetention' | 'removalPolicy'
> {
  /** Whose created/removed notifications start an invalidation (sourceBuckets' come through EventBridge). */
  readonly sourceBucket: s3.IBucket;
  /** Where a changed source's variants are purged from. */
  readonly cacheBucket: s3.IBucket;
  /** What is invalidated, and where eager presets are requested from. */
  readonly distribution: cloudfront.IDistribution;
  readonly plan: Pick<DeploymentPlan, 'invalidation'>;
}

export interface Invalidation {
  readonly function: nodejs.NodejsFunction;
  /** The function's on-failure destination, kept 14 days. */
  readonly failureQueue: sqs.Queue;
}

/** The id CDK gives its one-per-stack S3 notifications custom resource Lambda. */
const BUCKET_NOTIFICATIONS_HANDLER_ID = 'BucketNotificationsHandler050a0587b7544547bf325f094a3db834';

/**
 * Creates in `scope`: `InvalidationLogs`, `InvalidationRole`, `InvalidationFunction`, `InvalidationFailures`,
 * the source's notifications and, with sourceBuckets, `SourceBucketEvents`.
 */
export function buildInvalidation(scope: Construct, props: InvalidationProps): Invalidation {
  const { cacheBucket, distribution } = props;
  const { logGroup, role } = ownLogsAndRole(
    scope,
    'Invalidation',
    'edge-image-transformer invalidation: purge variants, invalidate CloudFront, write its own logs',
    props,
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'FindVariants',
      actions: ['s3:ListBucket'],
      resources: [cacheBucket.bucketArn],
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'PurgeVariants',
      actions: ['s3:DeleteObject'],
      resources: [cacheBucket.arnForObjects('*')],
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'InvalidateThisDistribution',
      actions: ['cloudfront:CreateInvalidation'],
      resources: [distribution.distributionArn],
    }),
  );

  const invalidationFunction = new nodejs.NodejsFunction(scope, 'InvalidationFunction', {
    description: 'edge-image-transformer: purge and invalidate the variants of a changed source',
    entry: lambdaEntry('invalidate'),
    ...PROJECT_FUNCTION,
    memorySize: 256,
    timeout: Duration.seconds(props.invalidationTimeoutSeconds),
    role,
    logGroup,
    environment: invalidationEnvironment(
      props.plan.invalidation(
        { cacheBucket: cacheBucket.bucketName, sourceBuckets: bucketNames(props.sourceBuckets) },
        { distributionId: distribution.distributionId, distributionOrigin: `https://${distribution.distributionDomainName}` },
      ),
    ),
    bundling: SMALL_BUNDLING,
  });

  // S3 invokes the Lambda asynchronously: Lambda retries a failed event twice (1 and
  // 2 minutes later), then hands it to this queue instead of dropping it.
  const failureQueue = new sqs.Queue(scope, 'InvalidationFailures', {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
    removalPolicy: props.removalPolicy,
  });
  invalidationFunction.configureAsyncInvoke({
    onFailure: new destinations.SqsDestination(failureQueue),
    retryAttempts: 2,
  });

  const notify = new s3n.LambdaDestination(invalidationFunction);
  props.sourceBucket.addEventNotification(s3.EventType.OBJECT_CREATED, notify);
  props.sourceBucket.addEventNotification(s3.EventType.OBJECT_REMOVED, notify);
  notifyThroughEventBridge(scope, Object.values(props.sourceBuckets), invalidationFunction);

  acknowledgeInvalidationFindings(scope, role, failureQueue, cacheBucket);
  return { function: invalidationFunction, failureQueue };
}

/**
 * The buckets mapped to prefixes tell the invalidation Lambda of their changes
 * through EventBridge, not S3 notifications: an imported bucket may already
 * notify someone of the same events, and S3 refuses a second configuration
 * that overlaps it (so would CDK's notifications resource, on deploy).
 * Turning EventBridge delivery on adds to a bucket's notifications without
 * touching them. EventBridge invokes the Lambda asynchronously, so its
 * retries and failure queue apply as to S3's notifications.
 */
function notifyThroughEventBridge(scope: Construct, buckets: s3.IBucket[], invalidationFunction: nodejs.NodejsFunction): void {
  if (buckets.length === 0) return;
  for (const bucket of buckets) bucket.enableEventBridgeNotification();
  new events.Rule(scope, 'SourceBucketEvents', {
    description: 'edge-image-transformer: objects created or deleted in the buckets mapped to key prefixes',
    eventPattern: {
      source: ['aws.s3'],
      detailType: ['Object Created', 'Object Deleted'],
      detail: { bucket: { name: buckets.map((bucket) => bucket.bucketName) } },
    },
    targets: [new targets.LambdaFunction(invalidationFunction)],
  });
}

/** The deliberate cdk-nag findings of this part, each with its reason. */
function acknowledgeInvalidationFindings(scope: Construct, role: iam.IRole, failureQueue: sqs.IQueue, cacheBucket: s3.IBucket): void {
  acknowledge(
    role,
    wildcardFinding(scope, cacheBucket.arnForObjects('*')),
    "s3:DeleteObject (a single action) on cache bucket objects only: a changed source's variants live under <source-key>/, any key.",
  );

  // CDK's own custom resource that configures the source bucket's notifications.
  const notificationsHandler = Stack.of(scope).node.tryFindChild(BUCKET_NOTIFICATIONS_HANDLER_ID);
  if (notificationsHandler) {
    acknowledge(
      notificationsHandler,
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      "aws-cdk-lib's BucketNotificationsHandler (deploy-time only custom resource); its role and managed logging policy are fixed by aws-cdk-lib.",
    );
    acknowledge(
      notificationsHandler,
      'AwsSolutions-IAM5[Resource::*]',
      "aws-cdk-lib's BucketNotificationsHandler needs s3:PutBucketNotification (its only action) on the notified bucket; aws-cdk-lib writes it with Resource *.",
    );
  }

  acknowledge(
    failureQueue,
    'AwsSolutions-SQS3',
    "This queue is itself the end of the line for failed source-change events (the invalidation Lambda's on-failure " +
      'destination); a message that fails again is left in it, alarmed, and replayed by an operator, never moved on.',
  );
}
