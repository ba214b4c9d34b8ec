// A second source bucket mapped to a key prefix (SOURCE_BUCKETS), through the
// real origin and invalidation handlers on LocalStack: `archive/2020/a.png`
// reads object `2020/a.png` of the archive bucket, every other key the
// default bucket as before; its variants are cached under the URL key; and an
// EventBridge event of the archive bucket purges exactly those variants.

import { PutObjectCommand } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isNear, pixelAt, type Rgb } from '../support/images';
import { createTestOrigin, type TestOrigin } from '../support/origin';
import { createTestBuckets, putObject, type TestBuckets } from '../support/s3';
import { bridgeEvent, invalidationOf, s3Event, s3EventKey } from '../invalidate/support';

const RED: Rgb = { r: 255, g: 0, b: 0 };
const GREEN: Rgb = { r: 0, g: 255, b: 0 };
const BLUE: Rgb = { r: 0, g: 0, b: 255 };

let archive: TestBuckets;
let origin: TestOrigin;

const png = (colour: Rgb, width = 40, height = 40) =>
  sharp({ create: { width, height, channels: 3, background: colour } })
    .png()
    .toBuffer();

/** The colour at the middle of the image `uri` answers with, which must be a 200. */
async function colourOf(uri: string): Promise<Rgb> {
  const response = await origin.request(uri);
  expect(response.status, `${uri}: ${response.body.toString('utf8', 0, 200)}`).toBe(200);
  const { width, height } = await sharp(response.body).metadata();
  return pixelAt(response.body, Math.floor(width / 2), Math.floor(height / 2));
}

const expectColour = (actual: Rgb, expected: Rgb) => expect(isNear(actual, expected), JSON.stringify(actual)).toBe(true);

beforeAll(async () => {
  archive = await createTestBuckets('archive');
  afterAll(() => archive.cleanup());
  origin = await createTestOrigin('source-buckets', { sourceBuckets: { 'archive/': archive.sourceBucket } });
  await Promise.all([
    putObject(archive.s3, archive.sourceBucket, '2020/a.png', await png(RED), 'image/png'),
    // Under the prefix, the default bucket's own object is no longer served...
    origin.putSource('archive/2020/a.png', await png(BLUE), 'image/png'),
    // ...and outside it, nothing changes.
    origin.putSource('photos/a.png', await png(GREEN), 'image/png'),
    origin.putSource('archive2/a.png', await png(GREEN), 'image/png'),
  ]);
});

describe('a bucket mapped to a prefix', () => {
  it('serves a key under the prefix from that bucket, the prefix stripped, and caches the variant under the URL key', async () => {
    expectColour(await colourOf('/archive/2020/a.png/width=20'), RED);
    expect(await origin.cachedKeys()).toContain('archive/2020/a.png/width=20');
    expect(await origin.cachedKeys()).not.toContain('2020/a.png/width=20');
  });

  it('serves every other key from the default bucket, as without the mapping (a key that only starts alike included)', async () => {
    expectColour(await colourOf('/photos/a.png/width=20'), GREEN);
    expectColour(await colourOf('/archive2/a.png/width=20'), GREEN);
  });

  it('answers a key missing from that bucket with a 404, and writes no variant', async () => {
    const response = await origin.request('/archive/2021/missing.png/width=20');
    expect(response.status).toBe(404);
    expect(JSON.parse(response.body.toString())).toMatchObject({ error: 'not_found' });
    expect((await origin.cachedKeys()).filter((key) => key.startsWith('archive/2021/'))).toEqual([]);
    // The service still serves the next request.
    expectColour(await colourOf('/archive/2020/a.png/width=21'), RED);
  });

  it("applies that bucket's objects' focal point metadata as the default bucket's", async () => {
    // Left half red, right half blue; the focal point near the right edge.
    const halves = await sharp({ create: { width: 200, height: 100, channels: 3, background: RED } })
      .composite([{ input: await png(BLUE, 100, 100), left: 100, top: 0 }])
      .png()
      .toBuffer();
    await archive.s3.send(
      new PutObjectCommand({
        Bucket: archive.sourceBucket,
        Key: 'halves.png',
        Body: halves,
        ContentType: 'image/png',
        Metadata: { 'focal-point': '0.9,0.5' },
      }),
    );
    const response = await origin.request('/archive/halves.png/width=50,height=100');
    expect(response.status).toBe(200);
    // Centred, the crop's left edge would be red; on the focal point it is blue.
    expectColour(await pixelAt(response.body, 2, 50), BLUE);
  });

  it("purges the variants of a changed object from that bucket's EventBridge event, so the next request shows the new image", async () => {
    await colourOf('/archive/2020/a.png/width=30');
    await putObject(archive.s3, archive.sourceBucket, '2020/a.png', await png(BLUE), 'image/png');

    const { handle: invalidate, cloudFront, logs } = invalidationOf(origin, { sourceBuckets: { 'archive/': archive.sourceBucket } });
    // The default bucket's own object under the prefix is nobody's source: its notification purges nothing.
    const shadowed = await invalidate(
      s3Event([{ eventName: 'ObjectCreated:Put', rawKey: s3EventKey('archive/2020/a.png'), bucket: origin.sourceBucket }]),
    );
    expect(shadowed.keys).toEqual([]);
    expect(cloudFront.calls).toEqual([]);
    expect(logs.events('ignored')).toMatchObject([
      { rawKey: 'archive/2020/a.png', reason: 'the key is under a prefix served from another bucket' },
    ]);

    const report = await invalidate(bridgeEvent('Object Created', archive.sourceBucket, '2020/a.png'));
    expect(report.keys).toMatchObject([{ key: 'archive/2020/a.png', change: 'created', deleted: 3 }]);
    expect(cloudFront.calls[0]?.paths).toEqual([
      '/archive/2020/a.png/width=20',
      '/archive/2020/a.png/width=21',
      '/archive/2020/a.png/width=30',
    ]);
    expect((await origin.cachedKeys()).filter((key) => key.startsWith('archive/2020/a.png/'))).toEqual([]);
    // The default bucket's variants are untouched.
    expect(await origin.cachedKeys()).toContain('photos/a.png/width=20');

    expectColour(await colourOf('/archive/2020/a.png/width=30'), BLUE);
  });
});
