// The source-changed Lambda, end to end against LocalStack S3: what it
// deletes from the cache bucket (and what it leaves), the one CloudFront
// invalidation it asks for (exact paths, within CloudFront's limits), the
// warming requests it makes, and how it reports failures. CloudFront and the distribution's HTTP endpoint are recording
// doubles (see support.ts): LocalStack's free edition has no CloudFront.
//
// Not covered here: per-key errors inside a successful DeleteObjects answer.
// LocalStack only produces those for requests naming a VersionId, which this
// Lambda never sends; the handler logs them like the whole-call failure that
// is tested below (purge_failed, with the keys, codes and messages).

import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createInvalidationHandler, SourceChangeError, type InvalidationReport } from '../../lambda/invalidate/handler';
import type { InvalidateConfig } from '../../lambda/invalidate/config';
import { sourceWildcards } from '../../lambda/invalidate/paths';
import { canonicalRequest, splitQuery, verifySignature, type GrammarOptions } from '../../lambda/grammar';
import { localS3Client } from '../../local/harness/s3-client';
import { createTestBuckets, listKeys, putObject, type TestBuckets } from '../support/s3';
import {
  DISTRIBUTION_ID,
  DISTRIBUTION_ORIGIN,
  created,
  expectExactly as expectOnly,
  limitedCloudFront,
  recordingCloudFront,
  recordingFetch,
  recordingLog,
  removed,
  s3Event,
  s3EventKey,
  testConfig,
  variantUri,
  type RecordSpec,
} from './support';

let buckets: TestBuckets;

beforeAll(async () => {
  buckets = await createTestBuckets('invalidate');
});

afterAll(async () => {
  await buckets?.cleanup();
});

/** Puts objects into the cache bucket, `parallel` PutObjects at a time. */
async function putVariants(keys: string[], parallel = 100): Promise<void> {
  for (let i = 0; i < keys.length; i += parallel) {
    await Promise.all(keys.slice(i, i + parallel).map((key) => putObject(buckets.s3, buckets.cacheBucket, key, 'variant', 'image/webp')));
  }
}

async function cachedUnder(prefix: string): Promise<string[]> {
  return (await listKeys(buckets.s3, buckets.cacheBucket)).filter((key) => key.startsWith(prefix)).sort();
}

function setup(
  overrides: Partial<InvalidateConfig> = {},
  options: { cloudFront?: ReturnType<typeof recordingCloudFront>; fetch?: ReturnType<typeof recordingFetch> } = {},
) {
  const cloudFront = options.cloudFront ?? recordingCloudFront();
  const fetch = options.fetch ?? recordingFetch();
  const logs = recordingLog();
  const handle = createInvalidationHandler({
    s3: buckets.s3,
    cloudFront: cloudFront.client,
    config: testConfig(buckets.cacheBucket, overrides),
    log: logs.log,
    fetch: fetch.fetch,
  });
  return { handle: (records: RecordSpec[]) => handle(s3Event(records)), cloudFront, fetch, logs };
}

/** expectExactly for variants as keys of the cache bucket, `<source key>/<ops>`. */
function expectExactly(paths: string[], own: string[], others: string[]): void {
  expectOnly(
    paths,
    own.map((variant) => [variant.slice(0, variant.lastIndexOf('/')), variantUri(variant)]),
    others.map(variantUri),
  );
}

/** The rejection of `promise`, which must reject with a SourceChangeError. */
async function sourceChangeError(promise: Promise<unknown>): Promise<SourceChangeError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(SourceChangeError);
    return error as SourceChangeError;
  }
  throw new Error('expected the handler to reject, and it resolved');
}

