// The operations part (lib/parts/operations.ts, lib/monitoring.ts) as synthesized:
// the live alias and canaries, alarms, dashboard.

import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, METRIC_UNITS } from '../../lambda/origin/metrics';
import type { ImageTransformerStack } from '../../lib/stack';
import { ALARM_TOPIC_ARN, type Json, logicalId, only, originFunction, resources, synth, type Synthesized, synthesize } from './synth';

const { base, full, imported, off } = synthesize('base', 'full', 'imported', 'off');

// ---------------------------------------------------------------- operations

/** The dashboard's body as JSON, each reference written `{LogicalId}` or `{LogicalId.Attribute}`. */
function dashboardBody(s: Synthesized): Json {
  const body = only(s, 'AWS::CloudWatch::Dashboard')[1].Properties.DashboardBody;
  const parts: unknown[] = typeof body === 'string' ? [body] : body['Fn::Join'][1];
  const text = parts
    .map((part) => {
      if (typeof part === 'string') return part;
      const ref = part as Json;
      return `{${ref.Ref ?? (ref['Fn::GetAtt'] as string[]).join('.')}}`;
    })
    .join('');
  return JSON.parse(text);
}

interface GraphedMetric {
  widget: string;
  namespace: string;
  name: string;
  dimensions: Record<string, string>;
  options: Json;
}

/** Every metric of every graph: [namespace, name, dimension, value, ..., options]. */
function graphedMetrics(s: Synthesized): GraphedMetric[] {
  return (dashboardBody(s).widgets as Json[])
    .filter((widget) => widget.type === 'metric')
    .flatMap((widget) =>
      (widget.properties.metrics as unknown[][]).map((row) => {
        const options = (typeof row[row.length - 1] === 'object' ? row[row.length - 1] : {}) as Json;
        const plain = row.filter((item) => typeof item === 'string') as string[];
        const dimensions: Record<string, string> = {};
        for (let i = 2; i < plain.length; i += 2) dimensions[plain[i]!] = plain[i + 1]!;
        return { widget: widget.properties.title, namespace: plain[0]!, name: plain[1]!, dimensions, options };
      }),
    );
}

const alarmProps = (s: Synthesized, name: keyof NonNullable<ImageTransformerStack['transformer']['alarms']>): Json => {
  const alarm = s.stack.transformer.alarms?.[name];
  expect(alarm, name).toBeDefined();
  return s.json.Resources[logicalId(s, alarm!)].Properties;
};

