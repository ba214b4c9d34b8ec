// The two key prefixes of the source bucket that the management API keeps
// for itself (lambda/manage/): uploads land under the staging prefix until
// they are validated, and those refused are moved under the quarantine
// prefix. Neither is a source: the origin answers a key under either as it
// answers a missing one (404, or the fallback image), so no viewer ever
// receives a file that was not validated.

/** Where a presigned upload lands: `<STAGING_PREFIX><key>`. */
export const STAGING_PREFIX = '_uploads/';

/** Where a refused upload is kept, `<QUARANTINE_PREFIX><key>`, beside its record `<QUARANTINE_PREFIX><key>.json`. */
export const QUARANTINE_PREFIX = '_quarantine/';

/** Whether `key` is under the staging or the quarantine prefix: an object no viewer may read. */
export const isUnservedKey = (key: string): boolean => key.startsWith(STAGING_PREFIX) || key.startsWith(QUARANTINE_PREFIX);
