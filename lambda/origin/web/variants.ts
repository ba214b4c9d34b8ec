// A web source's variants in the cache bucket. Unlike a bucket's, they are
// replaced in place when their source changes, since no event says it did:
// each keeps the source's validators (ETag, Last-Modified) to ask it
// conditionally, and its own write time says when it was last known current.
//
// They live under keys no viewer's request can name. The cache bucket is the
// first origin of the default cache behavior, which CloudFront chooses from
// the path as the viewer sent it: `/shop%2Fa.jpg` does not match `/shop/*`,
// yet the edge canonicalises it to the URI of `/shop/a.jpg`. Stored under
// that URI's key, the variant would be served from there as it is, never
// revalidated. So a web variant's key is the bucket variant's with a `/` in
// front: a key the edge can send to S3 is `<source key>/<ops>`, and a source
// key never begins with an empty segment (validateKey), so none begins with
// `/` (cache-keys.ts). The default behavior's cache-bucket origin misses, and the Lambda
// serves the key as the web prefix's own behavior would.

import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { storeVariant, type StoreOutcome, type Variant } from '../storage';
import type { WebFetchOptions } from './fetch';

type WebValidators = NonNullable<WebFetchOptions['validators']>;

export interface StoredWebVariant {
  variant: Variant;
  validators: WebValidators;
  /** When the source was last known to be this one (ms since the epoch): the object's write time. */
  checkedAt: number;
}

const ETAG = 'source-etag';
const LAST_MODIFIED = 'source-last-modified';

/**
 * The stored variant under `key`, or undefined when there is none or it cannot
 * be read: the source is then fetched again, which only costs a transform.
 */
export async function readWebVariant(
  s3: S3Client,
  bucket: string,
  key: string,
  abortSignal?: AbortSignal,
): Promise<StoredWebVariant | undefined> {
  try {
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }), { abortSignal });
    const body = Buffer.from(await object.Body!.transformToByteArray());
    const metadata = object.Metadata ?? {};
    return {
      variant: { body, contentType: object.ContentType ?? 'application/octet-stream' },
      validators: { etag: metadata[ETAG] || undefined, lastModified: metadata[LAST_MODIFIED] || undefined },
      checkedAt: object.LastModified?.getTime() ?? 0,
    };
  } catch {
    return undefined;
  }
}

/** Writes (or rewrites, which renews its write time) the variant of a web source. */
export function storeWebVariant(
  s3: S3Client,
  bucket: string,
  key: string,
  variant: Variant,
  validators: WebValidators,
  cacheControl: string,
  abortSignal?: AbortSignal,
): Promise<StoreOutcome> {
  // S3 metadata is ASCII: a validator that is not is left out, and the source then fetched whole.
  const metadata = Object.fromEntries(
    [
      [ETAG, validators.etag],
      [LAST_MODIFIED, validators.lastModified],
    ].filter((entry): entry is [string, string] => /^[\x20-\x7e]{1,1024}$/.test(entry[1] ?? '')),
  );
  return storeVariant(s3, bucket, key, variant, { cacheControl, metadata, replace: true }, abortSignal);
}
