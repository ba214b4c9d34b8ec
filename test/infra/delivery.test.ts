// The delivery part (lib/parts/delivery.ts: origin group, policies, distribution) as synthesized.

import { describe, expect, it } from 'vitest';
import {
  CERTIFICATE_ARN,
  distributionConfig,
  type Json,
  logicalId,
  only,
  refs,
  resources,
  synth,
  type Synthesized,
  synthesize,
} from './synth';

const { base, full, imported } = synthesize('base', 'full', 'imported');

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

describe('web origins', () => {
  it('send each web prefix to the Lambda alone, with the same policies and edge functions as every other path', () => {
    const config = distributionConfig(full);
    expect(config.CacheBehaviors).toHaveLength(1);
    const behavior = config.CacheBehaviors[0] as Json;
    expect(behavior.PathPattern).toBe('/shop/*');
    const origin = config.Origins.find((o: Json) => o.Id === behavior.TargetOriginId);
    expect(refs(origin.DomainName)).toEqual([logicalId(full, full.stack.transformer.originFunctionUrl)]);
    // The same Function URL origin the group falls back to: no third origin, no second OAC.
    expect(config.Origins).toHaveLength(2);
    const { PathPattern, TargetOriginId, ...rest } = behavior;
    const { TargetOriginId: _group, ...defaults } = config.DefaultCacheBehavior;
    expect(rest).toEqual(defaults);
    expect(distributionConfig(base).CacheBehaviors).toBeUndefined();
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

  it('adds Vary: Accept to every response, since variants from the cache bucket carry none, but not over the hints the viewer-response function adds', () => {
    const config = only(base, 'AWS::CloudFront::ResponseHeadersPolicy')[1].Properties.ResponseHeadersPolicyConfig;
    expect(config.CustomHeadersConfig).toEqual({ Items: [{ Header: 'Vary', Value: 'Accept', Override: false }] });
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