describe('purge', () => {
  it('deletes every variant of the changed source and nothing else, even sources whose keys extend it', async () => {
    const variants = ['p1/cat.jpg/original', 'p1/cat.jpg/width=100', 'p1/cat.jpg/width=200,format=webp', 'p1/cat.jpg/format=json'];
    const others = [
      'p1/cat.jpg/inner.jpg/width=100', // a variant of the source "p1/cat.jpg/inner.jpg"
      'p1/cat.jpg/inner.jpg/original',
      'p1/cat.jpg2/width=100',
      'p1/cat.jp/width=100',
      'p1/Cat.jpg/width=100',
      'p1/dog.jpg/width=100',
    ];
    await putVariants([...variants, ...others]);
    await putObject(buckets.s3, buckets.sourceBucket, 'p1/cat.jpg', 'source');
    const { handle, cloudFront, logs } = setup();

    const report = await handle(created('p1/cat.jpg'));

    expect(await cachedUnder('p1/')).toEqual([...others].sort());
    expect(await listKeys(buckets.s3, buckets.sourceBucket)).toContain('p1/cat.jpg');
    expect(report.keys).toEqual([{ key: 'p1/cat.jpg', change: 'created', deleted: 4, errors: [] }]);
    expect(logs.events('purged')).toEqual([
      expect.objectContaining({ level: 'info', key: 'p1/cat.jpg', change: 'created', events: ['ObjectCreated:Put'], deleted: 4 }),
    ]);
    // Exactly the URIs CloudFront can hold of this source: the neighbours' cached copies are left alone.
    expect(cloudFront.calls).toEqual([
      {
        distributionId: DISTRIBUTION_ID,
        paths: ['/p1/cat.jpg/format=json', '/p1/cat.jpg/original', '/p1/cat.jpg/width=100', '/p1/cat.jpg/width=200,format=webp'],
        callerReference: expect.any(String),
      },
    ]);
  });

  it('pages through more than 1000 variants (ListObjectsV2 pages, DeleteObjects batches of 1000)', async () => {
    const variants = Array.from({ length: 1050 }, (_, i) => `p2/big photo.jpg/width=${i + 1}`);
    const others = ['p2/big photo.jpg/nested.jpg/width=1', 'p2/big photo.jpg.bak/width=1', 'p2/big photo.jp/original'];
    await putVariants([...variants, ...others]);
    // A client of its own, to count the calls the handler makes (the calls still go to LocalStack).
    const s3 = localS3Client(inject('s3Endpoint'));
    const commands: string[] = [];
    s3.middlewareStack.add(
      (next, context) => (args) => {
        commands.push(String(context.commandName));
        return next(args);
      },
      { step: 'initialize' },
    );
    const cloudFront = recordingCloudFront();
    const logs = recordingLog();
    const handle = createInvalidationHandler({ s3, cloudFront: cloudFront.client, config: testConfig(buckets.cacheBucket), log: logs.log });

    const report = await handle(s3Event(created('p2/big photo.jpg')));

    expect(report.keys[0]).toMatchObject({ key: 'p2/big photo.jpg', deleted: 1050, errors: [] });
    expect(logs.events('purged')[0]).toMatchObject({ deleted: 1050 });
    expect(commands).toEqual(['ListObjectsV2Command', 'ListObjectsV2Command', 'DeleteObjectsCommand', 'DeleteObjectsCommand']);
    expect(await cachedUnder('p2/')).toEqual([...others].sort());
    // Too many variants for exact paths: the source's one wildcard instead.
    expect(cloudFront.calls).toHaveLength(1);
    expect(cloudFront.calls[0]!.paths).toEqual(['/p2/big%20photo.jpg/*']);
  });

  it('deletes nothing and invalidates nothing when a source has no variants (a new upload): CloudFront holds none', async () => {
    const { handle, cloudFront, logs } = setup();
    const report = await handle(created('p3/new.jpg'));
    expect(report.keys[0]).toMatchObject({ deleted: 0, errors: [] });
    expect(report.paths).toEqual([]);
    expect(logs.events('purged')[0]).toMatchObject({ deleted: 0 });
    expect(logs.events('nothing_to_invalidate')).toEqual([expect.objectContaining({ pass: 1 })]);
    expect(cloudFront.calls).toEqual([]);
  });

  it('handles removal events the same way (ObjectRemoved:*, lifecycle expiration), without warming', async () => {
    await putVariants(['p4/gone.jpg/width=10', 'p4/gone.jpg/original', 'p4/expired.png/original', 'p4/kept.jpg/original']);
    const { handle, cloudFront, fetch, logs } = setup({ eagerPresets: ['thumb'] });

    const report = await handle([...removed('p4/gone.jpg'), { eventName: 'LifecycleExpiration:Delete', rawKey: 'p4/expired.png' }]);

    expect(await cachedUnder('p4/')).toEqual(['p4/kept.jpg/original']);
    expect(report.keys.map((key) => [key.key, key.change, key.deleted])).toEqual([
      ['p4/gone.jpg', 'removed', 2],
      ['p4/expired.png', 'removed', 1],
    ]);
    expect(cloudFront.calls).toHaveLength(1);
    expect(cloudFront.calls[0]!.paths).toEqual(['/p4/expired.png/original', '/p4/gone.jpg/original', '/p4/gone.jpg/width=10']);
    expect(fetch.calls).toEqual([]);
    expect(logs.events('warmed')).toEqual([]);
  });
});

