// Props are checked at synth time (lib/resolved-settings.ts, lib/settings.ts).

import { App, Duration, Stack } from 'aws-cdk-lib';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as codedeploy from 'aws-cdk-lib/aws-codedeploy';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { describe, expect, it } from 'vitest';
import type { ImageTransformerProps } from '../../lib/props';
import { ImageTransformerConfigError } from '../../lib/settings';
import { ImageTransformerStack } from '../../lib/stack';
import { CERTIFICATE_ARN, ENV } from './synth';

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
    rejects(
      () => ({ presets: { hero: { accept: 'avif' } } }),
      /preset "hero" has an unknown parameter "accept"; known parameters: (?!.*accept)/,
    );
    rejects(() => ({ presets: { thumb: { width: '20x' } } }), /preset "thumb" is invalid: .*width/);
    rejects(() => ({ presets: { thumb: { fit: 'squash' } } }), /preset "thumb" is invalid: .*fit/);
    rejects(
      () => ({ presets: { 'no spaces': { width: '200' } } }),
      /a preset name must be 1-64 letters, digits, "-" or "_" .*, not "no spaces"\./,
    );
    rejects(() => ({ presets: { loop: { preset: 'loop' } } }), /may not contain "preset"/);
    for (const param of ['sig', 'exp', 'prefix', 'allow'])
      rejects(() => ({ presets: { signed: { [param]: '1' } } }), new RegExp(`may not contain "${param}"`));
    rejects(() => ({ presets: { empty: {} } }), /preset "empty" must be an object of at least one parameter, not \{\}\./);
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
    rejects(() => ({ sizes: [] }), /sizes must be a list of at least one width .*, not \[\]\./);
    rejects(() => ({ sizes: [320, 12.5] }), /sizes\[1\] must be an integer from 1 to 8192, not 12\.5\./);
    rejects(() => ({ sizes: [320, 10_000] }), /sizes\[1\] must be an integer from 1 to 8192, not 10000\./);
    rejects(() => ({ maxDimension: 20_000 }), /maxDimension must be an integer from 1 to 16383, not 20000\./);
  });

  it('hdr is keep or drop', () => {
    rejects(() => ({ hdr: 'sdr' as 'drop' }), /hdr must be keep or drop, not "sdr"\./);
    expect(attempt(() => ({ hdr: 'drop' }))).not.toThrow();
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
      /certificate must be in us-east-1 .*, not "arn:aws:acm:eu-west-1:/,
    );
  });

  it('operations settings', () => {
    rejects(
      () => ({ originReservedConcurrency: 50, originProvisionedConcurrency: 60 }),
      /originProvisionedConcurrency \(60\) cannot exceed originReservedConcurrency \(50\)/,
    );
    rejects(() => ({ originProvisionedConcurrency: 0 }), /originProvisionedConcurrency must be an integer from 1/);
    rejects(() => ({ originConcurrencyCap: 0 }), /originConcurrencyCap must be an integer from 1/);
    rejects(
      () => ({ originConcurrencyCap: 20, originReservedConcurrency: 20 }),
      /originConcurrencyCap is only used without originReservedConcurrency/,
    );
    rejects(() => ({ alarmEmail: 'oncall' }), /alarmEmail must be an email address, not "oncall"\./);
    rejects(() => ({ alarms: false, alarmEmail: 'oncall@example.com' }), /alarmTopic and alarmEmail need alarms/);
    rejects(
      () => ({ canaryDeployments: false, deploymentConfig: codedeploy.LambdaDeploymentConfig.ALL_AT_ONCE }),
      /deploymentConfig is only used with canaryDeployments: true/,
    );
    rejects(() => ({ metricsNamespace: 'AWS/Lambda' }), /metricsNamespace must be a CloudWatch namespace .*, not "AWS\/Lambda"\./);
    rejects(() => ({ metricsNamespace: 'images|prod' }), /metricsNamespace/);
  });

  it('other settings', () => {
    rejects(() => ({ originShieldRegion: 'Frankfurt' }), /originShieldRegion must be an AWS region such as eu-west-1, not "Frankfurt"\./);
    rejects(() => ({ cors: { allowOrigins: [] } }), /cors\.allowOrigins must be at least one origin, or \["\*"\] .*, not \[\]\./);
    rejects(() => ({ variantExpiration: Duration.days(0) }), /variantExpiration \(days\)/);
  });

  it('web origins: a plain key prefix, an http(s) base URL in its normal form, whole seconds', () => {
    const site = (url: string, revalidateAfter?: Duration) => ({ url, ...(revalidateAfter ? { revalidateAfter } : {}) });
    rejects(
      () => ({ webOrigins: { '/shop/': site('https://shop.example.com/') } }),
      /a webOrigins prefix must be a key prefix ending with "\/" such as "archive\/" .*, not "\/shop\/"\./,
    );
    rejects(
      () => ({ webOrigins: { 'shop %/': site('https://shop.example.com/') } }),
      /a webOrigins prefix must be made of letters, digits, .*, not "shop %\/"\./,
    );
    rejects(() => ({ webOrigins: { shop: site('https://shop.example.com/') } }), /not "shop"\./);
    rejects(() => ({ webOrigins: { '../': site('https://shop.example.com/') } }), /not "\.\.\/"\./);
    rejects(
      () => ({ webOrigins: { 'shop/': site('ftp://shop.example.com/') } }),
      /webOrigins\["shop\/"\]\.url must be an http\(s\) URL, not "ftp:/,
    );
    rejects(() => ({ webOrigins: { 'shop/': site('https://shop.example.com/images') } }), /ending in "\/"/);
    rejects(() => ({ webOrigins: { 'shop/': site('https://shop.example.com/?token=1') } }), /without a query or fragment/);
    rejects(
      () => ({ webOrigins: { 'shop/': site('https://shop.example.com/', Duration.millis(500)) } }),
      /revalidateSeconds must be a whole number of seconds/,
    );
    expect(attempt(() => ({ webOrigins: { 'shop/': site('https://shop.example.com/images/', Duration.minutes(5)) } }))).not.toThrow();
    // A key is read from one place only.
    rejects(
      (stack) => ({
        sourceBuckets: { 'shop/': s3.Bucket.fromBucketName(stack, 'Shop', 'shop-images') },
        webOrigins: { 'shop/old/': site('https://shop.example.com/') },
      }),
      /sourceBuckets and webOrigins prefixes "shop\/" and "shop\/old\/" overlap/,
    );
  });

  it('accepts a valid configuration with presets in presets-only mode', () => {
    expect(attempt(() => ({ presets: { thumb: { width: '200', height: '200' } }, presetsOnly: true }))).not.toThrow();
  });
});
