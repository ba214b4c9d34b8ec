// The shape of the DIT conformance table's rows and the words they are written
// in (dit-conformance.ts says what the table is).

import { ditRequest } from '../../support/dialect-cases';

/** A native URL: path as sent and query, and the canonical URI it reaches (no Accept header), when written down. */
export interface NativeUrl {
  path: string;
  query: string;
  canonical?: string;
}

/** A refusal as the viewer sees it: status and a pattern of the message. */
export interface Refusal {
  status: 400 | 403;
  message: RegExp;
}

export interface ConformanceRow {
  /** The spec file under source/image-handler/test and the case (several, where their requests are one). */
  source: string;
  /** The function that reads it. */
  grammar: 'thumbor' | 'dit-json';
  /** The request: path percent-encoded as sent, and query. */
  path: string;
  query: string;
  /** Read by the deployment that signs (signature=, DIT's way, with dialect-signers' SECRET). */
  signed?: boolean;
  same?: NativeUrl;
  refused?: Refusal & { why: string };
  deviation?: { answer: NativeUrl | Refusal; reason: string };
}

/** The differences from DIT kept on purpose; docs/migrating.md ("DIT conformance") quotes each. */
export const DEVIATIONS = {
  oriented:
    "DIT's strip_exif(), strip_icc() and rotate: null set sharp's rotate to null, so an EXIF-rotated photo stays unrotated at DIT; every output here is oriented.",
  svgPng: 'An SVG source with edits and no format is PNG at DIT; here its format is negotiated by Accept, as any source is.',
  unknownFilter:
    'DIT ignores a filter it does not know and serves the image without it; here such a filter is a 400 naming it, never an image without the edit asked for.',
  unservedBucket:
    'DIT reads an s3: segment naming a bucket outside SOURCE_BUCKETS as part of the key, in the default bucket; here a bucket the deployment does not serve is a 403, as DIT answers a JSON request naming one.',
  stricterValue:
    "DIT reads sharp's colour names and four-digit hex, rounds a fractional size and ignores a format it does not know; here each is a 400 naming the value, never an image other than the one asked for.",
  proportion:
    "DIT scales a Thumbor size by proportion(); here proportion() is a 400 naming it (the edge does not know the source's size without one).",
  zeroSize: 'DIT refuses a resize to 0 by 0 (400); here 0 reads as none, as null does, and the image is served as it is.',
} as const;

/** A request: a Thumbor path as sent, or DIT's base64 JSON request for `request`. */
type Request = Pick<ConformanceRow, 'grammar' | 'path' | 'query' | 'signed'>;
export const thumbor = (path: string, query = ''): Request => ({ grammar: 'thumbor', path, query });
export const json = (request: object, query = '', signed?: boolean): Request => ({
  grammar: 'dit-json',
  path: ditRequest(request),
  query,
  ...(signed ? { signed } : {}),
});

/** A native URL, `/key?query`, and its canonical URI's options (`/key/<options>`), when written down. */
const native = (url: string, options?: string): NativeUrl => {
  const [path, query = ''] = url.split('?') as [string, string?];
  return { path, query, ...(options === undefined ? {} : { canonical: `${path}/${options}` }) };
};

type Outcome = Pick<ConformanceRow, 'same' | 'refused' | 'deviation'>;
export const same = (url: string, options?: string): Outcome => ({ same: native(url, options) });
export const refused = (status: 400 | 403, message: RegExp, why: string): Outcome => ({ refused: { status, message, why } });
/** Answered `answer` (a native URL, or a refusal) for DEVIATIONS[reason]. */
export const deviation = (answer: string | Refusal, reason: keyof typeof DEVIATIONS, options?: string): Outcome => ({
  deviation: { answer: typeof answer === 'string' ? native(answer, options) : answer, reason: DEVIATIONS[reason] },
});

export const row = (source: string, request: Request, outcome: Outcome): ConformanceRow => ({ source, ...request, ...outcome });

/** The refusal of an operation we lack, in the words of DIT's name for it. */
export const unsupported = (op: string): RegExp => new RegExp(`^DIT ${op.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not supported here\\.$`);

/** A bucket the deployment does not serve: a 403, as DIT's (ImageBucket::CannotAccessBucket). */
export const UNKNOWN_BUCKET: Refusal = { status: 403, message: /^This request names a bucket this deployment does not serve\.$/ };
