// A web site on loopback that serves the generated samples, so `npm start`
// shows a web origin with no setup: the playground lists them under `web/`,
// fetched by the origin from this site as a deployment's `webOrigins` would be.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
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

/** A file as a web server answers it: 404 without one, 304 when If-None-Match names its ETag, else the file. */
export function answerWithFile(
  request: IncomingMessage,
  response: ServerResponse,
  file: { body: Buffer; contentType: string; etag: string } | undefined,
): void {
  if (!file) return void response.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
  if (request.headers['if-none-match'] === file.etag) return void response.writeHead(304, { etag: file.etag }).end();
  response.writeHead(200, { 'content-type': file.contentType, etag: file.etag, 'content-length': file.body.length }).end(file.body);
}

/** Serves each file at `/<key>` with an ETag, answering If-None-Match with 304 as a web server does. */
export async function startDemoSite(files: DemoFile[]): Promise<DemoSite> {
  const byPath = new Map(files.map((file) => [encodeURI('/' + file.key), { ...file, etag: etagOf(file.body) }]));
  const server = createServer((request, response) => answerWithFile(request, response, byPath.get(request.url ?? '')));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
