// A web site for web-origin tests through the handler and the emulator: a
// loopback web origin (web-origin.ts) serving files by path as the emulator's
// demo site does (answerWithFile), and failing on demand.

import { afterAll } from 'vitest';
import { etagOf } from '../../lambda/origin/responses';
import { answerWithFile } from '../../local/emulator/demo-site';
import { startWebOrigin, type WebOrigin } from './web-origin';

export interface TestSite extends Pick<WebOrigin, 'requests' | 'connections'> {
  /** The site's base URL, e.g. `http://127.0.0.1:41234/images/`. */
  base: string;
  /** Serves `body` at `path` (under /images/), with a new ETag. */
  put(path: string, body: Buffer | string, contentType?: string): void;
  /** Stops serving `path`: a 404 from then on, as for an image the site deleted. */
  remove(path: string): void;
  /** Answers every request with `status` (and no body) until called with undefined. */
  fail(status: number | undefined): void;
}

export async function startTestSite(): Promise<TestSite> {
  const files = new Map<string, { body: Buffer; contentType: string; etag: string }>();
  let failing: number | undefined;
  const origin = await startWebOrigin((request, response) => {
    if (failing !== undefined) return void response.writeHead(failing).end();
    answerWithFile(request, response, files.get(request.url ?? '/'));
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
    remove(path) {
      files.delete('/images/' + path);
    },
    fail(status) {
      failing = status;
    },
  };
}
