// Every refusal the management API answers with: a status and a code, and a
// message that names the problem (the field, the key, the limit). The body is
// always `{error: <code>, message}`.

const MANAGE_STATUSES = {
  malformed_json: 400,
  invalid_body: 400,
  unknown_field: 400,
  missing_field: 400,
  invalid_field: 400,
  invalid_key: 400,
  reserved_key: 400,
  key_not_uploadable: 400,
  key_not_deletable: 400,
  unsupported_content_type: 400,
  too_large: 400,
  invalid_expiry: 400,
  too_many_keys: 400,
  invalid_query: 400,
  invalid_cursor: 400,
  forbidden_claim: 403,
  forbidden_key: 403,
  forbidden_route: 403,
  no_items: 400,
  too_many_items: 400,
  invalid_item: 400,
  invalid_url: 400,
  duplicate_key: 400,
  invalid_manifest: 400,
  manifest_not_found: 400,
  not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  internal_error: 500,
  storage_unavailable: 503,
} as const;

export type ManageErrorCode = keyof typeof MANAGE_STATUSES;

/** The codes of the refusals of `status`, in their order above. */
export const errorCodesOf = (status: number): ManageErrorCode[] =>
  (Object.keys(MANAGE_STATUSES) as ManageErrorCode[]).filter((code) => MANAGE_STATUSES[code] === status);

export class ManageError extends Error {
  readonly status: number;

  /** `detail` is for the log only (the SDK's own words). */
  constructor(
    readonly code: ManageErrorCode,
    message: string,
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'ManageError';
    this.status = MANAGE_STATUSES[code];
  }
}

/** An S3 call's failure as the SDK reports it. */
export interface S3Failure {
  name?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

/** Whether an S3 call failed because the object is not there (a HEAD's 404 has no code, only its status). */
export function isMissing(error: unknown): boolean {
  const failure = error as S3Failure;
  return failure.name === 'NoSuchKey' || failure.name === 'NotFound' || failure.$metadata?.httpStatusCode === 404;
}

/** A storage failure as the API answers it: a 503 whose detail, for the log, is the SDK's. */
export function storageUnavailable(error: unknown): ManageError {
  const failure = error as S3Failure;
  return new ManageError(
    'storage_unavailable',
    'The image storage is unavailable; try again shortly.',
    `${failure.name}: ${failure.message}`,
  );
}
