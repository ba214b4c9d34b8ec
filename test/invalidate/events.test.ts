// S3 event records -> changed source keys. S3 form-encodes the key in an
// event; decoding it wrong would purge the wrong source (or none).

import { describe, expect, it } from 'vitest';
import { decodeEventKey, sourceChanges } from '../../lambda/invalidate/events';
import { s3Event, s3EventKey } from './support';

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
      ]).Records,
      'cache',
    );
    expect(ignored).toEqual([]);
    expect(changes).toEqual([
      { key: 'b.jpg', change: 'created', events: ['ObjectRemoved:Delete', 'ObjectCreated:Copy'] },
      { key: 'a 1.jpg', change: 'created', events: ['ObjectCreated:Put', 'ObjectRemoved:DeleteMarkerCreated'] },
    ]);
  });

  it('copes with a missing Records array', () => {
    expect(sourceChanges(undefined, 'cache')).toEqual({ changes: [], ignored: [] });
  });
});
