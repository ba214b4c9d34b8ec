// The edge functions part (lib/parts/edge-functions.ts) as synthesized.

import { Duration } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { DATA_KEY_PREFIX, deploymentEntries } from '../../lambda/edge/store';
import {
  loadFunction,
  viewerEvent,
  viewerResponseEvent,
  type ViewerResponse,
  type ViewerResponseEvent,
} from '../../local/emulator/cloudfront-function';
import type { GrammarOptions } from '../../lambda/grammar';
import {
  distributionConfig,
  functionCode,
  type Json,
  only,
  originFunction,
  refs,
  resources,
  synth,
  type Synthesized,
  synthesize,
  viewerRequest,
  viewerResponse,
} from './synth';

const { base, full, imported } = synthesize('base', 'full', 'imported');
/** Sizes and presets without signing: the store holds the deployment's data only. */
/** The store's entries of the deployment's data for `grammar` (of which only the sizes and watermarks are a deployment's own). */
const dataEntries = (grammar: Partial<GrammarOptions>) =>
  Object.fromEntries(
    Object.entries(deploymentEntries({ maxDimension: 8192, ...grammar })).filter(([key]) => key.startsWith(DATA_KEY_PREFIX)),
  );
const presetsOnly = synth(() => ({ sizes: [640, 320], presets: { thumb: { w: '320', fit: 'cover' } } }));

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

  it('carries the fixed settings and format choice; the sizes and presets are in its store', () => {
    // The grammar's settings are constants of the bundle: the largest side is a literal of its options.
    expect(functionCode(base)).toMatch(/\{\w+:8192,/);
    expect(functionCode(full)).toMatch(/\{\w+:4096,/);
    expect(functionCode(full)).not.toMatch(/\{\w+:8192,/);
    // Neither the sizes (320,640,1280, not to be confused with the hint ladder 160,...,3840) nor the preset names.
    expect(functionCode(full)).not.toMatch(/[^0-9,]320,640,1280[^0-9,]|"thumb"/);
    expect(functionCode(full)).toMatch(/avif:(!1|false)/);
    expect(functionCode(base)).toMatch(/avif:(!0|true)/);
  });

  it('with signing on, reads its secrets from a KeyValueStore associated with it', () => {
    const [kvsId] = only(full, 'AWS::CloudFront::KeyValueStore');
    const [, fn] = viewerRequest(full);
    expect(fn.Properties.FunctionConfig.KeyValueStoreAssociations).toEqual([{ KeyValueStoreARN: { 'Fn::GetAtt': [kvsId, 'Arn'] } }]);
    // The code names the same store.
    expect(refs(fn.Properties.FunctionCode)).toEqual([kvsId]);
    expect(JSON.stringify(fn.Properties.FunctionCode)).toContain('signing-secrets');
    expect(full.stack.transformer.keyValueStore).toBeDefined();
  });

  it('with signing off and no sizes or presets, still reads its data from a KeyValueStore associated with it', () => {
    const [kvsId] = only(base, 'AWS::CloudFront::KeyValueStore');
    expect(viewerRequest(base)[1].Properties.FunctionConfig.KeyValueStoreAssociations).toEqual([
      { KeyValueStoreARN: { 'Fn::GetAtt': [kvsId, 'Arn'] } },
    ]);
    expect(refs(viewerRequest(base)[1].Properties.FunctionCode)).toEqual([kvsId]);
    expect(base.stack.transformer.keyValueStore).toBeDefined();
  });
});

describe("the deployment's sizes and presets in the KeyValueStore", () => {
  const edgeData = (s: Synthesized) => only(s, 'Custom::EdgeData');

  it('without signing, the store is named as with it, so that turning signing on keeps it', () => {
    const [kvsId, kvs] = only(presetsOnly, 'AWS::CloudFront::KeyValueStore');
    expect(kvsId).toBe(only(full, 'AWS::CloudFront::KeyValueStore')[0]);
    expect(only(base, 'AWS::CloudFront::KeyValueStore')[0]).toBe(kvsId);
    expect(kvs.Properties.Comment).toBe("edge-image-transformer: the edge function's data, sizes and presets (written on every deploy)");
    expect(viewerRequest(presetsOnly)[1].Properties.FunctionConfig.KeyValueStoreAssociations).toEqual([
      { KeyValueStoreARN: { 'Fn::GetAtt': [kvsId, 'Arn'] } },
    ]);
    // With signing, the store keeps the description it always had.
    expect(only(full, 'AWS::CloudFront::KeyValueStore')[1].Properties.Comment).toBe(
      'edge-image-transformer URL signing secrets (put them in after deploying)',
    );
  });

  it('a custom resource carries the entries to write and names the store', () => {
    const [kvsId] = only(presetsOnly, 'AWS::CloudFront::KeyValueStore');
    expect(edgeData(presetsOnly)[1].Properties).toMatchObject({
      KeyValueStoreArn: { 'Fn::GetAtt': [kvsId, 'Arn'] },
      Entries: { ...dataEntries({ sizes: [320, 640] }), presets: 'thumb', 'preset:thumb': '{"w":"320","fit":"cover"}' },
    });
    expect(edgeData(full)[1].Properties.Entries).toEqual({
      ...dataEntries({ sizes: [320, 640, 1280] }),
      presets: 'thumb, hero',
      'preset:thumb': '{"width":"320","height":"320","fit":"cover"}',
      'preset:hero': '{"w":"1280","format":"webp","q":"70"}',
    });
    // Signing alone, or nothing: the data only, so the presets of an earlier deploy are deleted.
    expect(edgeData(synth(() => ({ signing: true })))[1].Properties.Entries).toEqual(dataEntries({}));
    expect(edgeData(base)[1].Properties.Entries).toEqual(dataEntries({}));
  });

  it('the viewer-request function is published only after the entries are written', () => {
    for (const s of [base, presetsOnly, full]) {
      expect(viewerRequest(s)[1].DependsOn).toContain(edgeData(s)[0]);
    }
  });

  it("its Lambda's role may read and update that store and nothing else, besides writing its own logs", () => {
    for (const s of [presetsOnly, full]) {
      const [kvsId] = only(s, 'AWS::CloudFront::KeyValueStore');
      // CloudFormation calls CDK's Provider framework, which invokes the handler.
      const framework = s.json.Resources[refs(edgeData(s)[1].Properties.ServiceToken)[0]!] as Json;
      const [handlerId] = refs(framework.Properties.Environment.Variables.USER_ON_EVENT_FUNCTION_ARN);
      const handler = s.json.Resources[handlerId!] as Json;
      const [roleId] = refs(handler.Properties.Role);
      const [logGroupId] = refs(handler.Properties.LoggingConfig.LogGroup);
      expect(s.json.Resources[roleId!].Properties.ManagedPolicyArns).toBeUndefined();
      const statements = roleStatements(s, roleId!);
      expect(statements.filter((statement) => [statement.Action].flat().some((action: string) => !action.startsWith('logs:')))).toEqual([
        {
          Sid: 'WriteDeploymentEntries',
          Effect: 'Allow',
          Action: [
            'cloudfront-keyvaluestore:DescribeKeyValueStore',
            'cloudfront-keyvaluestore:ListKeys',
            'cloudfront-keyvaluestore:UpdateKeys',
          ],
          Resource: { 'Fn::GetAtt': [kvsId, 'Arn'] },
        },
      ]);
      // The log statements name its own log group only.
      for (const statement of statements)
        expect([...new Set(refs(statement.Resource))]).toEqual([expect.stringMatching(`^(${kvsId}|${logGroupId})$`)]);
      // The framework's role may only invoke and read the handler, besides writing its own logs.
      const [frameworkLogsId] = refs(framework.Properties.LoggingConfig.LogGroup);
      expect(frameworkLogsId).not.toBe(logGroupId);
      expect(
        roleStatements(s, refs(framework.Properties.Role)[0]!).map((statement) => [
          [statement.Action].flat().join(','),
          [...new Set(refs(statement.Resource))],
        ]),
      ).toEqual([
        ['logs:CreateLogStream,logs:PutLogEvents', [frameworkLogsId]],
        ['lambda:InvokeFunction', [handlerId]],
        ['lambda:GetFunction', [handlerId]],
      ]);
    }
  });
});

/** The statements of the policies attached to role `roleId`. */
function roleStatements(s: Synthesized, roleId: string): Json[] {
  return resources(s, 'AWS::IAM::Policy')
    .filter(([, policy]) => refs(policy.Properties.Roles).includes(roleId))
    .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement as Json[]);
}

