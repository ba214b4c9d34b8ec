// What the management handlers need of a deployment: the source bucket, the
// key routes (which bucket serves a key), the origin's limits (the size an
// upload may have, and what the validator decodes within), and the prefixes
// uploads are kept under until they are validated.

import { QUARANTINE_PREFIX, STAGING_PREFIX } from '../common/staging';
import type { Limits, OriginConfig } from '../origin/config';
import { MAX_SVG_BYTES } from '../origin/image/input';
import { bucketObjectOf, sourceRoutes, type SourceRoute } from '../origin/sources';

export interface ManageConfig {
  /** The default source bucket: where uploads land, are validated and are kept. */
  sourceBucket: string;
  /** The routes of the deployment's sources: a key under another bucket's prefix is read and deleted there. */
  routes: SourceRoute[];
  /** The origin's limits, which an upload must meet to be ready. */
  limits: Limits;
  stagingPrefix: string;
  quarantinePrefix: string;
}

/** The management API's settings of a deployment whose origin has `origin`'s. */
export function manageConfig(origin: OriginConfig): ManageConfig {
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
  };
}

/** The raster types the origin reads, as an upload declares them. */
const RASTER_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/avif', 'image/heic', 'image/heif', 'image/gif', 'image/tiff'];

export const SVG_TYPE = 'image/svg+xml';

/** The Content-Types an upload may declare: the formats the origin reads, SVG only when it renders SVG. */
export const uploadTypes = (limits: Limits): string[] => (limits.svgPolicy === 'rasterize' ? [...RASTER_TYPES, SVG_TYPE] : RASTER_TYPES);

/** The largest upload of `contentType`: the origin's source limit, and for SVG the smaller limit it renders. */
export const maxUploadBytes = (limits: Limits, contentType: string): number =>
  contentType === SVG_TYPE ? Math.min(MAX_SVG_BYTES, limits.maxSourceBytes) : limits.maxSourceBytes;

/** The bucket and object of a source key, or undefined when no bucket serves it (a web origin's prefix). */
export const objectOf = (config: ManageConfig, key: string) => bucketObjectOf(key, config.routes);
