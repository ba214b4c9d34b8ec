// Delivery: the distribution in front of an origin group (the cache bucket,
// then the origin Lambda's Function URL), its cache, origin request and
// response headers policies, and the edge functions on every request.
// Built in the ImageTransformer's own scope (logical IDs unchanged).

import { Duration } from 'aws-cdk-lib';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import type { DeploymentPlan, PlanBehavior } from '../plan';
import type { ResolvedSettings } from '../resolved-settings';
import type { EdgeFunctions } from './edge-functions';
import { ACCESS_LOGGING_OFF, acknowledge } from './nag';

export interface DeliveryProps extends Pick<
  ResolvedSettings,
  | 'originReadTimeoutSeconds'
  | 'originShieldRegion'
  | 'cors'
  | 'clientErrorTtl'
  | 'domainNames'
  | 'certificate'
  | 'priceClass'
  | 'webAclId'
  | 'geoRestriction'
  | 'comment'
  | 'distributionProps'
> {
  /** The primary origin: variants already made. */
  readonly cacheBucket: s3.IBucket;
  /** The fallback origin: the live alias's Function URL, which makes a missing variant. */
  readonly originFunctionUrl: lambda.FunctionUrl;
  /** The alias the URL invokes: CloudFront's invoke permissions must name it. */
  readonly originAlias: lambda.IFunction;
  readonly edgeFunctions: EdgeFunctions;
  /** Where CloudFront writes its standard logs; none without. */
  readonly logBucket?: s3.IBucket;
  /** The cache behaviors (the default's origins are the origin group) and the Vary the headers policy adds. */
  readonly plan: Pick<DeploymentPlan, 'behaviors' | 'vary'>;
}

/** CloudFront custom error responses may name only these statuses. */
const CLIENT_ERROR_STATUSES = [400, 403, 404, 405, 414, 416];
const SERVER_ERROR_STATUSES = [500, 501, 502, 503, 504];

/** Creates in `scope`: `CachePolicy`, `OriginRequestPolicy`, `ResponseHeaders`, `Distribution`. */
export function buildDelivery(scope: Construct, props: DeliveryProps): cloudfront.Distribution {
  const deliveryOrigins = buildOrigins(props);
  const behavior = {
    viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
    allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
    cachedMethods: cloudfront.CachedMethods.CACHE_GET_HEAD,
    cachePolicy: buildCachePolicy(scope),
    originRequestPolicy: buildOriginRequestPolicy(scope),
    responseHeadersPolicy: buildResponseHeadersPolicy(scope, props),
    // Images are already compressed; format=json answers are a few hundred bytes.
    compress: false,
  };
  const distribution = buildDistribution(scope, props, deliveryOrigins, behavior);
  moveCloudFrontPermissionsToAlias(scope, props);
  acknowledgeDistributionFindings(distribution, props);
  return distribution;
}

/** CloudFront's two ways to the variants: the origin group (cache bucket, then the Lambda) and the Lambda alone. */
interface DeliveryOrigins {
  readonly cacheBucketThenFunction: cloudfront.IOrigin;
  readonly functionUrl: cloudfront.IOrigin;
}

function buildOrigins(props: DeliveryProps): DeliveryOrigins {
  const shield = props.originShieldRegion ? { originShieldRegion: props.originShieldRegion } : {};
  const functionUrl = origins.FunctionUrlOrigin.withOriginAccessControl(props.originFunctionUrl, {
    readTimeout: Duration.seconds(props.originReadTimeoutSeconds),
    ...shield,
  });
  const cacheBucketThenFunction = new origins.OriginGroup({
    primaryOrigin: origins.S3BucketOrigin.withOriginAccessControl(props.cacheBucket, {
      originAccessLevels: [cloudfront.AccessLevel.READ],
      ...shield,
    }),
    fallbackOrigin: functionUrl,
    // Failover is judged on the primary's answer only. S3 behind OAC says 403 (or 404
    // with list access) for a variant not made yet: that is the one reason to go to the
    // Lambda. An S3 5xx is not: the Lambda is the last origin, it needs S3 too, and
    // sending a storage hiccup to it would multiply the load and the cost.
    fallbackStatusCodes: [403, 404],
  });
  return { cacheBucketThenFunction, functionUrl };
}

