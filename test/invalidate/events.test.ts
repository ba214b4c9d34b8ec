// S3 event records and EventBridge S3 events -> changed URL keys. S3
// form-encodes the key in a notification; decoding it wrong, or mapping a
// mapped bucket's object to the wrong URL key, would purge the wrong source (or none).

import { describe, expect, it } from 'vitest';
import { decodeEventKey, sourceChanges } from '../../lambda/invalidate/events';
import { bridgeEvent, s3Event, s3EventKey } from './support';

describe('decodeEventKey', () => {
  it.each([
    ['photos/my+cat.jpg', 'photos/my cat.jpg'],
    ['photos/a%2Bb.jpg', 'photos/a+b.jpg'],
    ['100%25/%231.jpg', '100%/#1.jpg'],
    ['%C3%A9t%C3%A9/%E6%97%A5%E6%9C%AC.png', 'été/日本.png'],
    ['a%28b%29%21%7E.jpg', 'a(b)!~.jpg'],
    ['a(b)!~*.jpg', 'a(b)!~*.jpg'],
    ['a%2Fb.jpg', 'a/b.jpg'],
  ])('%s -> %s', (raw, key) => {
    expect(decodeEventKey(raw)).toBe(key);
  });

  it('undoes s3EventKey for awkward keys', () => {
    for (const key of ['a b+c%d#e?f&g=h.jpg', '🐱/ü/ß.webp', "x/(1)!*'~.gif"]) {
      expect(decodeEventKey(s3EventKey(key))).toBe(key);
      expect(decodeEventKey(s3EventKey(key, true))).toBe(key);
    }
  });
});

describe('sourceChanges', () => {
  it('gives each key once, created if any record created it, in first-seen order', () => {
    const { changes, ignored } = sourceChanges(
      s3Event([
        { eventName: 'ObjectRemoved:Delete', rawKey: 'b.jpg' },
        { eventName: 'ObjectCreated:Put', rawKey: 'a+1.jpg' },
        { eventName: 'ObjectCreated:Copy', rawKey: 'b.jpg' },
        { eventName: 'ObjectRemoved:DeleteMarkerCreated', rawKey: 'a%201.jpg' },
      ]),
      'cache',
      {},
    );
    expect(ignored).toEqual([]);
    expect(changes).toEqual([
      { key: 'b.jpg', change: 'created', events: ['ObjectRemoved:Delete', 'ObjectCreated:Copy'] },
      { key: 'a 1.jpg', change: 'created', events: ['ObjectCreated:Put', 'ObjectRemoved:DeleteMarkerCreated'] },
    ]);
  });

  it('copes with a missing Records array', () => {
    expect(sourceChanges(undefined, 'cache', {})).toEqual({ changes: [], ignored: [] });
    expect(sourceChanges({}, 'cache', {})).toEqual({ changes: [], ignored: [] });
  });
});

describe('sourceChanges with buckets mapped to prefixes', () => {
  const buckets = { 'archive/': 'old-photos', 'press/kit/': 'press-bucket' };

  it("maps an EventBridge event of a mapped bucket to prefix + key, the key decoded as a notification's", () => {
    expect(sourceChanges(bridgeEvent('Object Created', 'old-photos', '2020/a b+c%.jpg'), 'cache', buckets).changes).toEqual([
      { key: 'archive/2020/a b+c%.jpg', change: 'created', events: ['Object Created'] },
    ]);
    expect(sourceChanges(bridgeEvent('Object Deleted', 'press-bucket', 'logo.png'), 'cache', buckets).changes).toEqual([
      { key: 'press/kit/logo.png', change: 'removed', events: ['Object Deleted'] },
    ]);
  });

  it('reads the default bucket as before, and ignores its keys that a prefix now serves from another bucket', () => {
    const { changes, ignored } = sourceChanges(
      s3Event([
        { eventName: 'ObjectCreated:Put', rawKey: 'archive2/a.jpg' },
        { eventName: 'ObjectCreated:Put', rawKey: 'archive/a.jpg' },
      ]),
      'cache',
      buckets,
    );
    expect(changes.map((change) => change.key)).toEqual(['archive2/a.jpg']);
    expect(ignored).toEqual([
      { eventName: 'ObjectCreated:Put', rawKey: 'archive/a.jpg', reason: 'the key is under a prefix served from another bucket' },
    ]);
  });

  it("ignores the default bucket's keys under the staging, quarantine and imports prefixes, not a mapped bucket's keys", () => {
    const { changes, ignored } = sourceChanges(
      s3Event([
        { eventName: 'ObjectCreated:Post', rawKey: '_uploads/a.jpg' },
        { eventName: 'ObjectCreated:Copy', rawKey: '_quarantine/a.jpg' },
        { eventName: 'ObjectCreated:Put', rawKey: '_imports/0b6f2d1e/manifest.csv' },
        { eventName: 'ObjectCreated:Copy', rawKey: 'a.jpg' },
      ]),
      'cache',
      buckets,
    );
    expect(changes.map((change) => change.key)).toEqual(['a.jpg']);
    expect(ignored.map((record) => [record.rawKey, record.reason])).toEqual([
      ['_uploads/a.jpg', 'the key is under the staging, quarantine or imports prefix, not a source'],
      ['_quarantine/a.jpg', 'the key is under the staging, quarantine or imports prefix, not a source'],
      ['_imports/0b6f2d1e/manifest.csv', 'the key is under the staging, quarantine or imports prefix, not a source'],
    ]);
    const mapped = sourceChanges(bridgeEvent('Object Created', 'old-photos', '_uploads/a.jpg'), 'cache', buckets);
    expect(mapped.changes.map((change) => change.key)).toEqual(['archive/_uploads/a.jpg']);
  });

  it('ignores EventBridge events it has nothing to do for, with the reason', () => {
    const { changes, ignored } = sourceChanges(bridgeEvent('Object Tags Added', 'old-photos', 'a.jpg'), 'cache', buckets);
    expect(changes).toEqual([]);
    expect(ignored).toEqual([{ eventName: 'Object Tags Added', rawKey: 'a.jpg', reason: 'not an object created or removed event' }]);
    // Only mapped buckets send EventBridge events here; any other's key would be taken for the default bucket's.
    expect(sourceChanges(bridgeEvent('Object Created', 'someone-else', 'a.jpg'), 'cache', buckets)).toEqual({
      changes: [],
      ignored: [{ eventName: 'Object Created', rawKey: 'a.jpg', reason: 'the event is from bucket "someone-else", which no prefix maps' }],
    });
    // A folder marker has no variants, whichever bucket it is in.
    expect(sourceChanges(bridgeEvent('Object Created', 'old-photos', '2020/'), 'cache', buckets).ignored[0]?.reason).toMatch(
      /empty path segment/,
    );
  });
});
