// Operating the ImageTransformer: its CloudWatch dashboard and alarms.
//
// Sources, all without an agent or an API call on the request path:
// - the origin's own metrics, in Embedded Metric Format on its log lines
//   (lambda/origin/metrics.ts): requests, errors by code, phase times, bytes,
//   memory;
// - AWS/Lambda for the live alias and the function: invocations, crashes
//   (Errors), duration, throttles, concurrency;
// - AWS/CloudFront, which lives in us-east-1 under Region=Global whatever
//   the stack's region: requests, error rates and (with the additional
//   metrics) the edge cache hit rate.
//
// CloudWatch alarms only watch metrics of their own region, so the CloudFront
// 5xx alarm exists only in a stack deployed to us-east-1; the dashboard shows
// CloudFront metrics from any region.

import { Annotations, Duration, Stack, Token } from 'aws-cdk-lib';
import type * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { HttpError } from '../lambda/origin/errors';
import { CONTENT_TYPES } from '../lambda/origin/image/output';
import { ERROR_CODES, ERROR_CODE_DIMENSION, OUTPUT_FORMAT_DIMENSION, formatOf, type MetricName } from '../lambda/origin/metrics';

/** The alarms' thresholds, as the runbook in docs/operations.md documents them. */
export const ALARM_THRESHOLDS = {
  /** Origin 5xx answers and crashed invocations, % of origin requests, in 2 of 3 one-minute periods... */
  originErrorRatePercent: 5,
  /** ...that had at least this many requests (fewer is noise, not a rate). */
  originErrorRateMinRequests: 5,
  /** p99 of TransformTime as a share of the origin's time budget (TIME_BUDGET_MS), in 3 of 5 one-minute periods. */
  transformTimeP99ShareOfBudget: 0.8,
  /** Throttled invocations per minute, in 3 consecutive minutes. */
  throttlesPerMinute: 1,
  /** CloudFront 5xxErrorRate, % of all viewer requests, in 3 consecutive minutes (us-east-1 stacks only). */
  cloudFront5xxErrorRatePercent: 1,
  /** Failed invocations of the invalidation Lambda in 5 minutes (each failed attempt; Lambda retries twice). */
  invalidationErrors: 1,
  /** Source-change events in the invalidation failure queue (given up on after Lambda's retries), over 5 minutes. */
  invalidationFailuresQueued: 1,
  /** Upload events in the validator's failure queue (given up on after Lambda's retries), over 5 minutes. */
  uploadValidationFailuresQueued: 1,
} as const;

/** The values the OutputFormat dimension takes: the subtypes of the Content-Types the origin answers with. */
const OUTPUT_FORMATS = Object.values(CONTENT_TYPES).map(formatOf);

const MINUTE = Duration.minutes(1);

const UPLOAD_FAILURES = 'An upload failed validation for good; it stays pending. See docs/manage.md: "When a validation fails".';

export interface ImageTransformerAlarms {
  /** Origin 5xx answers plus crashed invocations (timeouts, out of memory), as a share of origin requests. */
  readonly originErrorRate: cloudwatch.Alarm;
  /** p99 transform time near the origin's time budget (only with the origin's metrics). */
  readonly transformTimeP99?: cloudwatch.Alarm;
  /** Sustained throttling of the origin Lambda. */
  readonly originThrottles: cloudwatch.Alarm;
  /** CloudFront's 5xx error rate (only in a stack deployed to us-east-1, where CloudFront's metrics are). */
  readonly cloudFront5xxErrorRate?: cloudwatch.Alarm;
  /** The invalidation Lambda failed: a changed source's old variants may still be served. */
  readonly invalidationErrors: cloudwatch.Alarm;
  /** A source change failed for good (after Lambda's retries) and waits in the failure queue for a replay. */
  readonly invalidationFailuresQueued: cloudwatch.Alarm;
  /** An upload's validation failed for good and waits in the validator's failure queue (only with the management API). */
  readonly uploadValidationFailuresQueued?: cloudwatch.Alarm;
}

