// Buckets mapped to key prefixes (sourceBuckets): each gets exactly the access
// it needs (the origin's s3:GetObject on its objects; CDK's deploy-time
// notifications handler turns its EventBridge delivery on), both Lambdas know
// the mapping, its changes reach the invalidation Lambda through one
// EventBridge rule, and a stack without the prop is as it was.

import { App, Stack } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { describe, expect, it } from 'vitest';
import type { ImageTransformerProps } from '../../lib/props';
import { ImageTransformerConfigError } from '../../lib/settings';
import { ImageTransformerStack } from '../../lib/stack';
import {
  actionsOf,
  distributionConfig,
  ENV,
  invalidationFunction,
  type Json,
  logicalId,
  originFunction,
  refs,
  resources,
  roleActions,
  statements,
  synth,
  synthesize,
} from './synth';

const { base, buckets } = synthesize('base', 'buckets');
const MAPPING = { 'archive/': 'my-archive', 'press/kit/': 'my-press-kit' };
const objectsOf = (name: string) => ({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:s3:::${name}/*`]] });
const bucketArn = (name: string) => ({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:s3:::${name}`]] });

describe('sourceBuckets in the template', () => {
  it('lets the origin s3:GetObject each bucket’s objects, in the one ReadSources statement; ListBucket stays on the default bucket', () => {
    const t = buckets.stack.transformer;
    const allowed = roleActions(buckets, t.originFunction.role!);
    const read = allowed.find((statement) => statement.Sid === 'ReadSources')!;
    expect(actionsOf(read)).toEqual(['s3:GetObject']);
    expect(read.Resource).toEqual([
      { 'Fn::Join': ['', [{ 'Fn::GetAtt': [logicalId(buckets, t.sourceBucket), 'Arn'] }, '/*']] },
      objectsOf('my-archive'),
      objectsOf('my-press-kit'),
    ]);
    const list = allowed.find((statement) => statement.Sid === 'TellMissingSourcesApart')!;
    expect(refs(list.Resource)).toEqual([logicalId(buckets, t.sourceBucket)]);
  });

  it('gives each mapped bucket only the access it needs, in the whole template', () => {
    for (const name of Object.values(MAPPING)) {
      const naming = statements(buckets).filter((statement) => JSON.stringify(statement.Resource).includes(`:s3:::${name}`));
      const grants = naming.map((statement) => [statement.Effect, actionsOf(statement).join(','), statement.Resource]);
      expect(grants.sort()).toEqual(
        [
          // The origin reads objects...
          ['Allow', 's3:GetObject', expect.arrayContaining([objectsOf(name)])],
          // ...and CDK's notifications handler (deploy time only) adds EventBridge delivery to the bucket's notifications.
          ['Allow', 's3:PutBucketNotification', bucketArn(name)],
          ['Allow', 's3:GetBucketNotification', bucketArn(name)],
          // The management API reports, lists and deletes the sources of a key under the bucket's prefix (test/infra/manage.test.ts).
          ['Allow', 's3:ListBucket', expect.arrayContaining([bucketArn(name)])],
          ['Allow', 's3:GetObject', expect.arrayContaining([objectsOf(name)])],
          ['Allow', 's3:DeleteObject', expect.arrayContaining([objectsOf(name)])],
        ].sort(),
      );
    }
    // Nothing else of the stack may read, write or list them: the invalidation Lambda only purges the cache bucket.
    const t = buckets.stack.transformer;
    expect(JSON.stringify(roleActions(buckets, t.invalidationFunction.role!))).not.toMatch(/my-archive|my-press-kit/);
  });

  it('serves a web site beside the buckets from the same stack: its prefix goes to the Lambda alone, which may read back only its own variants there', () => {
    const config = distributionConfig(buckets);
    expect(config.CacheBehaviors.map((behavior: Json) => behavior.PathPattern)).toEqual(['/shop/*']);
    const t = buckets.stack.transformer;
    const readBack = roleActions(buckets, t.originFunction.role!).find((statement) => statement.Sid === 'ReadOwnRecords')!;
    const cache = { 'Fn::GetAtt': [logicalId(buckets, t.cacheBucket), 'Arn'] };
    // Its variants (and its sources' faces) are kept under `/shop/`: a key beginning with an empty segment, which no
    // viewer's URI reaches; the buckets' sources' faces beside their variants.
    expect(readBack.Resource).toEqual([
      { 'Fn::Join': ['', [cache, '/.failures/*']] },
      { 'Fn::Join': ['', [cache, '//shop/*']] },
      { 'Fn::Join': ['', [cache, '/*/.faces.*']] },
      { 'Fn::Join': ['', [cache, '/*/.subject.*']] },
    ]);
    expect(originFunction(buckets).Properties.Environment.Variables.WEB_ORIGINS).toBe(
      JSON.stringify({ 'shop/': { url: 'https://shop.example.com/images/', revalidateSeconds: 86400 } }),
    );
  });

  it('tells both Lambdas the mapping, with the same SOURCE_BUCKETS', () => {
    for (const fn of [originFunction(buckets), invalidationFunction(buckets)]) {
      expect(JSON.parse(fn.Properties.Environment.Variables.SOURCE_BUCKETS)).toEqual(MAPPING);
    }
  });

  it('turns on EventBridge delivery of each imported bucket, keeping its other notifications, and adds no S3 notification to it', () => {
    const notifications = resources(buckets, 'Custom::S3BucketNotifications').map(([, resource]) => resource.Properties as Json);
    for (const name of Object.values(MAPPING)) {
      const mine = notifications.filter((properties) => properties.BucketName === name);
      expect(mine).toHaveLength(1);
      // Managed false: the handler reads the bucket's configuration and adds to it, instead of replacing it.
      expect(mine[0]).toMatchObject({ Managed: false, NotificationConfiguration: { EventBridgeConfiguration: {} } });
      expect(Object.keys(mine[0]!.NotificationConfiguration)).toEqual(['EventBridgeConfiguration']);
    }
    // The default bucket keeps its S3 notifications to the invalidation Lambda.
    const source = logicalId(buckets, buckets.stack.transformer.sourceBucket);
    const own = notifications.find((properties) => refs(properties.BucketName).includes(source))!;
    expect(own.NotificationConfiguration.LambdaFunctionConfigurations.map((c: Json) => c.Events)).toEqual([
      ['s3:ObjectCreated:*'],
      ['s3:ObjectRemoved:*'],
    ]);
  });

  it('routes their Object Created and Object Deleted events to the invalidation Lambda, by one rule, with permission from that rule only', () => {
    const invalidation = logicalId(buckets, buckets.stack.transformer.invalidationFunction);
    // The other rule is the management API's, of the default bucket's uploads (test/infra/manage.test.ts).
    const rules = resources(buckets, 'AWS::Events::Rule').filter(([, r]) =>
      r.Properties.Targets.some((t: Json) => refs(t.Arn).includes(invalidation)),
    );
    expect(rules).toHaveLength(1);
    const [ruleId, rule] = rules[0]!;
    expect(rule.Properties.EventPattern).toEqual({
      source: ['aws.s3'],
      'detail-type': ['Object Created', 'Object Deleted'],
      detail: { bucket: { name: ['my-archive', 'my-press-kit'] } },
    });
    expect(rule.Properties.State).toBe('ENABLED');
    expect(rule.Properties.Targets.map((target: Json) => refs(target.Arn))).toEqual([[invalidation]]);
    const fromEvents = resources(buckets, 'AWS::Lambda::Permission').filter(
      ([, p]) => p.Properties.Principal === 'events.amazonaws.com' && refs(p.Properties.FunctionName).includes(invalidation),
    );
    expect(fromEvents.map(([, p]) => [refs(p.Properties.FunctionName), refs(p.Properties.SourceArn)])).toEqual([
      [[invalidation], [ruleId]],
    ]);
  });

  it('leaves a stack without the prop as it was: no rule, no SOURCE_BUCKETS, the same template as with none mapped', () => {
    const invalidation = logicalId(base, base.stack.transformer.invalidationFunction);
    expect(resources(base, 'AWS::Events::Rule').filter(([, r]) => JSON.stringify(r).includes(invalidation))).toEqual([]);
    expect(originFunction(base).Properties.Environment.Variables).not.toHaveProperty('SOURCE_BUCKETS');
    expect(invalidationFunction(base).Properties.Environment.Variables).not.toHaveProperty('SOURCE_BUCKETS');
    expect(synth(() => ({ sourceBuckets: {} })).json).toEqual(base.json);
  });

  it('works with a bucket the stack makes itself (its EventBridge delivery managed with its other notifications)', () => {
    const made = synth((stack) => ({
      sourceBuckets: { 'new/': new s3.Bucket(stack, 'NewPhotos', { enforceSSL: true }) },
    }));
    const bucket = logicalId(made, made.stack.node.findChild('NewPhotos'));
    const own = resources(made, 'Custom::S3BucketNotifications').find(([, r]) => refs(r.Properties.BucketName).includes(bucket))!;
    expect(own[1].Properties).toMatchObject({ Managed: true, NotificationConfiguration: { EventBridgeConfiguration: {} } });
    expect(JSON.parse(JSON.stringify(originFunction(made).Properties.Environment.Variables.SOURCE_BUCKETS))).toEqual({
      'Fn::Join': ['', ['{"new/":"', { Ref: bucket }, '"}']],
    });
  });
});