describe('origin versions, the live alias and canary deployments', () => {
  it('publishes a version of the origin and points the live alias at it', () => {
    for (const s of [base, full, imported, off]) {
      const t = s.stack.transformer;
      const fnId = logicalId(s, t.originFunction);
      const [versionId, version] = only(s, 'AWS::Lambda::Version');
      expect(version.Properties.FunctionName).toEqual({ Ref: fnId });
      const [aliasId, alias] = only(s, 'AWS::Lambda::Alias');
      expect(aliasId).toBe(logicalId(s, t.originAlias));
      expect(alias.Properties).toMatchObject({
        Name: 'live',
        FunctionName: { Ref: fnId },
        FunctionVersion: { 'Fn::GetAtt': [versionId, 'Version'] },
      });
    }
  });

  it("logs in Lambda's Text format, where a console.log line of JSON is an EMF document (the JSON format would nest it)", () => {
    for (const s of [base, full]) expect(originFunction(s).Properties.LoggingConfig.LogFormat ?? 'Text').toBe('Text');
  });

  it('keeps execution environments warm on the alias only when asked (provisioned concurrency)', () => {
    const alias = (s: Synthesized) => only(s, 'AWS::Lambda::Alias')[1].Properties;
    expect(alias(full).ProvisionedConcurrencyConfig).toEqual({ ProvisionedConcurrentExecutions: 10 });
    expect(originFunction(full).Properties.ReservedConcurrentExecutions).toBe(50);
    expect(alias(base).ProvisionedConcurrencyConfig).toBeUndefined();
    expect(originFunction(base).Properties.ReservedConcurrentExecutions).toBeUndefined();
  });

  it('shifts the alias with CodeDeploy, 10% for 5 minutes, rolling back on failure, on a stop and on the alarms', () => {
    const t = base.stack.transformer;
    const [groupId, group] = only(base, 'AWS::CodeDeploy::DeploymentGroup');
    expect(groupId).toBe(logicalId(base, t.deploymentGroup!));
    const [applicationId, application] = only(base, 'AWS::CodeDeploy::Application');
    expect(application.Properties.ComputePlatform).toBe('Lambda');
    expect(group.Properties).toMatchObject({
      ApplicationName: { Ref: applicationId },
      DeploymentConfigName: 'CodeDeployDefault.LambdaCanary10Percent5Minutes',
      DeploymentStyle: { DeploymentOption: 'WITH_TRAFFIC_CONTROL', DeploymentType: 'BLUE_GREEN' },
    });
    expect(group.Properties.AutoRollbackConfiguration.Enabled).toBe(true);
    expect([...group.Properties.AutoRollbackConfiguration.Events].sort()).toEqual([
      'DEPLOYMENT_FAILURE',
      'DEPLOYMENT_STOP_ON_ALARM',
      'DEPLOYMENT_STOP_ON_REQUEST',
    ]);
    // The alarms that judge a new version; not throttles, which follow traffic, not code.
    const alarmNames = (s: Synthesized) => {
      const [, g] = only(s, 'AWS::CodeDeploy::DeploymentGroup');
      expect(g.Properties.AlarmConfiguration.Enabled).toBe(true);
      return (g.Properties.AlarmConfiguration.Alarms as Json[]).map((alarm) => alarm.Name);
    };
    const ref = (s: Synthesized, name: 'originErrorRate' | 'transformTimeP99' | 'cloudFront5xxErrorRate') => ({
      Ref: logicalId(s, s.stack.transformer.alarms![name]!),
    });
    expect(alarmNames(base)).toEqual([ref(base, 'originErrorRate'), ref(base, 'transformTimeP99')]);
    // The CloudFront alarm by its name: a reference would close a loop (alarm -> distribution ->
    // Function URL -> alias -> deployment group -> alarm) that CloudFormation cannot create.
    expect(alarmNames(imported)).toEqual([
      ref(imported, 'originErrorRate'),
      ref(imported, 'transformTimeP99'),
      'Images-ImageTransformer-CloudFront5xxErrorRate',
    ]);
    expect(alarmProps(imported, 'cloudFront5xxErrorRate').AlarmName).toBe('Images-ImageTransformer-CloudFront5xxErrorRate');
    // CloudFormation hands each change of the alias's version to that deployment group.
    expect(only(base, 'AWS::Lambda::Alias')[1].UpdatePolicy).toEqual({
      CodeDeployLambdaAliasUpdate: { ApplicationName: { Ref: applicationId }, DeploymentGroupName: { Ref: groupId } },
    });
    // CodeDeploy's role may touch Lambda aliases and read alarms, through AWS's limited policy.
    const role = base.json.Resources[logicalId(base, t.deploymentGroup!.role)].Properties;
    expect(role.AssumeRolePolicyDocument.Statement[0].Principal).toEqual({ Service: 'codedeploy.amazonaws.com' });
    expect(JSON.stringify(role.ManagedPolicyArns)).toContain('service-role/AWSCodeDeployRoleForLambdaLimited');
  });

  it('takes another traffic-shifting configuration', () => {
    expect(only(full, 'AWS::CodeDeploy::DeploymentGroup')[1].Properties.DeploymentConfigName).toBe(
      'CodeDeployDefault.LambdaLinear10PercentEvery1Minute',
    );
  });

  it('with canaryDeployments off, moves the alias at once: no CodeDeploy', () => {
    expect(resources(off, 'AWS::CodeDeploy::DeploymentGroup')).toHaveLength(0);
    expect(resources(off, 'AWS::CodeDeploy::Application')).toHaveLength(0);
    expect(only(off, 'AWS::Lambda::Alias')[1].UpdatePolicy).toBeUndefined();
    expect(off.stack.transformer.deploymentGroup).toBeUndefined();
  });
});

