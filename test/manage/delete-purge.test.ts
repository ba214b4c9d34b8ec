// A deleted source's variants go by the deployment's existing path, with no
// purge of the management API's own: DELETE /images deletes the source, S3
// sends the ObjectRemoved event the construct routes to the invalidation
// Lambda, and that Lambda deletes the variants and invalidates CloudFront.
// Here the origin makes a real variant in LocalStack, the management handler
// deletes its source, and the invalidation handler gets the event S3 sends
// for that delete (the notification itself is the construct's wiring, held
// by the template tests); CloudFront is the recording double LocalStack lacks.

import { beforeAll, describe, expect, it } from 'vitest';
import { manageConfig } from '../../lambda/manage/config';
import { createManageHandler } from '../../lambda/manage/handler';
import { gradientJpeg } from '../support/images';
import { createTestOrigin, type TestOrigin } from '../support/origin';
import { invalidationOf, removed, s3Event } from '../invalidate/support';
import { apiEvent } from './support';

let origin: TestOrigin;

beforeAll(async () => {
  origin = await createTestOrigin('manage-purge');
  await origin.putSource('shop/cat.jpg', await gradientJpeg(400, 300), 'image/jpeg');
});

describe('a source deleted through DELETE /images', () => {
  it('has its variants deleted and invalidated by the invalidation Lambda on its ObjectRemoved event', async () => {
    expect((await origin.request('/shop/cat.jpg/width=100')).status).toBe(200);
    expect((await origin.request('/shop/cat.jpg/width=50')).status).toBe(200);
    expect(await origin.cachedKeys()).toHaveLength(2);

    const manage = createManageHandler({ s3: origin.s3 }, manageConfig(origin.config));
    const deleted = await manage(apiEvent('DELETE', '/images', JSON.stringify({ keys: ['shop/cat.jpg'] })));
    expect(deleted.statusCode).toBe(200);

    const { handle: invalidate, cloudFront } = invalidationOf(origin);
    const records = removed('shop/cat.jpg').map((record) => ({ ...record, bucket: origin.sourceBucket }));
    await invalidate(s3Event(records));

    expect(await origin.cachedKeys()).toEqual([]);
    expect(cloudFront.calls.flatMap((call) => call.paths).sort()).toEqual(['/shop/cat.jpg/width=100', '/shop/cat.jpg/width=50']);
    expect((await origin.request('/shop/cat.jpg/width=100')).status).toBe(404);
  });
});