export interface MonitoringProps {
  readonly distribution: cloudfront.IDistribution;
  readonly originFunction: lambda.IFunction;
  readonly originAlias: lambda.Alias;
  readonly invalidationFunction: lambda.IFunction;
  /** The invalidation Lambda's on-failure destination. */
  readonly invalidationFailureQueue: sqs.IQueue;
  /** The upload validator's failure queue (only with the management API). */
  readonly uploadValidationFailureQueue?: sqs.IQueue;
  /** Namespace of the origin's EMF metrics. */
  readonly namespace: string;
  /** Whether the origin publishes its EMF metrics. */
  readonly originMetrics: boolean;
  /** Whether CloudFront's additional metrics (CacheHitRate...) are on. */
  readonly cloudFrontAdditionalMetrics: boolean;
  readonly timeout: Duration;
  readonly timeBudgetMs: number;
  readonly memorySize: number;
  readonly reservedConcurrency?: number;
  readonly provisionedConcurrency?: number;
  readonly dashboard: boolean;
  readonly alarms: boolean;
  /** Notified on ALARM and on OK. */
  readonly topic?: sns.ITopic;
}

/** The dashboard and alarms of one ImageTransformer. */
export class ImageTransformerMonitoring extends Construct {
  public readonly dashboard?: cloudwatch.Dashboard;
  public readonly alarms?: ImageTransformerAlarms;
  /** The alarms a canary deployment watches (and rolls back on). */
  public readonly deploymentAlarms: cloudwatch.IAlarm[] = [];

  /** `<stack name>-<construct path>-`: alarm names an operator can read, unique in the account and region. */
  public readonly alarmNamePrefix: string;

  private readonly props: MonitoringProps;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.props = props;
    const stack = Stack.of(this);
    const path = scope.node.path.slice(stack.node.path.length + 1).replace(/\//g, '-');
    this.alarmNamePrefix = `${stack.stackName}-${path ? path + '-' : ''}`;
    if (props.alarms) this.alarms = this.createAlarms();
    if (props.dashboard) this.dashboard = this.createDashboard();
  }

  // ---------------------------------------------------------------- metrics

