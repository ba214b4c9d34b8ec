// scripts/purge.ts, the operator's purge: against this run's LocalStack S3,
// with CloudFront behind the InvalidationClient interface (LocalStack's free
// edition has none), as in test/invalidate. Then the command itself, in a
// child process, through `npm run purge`.

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DeleteObjectsCommand, type S3Client } from '@aws-sdk/client-s3';
import { beforeEach, describe, expect, inject, it } from 'vitest';
import { localS3Client } from '../../local/harness/s3-client';
import { main, parsePurgeArgs, USAGE, type PurgeDependencies } from '../../scripts/purge';
import { recordingCloudFront, DISTRIBUTION_ID, type RecordingCloudFront } from '../invalidate/support';
import { createTestBuckets, listKeys, putObject, type TestBuckets } from '../support/s3';

const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Variants of several sources, and neighbours that must survive a purge of `photos/cat.jpg`. */
const CAT = ['photos/cat.jpg/width=100', 'photos/cat.jpg/width=200,format=webp', 'photos/cat.jpg/original'];
const NEIGHBOURS = [
  'photos/cat.jpg/kitten.jpg/width=100', // a variant of the source photos/cat.jpg/kitten.jpg
  'photos/cat.jpg.bak/width=100', // a variant of the source photos/cat.jpg.bak
];
const MY_CAT = ['photos/my cat.jpg/width=100', 'photos/my cat.jpg/format=avif'];
const PLUS = ['a+b.jpg/width=10'];

let buckets: TestBuckets;

beforeEach(async () => {
  buckets = await createTestBuckets('purge');
  await Promise.all(
    [...CAT, ...NEIGHBOURS, ...MY_CAT, ...PLUS].map((key) => putObject(buckets.s3, buckets.cacheBucket, key, 'variant', 'image/webp')),
  );
  return () => buckets.cleanup();
});

interface Run {
  status: number;
  out: string[];
  err: string[];
  cloudFront: RecordingCloudFront;
}

/** `npm run purge -- <argv>` in-process, on LocalStack S3 and a recording CloudFront (or `s3`/`cloudFront` given). */
async function run(
  argv: string[],
  options: { cloudFront?: RecordingCloudFront; s3?: (real: S3Client) => S3Client; env?: Record<string, string> } = {},
): Promise<Run> {
  const cloudFront = options.cloudFront ?? recordingCloudFront();
  const out: string[] = [];
  const err: string[] = [];
  const dependencies = (parsed: { distributionId?: string }): PurgeDependencies => {
    const real = localS3Client(inject('s3Endpoint'));
    return {
      s3: options.s3 ? options.s3(real) : real,
      ...(parsed.distributionId ? { cloudFront: cloudFront.client } : {}),
    };
  };
  const status = await main(argv, { out: (line) => out.push(line), err: (line) => err.push(line) }, dependencies, options.env ?? {});
  return { status, out, err, cloudFront };
}

const flags = () => ['--cache-bucket', buckets.cacheBucket, '--distribution-id', DISTRIBUTION_ID];

