// What the template test files share: the configurations they synthesize
// (defaults, everything optional on, an imported bucket in us-east-1,
// operations off, buckets mapped to prefixes) and helpers that read the synthesized CloudFormation.
// Bundling is skipped ('aws:cdk:bundling-stacks': []) so each synth takes
// seconds; a bundling synth is `npm run synth`.

import { App, Duration, SecretValue, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as codedeploy from 'aws-cdk-lib/aws-codedeploy';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { IConstruct } from 'constructs';
import { expect } from 'vitest';
import type { ImageTransformerProps } from '../../lib/props';
import { ImageTransformerStack } from '../../lib/stack';

export type Json = Record<string, any>;

export interface Synthesized {
  app: App;
  stack: ImageTransformerStack;
  template: Template;
  json: Json;
}

export const ENV = { account: '123456789012', region: 'eu-west-1' };
export const CERTIFICATE_ARN = 'arn:aws:acm:us-east-1:123456789012:certificate/11111111-2222-3333-4444-555555555555';

export function synth(props: (stack: Stack) => ImageTransformerProps = () => ({}), env = ENV): Synthesized {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new ImageTransformerStack(app, 'Images', { env, transformer: props });
  const template = Template.fromStack(stack);
  return { app, stack, template, json: template.toJSON() };
}

export const JWT_ISSUER = 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Example';

/** Props for a deployment that turns on everything optional. */
export const FULL = (stack: Stack): ImageTransformerProps => ({
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
  sourceTiering: false,
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
  webOrigins: { 'shop/': { url: 'https://shop.example.com/images/', revalidateAfter: Duration.hours(1) } },
  manageCorsOrigins: ['https://app.example.com'],
  manageJwtIssuer: JWT_ISSUER,
  manageJwtAudience: ['app-client-id'],
});

export const ALARM_TOPIC_ARN = 'arn:aws:sns:us-east-1:123456789012:paging';

/** An existing source bucket and alarm topic, in us-east-1: where CloudFront's metrics (and so its alarm) are. */
export const IMPORTED = (stack: Stack): ImageTransformerProps => ({
  sourceBucket: s3.Bucket.fromBucketName(stack, 'Photos', 'my-photos'),
  alarmTopic: sns.Topic.fromTopicArn(stack, 'Paging', ALARM_TOPIC_ARN),
});
export const US_EAST_1 = { ...ENV, region: 'us-east-1' };

/** A created source bucket, two existing buckets serving key prefixes, and a web site serving another: every kind of source in one stack. */
export const PREFIX_BUCKETS = (stack: Stack): ImageTransformerProps => ({
  sourceBuckets: {
    'archive/': s3.Bucket.fromBucketName(stack, 'Archive', 'my-archive'),
    'press/kit/': s3.Bucket.fromBucketName(stack, 'PressKit', 'my-press-kit'),
  },
  webOrigins: { 'shop/': { url: 'https://shop.example.com/images/' } },
});

/** Every kind of source, DIT's dialects and signed URLs: a deployment moving from DIT (docs/migrating.md). */
export const DIALECTS = (stack: Stack): ImageTransformerProps => ({ ...PREFIX_BUCKETS(stack), dialects: ['dit'], signing: true });

/** Every operations feature turned off. */
export const OFF: ImageTransformerProps = {
  metrics: false,
  dashboard: false,
  alarms: false,
  cloudFrontAdditionalMetrics: false,
  canaryDeployments: false,
};

/** The configurations every template test file draws on, by name. */
const CONFIGURATIONS = {
  base: [() => ({}), ENV],
  full: [FULL, ENV],
  imported: [IMPORTED, US_EAST_1],
  off: [() => OFF, ENV],
  buckets: [PREFIX_BUCKETS, ENV],
  dialects: [DIALECTS, ENV],
} as const;

/**
 * The named CONFIGURATIONS, synthesized as the calling test file loads (a
 * synth takes seconds, and collection has no timeout to outgrow).
 */
export function synthesize<Name extends keyof typeof CONFIGURATIONS>(...names: Name[]): Record<Name, Synthesized> {
  return Object.fromEntries(
    names.map((name) => {
      const [props, env] = CONFIGURATIONS[name];
      return [name, synth(props, env)];
    }),
  ) as Record<Name, Synthesized>;
}

// ---------------------------------------------------------------- helpers

export const resources = (s: Synthesized, type: string): [string, Json][] =>
  Object.entries(s.json.Resources as Json).filter(([, resource]) => resource.Type === type) as [string, Json][];

export const only = (s: Synthesized, type: string): [string, Json] => {
  const found = resources(s, type);
  expect(found, type).toHaveLength(1);
  return found[0]!;
};

export const distributionConfig = (s: Synthesized): Json => only(s, 'AWS::CloudFront::Distribution')[1].Properties.DistributionConfig;

/** Logical ids whose resource is referenced (Ref or GetAtt) by `value`; pseudo parameters left out. */
export function refs(value: unknown): string[] {
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

/** The logical ID of a construct's resource, as the template has it (an overridden one too). */
export const logicalId = (s: Synthesized, construct: IConstruct): string =>
  s.stack.resolve((construct.node.defaultChild as import('aws-cdk-lib').CfnElement).logicalId);

/** The project's own Lambdas (not aws-cdk-lib's custom resource handlers). */
export const projectFunctions = (s: Synthesized) =>
  resources(s, 'AWS::Lambda::Function').filter(([, fn]) => String(fn.Properties.Description ?? '').startsWith('edge-image-transformer'));

/** The Lambdas of CDK's custom resource Provider framework, which answer CloudFormation for the project's custom resources. */
export const providerFrameworks = (s: Synthesized) =>
  resources(s, 'AWS::Lambda::Function').filter(([, fn]) =>
    String(fn.Properties.Description ?? '').startsWith('AWS CDK resource provider framework'),
  );

export const originFunction = (s: Synthesized) => s.json.Resources[logicalId(s, s.stack.transformer.originFunction)] as Json;
export const invalidationFunction = (s: Synthesized) => s.json.Resources[logicalId(s, s.stack.transformer.invalidationFunction)] as Json;

/** Every IAM statement in the template: identity policies, inline role policies, bucket policies. */
export function statements(s: Synthesized): Json[] {
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

export const actionsOf = (statement: Json): string[] => [statement.Action ?? []].flat();

/** The actions a role's policies allow, by Sid-less flat list. */
export function roleActions(s: Synthesized, roleConstruct: IConstruct): Json[] {
  const roleId = s.stack.getLogicalId(roleConstruct.node.defaultChild as import('aws-cdk-lib').CfnElement);
  return resources(s, 'AWS::IAM::Policy')
    .filter(([, policy]) => refs(policy.Properties.Roles).includes(roleId))
    .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement as Json[]);
}

export const cloudFrontFunction = (s: Synthesized, construct: IConstruct): [string, Json] => {
  const id = logicalId(s, construct);
  return [id, s.json.Resources[id] as Json];
};
export const viewerRequest = (s: Synthesized) => cloudFrontFunction(s, s.stack.transformer.viewerRequestFunction);
export const viewerResponse = (s: Synthesized) => cloudFrontFunction(s, s.stack.transformer.viewerResponseFunction);

/** The viewer-request function code as deployed, with a 36-character KVS id in place of a token. */
export function functionCode(s: Synthesized): string {
  const code = viewerRequest(s)[1].Properties.FunctionCode;
  if (typeof code === 'string') return code;
  const [, parts] = code['Fn::Join'] as [string, unknown[]];
  return parts.map((part) => (typeof part === 'string' ? part : 'x'.repeat(36))).join('');
}