  /** One of the origin's EMF metrics. */
  originMetric(name: MetricName, statistic: string, dimensions?: Record<string, string>, label?: string): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: this.props.namespace,
      metricName: name,
      statistic,
      period: MINUTE,
      ...(dimensions ? { dimensionsMap: dimensions } : {}),
      ...(label ? { label } : {}),
    });
  }

  /** An AWS/CloudFront metric of this distribution (us-east-1, Region=Global). */
  cloudFrontMetric(name: string, statistic: string, label?: string): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: 'AWS/CloudFront',
      metricName: name,
      dimensionsMap: { DistributionId: this.props.distribution.distributionId, Region: 'Global' },
      region: 'us-east-1',
      statistic,
      period: MINUTE,
      ...(label ? { label } : {}),
    });
  }

  private aliasMetric(name: string, statistic: string, label?: string): cloudwatch.Metric {
    return this.props.originAlias.metric(name, { statistic, period: MINUTE, ...(label ? { label } : {}) });
  }

  private functionMetric(name: string, statistic: string, label?: string): cloudwatch.Metric {
    return this.props.originFunction.metric(name, { statistic, period: MINUTE, ...(label ? { label } : {}) });
  }

  // ---------------------------------------------------------------- alarms

  // eslint-disable-next-line max-lines-per-function -- a declarative list of alarms, each with its threshold's reason, that reads best whole
  private createAlarms(): ImageTransformerAlarms {
    const { props } = this;
    const t = ALARM_THRESHOLDS;
    const crashes = this.aliasMetric('Errors', 'Sum');

    // Every origin request answered 5xx, plus the invocations that ended without an answer
    // of the handler's (timeout, out of memory, crash: Lambda's Errors), over both.
    const errorRate = props.originMetrics
      ? new cloudwatch.MathExpression({
          expression:
            `IF((FILL(requests, 0) + FILL(crashes, 0)) >= ${t.originErrorRateMinRequests}, ` +
            '100 * (FILL(serverErrors, 0) + FILL(crashes, 0)) / (FILL(requests, 0) + FILL(crashes, 0)), 0)',
          usingMetrics: {
            requests: this.originMetric('Requests', 'Sum'),
            serverErrors: this.originMetric('ServerErrors', 'Sum'),
            crashes,
          },
          period: MINUTE,
          label: 'Origin 5xx and crashes (% of origin requests)',
        })
      : new cloudwatch.MathExpression({
          expression: `IF(FILL(invocations, 0) >= ${t.originErrorRateMinRequests}, 100 * FILL(crashes, 0) / FILL(invocations, 0), 0)`,
          usingMetrics: { invocations: this.aliasMetric('Invocations', 'Sum'), crashes },
          period: MINUTE,
          label: 'Origin crashes (% of invocations)',
        });
    const originErrorRate = new cloudwatch.Alarm(this, 'OriginErrorRate', {
      alarmName: this.alarmNamePrefix + 'OriginErrorRate',
      alarmDescription:
        `More than ${t.originErrorRatePercent}% of origin requests answered 5xx or crashed, in 2 of 3 minutes ` +
        `(minutes with ${t.originErrorRateMinRequests}+ requests). Rolls back a canary deployment. ` +
        'See the runbook in docs/operations.md: "OriginErrorRate".',
      metric: errorRate,
      threshold: t.originErrorRatePercent,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.deploymentAlarms.push(originErrorRate);

    let transformTimeP99: cloudwatch.Alarm | undefined;
    if (props.originMetrics) {
      const thresholdMs = Math.round(props.timeBudgetMs * t.transformTimeP99ShareOfBudget);
      transformTimeP99 = new cloudwatch.Alarm(this, 'TransformTimeP99', {
        alarmName: this.alarmNamePrefix + 'TransformTimeP99',
        alarmDescription:
          `p99 transform time above ${thresholdMs} ms (${t.transformTimeP99ShareOfBudget * 100}% of the ${props.timeBudgetMs} ms ` +
          'time budget, past which the origin answers 504) in 3 of 5 minutes. Rolls back a canary deployment. ' +
          'See the runbook in docs/operations.md: "TransformTimeP99".',
        metric: this.originMetric('TransformTime', 'p99'),
        threshold: thresholdMs,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 5,
        datapointsToAlarm: 3,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      this.deploymentAlarms.push(transformTimeP99);
    }

    // Not a deployment alarm: throttling follows traffic and the concurrency cap, not the
    // code, and rolling a good version back during a surge would fix nothing.
    const originThrottles = new cloudwatch.Alarm(this, 'OriginThrottles', {
      alarmName: this.alarmNamePrefix + 'OriginThrottles',
      alarmDescription:
        `The origin Lambda was throttled (${t.throttlesPerMinute}+ a minute) for 3 minutes in a row: viewers get errors ` +
        'for images not yet made. See the runbook in docs/operations.md: "OriginThrottles".',
      metric: this.functionMetric('Throttles', 'Sum'),
      threshold: t.throttlesPerMinute,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 3,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    let cloudFront5xxErrorRate: cloudwatch.Alarm | undefined;
    const region = Stack.of(this).region;
    if (!Token.isUnresolved(region) && region === 'us-east-1') {
      cloudFront5xxErrorRate = new cloudwatch.Alarm(this, 'CloudFront5xxErrorRate', {
        alarmName: this.alarmNamePrefix + 'CloudFront5xxErrorRate',
        alarmDescription:
          `CloudFront answered more than ${t.cloudFront5xxErrorRatePercent}% of all viewer requests with 5xx, 3 minutes in a row. ` +
          'Rolls back a canary deployment. See the runbook in docs/operations.md: "CloudFront5xxErrorRate".',
        metric: this.cloudFrontMetric('5xxErrorRate', 'Average'),
        threshold: t.cloudFront5xxErrorRatePercent,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 3,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      // By name, not by reference: the alarm refers to the distribution, the distribution to the
      // alias's Function URL, and the alias (its UpdatePolicy) to the deployment group.
      this.deploymentAlarms.push(
        cloudwatch.Alarm.fromAlarmName(this, 'CloudFront5xxErrorRateByName', this.alarmNamePrefix + 'CloudFront5xxErrorRate'),
      );
    } else {
      Annotations.of(this).addInfo(
        "No CloudFront 5xx alarm: CloudFront's metrics are in us-east-1 and an alarm only watches its own region's " +
          '(this stack is in ' +
          (Token.isUnresolved(region) ? 'an unresolved region' : region) +
          '). The dashboard shows them; deploy in us-east-1 for the alarm.',
      );
    }

    // Not a deployment alarm either: the invalidation Lambda is not what a canary deploys.
    const invalidationErrors = new cloudwatch.Alarm(this, 'InvalidationErrors', {
      alarmName: this.alarmNamePrefix + 'InvalidationErrors',
      alarmDescription:
        'The invalidation Lambda failed to purge or invalidate a changed source; Lambda retries it twice, then puts the ' +
        'event in the failure queue. See docs/operations.md: "InvalidationErrors".',
      metric: props.invalidationFunction.metric('Errors', { statistic: 'Sum', period: Duration.minutes(5) }),
      threshold: t.invalidationErrors,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    const invalidationFailuresQueued = this.queueAlarm(
      'invalidationFailuresQueued',
      props.invalidationFailureQueue,
      'A source change still failed after Lambda retried it twice and waits in the invalidation failure queue: viewers ' +
        'may get the old image until it is replayed. See docs/operations.md: "InvalidationFailuresQueued" (npm run replay-invalidations).',
    );
    const uploadQueue = props.uploadValidationFailureQueue;
    const uploadValidationFailuresQueued = uploadQueue && this.queueAlarm('uploadValidationFailuresQueued', uploadQueue, UPLOAD_FAILURES);

    const alarms: ImageTransformerAlarms = {
      originErrorRate,
      transformTimeP99,
      originThrottles,
      cloudFront5xxErrorRate,
      invalidationErrors,
      invalidationFailuresQueued,
      uploadValidationFailuresQueued,
    };
    if (props.topic) {
      const action = new actions.SnsAction(props.topic);
      for (const alarm of Object.values(alarms)) {
        if (!alarm) continue;
        alarm.addAlarmAction(action);
        alarm.addOkAction(action);
      }
    }
    return alarms;
  }

  /** In ALARM while `queue` has had its threshold of messages in the last 5 minutes: something failed for good and waits there. */
  private queueAlarm(name: 'invalidationFailuresQueued' | 'uploadValidationFailuresQueued', queue: sqs.IQueue, description: string) {
    const id = name[0]!.toUpperCase() + name.slice(1);
    return new cloudwatch.Alarm(this, id, {
      alarmName: this.alarmNamePrefix + id,
      alarmDescription: description,
      metric: queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: Duration.minutes(5) }),
      threshold: ALARM_THRESHOLDS[name],
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  // ---------------------------------------------------------------- dashboard

  // eslint-disable-next-line max-lines-per-function -- a declarative list of the dashboard's widgets, in the order they are shown, that reads best whole
  private createDashboard(): cloudwatch.Dashboard {
    const { props } = this;
    const dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      defaultInterval: Duration.hours(3),
      periodOverride: cloudwatch.PeriodOverride.AUTO,
    });
    const graph = (title: string, left: cloudwatch.IMetric[], extra: Partial<cloudwatch.GraphWidgetProps> = {}) =>
      new cloudwatch.GraphWidget({ title, left, width: 8, height: 6, period: MINUTE, ...extra });

    if (this.alarms) {
      dashboard.addWidgets(
        new cloudwatch.AlarmStatusWidget({
          title: 'Alarms (runbook in docs/operations.md: what each means and what to do)',
          alarms: Object.values(this.alarms).filter((alarm): alarm is cloudwatch.Alarm => alarm !== undefined),
          width: 24,
          height: 2,
        }),
      );
    }

    // ---- the edge (AWS/CloudFront, us-east-1)
    const invocations = this.aliasMetric('Invocations', 'Sum', 'Origin invocations (live alias)');
    dashboard.addWidgets(
      graph('CloudFront requests', [this.cloudFrontMetric('Requests', 'Sum', 'Viewer requests')]),
      props.cloudFrontAdditionalMetrics
        ? graph('Edge cache hit rate (%)', [this.cloudFrontMetric('CacheHitRate', 'Average', 'CacheHitRate')], {
            leftYAxis: { min: 0, max: 100 },
          })
        : graph(
            'Viewer requests against origin invocations (the gap: cache hits)',
            [this.cloudFrontMetric('Requests', 'Sum', 'Viewer requests')],
            {
              right: [invocations],
            },
          ),
      graph(
        'CloudFront error rates (%)',
        [
          this.cloudFrontMetric('4xxErrorRate', 'Average', '4xx'),
          this.cloudFrontMetric('5xxErrorRate', 'Average', '5xx'),
          ...(props.cloudFrontAdditionalMetrics
            ? ['502', '503', '504'].map((status) => this.cloudFrontMetric(`${status}ErrorRate`, 'Average', status))
            : []),
        ],
        this.alarms?.cloudFront5xxErrorRate
          ? { leftAnnotations: [{ value: ALARM_THRESHOLDS.cloudFront5xxErrorRatePercent, label: '5xx alarm', color: '#d62728' }] }
          : {},
      ),
    );

    // ---- the origin (its own metrics and AWS/Lambda)
    const budget = { value: props.timeBudgetMs, label: `time budget (${props.timeBudgetMs} ms): 504 past it`, color: '#d62728' };
    if (props.originMetrics) {
      dashboard.addWidgets(
        graph(
          'Origin requests by output format',
          OUTPUT_FORMATS.map((format) => this.originMetric('Requests', 'Sum', { [OUTPUT_FORMAT_DIMENSION]: format }, format)),
          {
            right: [invocations],
            stacked: true,
          },
        ),
        graph(
          'Transform time (ms)',
          ['p50', 'p90', 'p99'].map((stat) => this.originMetric('TransformTime', stat, undefined, stat)),
          {
            leftAnnotations: [
              budget,
              {
                value: Math.round(props.timeBudgetMs * ALARM_THRESHOLDS.transformTimeP99ShareOfBudget),
                label: 'p99 alarm',
                color: '#ff7f0e',
              },
            ],
          },
        ),
        graph(
          'Origin errors by code',
          ERROR_CODES.map((code) =>
            this.originMetric('Errors', 'Sum', { [ERROR_CODE_DIMENSION]: code }, `${new HttpError(code, '').status} ${code}`),
          ),
          { stacked: true },
        ),
      );
    } else {
      dashboard.addWidgets(graph('Origin invocations', [invocations, this.aliasMetric('Errors', 'Sum', 'Crashes')]));
    }

    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Origin Lambda duration (ms)',
        left: ['p50', 'p99', 'Maximum'].map((stat) => this.aliasMetric('Duration', stat, stat)),
        leftAnnotations: [{ value: props.timeout.toMilliseconds(), label: 'timeout', color: '#d62728' }],
        width: 6,
        height: 6,
        period: MINUTE,
      }),
      new cloudwatch.GraphWidget({
        title: 'Concurrency and throttles',
        left: [
          this.functionMetric('ConcurrentExecutions', 'Maximum', 'Concurrent executions (max)'),
          ...(props.provisionedConcurrency
            ? [
                this.aliasMetric(
                  'ProvisionedConcurrencySpilloverInvocations',
                  'Sum',
                  'Beyond provisioned concurrency (cold starts possible)',
                ),
              ]
            : []),
        ],
        right: [this.functionMetric('Throttles', 'Sum', 'Throttles')],
        leftAnnotations: [
          ...(props.reservedConcurrency
            ? [{ value: props.reservedConcurrency, label: 'reserved concurrency (cap)', color: '#d62728' }]
            : []),
          ...(props.provisionedConcurrency ? [{ value: props.provisionedConcurrency, label: 'provisioned', color: '#2ca02c' }] : []),
        ],
        width: 6,
        height: 6,
        period: MINUTE,
      }),
      ...(props.originMetrics
        ? [
            new cloudwatch.GraphWidget({
              title: 'Origin memory: handler resident set and transform peak (MB)',
              left: [
                ...['p50', 'Maximum'].map((stat) => this.originMetric('MemoryRss', stat, undefined, `handler ${stat}`)),
                ...['p50', 'Maximum'].map((stat) => this.originMetric('TransformRss', stat, undefined, `transform ${stat}`)),
              ],
              leftAnnotations: [{ value: props.memorySize, label: `memory size (${props.memorySize} MB)`, color: '#d62728' }],
              width: 6,
              height: 6,
              period: MINUTE,
            }),
            new cloudwatch.GraphWidget({
              title: 'Fetch and store time p90 (ms), bytes p90',
              left: [
                this.originMetric('FetchTime', 'p90', undefined, 'fetch p90'),
                this.originMetric('StoreTime', 'p90', undefined, 'store p90'),
              ],
              right: [
                this.originMetric('SourceBytes', 'p90', undefined, 'source bytes p90'),
                this.originMetric('OutputBytes', 'p90', undefined, 'output bytes p90'),
              ],
              width: 6,
              height: 6,
              period: MINUTE,
            }),
          ]
        : []),
    );
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Invalidation Lambda (source changes) and its failure queue',
        left: [
          props.invalidationFunction.metric('Invocations', { statistic: 'Sum', period: MINUTE, label: 'Invocations' }),
          props.invalidationFunction.metric('Errors', { statistic: 'Sum', period: MINUTE, label: 'Errors' }),
        ],
        right: [
          props.invalidationFailureQueue.metricApproximateNumberOfMessagesVisible({
            statistic: 'Maximum',
            period: MINUTE,
            label: 'Events in the failure queue (replay: npm run replay-invalidations)',
          }),
        ],
        ...(this.alarms
          ? { rightAnnotations: [{ value: ALARM_THRESHOLDS.invalidationFailuresQueued, label: 'failure queue alarm', color: '#d62728' }] }
          : {}),
        width: 24,
        height: 4,
        period: MINUTE,
      }),
    );
    return dashboard;
  }
}
