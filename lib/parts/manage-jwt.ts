// The management API's optional JWT callers (docs/manage.md, "Browsers: JWT
// callers"): the same routes again under /user, each with a JWT authoriser of
// the deployment's issuer and audiences, to the same Lambda, which confines
// such a caller to the prefix its claim names (lambda/manage/confine.ts). An
// HTTP API route has one authoriser, so IAM's routes stay as they are, and
// the API answers the upload origins' CORS preflights for the browsers.

import { Duration } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { JWT_ROUTE_PREFIX } from '../../lambda/manage/confine';
import { JWT_PREFIX_VARIABLE } from '../../lambda/manage/config';
import type { ResolvedSettings } from '../resolved-settings';

export type ManageJwtSettings = Pick<ResolvedSettings, 'manageJwtIssuer' | 'manageJwtAudience' | 'manageJwtPrefix' | 'manageCorsOrigins'>;

/** The JWT routes' path of one of the API's routes. */
export const jwtPath = (path: string): string => JWT_ROUTE_PREFIX + path;

/** The HTTP API's CORS for browsers calling the JWT routes from the upload origins; none without JWT callers or origins. */
export function jwtCorsPreflight(settings: ManageJwtSettings): apigwv2.CorsPreflightOptions | undefined {
  if (settings.manageJwtIssuer === undefined || settings.manageCorsOrigins.length === 0) return undefined;
  return {
    allowOrigins: settings.manageCorsOrigins,
    allowMethods: [apigwv2.CorsHttpMethod.GET, apigwv2.CorsHttpMethod.POST, apigwv2.CorsHttpMethod.DELETE],
    allowHeaders: ['authorization', 'content-type'],
    maxAge: Duration.hours(1),
  };
}

/** Adds `routes` again under /user, each with the JWT authoriser, to `integration`; none without an issuer. */
export function addJwtRoutes(
  api: apigwv2.HttpApi,
  integration: apigwv2.HttpRouteIntegration,
  routes: [apigwv2.HttpMethod, string][],
  settings: ManageJwtSettings,
): apigwv2.HttpRoute[] {
  if (settings.manageJwtIssuer === undefined) return [];
  const authorizer = new HttpJwtAuthorizer('ManageJwtAuthorizer', settings.manageJwtIssuer, {
    jwtAudience: settings.manageJwtAudience,
  });
  return routes.flatMap(([method, path]) => api.addRoutes({ path: jwtPath(path), methods: [method], integration, authorizer }));
}

/** The API Lambda's environment for JWT callers: the prefix template it confines them to. */
export const jwtEnvironment = (settings: ManageJwtSettings): Record<string, string> =>
  settings.manageJwtPrefix === undefined ? {} : { [JWT_PREFIX_VARIABLE]: settings.manageJwtPrefix };
