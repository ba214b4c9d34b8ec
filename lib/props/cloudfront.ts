// ImageTransformerProps, CloudFront: the distribution viewers reach.

import type { Duration } from 'aws-cdk-lib';
import type * as acm from 'aws-cdk-lib/aws-certificatemanager';
import type * as cloudfront from 'aws-cdk-lib/aws-cloudfront';

/** Cross-origin (CORS) response headers for the images. */
export interface ImageTransformerCors {
  /** Origins allowed to read the images from script (`Access-Control-Allow-Origin`), e.g. `['https://example.com']`; `['*']` for any. */
  readonly allowOrigins: string[];
  /** How long a browser may cache a preflight answer. @default - no Access-Control-Max-Age header */
  readonly maxAge?: Duration;
}

/** The props of the CloudFront distribution: domains, edge locations, logs, CORS, caching of errors, WAF. */
export interface CloudFrontProps {
  /**
   * Custom domain names (CNAMEs) of the distribution. Needs `certificate`.
   * @default - only the distribution's *.cloudfront.net domain
   */
  readonly domainNames?: string[];

  /**
   * ACM certificate for `domainNames`; must be in us-east-1.
   * @default - none (the default CloudFront certificate)
   */
  readonly certificate?: acm.ICertificate;

  /**
   * Which edge locations serve the images (cost against latency).
   * @default cloudfront.PriceClass.PRICE_CLASS_ALL
   */
  readonly priceClass?: cloudfront.PriceClass;

  /**
   * Region of CloudFront Origin Shield, an extra caching layer in front of
   * both origins (best: the region of the buckets). Reduces origin load and
   * duplicate transforms, at a per-request cost.
   * @default - no Origin Shield
   */
  readonly originShieldRegion?: string;

  /**
   * Access logs: CloudFront standard logs and S3 server access logs of the
   * buckets created here, into a log bucket this construct creates.
   * @default true
   */
  readonly accessLogging?: boolean;

  /**
   * Days the access logs are kept. Only with accessLogging.
   * @default Duration.days(90)
   */
  readonly accessLogExpiration?: Duration;

  /**
   * CORS response headers; `false` for none.
   * @default { allowOrigins: ['*'] } - GET and HEAD from any origin
   */
  readonly cors?: ImageTransformerCors | false;

  /**
   * How long CloudFront caches a 4xx answer (bad parameter, missing source...).
   * 5xx answers are never cached.
   * @default Duration.seconds(10)
   */
  readonly clientErrorCachingTtl?: Duration;

  /**
   * ARN of an AWS WAF web ACL (scope CLOUDFRONT, in us-east-1), e.g. with a
   * rate-based rule against floods of distinct variants.
   * @default - no web ACL
   */
  readonly webAclId?: string;

  /**
   * Countries allowed or denied.
   * @default - served worldwide
   */
  readonly geoRestriction?: cloudfront.GeoRestriction;

  /**
   * Comment on the distribution (shown in the console).
   * @default 'edge-image-transformer'
   */
  readonly comment?: string;
}
