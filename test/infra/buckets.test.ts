// The buckets part (lib/parts/buckets.ts) as synthesized.

import { describe, expect, it } from 'vitest';
import { actionsOf, type Json, logicalId, only, originFunction, refs, resources, roleActions, type Synthesized, synthesize } from './synth';

const { base, full, imported } = synthesize('base', 'full', 'imported');

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
    expect(rules(base)).toContainEqual({ Id: 'expire-avif-claims', Prefix: '.avif-claims/', ExpirationInDays: 1, Status: 'Enabled' });
    // A web origin's variants once kept under its prefix (reachable there by a URL spelling a slash as %2F)
    // are gone a day on; they are kept under `/<prefix>` now, which this rule leaves alone.
    const webRule = { Id: 'expire-web-variants-kept-under-shop/', Prefix: 'shop/', ExpirationInDays: 1, Status: 'Enabled' };
    expect(rules(full)).toContainEqual(webRule);
    expect(rules(base)).not.toContainEqual(expect.objectContaining({ Prefix: 'shop/' }));
    // Never an original: the source bucket's one rule tiers its objects (below), none expires them.
  });

  it("moves the created source bucket's objects over 128 KB to Intelligent-Tiering, unless turned off", () => {
    const sourceBucket = (s: Synthesized) => s.json.Resources[logicalId(s, s.stack.transformer.sourceBucket)].Properties;
    expect(sourceBucket(base).LifecycleConfiguration).toEqual({
      Rules: [
        {
          Id: 'tier-sources',
          ObjectSizeGreaterThan: 131072,
          Transitions: [{ StorageClass: 'INTELLIGENT_TIERING', TransitionInDays: 0 }],
          Status: 'Enabled',
        },
      ],
    });
    // sourceTiering: false (full): no rule at all.
    expect(sourceBucket(full).LifecycleConfiguration).toBeUndefined();
    // The cache bucket's variants are not tiered (docs/cost.md, "Storage tiering").
    for (const s of [base, full]) {
      const cacheRules = s.json.Resources[logicalId(s, s.stack.transformer.cacheBucket)].Properties.LifecycleConfiguration.Rules as Json[];
      expect(cacheRules.filter((rule) => rule.Transitions)).toEqual([]);
    }
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
    // An existing bucket's lifecycle rules are its owner's: sourceTiering adds none to it.
    expect(JSON.stringify(imported.json)).not.toContain('INTELLIGENT_TIERING');
  });
});