describe('event keys', () => {
  it('decodes S3 event keys (+ is a space; spaces, +, %, #, non-ASCII, parentheses, ~)', async () => {
    const keys = ['p5/my cat+1 100%#é.jpg', 'p5/日本語 (2).png', "p5/a~b!'*.webp"];
    await putVariants(keys.flatMap((key) => [`${key}/original`, `${key}/width=64`]));
    await putVariants(['p5/my cat+1 100%#é.jpg.bak/original', 'p5/my cat 1 100%#é.jpg/original']);
    const { handle, cloudFront } = setup();

    const report = await handle([
      { eventName: 'ObjectCreated:Put', rawKey: s3EventKey(keys[0]!) },
      { eventName: 'ObjectCreated:Put', rawKey: s3EventKey(keys[1]!, true) },
      { eventName: 'ObjectCreated:CompleteMultipartUpload', rawKey: s3EventKey(keys[2]!, true) },
    ]);

    expect(s3EventKey(keys[0]!)).toBe('p5/my+cat%2B1+100%25%23%C3%A9.jpg');
    expect(report.keys.map((key) => [key.key, key.deleted])).toEqual(keys.map((key) => [key, 2]));
    expect(await cachedUnder('p5/')).toEqual(['p5/my cat 1 100%#é.jpg/original', 'p5/my cat+1 100%#é.jpg.bak/original']);
    // One invalidation, of exactly the variants' URIs: the neighbours that survived the purge are not reached.
    expect(cloudFront.calls).toHaveLength(1);
    expect(cloudFront.calls[0]!.paths.filter((path) => path.includes('*'))).toEqual([]);
    expectExactly(
      cloudFront.calls[0]!.paths,
      keys.flatMap((key) => [`${key}/original`, `${key}/width=64`]),
      await cachedUnder('p5/'),
    );
  });

  it("tells a '+' in a key from a space", async () => {
    await putVariants(['p6/a b.jpg/original', 'p6/a+b.jpg/original']);
    const { handle } = setup();

    await handle([{ eventName: 'ObjectCreated:Put', rawKey: 'p6/a+b.jpg' }]);
    expect(await cachedUnder('p6/')).toEqual(['p6/a+b.jpg/original']);

    await handle([{ eventName: 'ObjectCreated:Put', rawKey: 'p6/a%2Bb.jpg' }]);
    expect(await cachedUnder('p6/')).toEqual([]);
  });

  it('ignores, and logs, records it has nothing to do for', async () => {
    await putVariants(['p7/x.jpg/original']);
    const { handle, cloudFront, logs } = setup();

    const report = await handle([
      { eventName: 'ObjectRestore:Completed', rawKey: 'p7/x.jpg' },
      { eventName: 'ObjectCreated:Put', rawKey: 'p7/x.jpg/width=10', bucket: buckets.cacheBucket },
      { eventName: 'ObjectCreated:Put', rawKey: 'p7//x.jpg' },
      { eventName: 'ObjectCreated:Put', rawKey: 'p7/folder/' },
      { eventName: 'ObjectRemoved:Delete', rawKey: 'p7/%E0%A4%A' },
    ]);

    expect(report.keys).toEqual([]);
    expect(cloudFront.calls).toEqual([]);
    expect(await cachedUnder('p7/')).toEqual(['p7/x.jpg/original']);
    expect(logs.events('ignored').map((entry) => entry.reason)).toEqual([
      'not an object created or removed event',
      'the event is from the cache bucket, not a source bucket',
      'Invalid source key: it has an empty path segment.',
      'Invalid source key: it has an empty path segment.',
      'the key is not valid percent-encoded UTF-8',
    ]);

    // An event with no records at all (e.g. a test notification) is a no-op too.
    const empty = createInvalidationHandler({
      s3: buckets.s3,
      cloudFront: cloudFront.client,
      config: testConfig(buckets.cacheBucket),
      log: () => {},
    });
    await expect(empty({} as never)).resolves.toMatchObject({ keys: [], paths: [] });
    expect(cloudFront.calls).toEqual([]);
  });
});