describe('sourceBuckets are checked at synth time', () => {
  const attempt = (props: (stack: Stack) => ImageTransformerProps) => () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    new ImageTransformerStack(app, 'Images', { env: ENV, transformer: props });
  };
  const mapped = (prefixes: string[]) => (stack: Stack) => ({
    sourceBuckets: Object.fromEntries(
      prefixes.map((prefix, index) => [prefix, s3.Bucket.fromBucketName(stack, `B${index}`, `bucket-${index}`)]),
    ),
  });

  it.each<[string, string[], string]>([
    [
      'without the final slash',
      ['archive'],
      'a sourceBuckets prefix must be a key prefix ending with "/" such as "archive/" (it does not end with "/"), not "archive".',
    ],
    ['empty', [''], 'a sourceBuckets prefix must be a key prefix ending with "/" such as "archive/" (it does not end with "/"), not "".'],
    [
      'a leading slash',
      ['/archive/'],
      'a sourceBuckets prefix must be a key prefix ending with "/" such as "archive/" (it has an empty path segment), not "/archive/".',
    ],
    ['a ".." segment', ['a/../'], '(it has a ".." path segment), not "a/../".'],
    ['an empty segment', ['a//'], '(it has an empty path segment), not "a//".'],
    ['a control character', ['a\u0007/'], '(it contains a control character), not "a\\u0007/".'],
    [
      'one inside another',
      ['photos/', 'photos/2020/'],
      'sourceBuckets prefixes "photos/" and "photos/2020/" overlap: a key under both could not say where it is read from.',
    ],
  ])('refuses a prefix with %s, in the one message shape', (_name, prefixes, message) => {
    expect(attempt(mapped(prefixes))).toThrow(ImageTransformerConfigError);
    expect(attempt(mapped(prefixes))).toThrow(message);
  });

  it('allows prefixes that only share a start ("photos/" and "photos-old/")', () => {
    expect(attempt(mapped(['photos/', 'photos-old/']))).not.toThrow();
  });

  it('refuses a bucket serving two prefixes, or serving one as well as being the sourceBucket', () => {
    expect(
      attempt((stack) => {
        const bucket = s3.Bucket.fromBucketName(stack, 'Twice', 'twice');
        return { sourceBuckets: { 'a/': bucket, 'b/': s3.Bucket.fromBucketName(stack, 'TwiceAgain', 'twice') } };
      }),
    ).toThrow('sourceBuckets maps "b/" to the bucket of "a/": each bucket serves one prefix, and the sourceBucket none.');
    expect(
      attempt((stack) => {
        const bucket = new s3.Bucket(stack, 'Both');
        return { sourceBucket: bucket, sourceBuckets: { 'a/': bucket } };
      }),
    ).toThrow('sourceBuckets maps "a/" to the bucket of (the sourceBucket)');
  });
});
