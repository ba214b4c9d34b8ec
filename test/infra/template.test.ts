// The synthesized CloudFormation of the ImageTransformer: what the design
// promises (architecture.md, platform-facts.md "AWS CDK"), asserted on the
// template itself, plus cdk-nag (AwsSolutions) and cfn-lint on it. Bundling
// is skipped ('aws:cdk:bundling-stacks': []) so each synth takes seconds; a
// bundling synth is `npm run synth`.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Duration, SecretValue, Stack, Validations } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as codedeploy from 'aws-cdk-lib/aws-codedeploy';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sns from 'aws-cdk-lib/aws-sns';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImageTransformerConfigError, type ImageTransformerProps } from '../../lib/image-transformer';
import { ERROR_CODES, METRIC_UNITS } from '../../lambda/origin/metrics';
import { ImageTransformerStack } from '../../lib/stack';
import { cfnLint, type CfnLintMatch } from './cfn-lint';

type Json = Record<string, any>;

interface Synthesized {
  app: App;
  stack: ImageTransformerStack;
  template: Template;
  json: Json;
}

const ENV = { account: '123456789012', region: 'eu-west-1' };
const CERTIFICATE_ARN = 'arn:aws:acm:us-east-1:123456789012:certificate/11111111-2222-3333-4444-555555555555';

function synth(props: (stack: Stack) => ImageTransformerProps = () => ({}), env = ENV): Synthesized {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new ImageTransformerStack(app, 'Images', { env, transformer: props });
  const template = Template.fromStack(stack);
  return { app, stack, template, json: template.toJSON() };
}

/** Props for a deployment that turns on everything optional. */
const FULL = (stack: Stack): ImageTransformerProps => ({
  sizes: [1280, 320, 640],
  maxDimension: 4096,
  presets: {
    thumb: { width: '320', height: '320', fit: 'cover' },
    hero: { w: '1280', format: 'webp', q: '70' },
  },
  eagerPresets: ['thumb'],
  signing: true,
  eagerSigningSecret: SecretValue.secretsManager('image-signing-secret'),
  avif: false,
  domainNames: ['img.example.com'],
  certificate: acm.Certificate.fromCertificateArn(stack, 'Cert', CERTIFICATE_ARN),
  priceClass: cloudfront.PriceClass.PRICE_CLASS_100,
  originShieldRegion: 'eu-west-1',
  accessLogging: false,
  cors: { allowOrigins: ['https://www.example.com'], maxAge: Duration.hours(1) },
  clientErrorCachingTtl: Duration.seconds(5),
  variantExpiration: Duration.days(30),
  memorySize: 3008,
  timeout: Duration.seconds(60),
  maxSourceBytes: 10_000_000,
  maxInputPixels: 50_000_000,
  maxFrames: 50,
  svgPolicy: 'rasterize',
  cacheControl: 'public, max-age=86400',
  originReservedConcurrency: 50,
  autoDeleteObjects: true,
  webAclId: 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/images/abc',
  logRetention: logs.RetentionDays.TWO_WEEKS,
  originProvisionedConcurrency: 10,
  alarmEmail: 'images-oncall@example.com',
  metricsNamespace: 'Photos/Images',
  deploymentConfig: codedeploy.LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_1MINUTE,
});

const ALARM_TOPIC_ARN = 'arn:aws:sns:us-east-1:123456789012:paging';

/** An existing source bucket and alarm topic, in us-east-1: where CloudFront's metrics (and so its alarm) are. */
const IMPORTED = (stack: Stack): ImageTransformerProps => ({
  sourceBucket: s3.Bucket.fromBucketName(stack, 'Photos', 'my-photos'),
  alarmTopic: sns.Topic.fromTopicArn(stack, 'Paging', ALARM_TOPIC_ARN),
});
const US_EAST_1 = { ...ENV, region: 'us-east-1' };

/** Every operations feature turned off. */
const OFF: ImageTransformerProps = {
  metrics: false,
  dashboard: false,
  alarms: false,
  cloudFrontAdditionalMetrics: false,
  canaryDeployments: false,
};

let base: Synthesized;
let full: Synthesized;
let imported: Synthesized;
let off: Synthesized;

beforeAll(() => {
  base = synth();
  full = synth(FULL);
  imported = synth(IMPORTED, US_EAST_1);
  off = synth(() => OFF);
}, 120_000); // seconds each on a quiet machine; allow for a busy CI

// ---------------------------------------------------------------- helpers

const resources = (s: Synthesized, type: string): [string, Json][] =>
  Object.entries(s.json.Resources as Json).filter(([, resource]) => resource.Type === type) as [string, Json][];

const only = (s: Synthesized, type: string): [string, Json] => {
  const found = resources(s, type);
  expect(found, type).toHaveLength(1);
  return found[0]!;
};

const distributionConfig = (s: Synthesized): Json => only(s, 'AWS::CloudFront::Distribution')[1].Properties.DistributionConfig;

/** Logical ids whose resource is referenced (Ref or GetAtt) by `value`; pseudo parameters left out. */
function refs(value: unknown): string[] {
  const found: string[] = [];
  const visit = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === 'object') {
      const record = node as Json;
      if (typeof record.Ref === 'string' && !record.Ref.startsWith('AWS::')) found.push(record.Ref);
      if (Array.isArray(record['Fn::GetAtt'])) found.push(record['Fn::GetAtt'][0]);
      Object.values(record).forEach(visit);
    }
  };
  visit(value);
  return found;
}

const logicalId = (s: Synthesized, construct: IConstruct): string =>
  s.stack.getLogicalId(construct.node.defaultChild as import('aws-cdk-lib').CfnElement);

/** The project's own Lambdas (not aws-cdk-lib's custom resource handlers). */
const projectFunctions = (s: Synthesized) =>
  resources(s, 'AWS::Lambda::Function').filter(([, fn]) => String(fn.Properties.Description ?? '').startsWith('edge-image-transformer'));

const originFunction = (s: Synthesized) => s.json.Resources[logicalId(s, s.stack.transformer.originFunction)] as Json;
const invalidationFunction = (s: Synthesized) => s.json.Resources[logicalId(s, s.stack.transformer.invalidationFunction)] as Json;

/** Every IAM statement in the template: identity policies, inline role policies, bucket policies. */
function statements(s: Synthesized): Json[] {
  const all: Json[] = [];
  for (const [, resource] of Object.entries(s.json.Resources as Json)) {
    const p = resource.Properties ?? {};
    const docs: Json[] = [];
    if (p.PolicyDocument) docs.push(p.PolicyDocument);
    for (const policy of p.Policies ?? []) docs.push(policy.PolicyDocument);
    for (const doc of docs) all.push(...(doc.Statement ?? []));
  }
  return all;
}

