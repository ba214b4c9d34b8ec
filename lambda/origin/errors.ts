// Every failure the origin answers with, as the contract's status and code.
// The message is safe to show a viewer: no stack, bucket name or SDK text.

/**
 * Every code the origin answers with, and its HTTP status: the ErrorCode type,
 * each error's status and the metrics' ErrorCode dimension (in this order, which
 * the dashboard's widget follows) all derive from this one table.
 */
const ERROR_STATUSES = {
  invalid_parameter: 400,
  invalid_key: 400,
  not_canonical: 400,
  invalid_fill: 400,
  method_not_allowed: 405,
  not_found: 404,
  watermark_required: 403,
  source_too_large: 413,
  too_many_pixels: 413,
  too_costly: 413,
  too_many_scans: 413,
  unsupported_media_type: 415,
  undecodable_image: 422,
  max_bytes_unreachable: 422,
  internal_error: 500,
  storage_unavailable: 503,
  source_not_allowed: 403,
  source_unavailable: 502,
  watermark_unavailable: 503,
  template_unavailable: 503,
  timeout: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUSES;

/** Every code of the contract, in the table's order. */
export const ERROR_CODES = Object.keys(ERROR_STATUSES) as ErrorCode[];

export class HttpError extends Error {
  readonly status: number;

  /** `detail` is for the log only (e.g. the SDK's or libvips' own words). */
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'HttpError';
    this.status = ERROR_STATUSES[code];
  }
}

/** A source over the byte limit, wherever it is read from (a bucket, a web origin). */
export const sourceTooLarge = (limit: number) =>
  new HttpError('source_too_large', `The source image is larger than the ${limit}-byte limit.`);