describe('invalidation', () => {
  it('makes one invalidation per event, for all its records, with a unique caller reference each time', async () => {
    await putVariants(['p8/a.jpg/original', 'p8/b.png/width=5', 'p8/sub/c d.gif/original']);
    const { handle, cloudFront, logs } = setup();

    await handle([...created('p8/a.jpg', 'p8/sub/c d.gif'), ...removed('p8/b.png'), ...created('p8/a.jpg')]);
    await putVariants(['p8/a.jpg/width=7']);
    await handle(created('p8/a.jpg'));

    expect(await cachedUnder('p8/')).toEqual([]);
    expect(cloudFront.calls).toHaveLength(2);
    const paths = ['/p8/a.jpg/original', '/p8/b.png/width=5', '/p8/sub/c%20d.gif/original'];
    expect(cloudFront.calls[0]).toEqual({ distributionId: DISTRIBUTION_ID, paths, callerReference: expect.any(String) });
    expect(cloudFront.calls[1]!.paths).toEqual(['/p8/a.jpg/width=7']);
    expect(cloudFront.calls[0]!.callerReference).not.toBe(cloudFront.calls[1]!.callerReference);
    expect(logs.events('invalidated')[0]).toMatchObject({
      level: 'info',
      distributionId: DISTRIBUTION_ID,
      invalidationId: 'I1EXAMPLE',
      paths,
    });
    // The duplicate record for a.jpg is one key, purged once.
    expect(
      logs
        .events('purged')
        .map((entry) => entry.key)
        .sort(),
    ).toEqual(['p8/a.jpg', 'p8/a.jpg', 'p8/b.png', 'p8/sub/c d.gif']);
  });

  it('reports a CloudFront failure, keeps the variants for the retry, skips warming, and rejects so Lambda retries', async () => {
    await putVariants(['p9/a.jpg/original', 'p9/a.jpg/width=1']);
    const failure = Object.assign(new Error('Your request contains too many invalidations.'), { name: 'TooManyInvalidationsInProgress' });
    let busy = true;
    const cloudFront = recordingCloudFront(async () => {
      if (busy) throw failure;
      return { id: 'I2EXAMPLE', status: 'InProgress' };
    });
    const { handle, fetch, logs } = setup({ eagerPresets: ['thumb'] }, { cloudFront });

    const error = await sourceChangeError(handle(created('p9/a.jpg')));

    // Deleted now, the retry would find nothing to invalidate: CloudFront would keep the old image.
    expect(await cachedUnder('p9/')).toEqual(['p9/a.jpg/original', 'p9/a.jpg/width=1']);
    expect(cloudFront.calls).toHaveLength(1);
    expect(error.message).toBe(
      'Source change not fully applied: the CloudFront invalidation failed (TooManyInvalidationsInProgress: Your request contains too many invalidations.).',
    );
    expect(error.report.keys[0]).toMatchObject({ key: 'p9/a.jpg', deleted: 0 });
    expect(logs.events('invalidation_failed')).toEqual([
      expect.objectContaining({
        level: 'error',
        paths: ['/p9/a.jpg/original', '/p9/a.jpg/width=1'],
        error: 'TooManyInvalidationsInProgress: Your request contains too many invalidations.',
      }),
    ]);
    expect(fetch.calls).toEqual([]);
    expect(logs.events('warm_skipped')).toEqual([expect.objectContaining({ key: 'p9/a.jpg' })]);
    expect(logs.events('source_changed')[0]).toMatchObject({ level: 'error', invalidationFailed: true, deleted: 0 });

    // Lambda's retry, once CloudFront has room again: the same paths, then the purge, then the warming.
    busy = false;
    const report = await handle(created('p9/a.jpg'));
    expect(cloudFront.calls[1]!.paths).toEqual(['/p9/a.jpg/original', '/p9/a.jpg/width=1']);
    expect(report.keys[0]).toMatchObject({ deleted: 2 });
    expect(await cachedUnder('p9/')).toEqual([]);
    expect(fetch.calls.length).toBeGreaterThan(0);
  });

  it('invalidates while the variants are still in the cache bucket, deletes them, and with SETTLE_MS invalidates the same paths again once they are gone', async () => {
    await putVariants(['order/a.jpg/original', 'order/a.jpg/width=100']);
    // What the cache bucket holds of the source at the moment each invalidation is created.
    const seen: string[][] = [];
    const cloudFront = recordingCloudFront(async () => {
      seen.push(await cachedUnder('order/'));
      return { id: `I${seen.length}EXAMPLE`, status: 'InProgress' };
    });
    const { handle } = setup({ settleMs: 50 }, { cloudFront });

    await handle(created('order/a.jpg'));

    // The first: refused, it would have left the variants for the retry to find.
    expect(seen[0]).toEqual(['order/a.jpg/original', 'order/a.jpg/width=100']);
    // The second follows the delete: an edge that fetched an old variant in between drops it too.
    expect(seen[1]).toEqual([]);
    expect(cloudFront.calls.map((call) => call.paths)).toEqual([
      ['/order/a.jpg/original', '/order/a.jpg/width=100'],
      ['/order/a.jpg/original', '/order/a.jpg/width=100'],
    ]);
    expect(await cachedUnder('order/')).toEqual([]);
  });

  it('reports a purge that fails (no such cache bucket), still invalidates, and rejects', async () => {
    const { handle, cloudFront, logs } = setup({ cacheBucket: `${buckets.cacheBucket}-missing` });

    const error = await sourceChangeError(handle([...created('p10/a.jpg'), ...removed('p10/b.jpg')]));

    expect(error.message).toBe('Source change not fully applied: the variants of 2 source(s) were not all deleted.');
    const byKey = (a: Record<string, unknown>, b: Record<string, unknown>) => String(a.key).localeCompare(String(b.key));
    expect(logs.events('purge_failed').sort(byKey)).toEqual([
      expect.objectContaining({ level: 'error', key: 'p10/a.jpg', deleted: 0, failure: expect.stringMatching(/^NoSuchBucket: /) }),
      expect.objectContaining({ level: 'error', key: 'p10/b.jpg', deleted: 0, failure: expect.stringMatching(/^NoSuchBucket: /) }),
    ]);
    expect(cloudFront.calls).toHaveLength(1);
    expect(cloudFront.calls[0]!.paths).toEqual(['/p10/a.jpg/*', '/p10/b.jpg/*']);
  });
});

