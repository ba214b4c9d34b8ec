// A web site on loopback for web-origin tests: files by path, each with an
// ETag, answering conditional requests; every request it gets is recorded.

import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll } from 'vitest';
import { etagOf } from '../../lambda/origin/responses';

export interface SiteRequest {
  path: string;
  headers: IncomingHttpHeaders;
}

export interface TestSite {
  /** The site's base URL, e.g. `http://127.0.0.1:41234/images/`. */
  base: string;
  /** Every request, in order. */
  requests: SiteRequest[];
  /** Serves `body` at `path` (under /images/), with a new ETag. */
  put(path: string, body: Buffer | string, contentType?: string): void;
  /** Answers every request with `status` (and no body) until called with undefined. */
  fail(status: number | undefined): void;
  /** TCP connections the site accepted. */
  connections(): number;
}

export async function startTestSite(): Promise<TestSite> {
  const files = new Map<string, { body: Buffer; contentType: string; etag: string }>();
  const requests: SiteRequest[] = [];
  let failing: number | undefined;
  let connections = 0;
  const server = createServer((request, response) => {
    const path = request.url ?? '/';
    requests.push({ path, headers: request.headers });
    const file = files.get(path);
    if (failing !== undefined) return response.writeHead(failing).end();
    if (!file) return response.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
    if (request.headers['if-none-match'] === file.etag) return response.writeHead(304, { etag: file.etag }).end();
    response.writeHead(200, { 'content-type': file.contentType, etag: file.etag, 'content-length': file.body.length }).end(file.body);
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}/images/`,
    requests,
    put(path, body, contentType = 'image/jpeg') {
      const bytes = Buffer.from(body);
      files.set('/images/' + path, { body: bytes, contentType, etag: etagOf(bytes) });
    },
    fail(status) {
      failing = status;
    },
    connections: () => connections,
  };
}
