// A loopback HTTP proxy in front of LocalStack S3 that misbehaves on demand,
// as a real S3 (or the network to it) sometimes does: an S3 error (500
// InternalError, 503 SlowDown) with S3's own XML body, a delay, an answer
// that never comes, a connection reset, a request S3 carries out but whose
// answer is lost, a body that stops halfway, or no listener at all. Point an S3 client at `endpoint` (path-style) and tell the
// proxy what to do with the next requests; everything else is forwarded
// byte for byte.

import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Fault =
  /** S3's error response: 500 InternalError or 503 SlowDown, with its XML body. */
  | { kind: 'error'; status: 500 | 503 }
  /** Forwarded after `ms`. */
  | { kind: 'delay'; ms: number }
  /** The request is read and never answered; the connection stays open. */
  | { kind: 'hang' }
  /** The connection is reset (TCP RST) as soon as the request arrives. */
  | { kind: 'reset' }
  /** Forwarded, so S3 acts on it, but its answer is lost: the client hears nothing more. */
  | { kind: 'drop' }
  /** Forwarded, but the response stops after its headers and `afterBytes` of body; the connection stays open. */
  | { kind: 'stall'; afterBytes: number };

export interface FaultRule {
  fault: Fault;
  /** Only requests with this method (GET, PUT, HEAD); default any. */
  method?: string;
  /** Only requests to this bucket; default any. */
  bucket?: string;
  /** How many matching requests get the fault, then the rule is spent; default all of them. */
  times?: number;
}

/** One request that reached the proxy, and the fault it got (undefined: forwarded as is). */
export interface ProxiedRequest {
  method: string;
  bucket: string;
  key: string;
  fault?: Fault['kind'];
  at: number;
}

export interface FaultyProxy {
  /** `http://127.0.0.1:<port>`, for an S3 client with forcePathStyle. */
  endpoint: string;
  /** Every request that reached the proxy, in order of arrival. */
  requests: ProxiedRequest[];
  /** Adds a rule. Rules are tried in the order added; the first that matches (and is not spent) applies. */
  inject(rule: FaultRule): void;
  /** Removes every rule and forgets the requests seen: the proxy forwards everything again. */
  clear(): void;
  /** Stops listening and drops every connection: a connection to the port is refused. */
  refuse(): Promise<void>;
  /** Listens again on the same port. */
  accept(): Promise<void>;
  close(): Promise<void>;
}

const S3_ERRORS = {
  500: { code: 'InternalError', message: 'We encountered an internal error. Please try again.' },
  503: { code: 'SlowDown', message: 'Please reduce your request rate.' },
} as const;

function errorBody(status: 500 | 503, key: string): string {
  const { code, message } = S3_ERRORS[status];
  const escaped = key.replace(/[<>&]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;' })[c]!);
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<Error><Code>${code}</Code><Message>${message}</Message><Key>${escaped}</Key>` +
    `<RequestId>${randomBytes(8).toString('hex').toUpperCase()}</RequestId><HostId>faulty-proxy</HostId></Error>`
  );
}

/** Path-style S3: `/<bucket>/<key>`; a bucket call (create, list) has no key. */
function target(url: string): { bucket: string; key: string } {
  const path = url.split('?')[0] ?? '';
  const slash = path.indexOf('/', 1);
  if (slash === -1) return { bucket: decodeURIComponent(path.slice(1)), key: '' };
  return { bucket: decodeURIComponent(path.slice(1, slash)), key: decodeURIComponent(path.slice(slash + 1)) };
}

/**
 * Starts a proxy on 127.0.0.1 in front of `upstream` (LocalStack's endpoint).
 * Faults apply to object requests only (a GET, PUT or HEAD of a key): bucket
 * calls such as CreateBucket and ListObjectsV2 always pass, so set-up and
 * listings work whatever is injected.
 */
export async function startFaultyProxy(upstream: string): Promise<FaultyProxy> {
  const upstreamUrl = new URL(upstream);
  const rules: { rule: FaultRule; left: number }[] = [];
  const requests: ProxiedRequest[] = [];
  const sockets = new Set<Socket>();

  function faultFor(method: string, bucket: string, key: string): Fault | undefined {
    if (key === '') return undefined;
    for (const entry of rules) {
      const { rule } = entry;
      if (entry.left <= 0) continue;
      if (rule.method && rule.method !== method) continue;
      if (rule.bucket && rule.bucket !== bucket) continue;
      entry.left -= 1;
      return rule.fault;
    }
    return undefined;
  }

  /** Sends the request upstream; `stallAfter` bytes of body then silence, or (`drop`) no answer at all. */
  function forward(request: IncomingMessage, response: ServerResponse, stallAfter?: number | 'drop') {
    const outgoing = httpRequest(
      {
        host: upstreamUrl.hostname,
        port: upstreamUrl.port,
        method: request.method,
        path: request.url,
        headers: request.headers,
      },
      (answer) => {
        if (stallAfter === 'drop') {
          answer.resume();
          return;
        }
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        if (stallAfter === undefined) {
          answer.pipe(response);
          return;
        }
        // Send the first bytes, then nothing more: the client waits on a silent, open socket.
        response.flushHeaders();
        let sent = 0;
        answer.on('data', (chunk: Buffer) => {
          if (sent >= stallAfter) return;
          const part = chunk.subarray(0, stallAfter - sent);
          sent += part.length;
          response.write(part);
        });
      },
    );
    outgoing.on('error', () => request.socket.destroy());
    request.pipe(outgoing);
  }

  function handle(request: IncomingMessage, response: ServerResponse) {
    const method = request.method ?? 'GET';
    const { bucket, key } = target(request.url ?? '/');
    const fault = faultFor(method, bucket, key);
    requests.push({ method, bucket, key, fault: fault?.kind, at: performance.now() });
    switch (fault?.kind) {
      case undefined:
        return forward(request, response);
      case 'error': {
        request.resume();
        const body = method === 'HEAD' ? '' : errorBody(fault.status, key);
        response.writeHead(fault.status, {
          'content-type': 'application/xml',
          'content-length': String(Buffer.byteLength(body)),
          'x-amz-request-id': randomBytes(8).toString('hex').toUpperCase(),
        });
        return response.end(body);
      }
      case 'delay': {
        const timer = setTimeout(() => forward(request, response), fault.ms);
        request.socket.once('close', () => clearTimeout(timer));
        return;
      }
      case 'hang':
        request.resume();
        return;
      case 'reset':
        request.socket.resetAndDestroy();
        return;
      case 'drop':
        return forward(request, response, 'drop');
      case 'stall':
        return forward(request, response, fault.afterBytes);
    }
  }

  const server = createServer(handle);
  // The SDK sends large PUTs with Expect: 100-continue: let them through to be faulted like any other.
  server.on('checkContinue', (request, response) => {
    response.writeContinue();
    handle(request, response);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });

  await listen(0);
  const port = (server.address() as AddressInfo).port;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    inject(rule) {
      rules.push({ rule, left: rule.times ?? Infinity });
    },
    clear() {
      rules.length = 0;
      requests.length = 0;
    },
    refuse: stop,
    accept: () => listen(port),
    close: stop,
  };
}
