// The whole synthesized template: logical IDs pinned, what every Lambda shares,
// the stack outputs, IAM, cdk-nag (AwsSolutions) and cfn-lint.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImageTransformerStack } from '../../lib/stack';
import { cfnLint, type CfnLintMatch } from './cfn-lint';
import {
  actionsOf,
  ENV,
  type Json,
  logicalId,
  projectFunctions,
  providerFrameworks,
  refs,
  resources,
  statements,
  type Synthesized,
  synthesize,
} from './synth';

const { base, full, imported, off, buckets, dialects } = synthesize('base', 'full', 'imported', 'off', 'buckets', 'dialects');

// ---------------------------------------------------------------- logical IDs

describe('logical IDs', () => {
  const before = JSON.parse(readFileSync(new URL('./logical-ids.json', import.meta.url), 'utf8')) as Record<string, Record<string, string>>;

  it('every resource of an existing deployment keeps its logical ID and type (new resources only)', () => {
    for (const [name, s] of Object.entries({ base, full, imported, off, buckets })) {
      const now = Object.fromEntries(Object.entries(s.json.Resources as Json).map(([id, resource]) => [id, resource.Type]));
      const expected = before[name]!;
      expect(Object.keys(expected).length, name).toBeGreaterThan(25);
      expect(Object.fromEntries(Object.keys(expected).map((id) => [id, now[id]])), name).toEqual(expected);
    }
  });
});

describe('custom resources', () => {
  it("keep the ServiceToken of a deployed stack (CloudFormation refuses to change it): CDK's Provider framework in the function they called", () => {
    for (const [s, resource, fn] of [
      [full, 'ImageTransformerEdgeDataB2A0A2BD', 'ImageTransformerEdgeDataFunction57AE67B3'],
      [base, 'ImageTransformerOriginConcurrencyCapBDC1B11B', 'ImageTransformerConcurrencyCapFunctionEE8A7584'],
    ] as const) {
      expect(s.json.Resources[resource].Properties.ServiceToken).toEqual({ 'Fn::GetAtt': [fn, 'Arn'] });
      expect(providerFrameworks(s).map(([id]) => id)).toContain(fn);
    }
  });
});

describe('Lambdas', () => {
  it('run on arm64 with Node.js 22 or newer', () => {
    for (const [s, count] of [
      [base, 7],
      [full, 6],
      [imported, 7],
    ] as const) {
      const functions = projectFunctions(s);
      // Origin, invalidation, the edge data writer, the management API's, the upload validator and the importer,
      // and (without a fixed originReservedConcurrency: not full) the concurrency cap.
      expect(functions).toHaveLength(count);
      for (const [id, fn] of functions) {
        expect(fn.Properties.Architectures, id).toEqual(['arm64']);
        const version = /^nodejs(\d+)\.x$/.exec(fn.Properties.Runtime);
        expect(Number(version?.[1]), `${id} ${fn.Properties.Runtime}`).toBeGreaterThanOrEqual(22);
        expect(fn.Properties.Handler).toBe('index.handler');
      }
    }
  });

  it('log to their own log groups with a retention (a month, or logRetention)', () => {
    for (const [s, days] of [
      [base, 30],
      [full, 14],
    ] as const) {
      // The project's own, and the Provider framework's of each custom resource.
      const functions = [...projectFunctions(s), ...providerFrameworks(s)];
      for (const [, fn] of functions) {
        const [groupId] = refs(fn.Properties.LoggingConfig.LogGroup);
        expect(s.json.Resources[groupId!].Properties.RetentionInDays).toBe(days);
      }
      // One log group each, the only ones this construct makes but the management API's access logs.
      expect(new Set(functions.map(([, fn]) => refs(fn.Properties.LoggingConfig.LogGroup)[0])).size).toBe(functions.length);
      expect(resources(s, 'AWS::Logs::LogGroup')).toHaveLength(functions.length + 1);
    }
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
        'ManageApiUrl',
        'OriginConcurrencyCap',
        'OriginDeploymentApplication',
        'OriginDeploymentGroup',
        'OriginFunctionName',
        'SourceBucketName',
        'UploadValidationFailureQueueUrl',
      ].sort(),
    );
    expect(outputs(full)).toContain('AlarmTopicArn');
    expect(outputs(off)).not.toEqual(expect.arrayContaining(['DashboardName']));
    expect(outputs(off).filter((name) => /Dashboard|Deployment|AlarmTopic/.test(name))).toEqual([]);
  });
});