describe('invalidations exactly as wide as the change', () => {
  const RESERVED = [...`~!$&'()*+,:;=@`];

  it.each(RESERVED.map((character, index) => [character, index]))(
    "a key with %s (first, inside a name, in a folder's name): exactly its variants, none of its neighbours'",
    async (character, index) => {
      const folder = `rc${index}/`;
      const escape = '%' + character.charCodeAt(0).toString(16).toUpperCase();
      const keys = [`${folder}${character}x.jpg`, `${folder}u/x${character}y.jpg`, `${folder}${character}d/a.jpg`];
      const neighbours = [
        'x.jpg',
        'other.jpg',
        `${character}x.jpg.bak`,
        `${character}x.jpg/below.jpg`,
        'u/xy.jpg',
        'u/x.jpg',
        `u/x${escape}y.jpg`,
        'u/x y.jpg',
        'd/a.jpg',
        `${character}d/b.jpg`,
      ].map((key) => `${folder}${key}/original`);
      const variants = (key: string) => [`${key}/original`, `${key}/width=64,format=webp`];
      await putVariants([...keys.flatMap(variants), ...neighbours]);

      for (const [n, key] of keys.entries()) {
        const { handle, cloudFront, logs } = setup();
        const before = await cachedUnder(folder);
        // S3 may or may not escape ! ' ( ) * ~ in an event's key: either decodes to the same key.
        await handle([{ eventName: 'ObjectCreated:Put', rawKey: s3EventKey(key, n % 2 === 1) }]);
        expect(cloudFront.calls).toHaveLength(1);
        expect(cloudFront.calls[0]!.paths.filter((path) => path.includes('*'))).toEqual([]);
        expectExactly(
          cloudFront.calls[0]!.paths,
          variants(key),
          before.filter((variant) => !variants(key).includes(variant)),
        );
        // The one character no path can name as the cache key spells it: said in the logs.
        expect(logs.events('invalidation_unconfirmed')).toEqual(character === '~' ? [expect.objectContaining({ level: 'warn', key })] : []);
      }
      expect(await cachedUnder(folder)).toEqual(neighbours.sort());
    },
  );

  it('twenty keys of one folder in one event: their exact paths, nothing folded, no neighbour reached', async () => {
    const keys = Array.from({ length: 20 }, (_, i) => `many/k${i},x.jpg`);
    const variants = keys.flatMap((key) => [`${key}/original`, `${key}/width=100`, `${key}/width=200,format=avif`]);
    const neighbours = [
      'many/k1.jpg/original',
      'many/other.jpg/original',
      'many/k1,x.jpg/below.jpg/original',
      'many/k1,x.jpg.bak/original',
    ];
    await putVariants([...variants, ...neighbours]);
    const { handle, cloudFront } = setup();

    await handle(created(...keys));

    expect(cloudFront.calls).toHaveLength(1);
    // Each variant in both spellings of its ',' (see paths.ts).
    expect(cloudFront.calls[0]!.paths).toHaveLength(2 * variants.length);
    expectExactly(cloudFront.calls[0]!.paths, variants, neighbours);
    expect(await cachedUnder('many/')).toEqual(neighbours.sort());
  });

  it("folds sixteen unknown sources of one folder into that folder's wildcard, and never above their own folders", async () => {
    // A cache bucket it cannot list: each source's variants are unknown, so it takes its wildcard.
    const { handle, cloudFront, logs } = setup({ cacheBucket: `${buckets.cacheBucket}-missing` });
    const numbered = (name: (i: number) => string) => Array.from({ length: 16 }, (_, i) => name(i));

    await sourceChangeError(handle(created(...numbered((i) => `fold/${i}.jpg`))));
    expect(cloudFront.calls.map((call) => call.paths)).toEqual([['/fold/*']]);

    const error = await sourceChangeError(handle(created(...numbered((i) => `users/${i}/x,y.jpg`))));
    // 32 wildcards (two spellings each) that only /users/* could fold: not sent, nothing deleted, retried.
    expect(cloudFront.calls).toHaveLength(1);
    expect(error.report.invalidationError).toMatch(/^32 wildcard paths, more than the 15 CloudFront allows in progress/);
    expect(logs.events('invalidation_failed')).toEqual([
      expect.objectContaining({ level: 'error', paths: expect.not.arrayContaining(['/users/*']) }),
    ]);
  });
});

