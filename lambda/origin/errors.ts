// Every failure the origin answers with, as the contract's status and code.
// The message is safe to show a viewer: no stack, bucket name or SDK text.

export type ErrorCode =
  | 'invalid_parameter'
  | 'invalid_key'
  | 'not_canonical'
  | 'method_not_allowed'
  | 'not_found'
  | 'watermark_required'
  | 'source_too_large'
  | 'too_many_pixels'
  | 'too_costly'
  | 'too_many_scans'
  | 'max_bytes_unreachable'
  | 'unsupported_media_type'
  | 'undecodable_image'
  | 'internal_error'
  | 'storage_unavailable'
  | 'source_not_allowed'
  | 'source_unavailable'
  | 'watermark_unavailable'
  | 'timeout';

const STATUS: Record<ErrorCode, number> = {
  invalid_parameter: 400,
  invalid_key: 400,
  not_canonical: 400,
  method_not_allowed: 405,
  watermark_required: 403,
  source_not_allowed: 403,
  not_found: 404,
  source_too_large: 413,
  too_many_pixels: 413,
  too_costly: 413,
  too_many_scans: 413,
  unsupported_media_type: 415,
  undecodable_image: 422,
  max_bytes_unreachable: 422,
  internal_error: 500,
  source_unavailable: 502,
  storage_unavailable: 503,
  watermark_unavailable: 503,
  timeout: 504,
};

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
    this.status = STATUS[code];
  }
}

/** A source over the byte limit, wherever it is read from (a bucket, a web origin). */
export const sourceTooLarge = (limit: number) => new HttpError('source_too_large', `The source image is larger than the ${limit}-byte limit.`);
