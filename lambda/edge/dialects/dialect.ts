// A dialect is another image service's URL grammar, read at the edge and
// translated into ours, so that a URL in any dialect reaches the same
// canonical URI, cache entry and stored variant as the native URL for the
// same image. A dialect module only translates and verifies; the generated
// function around it then runs the native grammar on what it returns.

/** Dialects a deployment can switch on (setting `dialects`, `npm start -- --dialect <name>`). */
export const DIALECTS = ['dit', 'imgix', 'cloudflare'] as const;
export type DialectName = (typeof DIALECTS)[number];

/**
 * The grammars an edge function can be generated for: ours, and one per dialect
 * grammar (`dit` is two: DIT's base64 JSON requests and its Thumbor paths).
 */
export type EdgeGrammar = 'native' | 'dit-json' | 'thumbor' | 'imgix' | 'cloudflare';

/** A viewer's request as a dialect reads it: the URI as sent (still percent-encoded) and the query's decoded pairs, in order. */
export interface DialectRequest {
  uri: string;
  pairs: [string, string][];
}

/** The same request in the native grammar: the source key (decoded) and native parameter pairs, as a native URL's query would give them. */
export interface NativeRequest {
  key: string;
  pairs: [string, string][];
  /**
   * A bucket the request names (DIT's `bucket`, a Thumbor path's `s3:<bucket>`):
   * the edge checks it against the deployment's buckets (another is a 403, as
   * DIT answers a bucket outside its SOURCE_BUCKETS) and puts the key under
   * that bucket's prefix. Absent: the key as it is, in the default source bucket.
   */
  bucket?: string;
  /**
   * The bucket an overlay names (DIT's `overlayWith.bucket`, a watermark
   * filter's first argument): the overlay is the deployment's watermark of its
   * file's name, and the bucket must be one of the deployment's too.
   */
  overlay?: string;
}

/** The name a dialect's refusals start with, in the data of a dialect whose every native pair is its translator's (imgix's, Cloudflare's). */
export interface DialectTitle {
  title: string;
}

/** How a dialect's signature checks out against the deployment's secrets: valid, or the word of its refusal. */
export type SignatureCheck = 'valid' | 'unsigned' | 'badSignature' | 'expired';

export interface Dialect {
  /**
   * The request in the native grammar. An operation we lack or a value we cannot
   * honour throws the grammar's error (`grammarError('invalid_parameter', ...)`)
   * with a message naming the dialect and the operation, never a different image.
   */
  translate(request: DialectRequest): NativeRequest;
  /** The dialect's own signature scheme, checked with the store's secrets, for deployments that sign. */
  verify(request: DialectRequest, secrets: string[], nowSeconds: number): SignatureCheck;
  /** Takes the dialect's data (name maps, words) that the function read from its store. */
  useData(data: object): void;
}
