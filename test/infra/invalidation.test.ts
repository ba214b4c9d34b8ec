// The invalidation part (lib/parts/invalidation.ts) as synthesized.

import { Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { actionsOf, ENV, FULL, invalidationFunction, type Json, logicalId, only, refs, resources, roleActions, synthesize } from './synth';

const { base, full, imported, off } = synthesize('base', 'full', 'imported', 'off');

describe('invalidation Lambda', () => {
  it('lists and deletes cache-bucket objects and invalidates this distribution only', () => {
    const t = base.stack.transformer;
    const allowed = roleActions(base, t.invalidationFunction.role!);
    expect(allowed.map((st) => [actionsOf(st).join(','), refs(st.Resource)])).toEqual([
      ['logs:CreateLogStream,logs:PutLogEvents', [logicalId(base, t.node.findChild('InvalidationLogs'))]],
      ['s3:ListBucket', [logicalId(base, t.cacheBucket)]],
      ['s3:DeleteObject', [logicalId(base, t.cacheBucket)]],
      ['cloudfront:CreateInvalidation', [logicalId(base, t.distribution)]],
      // Lambda's on-failure destination sends as the function's role.
      ['sqs:SendMessage,sqs:GetQueueAttributes,sqs:GetQueueUrl', [logicalId(base, t.invalidationFailureQueue)]],
    ]);
    expect(base.json.Resources[logicalId(base, t.invalidationFunction.role!)].Properties.ManagedPolicyArns).toBeUndefined();
  });

  it('hands an event that still fails after two retries to an encrypted, TLS-only failure queue that keeps it 14 days', () => {
    for (const s of [base, full, imported, off]) {
      const t = s.stack.transformer;
      // The management API's validator has a failure queue of its own (test/infra/manage.test.ts).
      const functionId = logicalId(s, t.invalidationFunction);
      const [, config] = resources(s, 'AWS::Lambda::EventInvokeConfig').find(([, c]) => refs(c.Properties.FunctionName)[0] === functionId)!;
      expect(config.Properties).toMatchObject({
        FunctionName: { Ref: functionId },
        MaximumRetryAttempts: 2,
        DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [logicalId(s, t.invalidationFailureQueue), 'Arn'] } } },
      });
      const queueId = logicalId(s, t.invalidationFailureQueue);
      const queue = s.json.Resources[queueId];
      expect(queue.Properties).toEqual({ MessageRetentionPeriod: 14 * 24 * 3600, SqsManagedSseEnabled: true });
      const [, policy] = resources(s, 'AWS::SQS::QueuePolicy').find(([, p]) => refs(p.Properties.Queues).includes(queueId))!;
      expect(refs(policy.Properties.Queues)).toEqual([queueId]);
      expect(policy.Properties.PolicyDocument.Statement).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Action: 'sqs:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
    }
    expect(base.json.Resources[logicalId(base, base.stack.transformer.invalidationFailureQueue)].DeletionPolicy).toBe('Retain');
    expect(full.json.Resources[logicalId(full, full.stack.transformer.invalidationFailureQueue)].DeletionPolicy).toBe('Delete');
  });

  it('is configured with the cache bucket, the distribution and the eager presets', () => {
    const t = base.stack.transformer;
    expect(invalidationFunction(base).Properties.Environment.Variables).toEqual({
      CACHE_BUCKET: { Ref: logicalId(base, t.cacheBucket) },
      DISTRIBUTION_ID: { Ref: logicalId(base, t.distribution) },
      DISTRIBUTION_DOMAIN: { 'Fn::GetAtt': [logicalId(base, t.distribution), 'DomainName'] },
      EAGER_PRESETS: '',
      WARM_TIMEOUT_MS: '45000',
      // The second purge and invalidation: the origin's 30 s timeout and 5 s for its answer.
      SETTLE_MS: '35000',
      MAX_DIMENSION: '8192',
      AVIF: 'true',
    });
    const env = invalidationFunction(full).Properties.Environment.Variables;
    expect(env).toMatchObject({
      EAGER_PRESETS: 'thumb',
      SETTLE_MS: '65000',
      AVIF: 'false',
      SIZES: '320,640,1280',
      MAX_DIMENSION: '4096',
      PRESETS: JSON.stringify(FULL(new Stack()).presets),
      SIGNING_SECRET: '{{resolve:secretsmanager:image-signing-secret:SecretString:::}}',
    });
    // 60 s for two purges and invalidations, 65 s between them (the origin's 60 s timeout + 5),
    // and warming, which waits for the origin: 1 preset x 3 formats, 4 at a time, 75 s each.
    expect(invalidationFunction(full).Properties.Timeout).toBe(200);
  });

  it("receives the source bucket's object created and removed events", () => {
    for (const s of [base, imported]) {
      const [, notifications] = only(s, 'Custom::S3BucketNotifications');
      const configs = notifications.Properties.NotificationConfiguration.LambdaFunctionConfigurations as Json[];
      expect(configs.map((c) => c.Events).sort()).toEqual([['s3:ObjectCreated:*'], ['s3:ObjectRemoved:*']]);
      for (const config of configs) {
        expect(config.LambdaFunctionArn).toEqual({ 'Fn::GetAtt': [logicalId(s, s.stack.transformer.invalidationFunction), 'Arn'] });
      }
      s.template.hasResourceProperties('AWS::Lambda::Permission', {
        Action: 'lambda:InvokeFunction',
        Principal: 's3.amazonaws.com',
        FunctionName: { 'Fn::GetAtt': [logicalId(s, s.stack.transformer.invalidationFunction), 'Arn'] },
        SourceAccount: ENV.account,
      });
    }
    // A bucket the stack created is its own; an imported bucket keeps its other notifications.
    expect(only(base, 'Custom::S3BucketNotifications')[1].Properties.Managed).toBe(true);
    expect(only(imported, 'Custom::S3BucketNotifications')[1].Properties.Managed).toBe(false);
  });
});
