// The buckets: the source (created here, its larger objects moved to
// Intelligent-Tiering, with the management API's upload CORS, or imported and left as it is), the cache of variants
// (not tiered: their lives are too short to pay for it, docs/cost.md), and the
// access log bucket. Built in the ImageTransformer's own scope, so their
// logical IDs are those of a construct with no parts.

import { Duration } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { AVIF_CLAIMS_PREFIX, FAILURES_PREFIX } from '../../lambda/origin/cache-keys';
import type { ResolvedSettings } from '../resolved-settings';
import { ACCESS_LOGGING_OFF, acknowledge } from './nag';

export type BucketsProps = Pick<
  ResolvedSettings,
  | 'sourceBucket'
  | 'sourceTiering'
  | 'variantExpirationDays'
  | 'accessLogging'
  | 'accessLogDays'
  | 'removalPolicy'
  | 'autoDeleteObjects'
  | 'webOrigins'
  | 'manageApi'
  | 'manageCorsOrigins'
>;

/**
 * The smallest object S3 Intelligent-Tiering moves between its tiers is 128 KB: a smaller one
 * would stay in its Frequent Access tier, at S3 Standard's price, and pay the transition for nothing.
 */
export const TIERING_MIN_OBJECT_BYTES = 128 * 1024;

/** Moves the source bucket's objects over 128 KB to Intelligent-Tiering as soon as they are written. */
const TIER_SOURCES: s3.LifecycleRule = {
  id: 'tier-sources',
  objectSizeGreaterThan: TIERING_MIN_OBJECT_BYTES,
  transitions: [{ storageClass: s3.StorageClass.INTELLIGENT_TIERING, transitionAfter: Duration.days(0) }],
};

/**
 * A browser's upload straight to the source bucket with a presigned POST of the
 * management API: a form POST, whose answer (204, its ETag) the page may read.
 * The emulator sets the same rule for its own origins (local/emulator/manage-route.ts).
 */
export const UPLOAD_CORS_RULE = { id: 'manage-uploads', method: 'POST', exposedHeaders: ['ETag'], maxAgeSeconds: 3600 } as const;

const uploadCors = (origins: string[]): s3.CorsRule => ({
  id: UPLOAD_CORS_RULE.id,
  allowedMethods: [s3.HttpMethods[UPLOAD_CORS_RULE.method]],
  allowedOrigins: origins,
  exposedHeaders: [...UPLOAD_CORS_RULE.exposedHeaders],
  maxAge: UPLOAD_CORS_RULE.maxAgeSeconds,
});

export interface Buckets {
  /** The originals: props.sourceBucket, or a new private bucket (tiered with sourceTiering). */
  readonly sourceBucket: s3.IBucket;
  /** The variants, keyed by canonical URI, expiring after variantExpirationDays. */
  readonly cacheBucket: s3.Bucket;
  /** CloudFront standard logs and S3 server access logs; only with accessLogging. */
  readonly logBucket?: s3.Bucket;
}

/** The buckets' names by prefix, as the Lambdas' environment has them (tokens until deploy). */
export function bucketNames(buckets: { [prefix: string]: s3.IBucket }): { [prefix: string]: string } {
  return Object.fromEntries(Object.entries(buckets).map(([prefix, bucket]) => [prefix, bucket.bucketName]));
}

/** Creates the buckets in `scope`: `LogBucket`, `SourceBucket` (unless imported), `CacheBucket`. */
export function buildBuckets(scope: Construct, props: BucketsProps): Buckets {
  const privateBucket = {
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    encryption: s3.BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    minimumTLSVersion: 1.2,
    removalPolicy: props.removalPolicy,
    autoDeleteObjects: props.autoDeleteObjects,
  };

  let logBucket: s3.Bucket | undefined;
  if (props.accessLogging) {
    logBucket = new s3.Bucket(scope, 'LogBucket', {
      ...privateBucket,
      // CloudFront standard logs are delivered with an ACL grant, which needs ACLs
      // enabled; S3 server access logs use the bucket policy either way.
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
      lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(props.accessLogDays) }],
    });
    acknowledge(
      logBucket,
      'AwsSolutions-S1',
      'This is the access-log bucket itself; logging it into itself would log its own log writes in a loop, and S3 advises against it.',
    );
  }
  const serverAccessLogs = (prefix: string) => (logBucket ? { serverAccessLogsBucket: logBucket, serverAccessLogsPrefix: prefix } : {});

  const sourceBucket =
    props.sourceBucket ??
    new s3.Bucket(scope, 'SourceBucket', {
      ...privateBucket,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      ...(props.sourceTiering ? { lifecycleRules: [TIER_SOURCES] } : {}),
      ...(props.manageApi && props.manageCorsOrigins.length > 0 ? { cors: [uploadCors(props.manageCorsOrigins)] } : {}),
      ...serverAccessLogs('s3/source/'),
    });

  const cacheBucket = new s3.Bucket(scope, 'CacheBucket', {
    ...privateBucket,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    lifecycleRules: [
      { id: 'expire-variants', expiration: Duration.days(props.variantExpirationDays) },
      // Remembered failures are read only while FAILURE_TTL_SECONDS lasts; S3 removes them a day on.
      { id: 'expire-remembered-failures', prefix: FAILURES_PREFIX, expiration: Duration.days(1) },
      // A claim on making an AVIF matters for one time budget; S3 removes it a day on.
      { id: 'expire-avif-claims', prefix: AVIF_CLAIMS_PREFIX, expiration: Duration.days(1) },
      { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      // Web variants were once kept under their prefix itself, where a URL that spells a slash
      // as %2F reaches them through the cache-bucket origin, unrevalidated. They are kept under
      // `/` now, and nothing else is written under a web prefix: S3 removes those a day on.
      ...Object.keys(props.webOrigins).map((prefix) => ({
        id: `expire-web-variants-kept-under-${prefix}`,
        prefix,
        expiration: Duration.days(1),
      })),
    ],
    ...serverAccessLogs('s3/cache/'),
  });

  if (!props.accessLogging) {
    acknowledge(cacheBucket, 'AwsSolutions-S1', ACCESS_LOGGING_OFF);
    if (!props.sourceBucket) acknowledge(sourceBucket, 'AwsSolutions-S1', ACCESS_LOGGING_OFF);
  }
  return { sourceBucket, cacheBucket, ...(logBucket ? { logBucket } : {}) };
}
