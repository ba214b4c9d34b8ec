// scripts/revalidate.ts: the uploads still staged after some minutes, sent to
// the validator again by a copy onto themselves (a new Object Created event,
// a new Last-Modified for the emulator's watcher), against LocalStack.

import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { main, revalidate, USAGE } from '../../scripts/revalidate';
import { createTestBuckets, putObject, type TestBuckets } from '../support/s3';

let buckets: TestBuckets;
const STAGED = ['_uploads/users/alice/a.jpg', '_uploads/b c.png'];

beforeAll(async () => {
  buckets = await createTestBuckets('revalidate');
  for (const key of STAGED) await putObject(buckets.s3, buckets.sourceBucket, key, `bytes of ${key}`, 'image/jpeg');
  await putObject(buckets.s3, buckets.sourceBucket, 'photos/ready.jpg', 'ready', 'image/jpeg');
  // Last-Modified counts whole seconds: the copies must be a second later to show.
  await new Promise((resolve) => setTimeout(resolve, 1100));
});

afterAll(() => buckets?.cleanup());

const head = (key: string) => buckets.s3.send(new HeadObjectCommand({ Bucket: buckets.sourceBucket, Key: key }));

function output() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, output: { out: (line: string) => out.push(line), err: (line: string) => err.push(line) } };
}

describe('npm run revalidate', () => {
  it('passes over uploads staged less than --older-than minutes ago', async () => {
    const { out, output: o } = output();
    expect(await revalidate({ bucket: buckets.sourceBucket, olderThanMinutes: 15, limit: 100 }, buckets.s3, o)).toBe(true);
    expect(out).toEqual(['No upload has been staged for 15 minutes or more.']);
  });

  it('copies each stale staged upload onto itself, oldest first, as it is: a new Last-Modified, the same bytes and type', async () => {
    const before = await Promise.all([...STAGED, 'photos/ready.jpg'].map(head));
    const { out, output: o } = output();
    const later = new Date(Date.now() + 20 * 60_000);
    expect(await revalidate({ bucket: buckets.sourceBucket, olderThanMinutes: 15, limit: 1, now: later }, buckets.s3, o)).toBe(true);
    expect(out).toHaveLength(2);
    expect(await revalidate({ bucket: buckets.sourceBucket, olderThanMinutes: 15, limit: 100, now: later }, buckets.s3, o)).toBe(true);
    expect(out.slice(2).sort()).toEqual(
      [
        'ok    users/alice/a.jpg: sent to the validator again',
        'ok    b c.png: sent to the validator again',
        "2 of 2 staged upload(s) sent to the validator again; see each one's status (GET /images/{key}).",
      ].sort(),
    );
    const after = await Promise.all([...STAGED, 'photos/ready.jpg'].map(head));
    for (const [i, key] of STAGED.entries()) {
      expect(after[i]!.LastModified!.getTime(), key).toBeGreaterThan(before[i]!.LastModified!.getTime());
      expect([after[i]!.ETag, after[i]!.ContentType, after[i]!.ContentLength]).toEqual([
        before[i]!.ETag,
        'image/jpeg',
        before[i]!.ContentLength,
      ]);
    }
    // A source is not an upload: untouched.
    expect(after[2]!.LastModified).toEqual(before[2]!.LastModified);
  });

  it('runs from the command line against an endpoint, and exits 1 when the bucket cannot be listed, 2 on a usage error', async () => {
    const endpoint = inject('s3Endpoint');
    const run = async (argv: string[], env: Record<string, string> = {}) => {
      const { out, err, output: o } = output();
      const status = await main(argv, o, undefined, env);
      return { status, out, err };
    };
    const done = await run(['--endpoint', endpoint], { SOURCE_BUCKET: buckets.sourceBucket });
    expect(done).toMatchObject({
      status: 0,
      out: [expect.stringContaining('revalidate: bucket'), 'No upload has been staged for 15 minutes or more.'],
    });
    const missing = await run(['--endpoint', endpoint, '--bucket', 'no-such-bucket-for-revalidate']);
    expect(missing.status).toBe(1);
    expect(missing.err.join('\n')).toMatch(/could not list the staged uploads: NoSuchBucket/);
    expect(await run([])).toMatchObject({ status: 2, err: [expect.stringContaining('--bucket NAME'), USAGE] });
    expect((await run(['--bucket', 'b', '--older-than', 'soon'])).status).toBe(2);
    expect((await run(['--bucket', 'b', '--limit', '5000'])).status).toBe(2);
    expect(await run(['--help'])).toMatchObject({ status: 0, out: [USAGE] });
  });
});