/**
 * The cache key is the canonical URI alone: the edge function has put everything
 * that matters (what Accept allows, as accept=avif|webp, included) into the path.
 */
function buildCachePolicy(scope: Construct): cloudfront.CachePolicy {
  return new cloudfront.CachePolicy(scope, 'CachePolicy', {
    comment: 'edge-image-transformer: canonical URI only',
    queryStringBehavior: cloudfront.CacheQueryStringBehavior.none(),
    headerBehavior: cloudfront.CacheHeaderBehavior.none(),
    cookieBehavior: cloudfront.CacheCookieBehavior.none(),
    enableAcceptEncodingGzip: false,
    enableAcceptEncodingBrotli: false,
    minTtl: Duration.seconds(0),
    defaultTtl: Duration.days(1),
    maxTtl: Duration.days(365),
  });
}

/**
 * One origin request policy serves both origins of the group. The managed
 * ALL_VIEWER_EXCEPT_HOST_HEADER would also send every viewer header to S3, where
 * headers such as x-amz-server-side-encryption-customer-* turn a cached variant
 * into an error that CloudFront then caches for everyone under the same key.
 * Neither origin needs a viewer header (what Accept allows is in the URI), and
 * the Function URL needs the Host header NOT forwarded (OAC signs for its own host),
 * which sending no headers guarantees. Query strings are forwarded: the edge keeps
 * only the contract's parameters, and the origin uses them to redirect a variant
 * too large to return inline.
 */
function buildOriginRequestPolicy(scope: Construct): cloudfront.OriginRequestPolicy {
  return new cloudfront.OriginRequestPolicy(scope, 'OriginRequestPolicy', {
    comment: 'edge-image-transformer: no viewer headers or cookies; the edge-filtered query',
    headerBehavior: cloudfront.OriginRequestHeaderBehavior.none(),
    cookieBehavior: cloudfront.OriginRequestCookieBehavior.none(),
    queryStringBehavior: cloudfront.OriginRequestQueryStringBehavior.all(),
  });
}

function buildResponseHeadersPolicy(scope: Construct, props: DeliveryProps): cloudfront.ResponseHeadersPolicy {
  const cors = props.cors;
  return new cloudfront.ResponseHeadersPolicy(scope, 'ResponseHeaders', {
    comment: 'edge-image-transformer: CORS, nosniff, Vary: Accept',
    ...(cors
      ? {
          corsBehavior: {
            accessControlAllowOrigins: cors.allowOrigins,
            accessControlAllowMethods: ['GET', 'HEAD'],
            accessControlAllowHeaders: ['*'],
            accessControlAllowCredentials: false,
            ...(cors.maxAge ? { accessControlMaxAge: cors.maxAge } : {}),
            originOverride: true,
          },
        }
      : {}),
    securityHeadersBehavior: { contentTypeOptions: { override: true } },
    // S3 cannot store a Vary header, yet one URL carries another format for another browser.
    // Not over a Vary already there: the viewer-response function's, which adds the client
    // hints for `width=auto` (it keeps Accept, whichever of the two CloudFront applies first).
    customHeadersBehavior: { customHeaders: [{ header: 'Vary', value: props.plan.vary, override: false }] },
    // S3 details that are nobody's business.
    removeHeaders: ['x-amz-meta-source-etag', 'x-amz-server-side-encryption'],
  });
}

/** A behavior's functions: the viewer-request function of its grammar, and the viewer-response one. */
function functionsOf(props: DeliveryProps, planned: PlanBehavior): Pick<cloudfront.BehaviorOptions, 'functionAssociations'> {
  return {
    functionAssociations: [
      { function: props.edgeFunctions.viewerRequests[planned.grammar]!, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST },
      { function: props.edgeFunctions.viewerResponse, eventType: cloudfront.FunctionEventType.VIEWER_RESPONSE },
    ],
  };
}