describe("bulk changes within CloudFront's limits", () => {
  it('replacing 40 sources at once (one event each, as S3 sends them) uses exact paths: all accepted, no wildcard', async () => {
    const keys = Array.from({ length: 40 }, (_, i) => `bulk1/photo-${i}.jpg`);
    await putVariants(keys.flatMap((key) => [`${key}/original`, `${key}/width=320`, `${key}/width=640,format=webp`]));
    const cloudFront = limitedCloudFront();
    const { handle } = setup({}, { cloudFront });

    // With a wildcard per source, as before, the 16th would have been refused.
    await Promise.all(keys.map((key) => handle(created(key))));

    expect(cloudFront.refused).toBe(0);
    expect(cloudFront.calls).toHaveLength(40);
    expect(cloudFront.calls.flatMap((call) => call.paths).filter((path) => path.includes('*'))).toEqual([]);
    expect(cloudFront.calls.flatMap((call) => call.paths)).toHaveLength(120);
    expect(await cachedUnder('bulk1/')).toEqual([]);
  });

  it('a change CloudFront refuses for now loses nothing: the event fails, and its retry invalidates and purges', async () => {
    // Sources with more variants than exact paths are spent on: two wildcards each, "(" being spelled two ways.
    const keys = Array.from({ length: 8 }, (_, i) => `bulk2/photo-${i}(1).jpg`);
    const many = (key: string) => Array.from({ length: 101 }, (_, i) => `${key}/width=${i + 1}`);
    await putVariants(keys.flatMap(many));
    const cloudFront = limitedCloudFront();
    const { handle } = setup({}, { cloudFront });

    const outcomes = await Promise.allSettled(keys.map((key) => handle(created(key))));

    const failed = keys.filter((_, i) => outcomes[i]!.status === 'rejected');
    expect(cloudFront.refused).toBe(1);
    expect(failed).toHaveLength(1);
    expect((outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason).toBeInstanceOf(SourceChangeError);
    // Its variants are still there for the retry to find; every other one is gone.
    expect(await cachedUnder('bulk2/')).toEqual(many(failed[0]!).sort());

    cloudFront.finish(); // CloudFront completes the invalidations in progress
    await handle(created(failed[0]!));
    expect(cloudFront.calls.at(-1)!.paths).toEqual(sourceWildcards(failed[0]!));
    expect(await cachedUnder('bulk2/')).toEqual([]);
  });
});

describe('a miss racing the change', () => {
  /** CloudFront, and a miss that read the old source and stores its variant just after the first invalidation. */
  function racingMiss(lateVariants: string[]) {
    const cloudFront = recordingCloudFront(async () => {
      if (cloudFront.calls.length === 1) await putVariants(lateVariants);
      return { id: `I${cloudFront.calls.length}EXAMPLE`, status: 'InProgress' };
    });
    return cloudFront;
  }

  it('with SETTLE_MS, purges and invalidates again once that miss must be over: its late variant goes too', async () => {
    await putVariants(['race/a.jpg/width=100']);
    const cloudFront = racingMiss(['race/a.jpg/width=200', 'race/b.jpg/width=200']);
    // (The racing miss stores its variant while the first invalidation is being sent, after the listing.)
    const { handle, logs } = setup({ settleMs: 300 }, { cloudFront });

    const started = performance.now();
    const report = await handle(created('race/a.jpg'));
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);

    // Another source's variant is left alone.
    expect(await cachedUnder('race/')).toEqual(['race/b.jpg/width=200']);
    // The second pass invalidates the first pass's paths again, with what it found.
    expect(cloudFront.calls.map((call) => call.paths)).toEqual([
      ['/race/a.jpg/width=100'],
      ['/race/a.jpg/width=100', '/race/a.jpg/width=200'],
    ]);
    expect(cloudFront.calls[0]!.callerReference).not.toBe(cloudFront.calls[1]!.callerReference);
    expect(report).toMatchObject({ keys: [{ key: 'race/a.jpg', deleted: 2, errors: [] }], invalidationId: 'I2EXAMPLE' });
    expect(logs.entries.map((entry) => [entry.event, entry.pass])).toEqual([
      ['invalidated', 1],
      ['purged', 1],
      ['settling', undefined],
      ['invalidated', 2],
      ['purged', 2],
      ['source_changed', undefined],
    ]);
  });

  it('without SETTLE_MS, one pass: the late variant stays (the window the second pass closes)', async () => {
    await putVariants(['race1/a.jpg/width=100']);
    const cloudFront = racingMiss(['race1/a.jpg/width=200']);
    const { handle } = setup({}, { cloudFront });
    await handle(created('race1/a.jpg'));
    expect(cloudFront.calls).toHaveLength(1);
    expect(await cachedUnder('race1/')).toEqual(['race1/a.jpg/width=200']);
  });

  it('warms the eager presets only after the second pass, so what it makes is not purged', async () => {
    await putVariants(['race2/a.jpg/width=100']);
    const cloudFront = racingMiss(['race2/a.jpg/width=200']);
    const { handle, logs, fetch } = setup({ settleMs: 100, eagerPresets: ['thumb'] }, { cloudFront });
    await handle(created('race2/a.jpg'));
    const events = logs.entries.map((entry) => entry.event);
    expect(events.lastIndexOf('invalidated')).toBeLessThan(events.indexOf('warmed'));
    expect(fetch.calls.length).toBeGreaterThan(0);
    expect(await cachedUnder('race2/')).toEqual([]);
  });

  it('a failed second invalidation still rejects, so Lambda runs the event again; the late variant stays for it', async () => {
    await putVariants(['race3/a.jpg/width=100']);
    const cloudFront = recordingCloudFront(async () => {
      if (cloudFront.calls.length === 1) await putVariants(['race3/a.jpg/width=200']);
      if (cloudFront.calls.length === 2) throw Object.assign(new Error('Rate exceeded'), { name: 'TooManyInvalidationsInProgress' });
      return { id: `I${cloudFront.calls.length}EXAMPLE`, status: 'InProgress' };
    });
    const { handle, logs } = setup({ settleMs: 50 }, { cloudFront });
    const error = await sourceChangeError(handle(created('race3/a.jpg')));
    expect(error.report.invalidationError).toBe('TooManyInvalidationsInProgress: Rate exceeded');
    expect(logs.events('invalidation_failed')).toEqual([expect.objectContaining({ pass: 2 })]);
    expect(await cachedUnder('race3/')).toEqual(['race3/a.jpg/width=200']);
  });
});

