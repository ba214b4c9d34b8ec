// The S3 behaviours the transformer relies on, checked against the real
// LocalStack that test/global-setup.ts starts. If one of these fails, the
// product's tests would be testing LocalStack quirks rather than our code.
import { createHash } from 'node:crypto';
import { GetObjectCommand, HeadBucketCommand, HeadObjectCommand, NoSuchKey, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestBuckets, listKeys, putObject, type TestBuckets } from '../../support/s3';

let buckets: TestBuckets;
let s3: S3Client;
let bucket: string;

beforeAll(async () => {
  buckets = await createTestBuckets('localstack platform');
  s3 = buckets.s3;
  bucket = buckets.sourceBucket;
});

afterAll(async () => {
  await buckets?.cleanup();
});

async function getText(key: string): Promise<string> {
  const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return object.Body!.transformToString();
}

/** The rejection of `promise`, which must reject. */
async function rejection(promise: Promise<unknown>): Promise<Error & { $metadata?: { httpStatusCode?: number } }> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the call to fail, and it succeeded');
}

describe('LocalStack S3', () => {
  it('PutObject with IfNoneMatch "*" writes once, then fails with 412 PreconditionFailed', async () => {
    const put = (body: string) => s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'once/only.webp', Body: body, IfNoneMatch: '*' }));

    await put('first');
    const error = await rejection(put('second'));

    expect(error.name).toBe('PreconditionFailed');
    expect(error.$metadata?.httpStatusCode).toBe(412);
    expect(await getText('once/only.webp')).toBe('first');
  });

  it('GetObject of a missing key fails with NoSuchKey (404)', async () => {
    const error = await rejection(s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'missing/nothing.jpg' })));

    expect(error).toBeInstanceOf(NoSuchKey);
    expect(error.name).toBe('NoSuchKey');
    expect(error.$metadata?.httpStatusCode).toBe(404);
  });

  it("gives an object's ETag as the quoted MD5 hex of its body", async () => {
    const body = Buffer.from('some image bytes \u0000\u00ff', 'latin1');
    const md5 = createHash('md5').update(body).digest('hex');

    const put = await putObject(s3, bucket, 'etag/object.bin', body);
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'etag/object.bin' }));

    expect(put.ETag).toBe(`"${md5}"`);
    expect(head.ETag).toBe(`"${md5}"`);
  });

  it('keeps CacheControl, ContentType and user metadata', async () => {
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: 'meta/photo.avif',
        Body: 'x',
        CacheControl: 'public, max-age=31536000, immutable',
        ContentType: 'image/avif',
        Metadata: { 'source-etag': '"abc123"', transform: 'w=300,format=avif' },
      }),
    );

    for (const response of [
      await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'meta/photo.avif' })),
      await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'meta/photo.avif' })),
    ]) {
      expect(response.CacheControl).toBe('public, max-age=31536000, immutable');
      expect(response.ContentType).toBe('image/avif');
      expect(response.Metadata).toEqual({ 'source-etag': '"abc123"', transform: 'w=300,format=avif' });
    }
  });

  it('round-trips awkward keys exactly through Put, Get and List', async () => {
    const keys = [
      'keys/with space/a b.jpg',
      'keys/plus+sign+.png',
      'keys/percent%20not-decoded%.png',
      'keys/hash#fragment.png',
      'keys/question?mark=1&x.png',
      'keys/ünïcödé/日本語/写真.jpg',
      'keys/caf\u00e9.jpg', // precomposed é ...
      'keys/cafe\u0301.jpg', // ... and e + combining accent: two different keys
      'keys/a/b/c/d/e/f/deep.webp',
      'keys/double//slash.jpg',
      'keys/mixed/ +%#é/x.webp',
    ];

    for (const key of keys) await putObject(s3, bucket, key, `body of ${key}`);

    for (const key of keys) expect(await getText(key)).toBe(`body of ${key}`);
    const listed = (await listKeys(s3, bucket)).filter((key) => key.startsWith('keys/'));
    expect([...listed].sort()).toEqual([...keys].sort());
  });
});

describe('createTestBuckets', () => {
  it('makes distinct, valid bucket names, and cleanup empties and removes them (past one page of keys)', async () => {
    const a = await createTestBuckets('Same Label!');
    const b = await createTestBuckets('Same Label!');
    const names = [a.sourceBucket, a.cacheBucket, b.sourceBucket, b.cacheBucket];
    expect(new Set(names).size).toBe(4);
    for (const name of names) expect(name).toMatch(/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/);

    // More than one ListObjectsV2 page (1000 keys), so listKeys and cleanup must paginate.
    const keys = Array.from({ length: 1005 }, (_, i) => `many/${String(i).padStart(4, '0')}.txt`);
    for (let i = 0; i < keys.length; i += 50) {
      await Promise.all(keys.slice(i, i + 50).map((key) => putObject(a.s3, a.sourceBucket, key, key, 'text/plain')));
    }
    await putObject(a.s3, a.cacheBucket, 'cached.webp', 'x', 'image/webp');
    expect((await listKeys(a.s3, a.sourceBucket)).sort()).toEqual(keys);
    expect(await listKeys(b.s3, b.sourceBucket)).toEqual([]);

    await a.cleanup();
    await a.cleanup(); // twice is fine
    await b.cleanup();

    for (const name of names) {
      const error = await rejection(a.s3.send(new HeadBucketCommand({ Bucket: name })));
      expect(error.$metadata?.httpStatusCode).toBe(404);
    }
  });
});
