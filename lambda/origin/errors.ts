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

/**
 * The definition a canonical `<name>.<version>` names (a watermark's, a
 * template's), or a 503 `code`: the edge and this function are deployed
 * apart, so for a moment one may know a version the other does not.
 */
export function deployedVersion<T extends { version: string }>(
  canonical: string,
  definitions: Record<string, T>,
  code: 'watermark_unavailable' | 'template_unavailable',
  what: string,
): T {
  const [name, version] = canonical.split('.') as [string, string | undefined];
  const definition = Object.hasOwn(definitions, name) ? definitions[name] : undefined;
  if (definition && definition.version === version) return definition;
  // The name is the request's: quoted as briefly as the grammar quotes a value.
  const quoted = name.length > 40 ? `${name.slice(0, 40)}…` : name;
  throw new HttpError(
    code,
    `The ${what} "${quoted}" is being deployed; try again shortly.`,
    `asked ${canonical.slice(0, 80)}, have ${definition?.version}`,
  );
}
