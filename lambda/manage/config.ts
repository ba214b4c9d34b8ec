// What the management handlers need of a deployment: the source bucket, the
// key routes (which bucket serves a key), the origin's limits (the size an
// upload may have, and what the validator decodes within), and the prefixes
// uploads are kept under until they are validated. readManageConfig and
// manageEnvironment are each other's inverse (test/manage/config.test.ts):
// the Lambdas' environment is the part of the origin's that these settings
// come from, written and read by the origin's own writer and readers.

import { mustBe } from '../common/checks';
import { envReaders, type Env } from '../common/env';
import { RASTER_TYPES, SVG_TYPE } from './api-schema';
import { QUARANTINE_PREFIX, STAGING_PREFIX } from '../common/staging';
import { NUMBER_SETTINGS, originEnvironment, readLimits, readSources, type Limits, type OriginConfig } from '../origin/config';
import { MAX_SVG_BYTES } from '../origin/image/svg';
import { prefixTemplateProblem } from './confine';
import { bucketObjectOf, SOURCE_SETTINGS, sourceRoutes, type SourceRoute } from '../origin/sources';

export interface ManageConfig {
  /** The default source bucket: where uploads land, are validated and are kept. */
  sourceBucket: string;
  /** The routes of the deployment's sources: a key under another bucket's prefix is read and deleted there. */
  routes: SourceRoute[];
  /**
   * The origin's limits, which an upload must meet to be ready. Deployed, the
   * memory size is the function's own: the validator's, which the construct
   * gives the origin's memory, so that it prices a decode as the origin would.
   */
  limits: Limits;
  stagingPrefix: string;
  quarantinePrefix: string;
  /** The prefix template a JWT caller is confined to (`users/{sub}/`); none: no JWT caller is served (confine.ts). */
  jwtPrefix?: string;
  /** Store each upload with its location removed (strip-location.ts): `manageStripLocation`. */
  stripLocation: boolean;
}

/** The API Lambda's variable of the JWT callers' prefix template, set only with the JWT authoriser. */
export const JWT_PREFIX_VARIABLE = 'MANAGE_JWT_PREFIX';

/** The management API's own settings, beside the origin's. */
export interface ManageSettings {
  stripLocation: boolean;
}

const STRIP_LOCATION = 'MANAGE_STRIP_LOCATION';

/** The management API's settings of a deployment whose origin has `origin`'s. */
export function manageConfig(origin: OriginConfig, settings: ManageSettings = { stripLocation: false }): ManageConfig {
  const { sourceBucket } = origin;
  return {
    sourceBucket,
    routes: sourceRoutes(origin),
    limits: {
      maxSourceBytes: origin.maxSourceBytes,
      maxInputPixels: origin.maxInputPixels,
      maxFrames: origin.maxFrames,
      maxInlineBytes: origin.maxInlineBytes,
      maxDimension: origin.maxDimension,
      timeBudgetMs: origin.timeBudgetMs,
      memorySizeMb: origin.memorySizeMb,
      svgPolicy: origin.svgPolicy,
    },
    stagingPrefix: STAGING_PREFIX,
    quarantinePrefix: QUARANTINE_PREFIX,
    stripLocation: settings.stripLocation,
  };
}

/** The origin's variables the management Lambdas read: the sources' and the limits' (but the memory size, Lambda's own). */
const MANAGE_VARIABLES = new Set([
  'SOURCE_BUCKET',
  'SOURCE_BUCKETS',
  ...SOURCE_SETTINGS.map((setting) => setting.env),
  ...Object.values(NUMBER_SETTINGS).map((setting) => setting.env),
  'MAX_DIMENSION',
  'TIME_BUDGET_MS',
  'SVG_POLICY',
]);

/**
 * The environment of the management Lambdas of a deployment whose origin has
 * `origin`'s settings, as originEnvironment writes it (values may be CDK tokens).
 */
export function manageEnvironment(origin: Omit<OriginConfig, 'memorySizeMb'>, settings: ManageSettings): Record<string, string> {
  const environment = originEnvironment(origin, {});
  return {
    ...Object.fromEntries(Object.entries(environment).filter(([name]) => MANAGE_VARIABLES.has(name))),
    ...(settings.stripLocation ? { [STRIP_LOCATION]: 'true' } : {}),
  };
}

const { flag } = envReaders((message) => new Error(`Invalid management Lambda configuration: ${message}`));

/** The management API's settings, read once from a Lambda's environment (manageEnvironment's, and the JWT prefix's). */
export function readManageConfig(env: Env): ManageConfig {
  const sources = readSources(env);
  const jwtPrefix = env[JWT_PREFIX_VARIABLE] || undefined;
  const problem = jwtPrefix === undefined ? undefined : prefixTemplateProblem(jwtPrefix);
  if (problem) throw new Error(mustBe(JWT_PREFIX_VARIABLE, problem, jwtPrefix));
  return {
    sourceBucket: sources.sourceBucket,
    routes: sourceRoutes(sources),
    limits: readLimits(env),
    stagingPrefix: STAGING_PREFIX,
    quarantinePrefix: QUARANTINE_PREFIX,
    ...(jwtPrefix === undefined ? {} : { jwtPrefix }),
    stripLocation: flag(env, STRIP_LOCATION, false),
  };
}

/** The Content-Types an upload may declare: the formats the origin reads, SVG only when it renders SVG. */
export const uploadTypes = (limits: Limits): string[] => (limits.svgPolicy === 'rasterize' ? [...RASTER_TYPES, SVG_TYPE] : RASTER_TYPES);

/** The largest upload of `contentType`: the origin's source limit, and for SVG the smaller limit it renders. */
export const maxUploadBytes = (limits: Limits, contentType: string): number =>
  contentType === SVG_TYPE ? Math.min(MAX_SVG_BYTES, limits.maxSourceBytes) : limits.maxSourceBytes;

/** The bucket and object of a source key, or undefined when no bucket serves it (a web origin's prefix). */
export const objectOf = (config: ManageConfig, key: string) => bucketObjectOf(key, config.routes);