describe('purge', () => {
  it("deletes exactly the source's variants, then invalidates /<key>/* once, and reports each key", async () => {
    const result = await run([...flags(), 'photos/cat.jpg', 'photos/my cat.jpg']);

    expect(result.status).toBe(0);
    expect(result.err).toEqual([]);
    expect(await listKeys(buckets.s3, buckets.cacheBucket)).toEqual([...NEIGHBOURS, ...PLUS].sort());
    expect(result.cloudFront.calls).toHaveLength(1);
    expect(result.cloudFront.calls[0]).toMatchObject({
      distributionId: DISTRIBUTION_ID,
      paths: ['/photos/cat.jpg/*', '/photos/my%20cat.jpg/*'],
      callerReference: expect.stringMatching(/^purge-\d+-[0-9a-f-]{36}$/),
    });
    expect(result.out).toEqual([
      `purge: cache bucket ${buckets.cacheBucket}, distribution ${DISTRIBUTION_ID}`,
      'ok    photos/cat.jpg: 3 variant(s) deleted; invalidated /photos/cat.jpg/* (I1EXAMPLE)',
      'ok    photos/my cat.jpg: 2 variant(s) deleted; invalidated /photos/my%20cat.jpg/* (I1EXAMPLE)',
      '2 key(s) purged and invalidated (I1EXAMPLE; CloudFront takes a few minutes to finish).',
    ]);
  });

  it("deletes a web origin's source's variants too, kept under '/' where no CloudFront path reaches them", async () => {
    const web = ['/shop/dog.jpg/width=100', '/shop/dog.jpg/format=avif'];
    const neighbour = '/shop/dog.jpg/puppy.jpg/width=100';
    await Promise.all([...web, neighbour].map((key) => putObject(buckets.s3, buckets.cacheBucket, key, 'variant', 'image/webp')));
    const result = await run([...flags(), 'shop/dog.jpg']);
    expect(result.status).toBe(0);
    expect(result.out[1]).toBe('ok    shop/dog.jpg: 2 variant(s) deleted; invalidated /shop/dog.jpg/* (I1EXAMPLE)');
    expect(await listKeys(buckets.s3, buckets.cacheBucket)).toEqual([neighbour, ...CAT, ...NEIGHBOURS, ...MY_CAT, ...PLUS].sort());
  });

  it('takes a URL or URL path for a key, percent-decoded ("+" literal), and a key with no variants is fine', async () => {
    const result = await run([...flags(), 'https://img.example.com/photos/my%20cat.jpg?w=640', '/a+b.jpg', 'never/made.jpg']);
    expect(result.status).toBe(0);
    expect(result.out.slice(1, 4)).toEqual([
      'ok    https://img.example.com/photos/my%20cat.jpg?w=640 (key "photos/my cat.jpg"): 2 variant(s) deleted; invalidated /photos/my%20cat.jpg/* (I1EXAMPLE)',
      'ok    /a+b.jpg (key "a+b.jpg"): 1 variant(s) deleted; invalidated /a%2Bb.jpg/* /a+b.jpg/* (I1EXAMPLE)',
      'ok    never/made.jpg: 0 variant(s) deleted; invalidated /never/made.jpg/* (I1EXAMPLE)',
    ]);
    expect(await listKeys(buckets.s3, buckets.cacheBucket)).toEqual([...CAT, ...NEIGHBOURS].sort());
  });

  it('reports a key that names no source, and still purges the others (exit 1)', async () => {
    const result = await run([...flags(), 'a/../b.jpg', 'photos/cat.jpg', '/bad%E9.jpg']);
    expect(result.status).toBe(1);
    expect(result.out).toEqual([
      expect.any(String),
      'FAIL  a/../b.jpg: not a source key: Invalid source key: it has a ".." path segment.',
      'ok    photos/cat.jpg: 3 variant(s) deleted; invalidated /photos/cat.jpg/* (I1EXAMPLE)',
      'FAIL  /bad%E9.jpg: not a source key: Invalid source key: it is not valid percent-encoded UTF-8.',
      '2 of 3 key(s) failed.',
    ]);
    expect(result.cloudFront.calls[0]!.paths).toEqual(['/photos/cat.jpg/*']);
  });

  it('reports the variants S3 refused to delete, by key and code, and the ones it deleted (exit 1)', async () => {
    // S3 answering DeleteObjects with a per-key error for one variant (as with Object Lock or a
    // bucket policy), the rest deleted for real in LocalStack.
    const refusing = (real: S3Client) =>
      ({
        async send(command: unknown) {
          if (!(command instanceof DeleteObjectsCommand)) return real.send(command as never);
          const objects = command.input.Delete!.Objects!;
          const refused = objects.filter((object) => object.Key!.endsWith('/original'));
          const kept = objects.filter((object) => !refused.includes(object));
          const output = await real.send(
            new DeleteObjectsCommand({ ...command.input, Delete: { ...command.input.Delete, Objects: kept } }),
          );
          return { ...output, Errors: refused.map((object) => ({ Key: object.Key, Code: 'AccessDenied', Message: 'Access Denied' })) };
        },
        destroy: () => real.destroy(),
      }) as unknown as S3Client;

    const result = await run([...flags(), 'photos/cat.jpg', 'photos/my cat.jpg'], { s3: refusing });
    expect(result.status).toBe(1);
    expect(result.out.slice(1)).toEqual([
      'FAIL  photos/cat.jpg: 2 variant(s) deleted, 1 not: photos/cat.jpg/original AccessDenied (Access Denied); invalidated /photos/cat.jpg/* (I1EXAMPLE)',
      'ok    photos/my cat.jpg: 2 variant(s) deleted; invalidated /photos/my%20cat.jpg/* (I1EXAMPLE)',
      '1 of 2 key(s) failed.',
    ]);
    expect(await listKeys(buckets.s3, buckets.cacheBucket)).toEqual(['photos/cat.jpg/original', ...NEIGHBOURS, ...PLUS].sort());
  });

  it('reports a cache bucket it cannot reach for every key, and still invalidates (exit 1)', async () => {
    const result = await run(['--cache-bucket', `${buckets.cacheBucket}-missing`, '--distribution-id', DISTRIBUTION_ID, 'photos/cat.jpg']);
    expect(result.status).toBe(1);
    expect(result.out[1]).toMatch(
      /^FAIL {2}photos\/cat\.jpg: 0 variant\(s\) deleted, then the cache bucket failed: NoSuchBucket: .*; invalidated \/photos\/cat\.jpg\/\* \(I1EXAMPLE\)$/,
    );
    expect(result.cloudFront.calls).toHaveLength(1);
    expect(await listKeys(buckets.s3, buckets.cacheBucket)).toContain('photos/cat.jpg/original');
  });

  it('reports a failed invalidation against every key and deletes nothing (exit 1); run again, it purges', async () => {
    let busy = true;
    const cloudFront = recordingCloudFront(async () => {
      if (!busy) return { id: 'I2EXAMPLE', status: 'InProgress' };
      throw Object.assign(
        new Error('Processing your request will cause you to exceed the maximum number of in-progress wildcard invalidations.'),
        {
          name: 'TooManyInvalidationsInProgress',
        },
      );
    });
    const result = await run([...flags(), 'photos/cat.jpg', 'a+b.jpg'], { cloudFront });
    expect(result.status).toBe(1);
    expect(result.out.slice(1)).toEqual([
      'FAIL  photos/cat.jpg: nothing deleted until CloudFront accepts the invalidation; invalidating /photos/cat.jpg/* failed: TooManyInvalidationsInProgress: Processing your request will cause you to exceed the maximum number of in-progress wildcard invalidations.',
      'FAIL  a+b.jpg: nothing deleted until CloudFront accepts the invalidation; invalidating /a%2Bb.jpg/* /a+b.jpg/* failed: TooManyInvalidationsInProgress: Processing your request will cause you to exceed the maximum number of in-progress wildcard invalidations.',
      '2 of 2 key(s) failed.',
    ]);
    expect(await listKeys(buckets.s3, buckets.cacheBucket)).toEqual([...CAT, ...NEIGHBOURS, ...MY_CAT, ...PLUS].sort());

    busy = false;
    const again = await run([...flags(), 'photos/cat.jpg', 'a+b.jpg'], { cloudFront });
    expect(again.status).toBe(0);
    expect(again.out[1]).toBe('ok    photos/cat.jpg: 3 variant(s) deleted; invalidated /photos/cat.jpg/* (I2EXAMPLE)');
    expect(await listKeys(buckets.s3, buckets.cacheBucket)).toEqual([...NEIGHBOURS, ...MY_CAT].sort());
  });

  it('invalidates first, then deletes: CloudFront is asked while the variants are still in the cache bucket', async () => {
    // What the cache bucket holds at the moment each invalidation is created.
    const seen: string[][] = [];
    const cloudFront = recordingCloudFront(async () => {
      seen.push((await listKeys(buckets.s3, buckets.cacheBucket)).sort());
      return { id: 'I1EXAMPLE', status: 'InProgress' };
    });
    const result = await run([...flags(), 'photos/cat.jpg'], { cloudFront });
    expect(result.status).toBe(0);
    expect(seen).toEqual([[...CAT, ...NEIGHBOURS, ...MY_CAT, ...PLUS].sort()]);
    expect(await listKeys(buckets.s3, buckets.cacheBucket)).toEqual([...NEIGHBOURS, ...MY_CAT, ...PLUS].sort());
  });

  it("folds more than 15 keys of one folder into that folder's wildcard, and says which covers each", async () => {
    const keys = Array.from({ length: 16 }, (_, i) => `bulk/${String(i).padStart(2, '0')}.jpg`);
    const result = await run([...flags(), ...keys]);
    expect(result.status).toBe(0);
    expect(result.cloudFront.calls[0]!.paths).toEqual(['/bulk/*']);
    expect(result.out[1]).toBe('ok    bulk/00.jpg: 0 variant(s) deleted; invalidated /bulk/00.jpg/*, within /bulk/* (I1EXAMPLE)');
  });

  it('never folds keys above their own folders, nor into /*: too many keys in as many folders are refused, nothing deleted (exit 1)', async () => {
    const keys = ['photos/cat.jpg', ...Array.from({ length: 15 }, (_, i) => `${i}.jpg`)];
    const result = await run([...flags(), ...keys]);
    expect(result.status).toBe(1);
    expect(result.cloudFront.calls).toEqual([]);
    expect(result.out[1]).toBe(
      'FAIL  photos/cat.jpg: nothing deleted until CloudFront accepts the invalidation; invalidating /photos/cat.jpg/* failed: ' +
        "16 wildcard paths, more than the 15 CloudFront allows in progress, and folding them into the sources' own folders would not bring them under it",
    );
    expect(await listKeys(buckets.s3, buckets.cacheBucket)).toEqual([...CAT, ...NEIGHBOURS, ...MY_CAT, ...PLUS].sort());
  });

  it('with --everything, invalidates /* (and only then), with or without keys', async () => {
    const result = await run([...flags(), '--everything', 'photos/cat.jpg']);
    expect(result.status).toBe(0);
    expect(result.cloudFront.calls.map((call) => call.paths)).toEqual([['/*']]);
    expect(result.out.slice(1)).toEqual([
      'ok    photos/cat.jpg: 3 variant(s) deleted; invalidated /* (I1EXAMPLE)',
      'ok    /*: every cached response invalidated (I1EXAMPLE)',
      '1 key(s) purged, and everything invalidated (I1EXAMPLE; CloudFront takes a few minutes to finish).',
    ]);
    expect(await listKeys(buckets.s3, buckets.cacheBucket)).toEqual([...NEIGHBOURS, ...MY_CAT, ...PLUS].sort());

    const alone = await run([...flags(), '--everything']);
    expect(alone.status).toBe(0);
    expect(alone.cloudFront.calls.map((call) => call.paths)).toEqual([['/*']]);
    expect(alone.out.slice(1)).toEqual([
      'ok    /*: every cached response invalidated (I1EXAMPLE)',
      '0 key(s) purged, and everything invalidated (I1EXAMPLE; CloudFront takes a few minutes to finish).',
    ]);
  });

  it('with --no-invalidation, only deletes, and says so', async () => {
    const result = await run(['--cache-bucket', buckets.cacheBucket, '--no-invalidation', 'photos/cat.jpg']);
    expect(result.status).toBe(0);
    expect(result.out).toEqual([
      `purge: cache bucket ${buckets.cacheBucket}, no invalidation`,
      'ok    photos/cat.jpg: 3 variant(s) deleted; not invalidated (--no-invalidation)',
      '1 key(s) purged.',
    ]);
    expect(result.cloudFront.calls).toEqual([]);
  });

  it('reads the bucket and distribution from $CACHE_BUCKET and $DISTRIBUTION_ID', async () => {
    const result = await run(['photos/cat.jpg'], { env: { CACHE_BUCKET: buckets.cacheBucket, DISTRIBUTION_ID: 'EENV' } });
    expect(result.status).toBe(0);
    expect(result.cloudFront.calls[0]!.distributionId).toBe('EENV');
  });
});

