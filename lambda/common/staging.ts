// The key prefixes of the source bucket that the management API keeps for
// itself (lambda/manage/): uploads land under the staging prefix until they
// are validated, those refused are moved under the quarantine prefix, and an
// import's manifest, status and report are kept under the imports prefix.
// None is a source: the origin answers a key under any as it answers a
// missing one (404, or the fallback image), so no viewer ever receives a
// file that was not validated, nor an import's list of URLs.

/** Where a presigned upload lands: `<STAGING_PREFIX><key>`. */
export const STAGING_PREFIX = '_uploads/';

/** Where a refused upload is kept, `<QUARANTINE_PREFIX><key>`, beside its record `<QUARANTINE_PREFIX><key>.json`. */
export const QUARANTINE_PREFIX = '_quarantine/';

/** Where an import keeps its manifest, status and report: `<IMPORTS_PREFIX><id>/`. */
export const IMPORTS_PREFIX = '_imports/';

/** The prefixes no viewer may read. */
export const UNSERVED_PREFIXES = [STAGING_PREFIX, QUARANTINE_PREFIX, IMPORTS_PREFIX] as const;

/** Whether `key` is under the staging, the quarantine or the imports prefix: an object no viewer may read. */
export const isUnservedKey = (key: string): boolean => UNSERVED_PREFIXES.some((prefix) => key.startsWith(prefix));
