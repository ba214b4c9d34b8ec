// ImageTransformerProps, operations: metrics, dashboard, alarms and canary deployments.

import type * as codedeploy from 'aws-cdk-lib/aws-codedeploy';
import type * as sns from 'aws-cdk-lib/aws-sns';

/** The props of operating the service: metrics, dashboard, alarms, canary deployments. */
export interface OperationsProps {
  /**
   * Per-request metrics from the origin Lambda, in CloudWatch Embedded Metric
   * Format on its log lines (no API call, no agent): Requests, Errors,
   * ServerErrors, FetchTime, TransformTime, StoreTime, SourceBytes,
   * OutputBytes and MemoryRss, by OutputFormat and ErrorCode. The dashboard
   * and the origin alarms are built on them. false: the log lines keep the
   * same fields but publish no metric.
   * @default true
   */
  readonly metrics?: boolean;

  /**
   * CloudWatch namespace of the origin's metrics. Two deployments in one
   * account and region need two namespaces, or their metrics add up.
   * @default 'EdgeImageTransformer/<stack name>'
   */
  readonly metricsNamespace?: string;

  /**
   * A CloudWatch dashboard of the service: CloudFront requests, cache hit
   * rate and error rates, origin requests by format, transform time
   * percentiles, errors by code, Lambda duration, concurrency, throttles and
   * memory, and the alarms' states.
   * @default true
   */
  readonly dashboard?: boolean;

  /**
   * CloudWatch alarms, with the thresholds of ALARM_THRESHOLDS (see the
   * runbook in docs/operations.md): origin error rate (5xx and crashes), p99
   * transform time near the time budget, origin throttles, failed
   * invalidations and, in a stack deployed to us-east-1, CloudFront's 5xx
   * error rate.
   * @default true
   */
  readonly alarms?: boolean;

  /**
   * An SNS topic the alarms notify, on ALARM and on OK.
   * @default - none (or a topic of this construct's own, with alarmEmail)
   */
  readonly alarmTopic?: sns.ITopic;

  /**
   * An email address the alarms notify: subscribed to alarmTopic, or to a
   * topic this construct creates. AWS emails it a confirmation link first.
   * @default - none
   */
  readonly alarmEmail?: string;

  /**
   * Turn on CloudFront's additional metrics for the distribution
   * (AWS::CloudFront::MonitoringSubscription): the edge cache hit rate, origin
   * latency and error rates by status code, graphed on the dashboard. They are
   * billed per distribution like CloudWatch custom metrics (a few dollars a
   * month at list prices). false: the dashboard graphs viewer requests against
   * origin invocations instead of the hit rate.
   * @default true
   */
  readonly cloudFrontAdditionalMetrics?: boolean;

  /**
   * Deploy new origin code with CodeDeploy: the live alias shifts traffic to
   * the new version by deploymentConfig, and CodeDeploy rolls back on its own
   * when a deployment alarm (origin error rate, p99 transform time, CloudFront
   * 5xx) fires or the deployment fails. false: the alias moves at once.
   * @default true
   */
  readonly canaryDeployments?: boolean;

  /**
   * How a canary deployment shifts traffic.
   * @default codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES - 10% for 5 minutes, then all
   */
  readonly deploymentConfig?: codedeploy.ILambdaDeploymentConfig;
}