describe('alarms', () => {
  it('origin error rate: 5xx answers and crashed invocations over requests, above 5% in 2 of 3 minutes of 5+ requests', () => {
    const fnId = logicalId(base, base.stack.transformer.originFunction);
    const alarm = alarmProps(base, 'originErrorRate');
    expect(alarm).toMatchObject({
      Threshold: 5,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
      TreatMissingData: 'notBreaching',
    });
    const metrics: Record<string, Json> = Object.fromEntries((alarm.Metrics as Json[]).map((m) => [m.Id, m]));
    const expression = Object.values(metrics).find((m) => m.Expression)!;
    expect(expression.ReturnData).toBe(true);
    expect(expression.Expression).toBe(
      'IF((FILL(requests, 0) + FILL(crashes, 0)) >= 5, 100 * (FILL(serverErrors, 0) + FILL(crashes, 0)) / (FILL(requests, 0) + FILL(crashes, 0)), 0)',
    );
    expect(metrics.requests!.MetricStat).toEqual({
      Metric: { Namespace: 'EdgeImageTransformer/Images', MetricName: 'Requests' },
      Period: 60,
      Stat: 'Sum',
    });
    expect(metrics.serverErrors!.MetricStat.Metric).toEqual({ Namespace: 'EdgeImageTransformer/Images', MetricName: 'ServerErrors' });
    expect(metrics.crashes!.MetricStat).toEqual({
      Metric: {
        Namespace: 'AWS/Lambda',
        MetricName: 'Errors',
        Dimensions: [
          { Name: 'FunctionName', Value: { Ref: fnId } },
          { Name: 'Resource', Value: { 'Fn::Join': ['', [{ Ref: fnId }, ':live']] } },
        ],
      },
      Period: 60,
      Stat: 'Sum',
    });
  });

  it('p99 transform time: above 80% of the time budget in 3 of 5 minutes', () => {
    expect(alarmProps(base, 'transformTimeP99')).toMatchObject({
      Namespace: 'EdgeImageTransformer/Images',
      MetricName: 'TransformTime',
      ExtendedStatistic: 'p99',
      Period: 60,
      Threshold: 21_600, // of TIME_BUDGET_MS 27000 (timeout 30 s)
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 5,
      DatapointsToAlarm: 3,
      TreatMissingData: 'notBreaching',
    });
    expect(alarmProps(full, 'transformTimeP99')).toMatchObject({ Namespace: 'Photos/Images', Threshold: 43_200 }); // of 54000
  });

  it('throttles: one or more a minute, 3 minutes in a row', () => {
    expect(alarmProps(base, 'originThrottles')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Throttles',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(base, base.stack.transformer.originFunction) } }],
      Statistic: 'Sum',
      Period: 60,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
    });
  });

  it('failed invalidations: any error of the invalidation Lambda in 5 minutes', () => {
    expect(alarmProps(base, 'invalidationErrors')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(base, base.stack.transformer.invalidationFunction) } }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
    });
  });

  it('failure queue: any event waiting in it (visible messages, maximum over 5 minutes)', () => {
    expect(alarmProps(base, 'invalidationFailuresQueued')).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [
        { Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(base, base.stack.transformer.invalidationFailureQueue), 'QueueName'] } },
      ],
      Statistic: 'Maximum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
    });
  });

  it("validator failure queue: any upload's event waiting in it, as the invalidation queue's; none without the API", () => {
    expect(alarmProps(base, 'uploadValidationFailuresQueued')).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [
        {
          Name: 'QueueName',
          Value: { 'Fn::GetAtt': [logicalId(base, base.stack.transformer.uploadValidationFailureQueue!), 'QueueName'] },
        },
      ],
      Statistic: 'Maximum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
    });
    expect(alarmProps(base, 'uploadValidationFailuresQueued').AlarmDescription).toContain('docs/manage.md');
    expect(synth(() => ({ manageApi: false })).stack.transformer.alarms!.uploadValidationFailuresQueued).toBeUndefined();
  });

  it("CloudFront 5xx: above 1% for 3 minutes, in a us-east-1 stack (CloudFront's metrics are there), and said so elsewhere", () => {
    expect(alarmProps(imported, 'cloudFront5xxErrorRate')).toMatchObject({
      Namespace: 'AWS/CloudFront',
      MetricName: '5xxErrorRate',
      Dimensions: [
        { Name: 'DistributionId', Value: { Ref: logicalId(imported, imported.stack.transformer.distribution) } },
        { Name: 'Region', Value: 'Global' },
      ],
      Statistic: 'Average',
      Period: 60,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
    });
    expect(resources(imported, 'AWS::CloudWatch::Alarm')).toHaveLength(7);
    expect(resources(base, 'AWS::CloudWatch::Alarm')).toHaveLength(6);
    expect(base.stack.transformer.alarms!.cloudFront5xxErrorRate).toBeUndefined();
    Annotations.fromStack(base.stack).hasInfo('*', Match.stringLikeRegexp('No CloudFront 5xx alarm.*us-east-1.*eu-west-1'));
  });

  it('have names an operator can read: <stack>-<construct path>-<alarm>', () => {
    const names = (s: Synthesized) => resources(s, 'AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties.AlarmName);
    expect(names(base)).toEqual([
      'Images-ImageTransformer-OriginErrorRate',
      'Images-ImageTransformer-TransformTimeP99',
      'Images-ImageTransformer-OriginThrottles',
      'Images-ImageTransformer-InvalidationErrors',
      'Images-ImageTransformer-InvalidationFailuresQueued',
      'Images-ImageTransformer-UploadValidationFailuresQueued',
    ]);
    expect(names(imported)).toContain('Images-ImageTransformer-CloudFront5xxErrorRate');
  });

  it('notify a topic on ALARM and on OK: the one given, or one made for alarmEmail', () => {
    const actions = (s: Synthesized) =>
      resources(s, 'AWS::CloudWatch::Alarm').map(([, alarm]) => [alarm.Properties.AlarmActions, alarm.Properties.OKActions]);
    // No topic, no actions.
    expect(
      actions(base)
        .flat()
        .every((list) => list === undefined),
    ).toBe(true);
    expect(resources(base, 'AWS::SNS::Topic')).toHaveLength(0);
    // An email address: a topic of its own (TLS only), subscribed.
    const [topicId] = only(full, 'AWS::SNS::Topic');
    expect(actions(full)).toHaveLength(6);
    for (const [alarm, ok] of actions(full)) {
      expect(alarm).toEqual([{ Ref: topicId }]);
      expect(ok).toEqual([{ Ref: topicId }]);
    }
    expect(only(full, 'AWS::SNS::Subscription')[1].Properties).toEqual({
      Protocol: 'email',
      Endpoint: 'images-oncall@example.com',
      TopicArn: { Ref: topicId },
    });
    const [, topicPolicy] = only(full, 'AWS::SNS::TopicPolicy');
    expect(topicPolicy.Properties.PolicyDocument.Statement).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
    expect(full.stack.transformer.alarmTopic).toBeDefined();
    // A topic given: used as it is.
    expect(resources(imported, 'AWS::SNS::Topic')).toHaveLength(0);
    for (const [alarm, ok] of actions(imported)) {
      expect(alarm).toEqual([ALARM_TOPIC_ARN]);
      expect(ok).toEqual([ALARM_TOPIC_ARN]);
    }
  });

  it('without the origin metrics: the error rate is crashes over invocations, and there is no transform-time alarm', () => {
    const plain = synth(() => ({ metrics: false, cloudFrontAdditionalMetrics: false }));
    const alarm = alarmProps(plain, 'originErrorRate');
    const ids = (alarm.Metrics as Json[]).map((m) => m.Id).sort();
    expect(ids).toEqual(['crashes', 'expr_1', 'invocations']);
    expect(JSON.stringify(alarm.Metrics)).not.toContain('EdgeImageTransformer');
    expect(plain.stack.transformer.alarms!.transformTimeP99).toBeUndefined();
    expect((only(plain, 'AWS::CodeDeploy::DeploymentGroup')[1].Properties.AlarmConfiguration.Alarms as Json[]).map((a) => a.Name)).toEqual([
      { Ref: logicalId(plain, plain.stack.transformer.alarms!.originErrorRate) },
    ]);
    // The dashboard graphs only what exists: nothing of the origin's namespace.
    expect(graphedMetrics(plain).filter((m) => m.namespace.startsWith('EdgeImageTransformer'))).toEqual([]);
    // Without CloudFront's additional metrics: requests against origin invocations stand in for the hit rate.
    expect(resources(plain, 'AWS::CloudFront::MonitoringSubscription')).toHaveLength(0);
    const names = graphedMetrics(plain).map((m) => m.name);
    expect(names).not.toContain('CacheHitRate');
    const stand = graphedMetrics(plain).filter((m) => m.widget.startsWith('Viewer requests against origin invocations'));
    expect(stand.map((m) => `${m.namespace} ${m.name}`)).toEqual(['AWS/CloudFront Requests', 'AWS/Lambda Invocations']);
  });

  it('none of it when turned off: no alarm, dashboard, topic or additional metrics', () => {
    for (const type of [
      'AWS::CloudWatch::Alarm',
      'AWS::CloudWatch::Dashboard',
      'AWS::SNS::Topic',
      'AWS::CloudFront::MonitoringSubscription',
      'AWS::CodeDeploy::DeploymentGroup',
    ]) {
      expect(resources(off, type), type).toHaveLength(0);
    }
    expect(off.stack.transformer.alarms).toBeUndefined();
    expect(off.stack.transformer.dashboard).toBeUndefined();
  });
});

