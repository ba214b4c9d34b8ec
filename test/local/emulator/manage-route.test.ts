// The event a `/_manage/` request becomes (local/emulator/manage-route.ts):
// what API Gateway's HTTP API hands a Lambda in payload 2.0, with the path
// the deployed API would see.

import { describe, expect, it } from 'vitest';
import { manageEvent } from '../../../local/emulator/manage-route';

describe('manageEvent', () => {
  it('gives the path without /_manage, the query decoded (repeated values joined), lower-case headers and a JSON body as text', () => {
    const event = manageEvent({
      method: 'delete',
      path: '/_manage/images',
      query: 'prefix=a%2Fb&prefix=c&limit=5',
      headers: { 'Content-Type': 'application/json', 'x-many': ['1', '2'] },
      body: Buffer.from('{"keys":["a.jpg"]}'),
    });
    expect(event).toMatchObject({
      version: '2.0',
      rawPath: '/images',
      rawQueryString: 'prefix=a%2Fb&prefix=c&limit=5',
      queryStringParameters: { prefix: 'a/b,c', limit: '5' },
      headers: { 'content-type': 'application/json', 'x-many': '1,2' },
      body: '{"keys":["a.jpg"]}',
      isBase64Encoded: false,
      requestContext: { http: { method: 'DELETE', path: '/images' } },
    });
  });

  it('keeps a key percent-encoded in the path, as API Gateway does, and has no query parameters or body when none was sent', () => {
    const event = manageEvent({ method: 'GET', path: '/_manage/images/photos%2Fcat.jpg', query: '', headers: {}, body: Buffer.alloc(0) });
    expect(event.rawPath).toBe('/images/photos%2Fcat.jpg');
    expect(event.queryStringParameters).toBeUndefined();
    expect(event.body).toBeUndefined();
  });

  it('passes a body of another type as base64', () => {
    const bytes = Buffer.from([0xff, 0xd8, 0xff]);
    const event = manageEvent({
      method: 'POST',
      path: '/_manage/uploads',
      query: '',
      headers: { 'content-type': 'image/jpeg' },
      body: bytes,
    });
    expect(event).toMatchObject({ body: bytes.toString('base64'), isBase64Encoded: true });
  });
});
