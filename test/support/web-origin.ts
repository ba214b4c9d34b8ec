// A web origin on loopback for the web-source fetcher's tests: the same
// handler listens on 127.0.0.1 and on ::1, and counts every connection it
// accepts, so a test can show that a refused fetch reached nothing.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

type Server = ReturnType<typeof createServer>;

export interface WebOrigin {
  /** The port on 127.0.0.1 and on ::1. */
  port: number;
  port6: number;
  /** Connections accepted so far, on both addresses. */
  connections: () => number;
  /** Every request's path and headers, in order. */
  requests: { path: string; headers: IncomingHttpHeaders }[];
  /** Connections the origin saw closed, on both addresses. */
  closed: () => number;
  close: () => Promise<void>;
}

export type Handler = (request: IncomingMessage, response: ServerResponse) => void;

const listen = (server: Server, host: string) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve((server.address() as AddressInfo).port));
  });

export async function startWebOrigin(handler: Handler): Promise<WebOrigin> {
  let connections = 0;
  let closed = 0;
  const requests: WebOrigin['requests'] = [];
  const servers = [0, 1].map(() => {
    const server = createServer((request, response) => {
      requests.push({ path: request.url ?? '', headers: request.headers });
      handler(request, response);
    });
    server.on('connection', (socket) => {
      connections++;
      socket.on('close', () => closed++);
    });
    return server;
  });
  const [v4, v6] = servers as [Server, Server];
  const port = await listen(v4, '127.0.0.1');
  const port6 = await listen(v6, '::1');
  return {
    port,
    port6,
    connections: () => connections,
    closed: () => closed,
    requests,
    close: async () => {
      for (const server of servers) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    },
  };
}

/** A self-signed certificate for `host`, made by openssl: valid for the name, trusted by nobody unless told. */
export function selfSignedCertificate(host: string): { key: Buffer; cert: Buffer } {
  const folder = mkdtempSync(join(tmpdir(), 'web-origin-tls-'));
  const [key, cert] = [join(folder, 'key.pem'), join(folder, 'cert.pem')];
  const subject = ['-subj', `/CN=${host}`, '-addext', `subjectAltName=DNS:${host}`];
  const keyPair = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key];
  execFileSync('openssl', ['req', '-x509', '-days', '1', ...subject, ...keyPair, '-out', cert], { stdio: 'ignore' });
  return { key: readFileSync(key), cert: readFileSync(cert) };
}