describe('eager presets', () => {
  const SECRET = 'warming-secret';
  const grammar: GrammarOptions = {
    maxDimension: 8192,
    presets: {
      thumb: { width: '200', height: '200', fit: 'cover' },
      hero: { width: '1600', format: 'webp', quality: '70' },
    },
    presetsOnly: true,
  };

  /** What the edge does: drop sig, canonicalise without Accept, verify. */
  function edgeVerifies(url: string): boolean {
    const parsed = new URL(url);
    const pairs = splitQuery(parsed.search.slice(1));
    const sig = pairs.find((pair) => pair[0] === 'sig')?.[1] ?? '';
    const uri = canonicalRequest(
      parsed.pathname,
      pairs.filter((pair) => pair[0] !== 'sig'),
      grammar,
    ).uri;
    return verifySignature(uri, sig, [SECRET]);
  }

  it('requests each preset once per distinct variant of the configured Accept headers, signed, after the invalidation', async () => {
    await putVariants(['p11/cat 1.jpg/width=200,height=200']);
    const { handle, fetch, logs } = setup({ eagerPresets: ['thumb', 'hero'], signingSecret: SECRET, grammar });

    const report = await handle(created('p11/cat 1.jpg'));

    const requests = fetch.calls.map((call) => [new URL(call.url).searchParams.get('preset'), call.headers.accept]);
    // hero fixes its format, so the three Accept headers lead to one variant and one request.
    expect(requests).toEqual([
      ['thumb', 'image/avif,image/webp,*/*'],
      ['thumb', 'image/webp,*/*'],
      ['thumb', '*/*'],
      ['hero', 'image/avif,image/webp,*/*'],
    ]);
    for (const call of fetch.calls) {
      expect(call.url).toMatch(new RegExp(`^${DISTRIBUTION_ORIGIN}/p11/cat%201\\.jpg\\?preset=(thumb|hero)&sig=[A-Za-z0-9_-]{32}$`));
      expect(edgeVerifies(call.url), call.url).toBe(true);
      expect(call.headers['user-agent']).toBe('edge-image-transformer-warmer');
    }
    expect(report.warmed.map((outcome) => outcome.uri)).toEqual([
      '/p11/cat%201.jpg/width=200,height=200,accept=avif',
      '/p11/cat%201.jpg/width=200,height=200,accept=webp',
      '/p11/cat%201.jpg/width=200,height=200',
      '/p11/cat%201.jpg/width=1600,quality=70,format=webp',
    ]);

    const warmed = logs.events('warmed');
    expect(warmed).toHaveLength(4);
    expect(warmed[0]).toMatchObject({
      level: 'info',
      key: 'p11/cat 1.jpg',
      preset: 'thumb',
      status: 200,
      cache: 'Miss from cloudfront',
      bytes: 123,
    });
    expect(String(warmed[0]!.url)).toMatch(/\?preset=thumb&sig=…$/); // the signature stays out of the logs
    // Invalidate, then purge, then warm.
    const order = logs.entries.map((entry) => entry.event);
    expect(order.indexOf('invalidated')).toBeLessThan(order.indexOf('purged'));
    expect(order.indexOf('purged')).toBeLessThan(order.indexOf('warmed'));
    expect(await cachedUnder('p11/')).toEqual([]);
  });

  it('with AVIF off at the edge, warms what the AVIF-capable browser gets (WebP) once', async () => {
    const { handle, fetch } = setup({ eagerPresets: ['thumb'], signingSecret: SECRET, grammar, avif: false });

    const report = await handle(created('p15/a.jpg'));

    expect(fetch.calls.map((call) => call.headers.accept)).toEqual(['image/avif,image/webp,*/*', '*/*']);
    expect(report.warmed.map((outcome) => outcome.uri)).toEqual([
      '/p15/a.jpg/width=200,height=200,accept=webp',
      '/p15/a.jpg/width=200,height=200',
    ]);
  });

  it('without signing or preset definitions, requests ?preset=<name> once per Accept header', async () => {
    const { handle, fetch } = setup({ eagerPresets: ['small'], eagerAccepts: ['image/avif,*/*', '*/*'] });

    await handle(created('p12/a+b.jpg'));

    expect(fetch.calls).toEqual([
      { url: `${DISTRIBUTION_ORIGIN}/p12/a%2Bb.jpg?preset=small`, headers: expect.objectContaining({ accept: 'image/avif,*/*' }) },
      { url: `${DISTRIBUTION_ORIGIN}/p12/a%2Bb.jpg?preset=small`, headers: expect.objectContaining({ accept: '*/*' }) },
    ]);
  });

  it('logs warming failures (an error status, a network error) and still succeeds', async () => {
    await putVariants(['p13/a.jpg/original']);
    const fetch = recordingFetch((call) => {
      if (call.headers.accept === '*/*') throw new TypeError('fetch failed');
      return new Response('{"error":"forbidden","message":"The signature is missing or wrong."}', {
        status: 403,
        headers: { 'content-type': 'application/json' },
      });
    });
    const { handle, logs, cloudFront } = setup({ eagerPresets: ['thumb'], eagerAccepts: ['image/webp,*/*', '*/*'] }, { fetch });

    const report: InvalidationReport = await handle(created('p13/a.jpg'));

    expect(await cachedUnder('p13/')).toEqual([]);
    expect(cloudFront.calls).toHaveLength(1);
    expect(report.warmed.map((outcome) => outcome.ok)).toEqual([false, false]);
    // Requests run in parallel: the log order is the order they finish in.
    const byAccept = (a: Record<string, unknown>, b: Record<string, unknown>) => String(b.accept).localeCompare(String(a.accept));
    expect(logs.events('warm_failed').sort(byAccept)).toEqual([
      expect.objectContaining({
        level: 'warn',
        key: 'p13/a.jpg',
        preset: 'thumb',
        accept: 'image/webp,*/*',
        status: 403,
        error: '{"error":"forbidden","message":"The signature is missing or wrong."}',
      }),
      expect.objectContaining({ level: 'warn', accept: '*/*', error: 'TypeError: fetch failed' }),
    ]);
    expect(logs.events('source_changed')[0]).toMatchObject({ level: 'info', warmed: 0, warmFailures: 2 });
  });

  it('gives up on a warming request after WARM_TIMEOUT_MS', async () => {
    const fetch = recordingFetch(() => new Promise<Response>(() => {}));
    // The recording fetch ignores the signal, as a hung server would not; wire it in.
    const abortable = {
      ...fetch,
      fetch: (url: string, init: { headers: Record<string, string>; signal: AbortSignal }) =>
        new Promise<Response>((resolve, reject) => {
          init.signal.addEventListener('abort', () => reject(init.signal.reason));
          fetch.fetch(url, init).then(resolve, reject);
        }),
    };
    const { handle, logs } = setup({ eagerPresets: ['thumb'], eagerAccepts: ['*/*'], warmTimeoutMs: 200 }, { fetch: abortable });

    const started = Date.now();
    await handle(created('p14/a.jpg'));

    expect(Date.now() - started).toBeLessThan(5_000);
    expect(logs.events('warm_failed')[0]).toMatchObject({ error: expect.stringMatching(/^TimeoutError: /) });
  });
});