const actionsOf = (statement: Json): string[] => [statement.Action ?? []].flat();

/** The actions a role's policies allow, by Sid-less flat list. */
function roleActions(s: Synthesized, roleConstruct: IConstruct): Json[] {
  const roleId = s.stack.getLogicalId(roleConstruct.node.defaultChild as import('aws-cdk-lib').CfnElement);
  return resources(s, 'AWS::IAM::Policy')
    .filter(([, policy]) => refs(policy.Properties.Roles).includes(roleId))
    .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement as Json[]);
}

const cloudFrontFunction = (s: Synthesized, construct: IConstruct): [string, Json] => {
  const id = logicalId(s, construct);
  return [id, s.json.Resources[id] as Json];
};
const viewerRequest = (s: Synthesized) => cloudFrontFunction(s, s.stack.transformer.viewerRequestFunction);
const viewerResponse = (s: Synthesized) => cloudFrontFunction(s, s.stack.transformer.viewerResponseFunction);

/** The viewer-request function code as deployed, with a 36-character KVS id in place of a token. */
function functionCode(s: Synthesized): string {
  const code = viewerRequest(s)[1].Properties.FunctionCode;
  if (typeof code === 'string') return code;
  const [, parts] = code['Fn::Join'] as [string, unknown[]];
  return parts.map((part) => (typeof part === 'string' ? part : 'x'.repeat(36))).join('');
}

// ---------------------------------------------------------------- logical IDs

describe('logical IDs', () => {
  const before = JSON.parse(readFileSync(new URL('./logical-ids.json', import.meta.url), 'utf8')) as Record<string, Record<string, string>>;

  it('every resource of an existing deployment keeps its logical ID and type (new resources only)', () => {
    for (const [name, s] of Object.entries({ base, full, imported, off })) {
      const now = Object.fromEntries(Object.entries(s.json.Resources as Json).map(([id, resource]) => [id, resource.Type]));
      const expected = before[name]!;
      expect(Object.keys(expected).length, name).toBeGreaterThan(25);
      expect(Object.fromEntries(Object.keys(expected).map((id) => [id, now[id]])), name).toEqual(expected);
    }
  });
});

// ---------------------------------------------------------------- origins

describe('origin group', () => {
  it('fails over from the cache bucket to the Lambda on 403 and 404 only', () => {
    for (const s of [base, full, imported]) {
      const config = distributionConfig(s);
      expect(config.OriginGroups.Quantity).toBe(1);
      const group = config.OriginGroups.Items[0];
      expect(group.FailoverCriteria.StatusCodes).toEqual({ Quantity: 2, Items: [403, 404] });
      const [primaryId, fallbackId] = group.Members.Items.map((member: Json) => member.OriginId);
      const origin = (id: string) => config.Origins.find((o: Json) => o.Id === id);
      // Primary: the cache bucket, as an S3 origin.
      expect(origin(primaryId).S3OriginConfig).toBeDefined();
      expect(refs(origin(primaryId).DomainName)).toEqual([logicalId(s, s.stack.transformer.cacheBucket)]);
      // Fallback: the Function URL, HTTPS only.
      expect(origin(fallbackId).CustomOriginConfig).toMatchObject({ OriginProtocolPolicy: 'https-only', OriginSSLProtocols: ['TLSv1.2'] });
      expect(refs(origin(fallbackId).DomainName)).toEqual([logicalId(s, s.stack.transformer.originFunctionUrl)]);
      expect(config.DefaultCacheBehavior.TargetOriginId).toBe(group.Id);
    }
  });

  it('waits for the Lambda longer than its timeout (cold start init comes on top)', () => {
    const readTimeout = (s: Synthesized) =>
      distributionConfig(s).Origins.find((o: Json) => o.CustomOriginConfig).CustomOriginConfig.OriginReadTimeout;
    expect(readTimeout(base)).toBe(40);
    expect(readTimeout(full)).toBe(70);
  });

  it('reaches both origins through Origin Access Control, signing always with SigV4', () => {
    for (const s of [base, full]) {
      const oacs = resources(s, 'AWS::CloudFront::OriginAccessControl').map(([id, r]) => [id, r.Properties.OriginAccessControlConfig]);
      expect(oacs.map(([, c]) => c.OriginAccessControlOriginType).sort()).toEqual(['lambda', 's3']);
      for (const [, config] of oacs) expect(config).toMatchObject({ SigningBehavior: 'always', SigningProtocol: 'sigv4' });
      const origins = distributionConfig(s).Origins as Json[];
      expect(origins).toHaveLength(2);
      for (const origin of origins) {
        expect(refs(origin.OriginAccessControlId)).toHaveLength(1);
        expect(oacs.map(([id]) => id)).toContain(refs(origin.OriginAccessControlId)[0]);
      }
      // No legacy origin access identity.
      expect(origins.find((o) => o.S3OriginConfig)!.S3OriginConfig.OriginAccessIdentity).toBe('');
      expect(resources(s, 'AWS::CloudFront::CloudFrontOriginAccessIdentity')).toHaveLength(0);
    }
  });

  it('lets only this distribution read the cache bucket (s3:GetObject, SourceArn)', () => {
    const cacheId = logicalId(base, base.stack.transformer.cacheBucket);
    const [, policy] = resources(base, 'AWS::S3::BucketPolicy').find(([, p]) => refs(p.Properties.Bucket).includes(cacheId))!;
    const allows = (policy.Properties.PolicyDocument.Statement as Json[]).filter((st) => st.Effect === 'Allow');
    expect(allows).toHaveLength(1);
    expect(allows[0]).toMatchObject({ Action: 's3:GetObject', Principal: { Service: 'cloudfront.amazonaws.com' } });
    expect(refs(allows[0]!.Condition.StringEquals['AWS:SourceArn'])).toContain(logicalId(base, base.stack.transformer.distribution));
  });
});

