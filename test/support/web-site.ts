// A web site for web-origin tests through the handler and the emulator: a
// loopback web origin (web-origin.ts) serving files by path, each with an
// ETag, answering conditional requests, and failing on demand.

import { afterAll } from 'vitest';
import { etagOf } from '../../lambda/origin/responses';
import { startWebOrigin, type WebOrigin } from './web-origin';

export interface TestSite extends Pick<WebOrigin, 'requests' | 'connections'> {
  /** The site's base URL, e.g. `http://127.0.0.1:41234/images/`. */
  base: string;
  /** Serves `body` at `path` (under /images/), with a new ETag. */
  put(path: string, body: Buffer | string, contentType?: string): void;
  /** Answers every request with `status` (and no body) until called with undefined. */
  fail(status: number | undefined): void;
}

export async function startTestSite(): Promise<TestSite> {
  const files = new Map<string, { body: Buffer; contentType: string; etag: string }>();
  let failing: number | undefined;
  const origin = await startWebOrigin((request, response) => {
    const file = files.get(request.url ?? '/');
    if (failing !== undefined) return response.writeHead(failing).end();
    if (!file) return response.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
    if (request.headers['if-none-match'] === file.etag) return response.writeHead(304, { etag: file.etag }).end();
    response.writeHead(200, { 'content-type': file.contentType, etag: file.etag, 'content-length': file.body.length }).end(file.body);
  });
  afterAll(() => origin.close());
  return {
    base: `http://127.0.0.1:${origin.port}/images/`,
    requests: origin.requests,
    connections: origin.connections,
    put(path, body, contentType = 'image/jpeg') {
      const bytes = Buffer.from(body);
      files.set('/images/' + path, { body: bytes, contentType, etag: etagOf(bytes) });
    },
    fail(status) {
      failing = status;
    },
  };
}