// ---------------------------------------------------------------- IAM

describe('IAM', () => {
  it('allows no wildcard action anywhere (no "*", no "s3:*", no "service:*")', () => {
    for (const s of [base, full, imported, buckets]) {
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
      // s3:CreateJob (an import's Batch Operations job) is an action on the account, not on a bucket.
      const bucketless = ['s3:PutBucketNotification', 's3:CreateJob'];
      if (!actionsOf(statement).some((a) => a.startsWith('s3:') && !bucketless.includes(a))) continue;
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
    for (const s of [base, full, imported, off, buckets, dialects]) {
      const report = new AwsSolutionsChecks(s.app).validateScope(s.app);
      const summary = report.violations.map(
        (v) => `${v.severity} ${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`,
      );
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
    const handler = (name: string) => base.stack.transformer.node.findChild(`${name}Handler`);
    expect(ids(base)).toEqual(
      [
        `${notifications} AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]`,
        `${notifications} AwsSolutions-IAM5[Resource::*]`,
        'ImageTransformer/Distribution AwsSolutions-CFR1',
        'ImageTransformer/Distribution AwsSolutions-CFR2',
        'ImageTransformer/ConcurrencyCapHandlerRole AwsSolutions-IAM5[Resource::*]',
        `ImageTransformer/ConcurrencyCapRole AwsSolutions-IAM5[Resource::<${logicalId(base, handler('ConcurrencyCap'))}.Arn>:*]`,
        `ImageTransformer/EdgeDataRole AwsSolutions-IAM5[Resource::<${logicalId(base, handler('EdgeData'))}.Arn>:*]`,
        'ImageTransformer/Distribution AwsSolutions-CFR4',
        'ImageTransformer/InvalidationFailures AwsSolutions-SQS3',
        'ImageTransformer/ManageValidatorFailures AwsSolutions-SQS3',
        `ImageTransformer/InvalidationRole AwsSolutions-IAM5[Resource::<${cache}.Arn>/*]`,
        'ImageTransformer/LogBucket AwsSolutions-S1',
        `ImageTransformer/OriginRole AwsSolutions-IAM5[Resource::<${cache}.Arn>/*]`,
        `ImageTransformer/OriginRole AwsSolutions-IAM5[Resource::<${cache}.Arn>/.failures/*]`,
        `ImageTransformer/OriginRole AwsSolutions-IAM5[Resource::<${cache}.Arn>/*/.faces.*]`,
        `ImageTransformer/OriginRole AwsSolutions-IAM5[Resource::<${cache}.Arn>/*/.subject.*]`,
        `ImageTransformer/OriginRole AwsSolutions-IAM5[Resource::<${source}.Arn>/*]`,
        `ImageTransformer/ManageApiRole AwsSolutions-IAM5[Resource::<${source}.Arn>/_uploads/*]`,
        `ImageTransformer/ManageApiRole AwsSolutions-IAM5[Resource::<${source}.Arn>/*]`,
        `ImageTransformer/ManageValidatorRole AwsSolutions-IAM5[Resource::<${source}.Arn>/_uploads/*]`,
        `ImageTransformer/ManageValidatorRole AwsSolutions-IAM5[Resource::<${source}.Arn>/_quarantine/*]`,
        `ImageTransformer/ManageValidatorRole AwsSolutions-IAM5[Resource::<${source}.Arn>/*]`,
        'ImageTransformer/ManageApiRole AwsSolutions-IAM5[Resource::*]',
        `ImageTransformer/ManageApiRole AwsSolutions-IAM5[Resource::<${source}.Arn>/_imports/*]`,
        'ImageTransformer/ManageApiRole AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:eu-west-1:123456789012:job/*]',
        `ImageTransformer/ManageImporterRole AwsSolutions-IAM5[Resource::<${source}.Arn>/*]`,
        `ImageTransformer/ManageImporterRole AwsSolutions-IAM5[Resource::<${source}.Arn>/_quarantine/*]`,
        `ImageTransformer/ManageImporterRole AwsSolutions-IAM5[Resource::<${source}.Arn>/_imports/*]`,
        `ImageTransformer/ManageImportsBatchRole AwsSolutions-IAM5[Resource::<${source}.Arn>/_imports/*]`,
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

    for (const s of [base, full, imported, off, buckets]) {
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
    const files = Object.entries({ base, full, imported, off, buckets, dialects }).map(([name, s]) => {
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