describe('origin Lambda', () => {
  it('has one Function URL, with AuthType AWS_IAM, on the live alias', () => {
    for (const s of [base, full, imported, off]) {
      const [, url] = only(s, 'AWS::Lambda::Url');
      expect(url.Properties).toEqual({
        AuthType: 'AWS_IAM',
        InvokeMode: 'RESPONSE_STREAM',
        TargetFunctionArn: { 'Fn::GetAtt': [logicalId(s, s.stack.transformer.originFunction), 'Arn'] },
        Qualifier: 'live',
      });
      expect(url.DependsOn).toContain(logicalId(s, s.stack.transformer.originAlias));
    }
  });

  it('grants CloudFront both lambda:InvokeFunctionUrl and lambda:InvokeFunction (via the URL) on the live alias, for this distribution only', () => {
    for (const s of [base, full, off]) {
      const distributionId = logicalId(s, s.stack.transformer.distribution);
      const aliasId = logicalId(s, s.stack.transformer.originAlias);
      const permissions = resources(s, 'AWS::Lambda::Permission')
        .map(([, p]) => p.Properties)
        .filter((p) => p.Principal === 'cloudfront.amazonaws.com');
      expect(permissions.map((p) => p.Action).sort()).toEqual(['lambda:InvokeFunction', 'lambda:InvokeFunctionUrl']);
      for (const permission of permissions) {
        expect(refs(permission.SourceArn)).toEqual([distributionId]);
        // Ref of an AWS::Lambda::Alias is the alias ARN (function:<name>:live): the URL is invoked as the alias.
        expect(permission.FunctionName).toEqual({ Ref: aliasId });
      }
      expect(permissions.find((p) => p.Action === 'lambda:InvokeFunction')!.InvokedViaFunctionUrl).toBe(true);
      // Nothing else may invoke it, nor its versions.
      const t = s.stack.transformer;
      const origin = [t.originFunction, t.originFunctionUrl, t.originAlias].map((c) => logicalId(s, c));
      origin.push(...resources(s, 'AWS::Lambda::Version').map(([id]) => id));
      const others = resources(s, 'AWS::Lambda::Permission').filter(([, p]) => refs(p.Properties.FunctionName).some((id) => origin.includes(id)));
      expect(others).toHaveLength(2);
    }
  });

  it('is configured from the props: limits, sizes, Cache-Control, a time budget below the timeout', () => {
    const env = (s: Synthesized) => originFunction(s).Properties.Environment.Variables as Json;
    expect(env(base)).toEqual({
      SOURCE_BUCKET: { Ref: logicalId(base, base.stack.transformer.sourceBucket) },
      CACHE_BUCKET: { Ref: logicalId(base, base.stack.transformer.cacheBucket) },
      MAX_SOURCE_BYTES: '33554432',
      MAX_INPUT_PIXELS: '100000000',
      MAX_DIMENSION: '8192',
      MAX_FRAMES: '200',
      TIME_BUDGET_MS: '27000',
      MAX_INLINE_BYTES: '4500000',
      CACHE_CONTROL: 'public, max-age=31536000, immutable',
      FAILURE_TTL_SECONDS: '300',
      METRICS_NAMESPACE: 'EdgeImageTransformer/Images',
    });
    expect(originFunction(base).Properties).toMatchObject({ MemorySize: 2048, Timeout: 30 });
    expect(env(full)).toMatchObject({
      MAX_SOURCE_BYTES: '10000000',
      MAX_INPUT_PIXELS: '50000000',
      MAX_DIMENSION: '4096',
      MAX_FRAMES: '50',
      TIME_BUDGET_MS: '54000',
      CACHE_CONTROL: 'public, max-age=86400',
      SIZES: '320,640,1280',
      SVG_POLICY: 'rasterize',
      METRICS_NAMESPACE: 'Photos/Images',
    });
    expect(env(full).METRICS).toBeUndefined();
    expect(env(off)).toMatchObject({ METRICS_NAMESPACE: 'EdgeImageTransformer/Images', METRICS: 'false' });
    expect(originFunction(full).Properties).toMatchObject({ MemorySize: 3008, Timeout: 60, ReservedConcurrentExecutions: 50 });
  });

  it('reads sources and writes variants, nothing more (plus its own log group)', () => {
    const t = base.stack.transformer;
    const allowed = roleActions(base, t.originFunction.role!);
    expect(allowed.map((st) => [actionsOf(st).join(','), refs(st.Resource)])).toEqual([
      ['logs:CreateLogStream,logs:PutLogEvents', [logicalId(base, t.node.findChild('OriginLogs'))]],
      ['s3:GetObject', [logicalId(base, t.sourceBucket)]],
      ['s3:ListBucket', [logicalId(base, t.sourceBucket)]],
      ['s3:PutObject', [logicalId(base, t.cacheBucket)]],
    ]);
    // Object actions on objects, the bucket action on the bucket.
    const byAction = Object.fromEntries(allowed.map((st) => [actionsOf(st)[0], JSON.stringify(st.Resource)]));
    expect(byAction['s3:GetObject']).toContain('/*');
    expect(byAction['s3:PutObject']).toContain('/*');
    expect(byAction['s3:ListBucket']).not.toContain('/*');
    // No managed policies (AWSLambdaBasicExecutionRole would allow any log group).
    const role = base.json.Resources[logicalId(base, t.originFunction.role!)];
    expect(role.Properties.ManagedPolicyArns).toBeUndefined();
  });
});

describe('origin concurrency cap', () => {
  it('by default, a custom resource reserves min(50, what the account can spare) at deploy time, again with each new version', () => {
    const t = base.stack.transformer;
    expect(originFunction(base).Properties.ReservedConcurrentExecutions).toBeUndefined();
    const [, cap] = only(base, 'Custom::OriginConcurrencyCap');
    const versionId = only(base, 'AWS::Lambda::Version')[0];
    expect(cap.Properties).toEqual({
      ServiceToken: { 'Fn::GetAtt': [logicalId(base, t.node.findChild('ConcurrencyCapFunction')), 'Arn'] },
      FunctionName: { Ref: logicalId(base, t.originFunction) },
      Cap: 50,
      Floor: 0,
      Version: { 'Fn::GetAtt': [versionId, 'Version'] },
    });
    expect(base.json.Outputs.OriginConcurrencyCap.Value).toEqual({ 'Fn::GetAtt': [logicalId(base, t.originConcurrencyCap!), 'Message'] });
  });

  it('may read the account settings and set only the origin function\'s reservation', () => {
    const t = base.stack.transformer;
    const role = t.node.findChild('ConcurrencyCapRole');
    expect(roleActions(base, role).map((st) => [actionsOf(st).join(','), st.Resource])).toEqual([
      ['logs:CreateLogStream,logs:PutLogEvents', { 'Fn::GetAtt': [logicalId(base, t.node.findChild('ConcurrencyCapLogs')), 'Arn'] }],
      ['lambda:GetAccountSettings', '*'],
      [
        'lambda:GetFunctionConcurrency,lambda:PutFunctionConcurrency,lambda:DeleteFunctionConcurrency',
        { 'Fn::GetAtt': [logicalId(base, t.originFunction), 'Arn'] },
      ],
    ]);
    expect(base.json.Resources[logicalId(base, role)].Properties.ManagedPolicyArns).toBeUndefined();
  });

  it('an explicit originReservedConcurrency is applied as before, with no custom resource; provisioned concurrency is the floor', () => {
    expect(originFunction(full).Properties.ReservedConcurrentExecutions).toBe(50);
    expect(resources(full, 'Custom::OriginConcurrencyCap')).toHaveLength(0);
    expect(full.json.Outputs.OriginConcurrencyCap).toBeUndefined();
    const capOf = (props: ImageTransformerProps) => only(synth(() => props), 'Custom::OriginConcurrencyCap')[1].Properties;
    expect(capOf({ originConcurrencyCap: 200, originProvisionedConcurrency: 5 })).toMatchObject({ Cap: 200, Floor: 5 });
    expect(capOf({ originConcurrencyCap: false })).toMatchObject({ Cap: 0 });
  });
});

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
      const [, config] = only(s, 'AWS::Lambda::EventInvokeConfig');
      expect(config.Properties).toMatchObject({
        FunctionName: { Ref: logicalId(s, t.invalidationFunction) },
        MaximumRetryAttempts: 2,
        DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [logicalId(s, t.invalidationFailureQueue), 'Arn'] } } },
      });
      const [queueId, queue] = only(s, 'AWS::SQS::Queue');
      expect(queue.Properties).toEqual({ MessageRetentionPeriod: 14 * 24 * 3600, SqsManagedSseEnabled: true });
      const [, policy] = only(s, 'AWS::SQS::QueuePolicy');
      expect(refs(policy.Properties.Queues)).toEqual([queueId]);
      expect(policy.Properties.PolicyDocument.Statement).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Action: 'sqs:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
    }
    expect(only(base, 'AWS::SQS::Queue')[1].DeletionPolicy).toBe('Retain');
    expect(only(full, 'AWS::SQS::Queue')[1].DeletionPolicy).toBe('Delete');
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