function buildDistribution(
  scope: Construct,
  props: DeliveryProps,
  deliveryOrigins: DeliveryOrigins,
  behavior: Omit<cloudfront.BehaviorOptions, 'origin'>,
): cloudfront.Distribution {
  const customDomain = props.domainNames.length > 0;
  return new cloudfront.Distribution(scope, 'Distribution', {
    comment: props.comment,
    defaultBehavior: { origin: deliveryOrigins.cacheBucketThenFunction, ...behavior, ...functionsOf(props, props.plan.behaviors.at(-1)!) },
    // A source whose variants change in place (a web site's) cannot be answered by the cache
    // bucket: the Lambda serves what it stored while it is current and asks the source after that.
    additionalBehaviors: Object.fromEntries(
      props.plan.behaviors
        .filter((planned) => planned.pathPattern !== '*')
        .map((planned) => [
          planned.pathPattern,
          {
            origin: planned.origins.includes('cache-bucket') ? deliveryOrigins.cacheBucketThenFunction : deliveryOrigins.functionUrl,
            ...behavior,
            ...functionsOf(props, planned),
          },
        ]),
    ),
    httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
    enableIpv6: true,
    priceClass: props.priceClass,
    ...(customDomain
      ? {
          domainNames: props.domainNames,
          certificate: props.certificate,
          minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
        }
      : {}),
    errorResponses: [
      ...CLIENT_ERROR_STATUSES.map((httpStatus) => ({ httpStatus, ttl: props.clientErrorTtl })),
      ...SERVER_ERROR_STATUSES.map((httpStatus) => ({ httpStatus, ttl: Duration.seconds(0) })),
    ],
    ...(props.logBucket ? { enableLogging: true, logBucket: props.logBucket, logFilePrefix: 'cloudfront/' } : {}),
    ...(props.webAclId ? { webAclId: props.webAclId } : {}),
    ...(props.geoRestriction ? { geoRestriction: props.geoRestriction } : {}),
    ...props.distributionProps,
  });
}

/**
 * FunctionUrlOrigin.withOriginAccessControl grants CloudFront lambda:InvokeFunctionUrl and
 * lambda:InvokeFunction (InvokedViaFunctionUrl) on the URL's FunctionArn attribute. A URL
 * on an alias is invoked as the alias, so the grants must name the alias: say so plainly.
 */
function moveCloudFrontPermissionsToAlias(scope: Construct, props: DeliveryProps): void {
  for (const child of scope.node.findAll()) {
    if (
      child instanceof lambda.CfnPermission &&
      child.principal === 'cloudfront.amazonaws.com' &&
      child.functionName === props.originFunctionUrl.functionArn
    ) {
      child.functionName = props.originAlias.functionArn;
    }
  }
}

/** The distribution's deliberate cdk-nag findings, each with its reason. */
function acknowledgeDistributionFindings(distribution: cloudfront.Distribution, props: DeliveryProps): void {
  if (!props.logBucket) {
    acknowledge(distribution, 'AwsSolutions-CFR3', ACCESS_LOGGING_OFF);
  }
  if (props.domainNames.length === 0) {
    acknowledge(
      distribution,
      'AwsSolutions-CFR4',
      'No custom domain: the default *.cloudfront.net certificate is used, whose minimum TLS version CloudFront fixes; ' +
        'give domainNames and a certificate to get TLSv1.2_2021.',
    );
  }
  if (!props.webAclId) {
    acknowledge(
      distribution,
      'AwsSolutions-CFR2',
      'No web ACL was given (webAclId). The viewer-request function already rejects malformed and (with signing) unsigned ' +
        'requests before any origin; sizes/presetsOnly/signing bound the variants. Attach a WAF rate-based rule via webAclId for production.',
    );
  }
  if (!props.geoRestriction) {
    acknowledge(
      distribution,
      'AwsSolutions-CFR1',
      'Public image delivery is meant to be worldwide; geoRestriction is available when a business needs it.',
    );
  }
}
