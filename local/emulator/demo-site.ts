// A web site on loopback that serves the generated samples, so `npm start`
// shows a web origin with no setup: the playground lists them under `web/`,
// fetched by the origin from this site as a deployment's `webOrigins` would be.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { etagOf } from '../../lambda/origin/responses';

export interface DemoFile {
  key: string;
  body: Buffer;
  contentType: string;
}

export interface DemoSite {
  /** The base URL, ending in `/`. */
  url: string;
  close(): Promise<void>;
}

/** Serves each file at `/<key>` with an ETag, answering If-None-Match with 304 as a web server does. */
export async function startDemoSite(files: DemoFile[]): Promise<DemoSite> {
  const byPath = new Map(files.map((file) => [encodeURI('/' + file.key), { ...file, etag: etagOf(file.body) }]));
  const server = createServer((request, response) => {
    const file = byPath.get(request.url ?? '');
    if (!file) return response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
    if (request.headers['if-none-match'] === file.etag) return response.writeHead(304, { etag: file.etag }).end();
    response.writeHead(200, { 'content-type': file.contentType, etag: file.etag, 'content-length': file.body.length }).end(file.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
