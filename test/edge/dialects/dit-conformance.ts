// DIT's own request test cases (aws-solutions/serverless-image-handler v6.3.3,
// source/image-handler/test) as our conformance table: each request as a
// viewer sends it to CloudFront, written as what DIT's code makes of it, and
// one class:
//
// - SAME: the native URL that means the same image; the dialect's function
//   and the native function rewrite to the same URI (and, given, that
//   canonical URI);
// - REFUSED: our status and message, and why (DIT refuses it too, or we lack
//   the operation);
// - DEVIATION: what we answer instead, for a difference kept on purpose; its
//   reason is one of DEVIATIONS, each quoted in docs/migrating.md.
//
// DIT's fixtures are translated into our test deployment (test/edge/fixtures.ts):
// DIT's default source bucket (SOURCE_BUCKETS' first: allowedBucket001,
// validBucket, my-sample-bucket...) is `my-images`, a second allowed one
// (test-bucket, some-test-bucket) is `my-archive`, which serves `archive/`,
// and a bucket outside SOURCE_BUCKETS is `not-my-bucket`. An overlay's key
// names the watermark `logo` by its file (`logo.png`). Keys are DIT's.
//
// The rows are in dit-conformance-thumbor.ts (thumbor-mapper/*.spec.ts and the
// Thumbor paths of image-request/*.spec.ts) and dit-conformance-json.ts (the
// base64 JSON requests of image-request/*.spec.ts and the edits of
// image-handler/*.spec.ts), which also say which cases have no URL.

import type { ConformanceRow } from './dit-conformance-kit';
import { JSON_ROWS } from './dit-conformance-json';
import { THUMBOR_ROWS } from './dit-conformance-thumbor';

export { DEVIATIONS, type ConformanceRow, type NativeUrl, type Refusal } from './dit-conformance-kit';

/** Every row: the Thumbor paths, then the JSON requests. */
export const DIT_CONFORMANCE: ConformanceRow[] = [...THUMBOR_ROWS, ...JSON_ROWS];
