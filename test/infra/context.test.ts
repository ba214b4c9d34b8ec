// bin/app.ts: context values (strings from `-c key=value`, JSON values from
// cdk.json) to ImageTransformer props, and the app itself synthesizing with
// cdk-nag on.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as codedeploy from 'aws-cdk-lib/aws-codedeploy';
import { describe, expect, it, vi } from 'vitest';
import { CONTEXT_KEYS, appSettingsFromContext, propsFromContext, type ContextKey } from '../../lib/context';
import { resolveSettings } from '../../lib/resolved-settings';
import { deploymentDataIn } from '../edge/fixtures';

function fromContext(context: Partial<Record<ContextKey, unknown>>) {
  const stack = new Stack(new App(), 'S');
  const get = (key: ContextKey) => context[key];
  return { stack, settings: appSettingsFromContext(get), props: propsFromContext(stack, get) };
}

describe('context -> props', () => {
  it('gives the construct its defaults when no context is set', () => {
    const { settings, props } = fromContext({});
    expect(settings).toEqual({ stackName: 'EdgeImageTransformer', nag: true });
    expect(Object.fromEntries(Object.entries(props).filter(([, value]) => value !== undefined))).toEqual({});
  });

  it('originConcurrencyCap: a whole number, or false / none for no cap', () => {
    expect(fromContext({ originConcurrencyCap: '200' }).props.originConcurrencyCap).toBe(200);
    expect(fromContext({ originConcurrencyCap: 'false' }).props.originConcurrencyCap).toBe(false);
    expect(fromContext({ originConcurrencyCap: 'none' }).props.originConcurrencyCap).toBe(false);
    expect(fromContext({ originConcurrencyCap: false }).props.originConcurrencyCap).toBe(false);
    expect(() => fromContext({ originConcurrencyCap: 'lots' })).toThrow(
      /context originConcurrencyCap must be a whole number, not "lots"\./,
    );
  });

  it('browserMaxAgeSeconds: whole seconds, 0 included', () => {
    expect(fromContext({ browserMaxAgeSeconds: '86400' }).props.browserMaxAge?.toSeconds()).toBe(86400);
    expect(fromContext({ browserMaxAgeSeconds: 0 }).props.browserMaxAge?.toSeconds()).toBe(0);
    expect(() => fromContext({ browserMaxAgeSeconds: '1h' })).toThrow(/context browserMaxAgeSeconds must be a whole number, not "1h"\./);
  });

  it('reads command-line strings', () => {
    const { stack, settings, props } = fromContext({
      stackName: 'Photos',
      nag: 'false',
      sourceBucket: 'my-photos',
      sourceBuckets: '{"archive/":"my-archive","press/kit/":" my-press-kit "}',
      sizes: '320, 640,1280',
      maxDimension: '4096',
      presets: '{"thumb":{"width":200,"height":"200","fit":"cover"}}',
      presetsOnly: 'TRUE',
      avif: 'false',
      hdr: 'drop',
      signing: 'true',
      eagerPresets: 'thumb',
      eagerSigningSecretName: 'image-signing',
      memorySize: '3008',
      timeoutSeconds: '45',
      variantExpirationDays: '30',
      sourceTiering: 'false',
      failureTtlSeconds: '60',
      domainNames: 'img.example.com,images.example.com',
      certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc',
      priceClass: '100',
      originShieldRegion: 'eu-west-1',
      accessLogging: 'false',
      corsOrigins: 'https://a.example,https://b.example',
      autoDeleteObjects: 'true',
      cacheControl: 'public, max-age=600',
      watermarks: '{"logo":{"file":"brand/logo.png","opacity":0.8}}',
      requireWatermark: '{"users/":"logo"}',
      webOrigins: '{"shop/":{"url":"https://shop.example.com/images/","revalidateSeconds":3600}}',
    });
    expect(settings).toEqual({ stackName: 'Photos', nag: false });
    expect(props.watermarks).toEqual({ logo: { file: 'brand/logo.png', opacity: 0.8 } });
    expect(props.requireWatermark).toEqual({ 'users/': 'logo' });
    // As the construct resolves them: the context's seconds, checked by the web source kind.
    expect(resolveSettings(stack, { webOrigins: props.webOrigins }).webOrigins).toEqual({
      'shop/': { url: 'https://shop.example.com/images/', revalidateSeconds: 3600 },
    });
    expect(stack.resolve(props.sourceBucket?.bucketName)).toBe('my-photos');
    expect(
      Object.fromEntries(Object.entries(props.sourceBuckets!).map(([prefix, bucket]) => [prefix, stack.resolve(bucket.bucketName)])),
    ).toEqual({
      'archive/': 'my-archive',
      'press/kit/': 'my-press-kit',
    });
    expect(props.sizes).toEqual([320, 640, 1280]);
    expect(props.maxDimension).toBe(4096);
    // Numbers in preset JSON are made strings, as the grammar takes them.
    expect(props.presets).toEqual({ thumb: { width: '200', height: '200', fit: 'cover' } });
    expect(props.presetsOnly).toBe(true);
    expect(props.avif).toBe(false);
    expect(props.hdr).toBe('drop');
    expect(props.signing).toBe(true);
    expect(props.eagerPresets).toEqual(['thumb']);
    expect(stack.resolve(props.eagerSigningSecret?.unsafeUnwrap())).toBe('{{resolve:secretsmanager:image-signing:SecretString:::}}');
    expect(props.memorySize).toBe(3008);
    expect(props.timeout?.toSeconds()).toBe(45);
    expect(props.variantExpiration?.toDays()).toBe(30);
    expect(props.sourceTiering).toBe(false);
    expect(props.failureTtl?.toSeconds()).toBe(60);
    expect(props.domainNames).toEqual(['img.example.com', 'images.example.com']);
    expect(props.certificate?.certificateArn).toBe('arn:aws:acm:us-east-1:123456789012:certificate/abc');
    expect(props.priceClass).toBe(cloudfront.PriceClass.PRICE_CLASS_100);
    expect(props.originShieldRegion).toBe('eu-west-1');
    expect(props.accessLogging).toBe(false);
    expect(props.cors).toEqual({ allowOrigins: ['https://a.example', 'https://b.example'] });
    expect(props.autoDeleteObjects).toBe(true);
    expect(props.cacheControl).toBe('public, max-age=600');
  });

  it('reads JSON values from cdk.json', () => {
    const { props } = fromContext({
      sizes: [640, 320],
      signing: true,
      presets: { hero: { width: 1280, format: 'webp' } },
      eagerPresets: ['hero'],
      memorySize: 1769,
      priceClass: 'PriceClass_200',
      corsOrigins: 'none',
    });
    expect(props.sizes).toEqual([640, 320]);
    expect(props.signing).toBe(true);
    expect(props.presets).toEqual({ hero: { width: '1280', format: 'webp' } });
    expect(props.eagerPresets).toEqual(['hero']);
    expect(props.memorySize).toBe(1769);
    expect(props.priceClass).toBe(cloudfront.PriceClass.PRICE_CLASS_200);
    expect(props.cors).toBe(false);
  });

  it('reads the operations keys: metrics, dashboard, alarms and where they go, canary deployments, concurrency', () => {
    const { props } = fromContext({
      metrics: 'false',
      metricsNamespace: 'Photos/Prod',
      dashboard: 'false',
      alarms: 'true',
      alarmEmail: 'oncall@example.com',
      cloudFrontAdditionalMetrics: 'false',
      canaryDeployments: 'true',
      deploymentConfig: 'linear_10percent_every_1minute',
      originProvisionedConcurrency: '5',
    });
    expect(props).toMatchObject({
      metrics: false,
      metricsNamespace: 'Photos/Prod',
      dashboard: false,
      alarms: true,
      alarmEmail: 'oncall@example.com',
      cloudFrontAdditionalMetrics: false,
      canaryDeployments: true,
      deploymentConfig: codedeploy.LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_1MINUTE,
      originProvisionedConcurrency: 5,
    });
    expect(fromContext({ deploymentConfig: 'ALL_AT_ONCE' }).props.deploymentConfig).toBe(codedeploy.LambdaDeploymentConfig.ALL_AT_ONCE);
    expect(() => fromContext({ deploymentConfig: 'slowly' })).toThrow(
      /context deploymentConfig must be one of ALL_AT_ONCE, CANARY_10PERCENT_5MINUTES, .*, not "slowly"\./,
    );
    expect(() => fromContext({ canaryDeployments: 'maybe' })).toThrow(/context canaryDeployments must be true or false, not "maybe"\./);
  });

  it('refuses a value it cannot read, naming the key', () => {
    expect(() => fromContext({ sizes: '320,big' })).toThrow(/context sizes must be comma-separated whole numbers, not "320,big"\./);
    expect(() => fromContext({ signing: 'yes' })).toThrow(/context signing must be true or false, not "yes"\./);
    expect(() => fromContext({ memorySize: '2GB' })).toThrow(/context memorySize must be a whole number, not "2GB"\./);
    expect(() => fromContext({ presets: '{thumb:' })).toThrow(/context presets must be JSON \(.+\), not "\{thumb:"\./);
    expect(() => fromContext({ presets: '["thumb"]' })).toThrow(
      /context presets must be a JSON object of presets, .*, not "\[\\"thumb\\"\]"\./,
    );
    expect(() => fromContext({ presets: '{"thumb":"200"}' })).toThrow(
      /context presets\.thumb must be an object of parameters, .*, not "200"\./,
    );
    expect(() => fromContext({ watermarks: '["logo.png"]' })).toThrow(
      /context watermarks must be a JSON object of watermarks, .*, not "\[\\"logo\.png\\"\]"\./,
    );
    expect(() => fromContext({ priceClass: 'cheap' })).toThrow(/context priceClass must be 100, 200 or All, not "cheap"\./);
    expect(() => fromContext({ sourceBuckets: 'archive/=old' })).toThrow(
      /context sourceBuckets must be JSON \(.+\), not "archive\/=old"\./,
    );
    expect(() => fromContext({ sourceBuckets: '{"archive/":7}' })).toThrow(
      /context sourceBuckets\.archive\/ must be a bucket name, not 7\./,
    );
  });

  it('documents every key it reads', () => {
    for (const [key, meaning] of Object.entries(CONTEXT_KEYS)) expect(meaning.length, key).toBeGreaterThan(10);
    // The keys the app asks for, recorded as it reads an empty context.
    const read = new Set<string>();
    const get = (key: ContextKey) => void read.add(key);
    appSettingsFromContext(get);
    propsFromContext(new Stack(new App(), 'Keys'), get);
    expect(read).toEqual(new Set(Object.keys(CONTEXT_KEYS)));
  });
});

