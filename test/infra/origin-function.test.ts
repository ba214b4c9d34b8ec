// The origin function part (lib/parts/origin-function.ts, concurrency-cap.ts) as synthesized.

import { describe, expect, it } from 'vitest';
import type { ImageTransformerProps } from '../../lib/props';
import {
  actionsOf,
  type Json,
  logicalId,
  only,
  originFunction,
  refs,
  resources,
  roleActions,
  synth,
  type Synthesized,
  synthesize,
} from './synth';

const { base, full, imported, off } = synthesize('base', 'full', 'imported', 'off');

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
      const others = resources(s, 'AWS::Lambda::Permission').filter(([, p]) =>
        refs(p.Properties.FunctionName).some((id) => origin.includes(id)),
      );
      expect(others).toHaveLength(2);
    }
  });

  it("is configured from the props: limits, Cache-Control, a time budget below the timeout; not the sizes, which are the edge's rule", () => {
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
      SVG_POLICY: 'rasterize',
      METRICS_NAMESPACE: 'Photos/Images',
    });
    expect(env(full)).not.toHaveProperty('SIZES');
    expect(env(full).METRICS).toBeUndefined();
    expect(env(off)).toMatchObject({ METRICS_NAMESPACE: 'EdgeImageTransformer/Images', METRICS: 'false' });
    expect(originFunction(full).Properties).toMatchObject({ MemorySize: 3008, Timeout: 60, ReservedConcurrentExecutions: 50 });
  });

  it('reads sources, writes variants and reads back its own records, nothing more (plus its own log group)', () => {
    const t = base.stack.transformer;
    const allowed = roleActions(base, t.originFunction.role!);
    expect(allowed.map((st) => [actionsOf(st).join(','), refs(st.Resource)])).toEqual([
      ['logs:CreateLogStream,logs:PutLogEvents', [logicalId(base, t.node.findChild('OriginLogs'))]],
      ['s3:GetObject', [logicalId(base, t.sourceBucket)]],
      ['s3:ListBucket', [logicalId(base, t.sourceBucket)]],
      ['s3:PutObject', [logicalId(base, t.cacheBucket)]],
      ['s3:GetObject', [logicalId(base, t.cacheBucket), logicalId(base, t.cacheBucket), logicalId(base, t.cacheBucket)]],
    ]);
    // Object actions on objects, the bucket action on the bucket.
    const resource = (sid: string) => JSON.stringify(allowed.find((st) => st.Sid === sid)!.Resource);
    expect(resource('ReadSources')).toContain('/*');
    expect(resource('WriteVariants')).toContain('/*');
    expect(resource('TellMissingSourcesApart')).not.toContain('/*');
    // The cache bucket is read only where the origin keeps its remembered failures, and with
    // web origins their variants, which it serves itself: under `/`, a key no viewer's URI reaches.
    // And each source's remembered faces and subject, beside its variants, under a last segment no canonical URI has.
    expect(resource('ReadOwnRecords')).toMatch(/"\/\.failures\/\*"\]/);
    expect(resource('ReadOwnRecords')).toMatch(/"\/\*\/\.faces\.\*"\]/);
    expect(resource('ReadOwnRecords')).toMatch(/"\/\*\/\.subject\.\*"\]/);
    const fullRead = roleActions(full, full.stack.transformer.originFunction.role!).find((st) => st.Sid === 'ReadOwnRecords')!;
    expect(JSON.stringify(fullRead.Resource)).toMatch(/\/\.failures\/\*".*"\/\/shop\/\*"/);
    expect(JSON.stringify(fullRead.Resource)).not.toMatch(/[^/]\/shop\/\*"/);
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
      // CDK's Provider framework, which invokes ConcurrencyCapHandler.
      ServiceToken: {
        'Fn::GetAtt': [logicalId(base, t.node.findChild('ConcurrencyCapProvider').node.findChild('framework-onEvent')), 'Arn'],
      },
      FunctionName: { Ref: logicalId(base, t.originFunction) },
      Cap: 50,
      Floor: 0,
      Version: { 'Fn::GetAtt': [versionId, 'Version'] },
    });
    expect(base.json.Outputs.OriginConcurrencyCap.Value).toEqual({ 'Fn::GetAtt': [logicalId(base, t.originConcurrencyCap!), 'Message'] });
  });

  it("may read the account settings and set only the origin function's reservation", () => {
    const t = base.stack.transformer;
    const role = t.node.findChild('ConcurrencyCapHandlerRole');
    expect(roleActions(base, role).map((st) => [actionsOf(st).join(','), st.Resource])).toEqual([
      ['logs:CreateLogStream,logs:PutLogEvents', { 'Fn::GetAtt': [logicalId(base, t.node.findChild('ConcurrencyCapHandlerLogs')), 'Arn'] }],
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
    const capOf = (props: ImageTransformerProps) =>
      only(
        synth(() => props),
        'Custom::OriginConcurrencyCap',
      )[1].Properties;
    expect(capOf({ originConcurrencyCap: 200, originProvisionedConcurrency: 5 })).toMatchObject({ Cap: 200, Floor: 5 });
    expect(capOf({ originConcurrencyCap: false })).toMatchObject({ Cap: 0 });
  });
});