describe('Lambdas', () => {
  it('run on arm64 with Node.js 22 or newer', () => {
    for (const s of [base, full, imported]) {
      const functions = projectFunctions(s);
      // Origin, invalidation and (without a fixed originReservedConcurrency) the concurrency cap.
      expect(functions).toHaveLength(s === full ? 2 : 3);
      for (const [id, fn] of functions) {
        expect(fn.Properties.Architectures, id).toEqual(['arm64']);
        const version = /^nodejs(\d+)\.x$/.exec(fn.Properties.Runtime);
        expect(Number(version?.[1]), `${id} ${fn.Properties.Runtime}`).toBeGreaterThanOrEqual(22);
        expect(fn.Properties.Handler).toBe('index.handler');
      }
    }
  });

  it('log to their own log groups with a retention (a month, or logRetention)', () => {
    for (const [s, days] of [[base, 30], [full, 14]] as const) {
      const functions = projectFunctions(s);
      for (const [, fn] of functions) {
        const [groupId] = refs(fn.Properties.LoggingConfig.LogGroup);
        expect(s.json.Resources[groupId!].Properties.RetentionInDays).toBe(days);
      }
      // One log group each, the only ones this construct makes.
      expect(new Set(functions.map(([, fn]) => refs(fn.Properties.LoggingConfig.LogGroup)[0])).size).toBe(functions.length);
      expect(resources(s, 'AWS::Logs::LogGroup')).toHaveLength(functions.length);
    }
  });
});

// ---------------------------------------------------------------- edge

describe('viewer-request CloudFront Function', () => {
  it('runs on cloudfront-js-2.0, published, inline code under 10 KB, on viewer requests', () => {
    for (const s of [base, full, imported]) {
      expect(resources(s, 'AWS::CloudFront::Function')).toHaveLength(2);
      const [id, fn] = viewerRequest(s);
      expect(fn.Properties.FunctionConfig.Runtime).toBe('cloudfront-js-2.0');
      expect(fn.Properties.AutoPublish).toBe(true);
      const code = functionCode(s);
      expect(Buffer.byteLength(code)).toBeGreaterThan(1000);
      expect(Buffer.byteLength(code)).toBeLessThanOrEqual(10 * 1024);
      expect(distributionConfig(s).DefaultCacheBehavior.FunctionAssociations).toEqual([
        { EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [id, 'FunctionARN'] } },
        { EventType: 'viewer-response', FunctionARN: { 'Fn::GetAtt': [viewerResponse(s)[0], 'FunctionARN'] } },
      ]);
    }
  });

  it('carries the deployment grammar and format choice', () => {
    expect(functionCode(base)).toContain('maxDimension:8192');
    expect(functionCode(full)).toContain('maxDimension:4096');
    expect(functionCode(full)).toContain('sizes:[320,640,1280]');
    expect(functionCode(full)).toContain('thumb');
    expect(functionCode(full)).toMatch(/avif:(!1|false)/);
    expect(functionCode(base)).toMatch(/avif:(!0|true)/);
  });

  it('with signing on, reads its secrets from a KeyValueStore associated with it', () => {
    const [kvsId] = only(full, 'AWS::CloudFront::KeyValueStore');
    const [, fn] = viewerRequest(full);
    expect(fn.Properties.FunctionConfig.KeyValueStoreAssociations).toEqual([
      { KeyValueStoreARN: { 'Fn::GetAtt': [kvsId, 'Arn'] } },
    ]);
    // The code names the same store.
    expect(refs(fn.Properties.FunctionCode)).toEqual([kvsId]);
    expect(JSON.stringify(fn.Properties.FunctionCode)).toContain('signing-secrets');
    expect(full.stack.transformer.keyValueStore).toBeDefined();
  });

  it('with signing off, has no KeyValueStore', () => {
    expect(resources(base, 'AWS::CloudFront::KeyValueStore')).toHaveLength(0);
    expect(viewerRequest(base)[1].Properties.FunctionConfig.KeyValueStoreAssociations).toBeUndefined();
    expect(base.stack.transformer.keyValueStore).toBeUndefined();
  });
});