describe('bin/app.ts', () => {
  it('synthesizes with cdk-nag on (no finding), from command-line style context', async () => {
    const outdir = mkdtempSync(join(tmpdir(), 'eit-app-'));
    try {
      // What `cdk synth -c sizes=... -c signing=true` hands the app, in-process (a
      // child process would load aws-cdk-lib all over again).
      const context = {
        'aws:cdk:bundling-stacks': [],
        sizes: '320,640,1280',
        presets: '{"thumb":{"width":"320","height":"320"}}',
        signing: 'true',
        accessLogging: 'false',
        sourceBuckets: '{"archive/":"my-archive"}',
      };
      vi.stubEnv('CDK_CONTEXT_JSON', JSON.stringify(context));
      vi.stubEnv('CDK_OUTDIR', outdir);
      // CDK's own built-in template validation doubles the synth time; cfn-lint covers
      // the template in template.test.ts (`cdk synth` still runs it).
      vi.stubEnv('CDK_VALIDATION', 'false');
      // An unacknowledged cdk-nag finding would make this synth throw (see template.test.ts).
      await import('../../bin/app');
      const template = JSON.parse(readFileSync(join(outdir, 'EdgeImageTransformer.template.json'), 'utf8'));
      expect(Object.keys(template.Outputs).sort()).toEqual(
        [
          'CacheBucketName',
          'DashboardName',
          'DistributionDomainName',
          'DistributionId',
          'InvalidationFailureQueueUrl',
          'ManageApiUrl',
          'OriginConcurrencyCap',
          'OriginDeploymentApplication',
          'OriginDeploymentGroup',
          'OriginFunctionName',
          'SigningKeyValueStoreArn',
          'SourceBucketName',
          'UploadValidationFailureQueueUrl',
        ].sort(),
      );
      // The sizes reach the edge through its store (in its data), which the EdgeData custom resource writes.
      const edgeData = Object.values(template.Resources as Record<string, any>).find((r) => r.Type === 'Custom::EdgeData');
      expect(edgeData.Properties.Entries).toMatchObject({ 'preset:thumb': '{"width":"320","height":"320"}' });
      expect(deploymentDataIn(edgeData.Properties.Entries).sizes).toEqual([320, 640, 1280]);
      expect(Object.values(template.Resources as Record<string, any>).some((r) => r.Type === 'AWS::CloudFront::KeyValueStore')).toBe(true);
      const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8'));
      expect(report.pluginReports.flatMap((r: { violations: unknown[] }) => r.violations)).toEqual([]);
    } finally {
      vi.unstubAllEnvs();
      rmSync(outdir, { recursive: true, force: true });
    }
  }, 60_000);
});