describe('browser lifetime (viewer-response CloudFront Function)', () => {
  it("tells viewers browserMaxAge (an hour by default) instead of the variants' Cache-Control, which CloudFront keeps", async () => {
    const code = (s: Synthesized) => viewerResponse(s)[1].Properties.FunctionCode as string;
    /** What a browser is told for a 200 with `cacheControl`, the function in the template run as CloudFront runs it. */
    const browserGets = async (s: Synthesized, cacheControl: string) => {
      const fn = loadFunction<ViewerResponseEvent, ViewerResponse>(code(s));
      const request = viewerEvent('/a.jpg/width=640').request;
      return (await fn.handler(viewerResponseEvent(request, 200, { 'cache-control': cacheControl }))).headers['cache-control']?.value;
    };
    expect(viewerResponse(base)[1].Properties).toMatchObject({ AutoPublish: true, FunctionConfig: { Runtime: 'cloudfront-js-2.0' } });
    expect(await browserGets(base, 'public, max-age=31536000, immutable')).toBe('public, max-age=3600');
    expect(await browserGets(full, 'public, max-age=86400')).toBe('public, max-age=3600');
    expect(await browserGets(full, 'public, max-age=31536000, immutable')).toBe('public, max-age=31536000, immutable');
    const custom = synth(() => ({ browserMaxAge: Duration.days(1), cacheControl: 'public, max-age=604800' }));
    expect(await browserGets(custom, 'public, max-age=604800')).toBe('public, max-age=86400');
    expect(
      await browserGets(
        synth(() => ({ browserMaxAge: Duration.seconds(0) })),
        'public, max-age=31536000, immutable',
      ),
    ).toBe('public, no-cache');
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
