// Operating it: CloudFront's additional metrics, the alarm topic, the
// dashboard and alarms (lib/monitoring.ts, its own child construct
// `Monitoring`), and the CodeDeploy canaries that move the live alias.
// The rest is built in the ImageTransformer's own scope (logical IDs unchanged).

import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as codedeploy from 'aws-cdk-lib/aws-codedeploy';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { ImageTransformerMonitoring } from '../monitoring';
import type { ResolvedSettings } from '../resolved-settings';
import { acknowledge } from './nag';

export interface OperationsProps extends Pick<
  ResolvedSettings,
  | 'cloudFrontAdditionalMetrics'
  | 'alarmTopic'
  | 'alarmEmail'
  | 'metricsNamespace'
  | 'originMetrics'
  | 'timeout'
  | 'timeBudgetMs'
  | 'memorySize'
  | 'reservedConcurrency'
  | 'provisionedConcurrency'
  | 'dashboard'
  | 'alarms'
  | 'canaryDeployments'
  | 'deploymentConfig'
> {
  readonly distribution: cloudfront.IDistribution;
  readonly originFunction: lambda.IFunction;
  readonly originAlias: lambda.Alias;
  readonly invalidationFunction: lambda.IFunction;
  readonly invalidationFailureQueue: sqs.IQueue;
  readonly uploadValidationFailureQueue?: sqs.IQueue;
}

export interface Operations {
  readonly monitoring: ImageTransformerMonitoring;
  /** alarmTopic, or the one made for alarmEmail. */
  readonly alarmTopic?: sns.ITopic;
  /** Only with canaryDeployments. */
  readonly deploymentGroup?: codedeploy.LambdaDeploymentGroup;
}

/** Creates in `scope`: `CloudFrontAdditionalMetrics`, `AlarmTopic` (for alarmEmail alone), `Monitoring`, `OriginDeployment`. */
export function buildOperations(scope: Construct, props: OperationsProps): Operations {
  if (props.cloudFrontAdditionalMetrics) {
    new cloudfront.CfnMonitoringSubscription(scope, 'CloudFrontAdditionalMetrics', {
      distributionId: props.distribution.distributionId,
      monitoringSubscription: { realtimeMetricsSubscriptionConfig: { realtimeMetricsSubscriptionStatus: 'Enabled' } },
    });
  }
  let alarmTopic = props.alarmTopic;
  if (props.alarmEmail) {
    alarmTopic ??= new sns.Topic(scope, 'AlarmTopic', {
      displayName: 'edge-image-transformer alarms',
      enforceSSL: true,
    });
    alarmTopic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));
  }
  const monitoring = new ImageTransformerMonitoring(scope, 'Monitoring', {
    distribution: props.distribution,
    originFunction: props.originFunction,
    originAlias: props.originAlias,
    invalidationFunction: props.invalidationFunction,
    invalidationFailureQueue: props.invalidationFailureQueue,
    uploadValidationFailureQueue: props.uploadValidationFailureQueue,
    namespace: props.metricsNamespace,
    originMetrics: props.originMetrics,
    cloudFrontAdditionalMetrics: props.cloudFrontAdditionalMetrics,
    timeout: props.timeout,
    timeBudgetMs: props.timeBudgetMs,
    memorySize: props.memorySize,
    reservedConcurrency: props.reservedConcurrency,
    provisionedConcurrency: props.provisionedConcurrency,
    dashboard: props.dashboard,
    alarms: props.alarms,
    topic: alarmTopic,
  });

  let deploymentGroup: codedeploy.LambdaDeploymentGroup | undefined;
  if (props.canaryDeployments) {
    const alarms = monitoring.deploymentAlarms;
    deploymentGroup = new codedeploy.LambdaDeploymentGroup(scope, 'OriginDeployment', {
      alias: props.originAlias,
      deploymentConfig: props.deploymentConfig,
      alarms,
      autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: alarms.length > 0 },
    });
    acknowledge(
      deploymentGroup.role,
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
      "CodeDeploy's own service role for Lambda canaries (aws-cdk-lib's default): the AWS-managed policy limited to what a " +
        'Lambda deployment does (get and update the alias, read provisioned concurrency, read the deployment alarms) and kept ' +
        'current by AWS as CodeDeploy changes.',
    );
  }
  return { monitoring, ...(alarmTopic ? { alarmTopic } : {}), ...(deploymentGroup ? { deploymentGroup } : {}) };
}
