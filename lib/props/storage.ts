// ImageTransformerProps, storage: where the originals are, how they are stored, and how long variants are kept.

import type { Duration } from 'aws-cdk-lib';
import type * as s3 from 'aws-cdk-lib/aws-s3';

/** The props of the buckets: originals and variants. */
export interface StorageProps {
  /**
   * The bucket holding the original images. Its keys are the URL paths
   * (`https://<domain>/<key>?w=640`). The construct grants the origin Lambda
   * read access and subscribes the invalidation Lambda to its object
   * created/removed events (for an imported bucket, through CDK's
   * notifications custom resource, which keeps the bucket's other
   * notifications).
   * @default - a new private bucket (Block Public Access, TLS only, S3-managed encryption)
   */
  readonly sourceBucket?: s3.IBucket;

  /**
   * More buckets of originals, each serving the keys under a prefix:
   * `{ 'archive/': archiveBucket }` serves `https://<domain>/archive/2020/a.jpg?w=640`
   * from object `2020/a.jpg` of archiveBucket (the prefix is not part of its
   * keys, so an existing bucket works as it is). Every other key reads
   * sourceBucket, as without this. Prefixes end with "/" and none starts
   * another; a bucket serves one prefix. The origin Lambda may only
   * s3:GetObject from them. Changes reach the invalidation Lambda through
   * EventBridge, which the construct turns on for each of them (for an
   * imported bucket through CDK's notifications custom resource, which keeps
   * the bucket's other notifications); the buckets must be in the stack's
   * account and region. See "Several buckets" in docs/configuration.md.
   * @default - none: every key reads sourceBucket
   */
  readonly sourceBuckets?: { [prefix: string]: s3.IBucket };

  /**
   * How long a generated variant stays in the cache bucket before S3 deletes
   * it (it is made again on the next request). Whole days.
   * @default Duration.days(90)
   */
  readonly variantExpiration?: Duration;

  /**
   * Move the source bucket's objects larger than 128 KB (131072 bytes) to S3
   * Intelligent-Tiering, by a lifecycle rule, on the day they are written.
   * There they cost less once unread for 30 days (Infrequent Access) and 90
   * days (Archive Instant Access), and are read as fast as ever, with no
   * retrieval fee; the optional archive tiers, which would need a restore
   * before a read, are not turned on. Smaller objects stay in S3 Standard:
   * Intelligent-Tiering does not move them, and they would pay the
   * transition for nothing. Only a bucket this construct creates: an
   * existing `sourceBucket` (and the buckets of `sourceBuckets`) is left as
   * it is, as its lifecycle rules are its owner's. See "Storage tiering" in
   * docs/cost.md for what it saves.
   * @default true
   */
  readonly sourceTiering?: boolean;

  /**
   * Delete the buckets this construct creates (cache, log and, when created
   * here, source), with their objects, and the Lambda log groups, when the
   * stack is deleted. An imported source bucket is never touched.
   * @default false - buckets and log groups are retained
   */
  readonly autoDeleteObjects?: boolean;
}