describe('browser lifetime (viewer-response CloudFront Function)', () => {
  it("tells viewers browserMaxAge (an hour by default) instead of the variants' Cache-Control, which CloudFront keeps", () => {
    const code = (s: Synthesized) => viewerResponse(s)[1].Properties.FunctionCode as string;
    expect(viewerResponse(base)[1].Properties).toMatchObject({ AutoPublish: true, FunctionConfig: { Runtime: 'cloudfront-js-2.0' } });
    expect(code(base)).toContain('var VARIANT = "public, max-age=31536000, immutable";\nvar BROWSER = "public, max-age=3600";');
    expect(code(full)).toContain('var VARIANT = "public, max-age=86400";');
    const custom = synth(() => ({ browserMaxAge: Duration.days(1), cacheControl: 'public, max-age=604800' }));
    expect(code(custom)).toContain('var VARIANT = "public, max-age=604800";\nvar BROWSER = "public, max-age=86400";');
    expect(code(synth(() => ({ browserMaxAge: Duration.seconds(0) })))).toContain('var BROWSER = "public, no-cache";');
  });

  it("CloudFront still caches by the origin's header: minimum TTL 0 (no-store stays uncached), no Cache-Control in the response headers policy", () => {
    for (const s of [base, full]) {
      expect(only(s, 'AWS::CloudFront::CachePolicy')[1].Properties.CachePolicyConfig.MinTTL).toBe(0);
      // A policy header applies to every status: it would make no-store errors and redirects cacheable in browsers.
      const policy = only(s, 'AWS::CloudFront::ResponseHeadersPolicy')[1].Properties.ResponseHeadersPolicyConfig;
      const custom = (policy.CustomHeadersConfig?.Items ?? []) as Json[];
      expect(custom.map((header) => header.Header.toLowerCase())).not.toContain('cache-control');
    }
    const origin = originFunction(base).Properties.Environment.Variables;
    expect(origin.CACHE_CONTROL).toBe('public, max-age=31536000, immutable');
  });
});

