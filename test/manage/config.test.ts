// The management Lambdas' settings as deployed: the environment the construct
// writes (manageEnvironment) read back (readManageConfig), and which uploads
// an event names (stagedKeys), from an S3 notification or from EventBridge.
// No storage: these are the entries' pure halves.

import { describe, expect, it } from 'vitest';
import { originConfig } from '../../lambda/origin/config';
import { manageConfig, manageEnvironment, readManageConfig } from '../../lambda/manage/config';
import { stagedKeys } from '../../lambda/manage/validate';
import { bridgeEvent, s3Event, s3EventKey } from '../invalidate/support';

const buckets = { sourceBucket: 'originals', cacheBucket: 'variants' };

describe('readManageConfig', () => {
  it("reads back what manageEnvironment writes: the origin's sources and limits, the memory size being the function's own", () => {
    const origin = originConfig(buckets, {
      sourceBuckets: { 'archive/': 'old-photos' },
      webOrigins: { 'shop/': { url: 'https://shop.example.com/images/', revalidateSeconds: 3600 } },
      maxSourceBytes: 10_000_000,
      maxInputPixels: 50_000_000,
      maxFrames: 9,
      maxDimension: 4096,
      timeBudgetMs: 50_000,
      svgPolicy: 'rasterize',
      memorySizeMb: 3008,
    });
    const environment = manageEnvironment(origin, { stripLocation: true });
    // Nothing of the origin's that the management Lambdas do not read: not the cache bucket, not the watermarks.
    expect(Object.keys(environment).sort()).toEqual(
      [
        'SOURCE_BUCKET',
        'SOURCE_BUCKETS',
        'WEB_ORIGINS',
        'MAX_SOURCE_BYTES',
        'MAX_INPUT_PIXELS',
        'MAX_FRAMES',
        'MAX_INLINE_BYTES',
        'MAX_DIMENSION',
        'TIME_BUDGET_MS',
        'SVG_POLICY',
        'MANAGE_STRIP_LOCATION',
      ].sort(),
    );
    const read = readManageConfig({ ...environment, AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '3008' });
    expect(JSON.parse(JSON.stringify(read))).toEqual(JSON.parse(JSON.stringify(manageConfig(origin, { stripLocation: true }))));
    expect(read.stripLocation).toBe(true);
    expect(read.routes.map((route) => [route.kind, route.prefix])).toEqual([
      ['bucket', 'archive/'],
      ['web', 'shop/'],
      ['bucket', ''],
    ]);
  });

  it('takes the defaults, and names what is missing or wrong', () => {
    const read = readManageConfig({ SOURCE_BUCKET: 'originals' });
    expect(read).toEqual(manageConfig(originConfig(buckets)));
    expect(read.stripLocation).toBe(false);
    expect(manageEnvironment(originConfig(buckets), { stripLocation: false })).not.toHaveProperty('MANAGE_STRIP_LOCATION');
    expect(() => readManageConfig({})).toThrow(/SOURCE_BUCKET is required/);
    expect(() => readManageConfig({ SOURCE_BUCKET: 'originals', MAX_SOURCE_BYTES: 'many' })).toThrow(/MAX_SOURCE_BYTES/);
    expect(() => readManageConfig({ SOURCE_BUCKET: 'originals', MANAGE_STRIP_LOCATION: 'yes' })).toThrow(/MANAGE_STRIP_LOCATION/);
  });

  it("reads the JWT callers' prefix template, and refuses one that is not", () => {
    expect(readManageConfig({ SOURCE_BUCKET: 'originals', MANAGE_JWT_PREFIX: 'users/{sub}/' }).jwtPrefix).toBe('users/{sub}/');
    expect(readManageConfig({ SOURCE_BUCKET: 'originals' }).jwtPrefix).toBeUndefined();
    expect(() => readManageConfig({ SOURCE_BUCKET: 'originals', MANAGE_JWT_PREFIX: 'users/' })).toThrow(
      /MANAGE_JWT_PREFIX must be exactly one \{claim\}/,
    );
  });
});

describe('stagedKeys', () => {
  const config = manageConfig(originConfig(buckets));

  it("names an EventBridge Object Created event's staged upload, its key decoded", () => {
    expect(stagedKeys(config, bridgeEvent('Object Created', 'originals', '_uploads/photos/cat 1.jpg'))).toEqual([
      '_uploads/photos/cat 1.jpg',
    ]);
  });

  it('passes over other EventBridge events: deletions, other buckets, keys not staged', () => {
    expect(stagedKeys(config, bridgeEvent('Object Deleted', 'originals', '_uploads/cat.jpg'))).toEqual([]);
    expect(stagedKeys(config, bridgeEvent('Object Created', 'another-bucket', '_uploads/cat.jpg'))).toEqual([]);
    expect(stagedKeys(config, bridgeEvent('Object Created', 'originals', 'photos/cat.jpg'))).toEqual([]);
    expect(stagedKeys(config, bridgeEvent('Object Created', 'originals', '_quarantine/cat.jpg'))).toEqual([]);
  });

  it("names an S3 notification's staged uploads in order, their keys decoded", () => {
    const event = s3Event([
      { eventName: 'ObjectCreated:Post', rawKey: s3EventKey('_uploads/a b+1.jpg'), bucket: 'originals' },
      { eventName: 'ObjectCreated:Put', rawKey: s3EventKey('elsewhere.jpg'), bucket: 'originals' },
      { eventName: 'ObjectRemoved:Delete', rawKey: s3EventKey('_uploads/gone.jpg'), bucket: 'originals' },
      { eventName: 'ObjectCreated:Copy', rawKey: s3EventKey('_uploads/ü.png'), bucket: 'originals' },
    ]);
    expect(stagedKeys(config, event)).toEqual(['_uploads/a b+1.jpg', '_uploads/ü.png']);
  });
});