describe('usage', () => {
  it.each([
    [[], /the cache bucket is needed/],
    [['--cache-bucket', 'b', 'k.jpg'], /the distribution is needed: --distribution-id ID .* or --no-invalidation/],
    [['--cache-bucket', 'b', '--distribution-id', 'E1'], /name at least one source key \(or --everything\)/],
    [['--cache-bucket', 'b', '--no-invalidation', '--everything'], /--no-invalidation and --everything contradict/],
    [['--cache-bucket', 'b', '--no-invalidation', '--distribution-id', 'E1', 'k.jpg'], /contradict/],
    [['--cache-bucket', 'b', '--no-invalidation', '--endpoint', 'localhost:4566', 'k.jpg'], /--endpoint must be an http\(s\) URL/],
    [['--cache-bucket', 'b', '--bucket', 'x', 'k.jpg'], /Unknown option '--bucket'/],
  ])('%j is a usage error (exit 2, the usage on stderr)', async (argv, message) => {
    const result = await run(argv as string[]);
    expect(result.status).toBe(2);
    expect(result.out).toEqual([]);
    expect(result.err[0]).toMatch(message);
    expect(result.err[1]).toBe(USAGE);
  });

  it('--help prints the usage (exit 0)', async () => {
    const result = await run(['--help']);
    expect(result).toMatchObject({ status: 0, out: [USAGE], err: [] });
    expect(parsePurgeArgs(['-h'], {})).toBeUndefined();
  });
});

describe('the command', () => {
  function npm(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn('npm', ['run', '--silent', 'purge', '--', ...args], {
        cwd: PROJECT_ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, CACHE_BUCKET: '', DISTRIBUTION_ID: '' },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.on('error', reject);
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });
  }

  it('npm run purge deletes variants from LocalStack and exits 0; a usage error exits 2', async () => {
    const ok = await npm([
      '--endpoint',
      inject('s3Endpoint'),
      '--cache-bucket',
      buckets.cacheBucket,
      '--no-invalidation',
      'photos/my cat.jpg',
    ]);
    // (stderr may carry npm's and the AWS SDK's own warnings about this machine's setup.)
    expect(ok.stderr).not.toMatch(/purge:|Error:/);
    expect(ok.stdout).toContain('ok    photos/my cat.jpg: 2 variant(s) deleted; not invalidated (--no-invalidation)\n');
    expect(ok.status).toBe(0);
    expect(await listKeys(buckets.s3, buckets.cacheBucket)).toEqual([...CAT, ...NEIGHBOURS, ...PLUS].sort());

    const bad = await npm(['photos/cat.jpg']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('purge: the cache bucket is needed');
  }, 60_000);
});