describe('distribution', () => {
  it('keys the cache on the URI alone: no query strings, headers or cookies', () => {
    const [policyId, policy] = only(base, 'AWS::CloudFront::CachePolicy');
    expect(policy.Properties.CachePolicyConfig.ParametersInCacheKeyAndForwardedToOrigin).toEqual({
      QueryStringsConfig: { QueryStringBehavior: 'none' },
      HeadersConfig: { HeaderBehavior: 'none' },
      CookiesConfig: { CookieBehavior: 'none' },
      EnableAcceptEncodingGzip: false,
      EnableAcceptEncodingBrotli: false,
    });
    expect(policy.Properties.CachePolicyConfig).toMatchObject({ MinTTL: 0, MaxTTL: 31536000 });
    expect(distributionConfig(base).DefaultCacheBehavior.CachePolicyId).toEqual({ Ref: policyId });
  });

  it('sends origins no viewer header (no Host, no Accept) and no cookie; the edge-filtered query', () => {
    const [policyId, policy] = only(base, 'AWS::CloudFront::OriginRequestPolicy');
    expect(policy.Properties.OriginRequestPolicyConfig).toMatchObject({
      HeadersConfig: { HeaderBehavior: 'none' },
      CookiesConfig: { CookieBehavior: 'none' },
      QueryStringsConfig: { QueryStringBehavior: 'all' },
    });
    expect(distributionConfig(base).DefaultCacheBehavior.OriginRequestPolicyId).toEqual({ Ref: policyId });
  });

  it('allows and caches GET and HEAD only, redirects HTTP to HTTPS, serves HTTP/2 and HTTP/3', () => {
    const config = distributionConfig(base);
    expect(config.DefaultCacheBehavior).toMatchObject({
      AllowedMethods: ['GET', 'HEAD'],
      CachedMethods: ['GET', 'HEAD'],
      ViewerProtocolPolicy: 'redirect-to-https',
      Compress: false,
    });
    expect(config).toMatchObject({ HttpVersion: 'http2and3', IPV6Enabled: true, Enabled: true, PriceClass: 'PriceClass_All' });
  });

  it('caches 4xx briefly and 5xx not at all', () => {
    const ttls = (s: Synthesized) =>
      Object.fromEntries((distributionConfig(s).CustomErrorResponses as Json[]).map((r) => [r.ErrorCode, r.ErrorCachingMinTTL]));
    expect(ttls(base)).toEqual({ 400: 10, 403: 10, 404: 10, 405: 10, 414: 10, 416: 10, 500: 0, 501: 0, 502: 0, 503: 0, 504: 0 });
    expect(ttls(full)[404]).toBe(5);
    // TTLs only: no error page replaces the JSON error bodies.
    for (const response of distributionConfig(base).CustomErrorResponses as Json[]) {
      expect(response.ResponsePagePath).toBeUndefined();
      expect(response.ResponseCode).toBeUndefined();
    }
  });

  it('adds Vary: Accept to every response, since variants from the cache bucket carry none', () => {
    const config = only(base, 'AWS::CloudFront::ResponseHeadersPolicy')[1].Properties.ResponseHeadersPolicyConfig;
    expect(config.CustomHeadersConfig).toEqual({ Items: [{ Header: 'Vary', Value: 'Accept', Override: true }] });
  });

  it('adds CORS (any origin by default, GET/HEAD) and nosniff', () => {
    const config = (s: Synthesized) => only(s, 'AWS::CloudFront::ResponseHeadersPolicy')[1].Properties.ResponseHeadersPolicyConfig;
    expect(config(base).CorsConfig).toMatchObject({
      AccessControlAllowOrigins: { Items: ['*'] },
      AccessControlAllowMethods: { Items: ['GET', 'HEAD'] },
      AccessControlAllowCredentials: false,
      OriginOverride: true,
    });
    expect(config(base).SecurityHeadersConfig).toEqual({ ContentTypeOptions: { Override: true } });
    expect(config(full).CorsConfig).toMatchObject({
      AccessControlAllowOrigins: { Items: ['https://www.example.com'] },
      AccessControlMaxAgeSec: 3600,
    });
    const none = synth(() => ({ cors: false }));
    expect(config(none).CorsConfig).toBeUndefined();
    expect(config(none).SecurityHeadersConfig).toEqual({ ContentTypeOptions: { Override: true } });
  });

  it('takes a custom domain with its certificate, a price class, Origin Shield and a web ACL', () => {
    const config = distributionConfig(full);
    expect(config.Aliases).toEqual(['img.example.com']);
    expect(config.ViewerCertificate).toEqual({
      AcmCertificateArn: CERTIFICATE_ARN,
      MinimumProtocolVersion: 'TLSv1.2_2021',
      SslSupportMethod: 'sni-only',
    });
    expect(config.PriceClass).toBe('PriceClass_100');
    expect(config.WebACLId).toBe('arn:aws:wafv2:us-east-1:123456789012:global/webacl/images/abc');
    for (const origin of config.Origins as Json[]) {
      expect(origin.OriginShield).toEqual({ Enabled: true, OriginShieldRegion: 'eu-west-1' });
    }
    expect(distributionConfig(base).Origins[0].OriginShield).toBeUndefined();
  });

  it('logs to a log bucket of its own by default, and not at all when turned off', () => {
    const logBucketId = logicalId(base, base.stack.transformer.logBucket!);
    expect(distributionConfig(base).Logging).toEqual({
      Bucket: { 'Fn::GetAtt': [logBucketId, 'RegionalDomainName'] },
      Prefix: 'cloudfront/',
    });
    const logBucket = base.json.Resources[logBucketId].Properties;
    // CloudFront standard logs are written with ACLs; S3 server access logs too.
    expect(logBucket.OwnershipControls.Rules).toEqual([{ ObjectOwnership: 'BucketOwnerPreferred' }]);
    const cache = base.json.Resources[logicalId(base, base.stack.transformer.cacheBucket)].Properties;
    expect(cache.LoggingConfiguration).toEqual({ DestinationBucketName: { Ref: logBucketId }, LogFilePrefix: 's3/cache/' });
    expect(distributionConfig(full).Logging).toBeUndefined();
    expect(full.stack.transformer.logBucket).toBeUndefined();
  });
});

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
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(base, base.stack.transformer.invalidationFailureQueue), 'QueueName'] } }],
      Statistic: 'Maximum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
    });
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
    expect(resources(imported, 'AWS::CloudWatch::Alarm')).toHaveLength(6);
    expect(resources(base, 'AWS::CloudWatch::Alarm')).toHaveLength(5);
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
    ]);
    expect(names(imported)).toContain('Images-ImageTransformer-CloudFront5xxErrorRate');
  });

  it('notify a topic on ALARM and on OK: the one given, or one made for alarmEmail', () => {
    const actions = (s: Synthesized) =>
      resources(s, 'AWS::CloudWatch::Alarm').map(([, alarm]) => [alarm.Properties.AlarmActions, alarm.Properties.OKActions]);
    // No topic, no actions.
    expect(actions(base).flat().every((list) => list === undefined)).toBe(true);
    expect(resources(base, 'AWS::SNS::Topic')).toHaveLength(0);
    // An email address: a topic of its own (TLS only), subscribed.
    const [topicId] = only(full, 'AWS::SNS::Topic');
    expect(actions(full)).toHaveLength(5);
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
    expect(
      (only(plain, 'AWS::CodeDeploy::DeploymentGroup')[1].Properties.AlarmConfiguration.Alarms as Json[]).map((a) => a.Name),
    ).toEqual([{ Ref: logicalId(plain, plain.stack.transformer.alarms!.originErrorRate) }]);
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

    expect(of('Origin requests by output format').filter(own).map((m) => m.dimensions.OutputFormat)).toEqual([
      'jpeg',
      'png',
      'webp',
      'avif',
      'gif',
      'json',
    ]);
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
    expect(of('Origin memory: handler resident set and transform peak (MB)').map((m) => m.name)).toEqual(['MemoryRss', 'MemoryRss', 'TransformRss', 'TransformRss']);
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

describe('stack outputs', () => {
  it('name what an operator needs: the dashboard, the origin function, its deployment group, the alarm topic', () => {
    const outputs = (s: Synthesized) => Object.keys(s.json.Outputs).sort();
    expect(outputs(base)).toEqual(
      [
        'CacheBucketName',
        'DashboardName',
        'DistributionDomainName',
        'DistributionId',
        'InvalidationFailureQueueUrl',
        'LogBucketName',
        'OriginConcurrencyCap',
        'OriginDeploymentApplication',
        'OriginDeploymentGroup',
        'OriginFunctionName',
        'SourceBucketName',
      ].sort(),
    );
    expect(outputs(full)).toContain('AlarmTopicArn');
    expect(outputs(off)).not.toEqual(expect.arrayContaining(['DashboardName']));
    expect(outputs(off).filter((name) => /Dashboard|Deployment|AlarmTopic/.test(name))).toEqual([]);
  });
});

// ---------------------------------------------------------------- buckets

describe('buckets', () => {
  it('every bucket blocks public access, is encrypted and refuses non-TLS requests', () => {
    for (const s of [base, full, imported]) {
      const buckets = resources(s, 'AWS::S3::Bucket');
      expect(buckets.length).toBe(s === base ? 3 : s === full ? 2 : 2);
      for (const [id, bucket] of buckets) {
        expect(bucket.Properties.PublicAccessBlockConfiguration, id).toEqual({
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        });
        expect(bucket.Properties.BucketEncryption, id).toEqual({
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        });
        const [, policy] = resources(s, 'AWS::S3::BucketPolicy').find(([, p]) => refs(p.Properties.Bucket).includes(id)) ?? [];
        expect(policy, `${id} has a bucket policy`).toBeDefined();
        expect(policy!.Properties.PolicyDocument.Statement).toContainEqual(
          expect.objectContaining({
            Effect: 'Deny',
            Action: 's3:*',
            Principal: { AWS: '*' },
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        );
      }
    }
  });

  it('expires variants in the cache bucket (90 days by default)', () => {
    const rules = (s: Synthesized) =>
      s.json.Resources[logicalId(s, s.stack.transformer.cacheBucket)].Properties.LifecycleConfiguration.Rules as Json[];
    expect(rules(base)).toContainEqual(expect.objectContaining({ ExpirationInDays: 90, Status: 'Enabled' }));
    expect(rules(full)).toContainEqual(expect.objectContaining({ ExpirationInDays: 30, Status: 'Enabled' }));
    // Remembered failures (never served: no viewer URI maps to them) are gone a day on.
    expect(rules(base)).toContainEqual({ Id: 'expire-remembered-failures', Prefix: '.failures/', ExpirationInDays: 1, Status: 'Enabled' });
    // Never the source bucket.
    expect(base.json.Resources[logicalId(base, base.stack.transformer.sourceBucket)].Properties.LifecycleConfiguration).toBeUndefined();
  });

  it('are retained with the stack by default, and deleted with it when asked', () => {
    for (const [, bucket] of resources(base, 'AWS::S3::Bucket')) expect(bucket.DeletionPolicy).toBe('Retain');
    expect(resources(base, 'Custom::S3AutoDeleteObjects')).toHaveLength(0);
    for (const [, bucket] of resources(full, 'AWS::S3::Bucket')) expect(bucket.DeletionPolicy).toBe('Delete');
    expect(resources(full, 'Custom::S3AutoDeleteObjects')).toHaveLength(2);
  });

  it('imports an existing source bucket instead of creating one', () => {
    const t = imported.stack.transformer;
    expect(t.sourceBucket.bucketName).toBe('my-photos');
    expect(resources(imported, 'AWS::S3::Bucket').map(([id]) => id)).not.toContain(expect.stringContaining('SourceBucket'));
    expect(originFunction(imported).Properties.Environment.Variables.SOURCE_BUCKET).toBe('my-photos');
    const read = roleActions(imported, t.originFunction.role!).find((st) => actionsOf(st).includes('s3:GetObject'))!;
    expect(read.Resource).toEqual({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::my-photos/*']] });
    const [, notifications] = only(imported, 'Custom::S3BucketNotifications');
    expect(notifications.Properties.BucketName).toBe('my-photos');
  });
});

// ---------------------------------------------------------------- IAM

describe('IAM', () => {
  it('allows no wildcard action anywhere (no "*", no "s3:*", no "service:*")', () => {
    for (const s of [base, full, imported]) {
      for (const statement of statements(s).filter((st) => st.Effect === 'Allow')) {
        for (const action of actionsOf(statement)) {
          expect(action, JSON.stringify(statement)).not.toBe('*');
          expect(action, JSON.stringify(statement)).not.toMatch(/^[a-z0-9-]+:\*$/);
        }
        expect(statement.NotAction, JSON.stringify(statement)).toBeUndefined();
      }
    }
  });

  it('every statement that allows object access names a bucket of this stack (or the imported one)', () => {
    for (const statement of statements(imported).filter((st) => st.Effect === 'Allow')) {
      if (!actionsOf(statement).some((a) => a.startsWith('s3:') && a !== 's3:PutBucketNotification')) continue;
      const resource = JSON.stringify(statement.Resource);
      expect(resource, JSON.stringify(statement)).not.toBe('"*"');
    }
  });
});

// ---------------------------------------------------------------- cdk-nag

/** Acknowledged rules anywhere in the tree: `Annotation::<rule id>` -> reason. */
function acknowledgements(root: IConstruct): { path: string; id: string; reason: string }[] {
  const found: { path: string; id: string; reason: string }[] = [];
  for (const construct of root.node.findAll()) {
    for (const entry of construct.node.metadata) {
      if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
      for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
        found.push({ path: construct.node.path, id: id.replace(/^annotation::/i, ''), reason });
      }
    }
  }
  return found;
}

describe('cdk-nag AwsSolutions', () => {
  it('finds nothing unacknowledged, in every configuration', () => {
    for (const s of [base, full, imported, off]) {
      const report = new AwsSolutionsChecks(s.app).validateScope(s.app);
      const summary = report.violations.map((v) => `${v.severity} ${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`);
      expect(summary, s.stack.stackName).toEqual([]);
      expect(report.success).toBe(true);
    }
  });

  it('as a policy-validation plugin, stops a synth that has an unacknowledged finding', () => {
    const app = new App({
      context: { 'aws:cdk:bundling-stacks': [] },
      outdir: mkdtempSync(join(tmpdir(), 'eit-nag-')),
      builtinCloudFormationValidation: false,
    });
    const stack = new ImageTransformerStack(app, 'Images', { env: ENV, transformer: () => ({}) });
    new s3.Bucket(stack, 'CarelessBucket');
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    try {
      expect(() => app.synth()).toThrow(/AwsSolutions-S10/);
      const report = JSON.parse(readFileSync(join(app.outdir, 'validation-report.json'), 'utf8'));
      const nag = report.pluginReports.find((r: Json) => r.pluginName === 'AwsSolutions');
      expect(nag.violations.map((v: Json) => v.ruleName).sort()).toEqual(['AwsSolutions-S1', 'AwsSolutions-S10']);
    } finally {
      rmSync(app.outdir, { recursive: true, force: true });
    }
  });

  it('acknowledges only the expected findings, each with a reason', () => {
    const ids = (s: Synthesized) =>
      acknowledgements(s.stack)
        .filter((a) => a.id.startsWith('AwsSolutions-'))
        .map((a) => `${a.path.replace(/^Images\//, '')} ${a.id}`)
        .sort();
    const cache = logicalId(base, base.stack.transformer.cacheBucket);
    const source = logicalId(base, base.stack.transformer.sourceBucket);
    const notifications = 'BucketNotificationsHandler050a0587b7544547bf325f094a3db834';
    expect(ids(base)).toEqual(
      [
        `${notifications} AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]`,
        `${notifications} AwsSolutions-IAM5[Resource::*]`,
        'ImageTransformer/Distribution AwsSolutions-CFR1',
        'ImageTransformer/Distribution AwsSolutions-CFR2',
        'ImageTransformer/ConcurrencyCapRole AwsSolutions-IAM5[Resource::*]',
        'ImageTransformer/Distribution AwsSolutions-CFR4',
        'ImageTransformer/InvalidationFailures AwsSolutions-SQS3',
        `ImageTransformer/InvalidationRole AwsSolutions-IAM5[Resource::<${cache}.Arn>/*]`,
        'ImageTransformer/LogBucket AwsSolutions-S1',
        `ImageTransformer/OriginRole AwsSolutions-IAM5[Resource::<${cache}.Arn>/*]`,
        `ImageTransformer/OriginRole AwsSolutions-IAM5[Resource::<${source}.Arn>/*]`,
        'ImageTransformer/OriginDeployment/ServiceRole AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
      ].sort(),
    );
    // Without canary deployments there is no CodeDeploy role to acknowledge.
    expect(ids(off).filter((id) => id.includes('CodeDeploy'))).toEqual([]);
    // Logging off, a custom domain and a web ACL: CFR3 and S1 for the buckets instead of CFR2/CFR4.
    expect(ids(full)).toEqual(
      expect.arrayContaining([
        'ImageTransformer/Distribution AwsSolutions-CFR3',
        'ImageTransformer/CacheBucket AwsSolutions-S1',
        'ImageTransformer/SourceBucket AwsSolutions-S1',
      ]),
    );
    expect(ids(full).filter((id) => /CFR2|CFR4/.test(id))).toEqual([]);
    expect(ids(imported)).toContain('ImageTransformer/OriginRole AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::my-photos/*]');

    for (const s of [base, full, imported, off]) {
      for (const { path, id, reason } of acknowledgements(s.stack).filter((a) => a.id.startsWith('AwsSolutions-'))) {
        expect(reason.length, `${path} ${id}: "${reason}"`).toBeGreaterThanOrEqual(60);
      }
    }
  });
});

// ---------------------------------------------------------------- cfn-lint

describe('cfn-lint', () => {
  let dir: string;
  let matches: CfnLintMatch[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'eit-cfn-lint-'));
    const files = Object.entries({ base, full, imported, off }).map(([name, s]) => {
      const file = join(dir, `${name}.template.json`);
      writeFileSync(file, JSON.stringify(s.json, null, 1));
      return file;
    });
    matches = await cfnLint(files); // the first run installs cfn-lint (about 40 s, once)
  }, 180_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('reports no errors on the synthesized templates', () => {
    const errors = matches.filter((m) => m.Level === 'Error').map((m) => `${m.Filename} ${m.Rule.Id} ${m.Message}`);
    expect(errors).toEqual([]);
  });

  it('reports only the warnings we know about', () => {
    // W3005: CDK's explicit DependsOn next to a GetAtt; W3045: the log bucket's canned
    // ACL that CloudFront standard logging needs (acknowledged by aws-cdk-lib itself).
    const warnings = [...new Set(matches.filter((m) => m.Level === 'Warning').map((m) => m.Rule.Id))].sort();
    expect(warnings.filter((id) => !['W3005', 'W3045'].includes(id))).toEqual([]);
  });
});

// ---------------------------------------------------------------- validation

describe('props are checked at synth time', () => {
  const attempt = (props: (stack: Stack) => ImageTransformerProps) => () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    new ImageTransformerStack(app, 'Images', { env: ENV, transformer: props });
  };
  const rejects = (props: (stack: Stack) => ImageTransformerProps, message: RegExp) => {
    expect(attempt(props)).toThrow(ImageTransformerConfigError);
    expect(attempt(props)).toThrow(message);
  };

  it('presets go through the grammar: unknown names and bad values fail', () => {
    rejects(() => ({ presets: { thumb: { widht: '200' } } }), /preset "thumb" has an unknown parameter "widht"/);
    // Only the edge writes accept, from the viewer's Accept header.
    rejects(() => ({ presets: { hero: { accept: 'avif' } } }), /preset "hero" has an unknown parameter "accept"; known parameters: (?!.*accept)/);
    rejects(() => ({ presets: { thumb: { width: '20x' } } }), /preset "thumb" is invalid: .*width/);
    rejects(() => ({ presets: { thumb: { fit: 'squash' } } }), /preset "thumb" is invalid: .*fit/);
    rejects(() => ({ presets: { 'no spaces': { width: '200' } } }), /preset name "no spaces"/);
    rejects(() => ({ presets: { loop: { preset: 'loop' } } }), /may not contain "preset"/);
    rejects(() => ({ presets: { empty: {} } }), /preset "empty" is empty/);
    rejects(() => ({ presets: { big: { width: '2000' } }, sizes: [320, 640] }), /preset "big" is invalid: .*640/);
    rejects(() => ({ presets: { big: { width: '9000' } } }), /preset "big" is invalid: .*width/);
  });

  it('presetsOnly needs presets; eager presets must exist', () => {
    rejects(() => ({ presetsOnly: true }), /presetsOnly needs at least one preset/);
    rejects(() => ({ presets: { thumb: { width: '200' } }, eagerPresets: ['thumbnail'] }), /eagerPresets names "thumbnail"/);
    rejects(
      () => ({ presets: { thumb: { width: '200' } }, eagerPresets: ['thumb'], signing: true }),
      /eagerPresets with signing need eagerSigningSecret/,
    );
  });

  it('sizes and dimensions are whole numbers in range', () => {
    rejects(() => ({ sizes: [] }), /sizes must list at least one width/);
    rejects(() => ({ sizes: [320, 12.5] }), /sizes \(12.5\)/);
    rejects(() => ({ sizes: [320, 10_000] }), /sizes \(10000\) must be an integer from 1 to 8192/);
    rejects(() => ({ maxDimension: 20_000 }), /maxDimension must be an integer from 1 to 16383/);
  });

  it('Lambda settings are in range', () => {
    rejects(() => ({ timeout: Duration.minutes(5) }), /timeout \(seconds\) must be an integer from 5 to 110/);
    rejects(() => ({ memorySize: 64 }), /memorySize must be an integer from 128 to 10240/);
    rejects(() => ({ maxInlineBytes: 6_000_000 }), /maxInlineBytes/);
    rejects(() => ({ cacheControl: 'max-age=1\r\nx: y' }), /cacheControl must be a one-line header value/);
    rejects(() => ({ browserMaxAge: Duration.days(400) }), /browserMaxAge \(seconds\) must be an integer from 0 to 31536000/);
  });

  it('a custom domain needs a us-east-1 certificate, and the other way round', () => {
    rejects(() => ({ domainNames: ['img.example.com'] }), /domainNames need a certificate/);
    rejects(
      (stack) => ({ certificate: acm.Certificate.fromCertificateArn(stack, 'C', CERTIFICATE_ARN) }),
      /a certificate is only used with domainNames/,
    );
    rejects(
      (stack) => ({
        domainNames: ['img.example.com'],
        certificate: acm.Certificate.fromCertificateArn(stack, 'C', CERTIFICATE_ARN.replace('us-east-1', 'eu-west-1')),
      }),
      /certificate in us-east-1/,
    );
  });

  it('operations settings', () => {
    rejects(() => ({ originReservedConcurrency: 50, originProvisionedConcurrency: 60 }), /originProvisionedConcurrency \(60\) cannot exceed originReservedConcurrency \(50\)/);
    rejects(() => ({ originProvisionedConcurrency: 0 }), /originProvisionedConcurrency must be an integer from 1/);
    rejects(() => ({ originConcurrencyCap: 0 }), /originConcurrencyCap must be an integer from 1/);
    rejects(() => ({ originConcurrencyCap: 20, originReservedConcurrency: 20 }), /originConcurrencyCap is only used without originReservedConcurrency/);
    rejects(() => ({ alarmEmail: 'oncall' }), /alarmEmail "oncall" is not an email address/);
    rejects(() => ({ alarms: false, alarmEmail: 'oncall@example.com' }), /alarmTopic and alarmEmail need alarms/);
    rejects(
      () => ({ canaryDeployments: false, deploymentConfig: codedeploy.LambdaDeploymentConfig.ALL_AT_ONCE }),
      /deploymentConfig is only used with canaryDeployments: true/,
    );
    rejects(() => ({ metricsNamespace: 'AWS/Lambda' }), /metricsNamespace "AWS\/Lambda" is not a CloudWatch namespace/);
    rejects(() => ({ metricsNamespace: 'images|prod' }), /metricsNamespace/);
  });

  it('other settings', () => {
    rejects(() => ({ originShieldRegion: 'Frankfurt' }), /originShieldRegion must be an AWS region/);
    rejects(() => ({ cors: { allowOrigins: [] } }), /cors.allowOrigins is empty/);
    rejects(() => ({ variantExpiration: Duration.days(0) }), /variantExpiration \(days\)/);
  });

  it('accepts a valid configuration with presets in presets-only mode', () => {
    expect(attempt(() => ({ presets: { thumb: { width: '200', height: '200' } }, presetsOnly: true }))).not.toThrow();
  });
});
