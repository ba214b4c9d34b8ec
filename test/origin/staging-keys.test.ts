// The management API's staging, quarantine and import objects are in the source
// bucket, but no viewer reaches them: the origin answers their keys as it
// answers a missing source (404), whatever the object holds.

import { beforeAll, describe, expect, it } from 'vitest';
import { gradientJpeg } from '../support/images';
import { createTestOrigin, type TestOrigin } from '../support/origin';

let origin: TestOrigin;

beforeAll(async () => {
  origin = await createTestOrigin('staging-keys');
  const jpeg = await gradientJpeg(200, 100);
  await Promise.all(
    ['_uploads/cat.jpg', '_quarantine/cat.jpg', '_imports/cat.jpg', 'cat.jpg'].map((key) => origin.putSource(key, jpeg, 'image/jpeg')),
  );
});

describe('a key under the staging, quarantine or imports prefix', () => {
  it.each([
    '/_uploads/cat.jpg/width=100',
    '/_quarantine/cat.jpg/width=100',
    '/_quarantine/cat.jpg/format=json',
    '/_imports/cat.jpg/width=100',
  ])('%s is a 404, like a missing source, and nothing is stored', async (uri) => {
    const response = await origin.request(uri);
    expect(response.status).toBe(404);
    expect(JSON.parse(response.body.toString()).error).toBe('not_found');
  });

  it('leaves the source beside it served', async () => {
    expect((await origin.request('/cat.jpg/width=100')).status).toBe(200);
    const cached = await origin.cachedKeys();
    expect(cached).toHaveLength(1);
    expect(cached.filter((key) => /_uploads|_quarantine|_imports/.test(key))).toEqual([]);
  });
});