describe('dashboard', () => {
  it("graphs CloudFront from us-east-1 (Region=Global), whatever the stack's region: requests, cache hit rate, error rates", () => {
    const distributionId = `{${logicalId(base, base.stack.transformer.distribution)}}`;
    const edge = graphedMetrics(base).filter((m) => m.namespace === 'AWS/CloudFront');
    expect(edge.map((m) => m.name)).toEqual([
      'Requests',
      'CacheHitRate',
      '4xxErrorRate',
      '5xxErrorRate',
      '502ErrorRate',
      '503ErrorRate',
      '504ErrorRate',
    ]);
    for (const metric of edge) {
      expect(metric.dimensions).toEqual({ DistributionId: distributionId, Region: 'Global' });
      expect(metric.options.region).toBe('us-east-1');
    }
    // The hit rate needs CloudFront's additional metrics, which are on by default.
    expect(only(base, 'AWS::CloudFront::MonitoringSubscription')[1].Properties).toEqual({
      DistributionId: { Ref: logicalId(base, base.stack.transformer.distribution) },
      MonitoringSubscription: { RealtimeMetricsSubscriptionConfig: { RealtimeMetricsSubscriptionStatus: 'Enabled' } },
    });
  });

  it('graphs the origin: requests by format, transform time p50/p90/p99, errors by code, duration, concurrency, throttles, memory', () => {
    const graphed = graphedMetrics(base);
    const of = (title: string) => graphed.filter((m) => m.widget === title);
    const own = (m: GraphedMetric) => m.namespace === 'EdgeImageTransformer/Images';

    expect(
      of('Origin requests by output format')
        .filter(own)
        .map((m) => m.dimensions.OutputFormat),
    ).toEqual(['jpeg', 'png', 'webp', 'avif', 'gif', 'json']);
    expect(of('Origin requests by output format').find((m) => m.name === 'Invocations')!.dimensions.Resource).toMatch(/:live$/);
    expect(of('Transform time (ms)').map((m) => `${m.name} ${m.options.stat}`)).toEqual([
      'TransformTime p50',
      'TransformTime p90',
      'TransformTime p99',
    ]);
    expect(of('Origin errors by code').map((m) => m.dimensions.ErrorCode)).toEqual(ERROR_CODES);
    expect(of('Origin errors by code').map((m) => m.options.label)).toContain('504 timeout');
    expect(of('Origin Lambda duration (ms)').map((m) => `${m.namespace} ${m.name} ${m.options.stat}`)).toEqual([
      'AWS/Lambda Duration p50',
      'AWS/Lambda Duration p99',
      'AWS/Lambda Duration Maximum',
    ]);
    expect(of('Concurrency and throttles').map((m) => m.name)).toEqual(['ConcurrentExecutions', 'Throttles']);
    expect(of('Origin memory: handler resident set and transform peak (MB)').map((m) => m.name)).toEqual([
      'MemoryRss',
      'MemoryRss',
      'TransformRss',
      'TransformRss',
    ]);
    const invalidation = of('Invalidation Lambda (source changes) and its failure queue');
    expect(invalidation.map((m) => m.name)).toEqual(['Invocations', 'Errors', 'ApproximateNumberOfMessagesVisible']);
    expect(invalidation[0]!.dimensions.FunctionName).toBe(`{${logicalId(base, base.stack.transformer.invalidationFunction)}}`);

    // Every documented metric of the origin is graphed or alarmed on.
    const alarmed = JSON.stringify(resources(base, 'AWS::CloudWatch::Alarm'));
    for (const name of Object.keys(METRIC_UNITS)) {
      expect(graphed.some((m) => own(m) && m.name === name) || alarmed.includes(`"MetricName":"${name}"`), name).toBe(true);
    }
  });

  it('marks the limits: time budget, p99 alarm, timeout, memory, reserved and provisioned concurrency; and shows every alarm', () => {
    const widgets = dashboardBody(full).widgets as Json[];
    const annotations = (title: string) =>
      (widgets.find((w) => w.properties.title === title)!.properties.annotations.horizontal as Json[]).map((a) => [a.label, a.value]);
    expect(annotations('Transform time (ms)')).toEqual([
      ['time budget (54000 ms): 504 past it', 54_000],
      ['p99 alarm', 43_200],
    ]);
    expect(annotations('Origin Lambda duration (ms)')).toEqual([['timeout', 60_000]]);
    expect(annotations('Origin memory: handler resident set and transform peak (MB)')).toEqual([['memory size (3008 MB)', 3008]]);
    expect(annotations('Concurrency and throttles')).toEqual([
      ['reserved concurrency (cap)', 50],
      ['provisioned', 10],
    ]);
    const status = widgets.find((w) => w.type === 'alarm')!;
    const alarmIds = resources(full, 'AWS::CloudWatch::Alarm').map(([id]) => `{${id}.Arn}`);
    expect([...status.properties.alarms].sort()).toEqual(alarmIds.sort());
  });
});
