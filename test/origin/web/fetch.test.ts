// The web-source fetcher against a real web origin on loopback (allowed only
// through `allowLoopback`, which tests and the emulator set in code): what it
// sends, where it connects, the redirects it follows and refuses, and how it
// ends slow, endless, oversized and mislabelled bodies. Host names are
// answered by an injected resolver, as DNS would answer them.

import type { LookupAddress } from 'node:dns';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { HttpError } from '../../../lambda/origin/errors';
import { fetchWebSource, MAX_REDIRECTS, redirectTarget, USER_AGENT, type WebFetchOptions } from '../../../lambda/origin/web/fetch';
import { opaquePng } from '../../support/images';
import { selfSignedCertificate, startWebOrigin, type WebOrigin } from '../../support/web-origin';

const HOST = 'images.example.com';
const MAX_BYTES = 256 * 1024;

let origin: WebOrigin;
let png: Buffer;
const routes = new Map<string, (response: ServerResponse) => void>();

/** Every name resolves to the origin's IPv4 address unless a test says otherwise; calls are counted. */
let resolved: string[] = [];
const toLoopback = async (name: string): Promise<LookupAddress[]> => {
  resolved.push(name);
  return [{ address: '127.0.0.1', family: 4 }];
};

beforeAll(async () => {
  png = await opaquePng(16, 16);
  origin = await startWebOrigin((request, response) => {
    const route = routes.get(request.url ?? '');
    if (route) route(response);
    else response.writeHead(404).end('no such page');
  });
});
afterAll(() => origin.close());

beforeEach(() => {
  routes.clear();
  resolved = [];
  origin.requests.length = 0;
});

const at = (path: string, host = HOST) => new URL(`http://${host}:${origin.port}${path}`);

const options = (more: Partial<WebFetchOptions> = {}): WebFetchOptions => ({
  allowedHosts: [HOST],
  maxBytes: MAX_BYTES,
  signal: AbortSignal.timeout(10_000),
  allowLoopback: true,
  resolve: toLoopback,
  ...more,
});

async function failure(url: URL, more: Partial<WebFetchOptions> = {}): Promise<HttpError> {
  const error = await fetchWebSource(url, options(more)).then(
    (result) => result,
    (thrown: unknown) => thrown,
  );
  expect(error, url.href).toBeInstanceOf(HttpError);
  return error as HttpError;
}

const image = (response: ServerResponse, headers: Record<string, string> = {}) =>
  response.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length, ...headers }).end(png);

const redirect =
  (status: number, location: string, headers: Record<string, string> = {}) =>
  (response: ServerResponse) =>
    response.writeHead(status, { location, ...headers }).end();

/** Waits until the origin has seen every connection closed: the fetcher stopped reading and hung up. */
const allClosed = () => vi.waitFor(() => expect(origin.closed()).toBe(origin.connections()), { timeout: 5_000 });

describe('a fetch that succeeds', () => {
  it('connects to the checked address, keeps the host name in Host, and returns the bytes and validators', async () => {
    routes.set('/a.png', (response) => image(response, { etag: '"v1"', 'last-modified': 'Tue, 24 Nov 2026 05:00:00 GMT' }));
    // images.example.com has no address outside this test: the connection reached the origin
    // only because it went to the address the resolver gave and the fetcher checked.
    const result = await fetchWebSource(at('/a.png'), options());
    expect(result).toEqual({ status: 'fetched', bytes: png, etag: '"v1"', lastModified: 'Tue, 24 Nov 2026 05:00:00 GMT' });
    expect(resolved).toEqual([HOST]);
    expect(origin.requests[0]!.headers.host).toBe(`${HOST}:${origin.port}`);
  });

  it('tries the next checked address when the first does not answer', async () => {
    routes.set('/a.png', (response) => image(response));
    // Nothing listens on ::1 at the IPv4 origin's port: that first connection is refused.
    const resolve = async (): Promise<LookupAddress[]> => [
      { address: '::1', family: 6 },
      { address: '127.0.0.1', family: 4 },
    ];
    expect(await fetchWebSource(at('/a.png'), options({ resolve }))).toMatchObject({ status: 'fetched', bytes: png });
  });

  it('sends exactly a fixed User-Agent, Accept: image/*, no compression, and nothing else', async () => {
    routes.set('/a.png', (response) => image(response));
    await fetchWebSource(at('/a.png'), options());
    expect(origin.requests[0]!.headers).toEqual({
      host: `${HOST}:${origin.port}`,
      'user-agent': USER_AGENT,
      accept: 'image/*',
      'accept-encoding': 'identity',
      connection: 'close',
    });
  });

  it('trusts the bytes, not Content-Type: a PNG labelled text/html is fetched', async () => {
    routes.set('/a.png', (response) => image(response, { 'content-type': 'text/html' }));
    expect(await fetchWebSource(at('/a.png'), options())).toMatchObject({ status: 'fetched', bytes: png });
  });
});

describe('conditional requests', () => {
  it("sends the copy's validators and answers not-modified on 304", async () => {
    routes.set('/a.png', (response) => response.writeHead(304, { etag: '"v1"' }).end());
    const validators = { etag: '"v1"', lastModified: 'Mon, 23 Nov 2026 00:00:00 GMT' };
    expect(await fetchWebSource(at('/a.png'), options({ validators }))).toEqual({ status: 'not-modified' });
    expect(origin.requests[0]!.headers).toMatchObject({ 'if-none-match': '"v1"', 'if-modified-since': validators.lastModified });
  });

  it('fetches the image when it changed', async () => {
    routes.set('/a.png', (response) => image(response, { etag: '"v2"' }));
    expect(await fetchWebSource(at('/a.png'), options({ validators: { etag: '"v1"' } }))).toMatchObject({
      status: 'fetched',
      etag: '"v2"',
    });
  });

  it('takes a 304 it did not ask for as a broken origin: 502', async () => {
    routes.set('/a.png', (response) => response.writeHead(304).end());
    expect((await failure(at('/a.png'))).code).toBe('source_unavailable');
  });
});

describe('upstream answers other than the image', () => {
  const CASES: [status: number, code: string, viewerStatus: number][] = [
    [404, 'not_found', 404],
    [410, 'not_found', 404],
    [403, 'not_found', 404],
    [401, 'not_found', 404],
    [400, 'source_unavailable', 502],
    [429, 'source_unavailable', 502],
    [500, 'source_unavailable', 502],
    [503, 'source_unavailable', 502],
    [204, 'source_unavailable', 502],
    [302, 'source_unavailable', 502], // a redirect with no Location
  ];
  it.each(CASES)('upstream %i is %s (%i)', async (status, code, viewerStatus) => {
    routes.set('/a.png', (response) => response.writeHead(status).end());
    const error = await failure(at('/a.png'));
    expect([error.code, error.status, error.detail]).toEqual([code, viewerStatus, `web source answered ${status}`]);
  });

  it('is 502 when nothing listens, or the name does not resolve', async () => {
    const closed = await startWebOrigin(() => {});
    const port = closed.port;
    await closed.close();
    expect(await failure(new URL(`http://${HOST}:${port}/a.png`))).toMatchObject({
      code: 'source_unavailable',
      detail: expect.stringContaining('ECONNREFUSED'),
    });
    const nxdomain = async () => {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${HOST}`), { code: 'ENOTFOUND' });
    };
    expect(await failure(at('/a.png'), { resolve: nxdomain })).toMatchObject({
      code: 'source_unavailable',
      detail: expect.stringContaining('ENOTFOUND'),
    });
  });
});

describe('redirects', () => {
  it(`follows up to ${MAX_REDIRECTS}, relative or absolute, checking each, and sends no cookie it was given`, async () => {
    routes.set('/r1', redirect(302, '/r2', { 'set-cookie': 'session=secret; Path=/' }));
    routes.set('/r2', redirect(301, `http://${HOST}:${origin.port}/r3`, { 'set-cookie': 'other=secret' }));
    routes.set('/r3', redirect(307, 'a.png'));
    routes.set('/a.png', (response) => image(response));
    expect(await fetchWebSource(at('/r1'), options())).toMatchObject({ status: 'fetched', bytes: png });
    expect(origin.requests.map((request) => request.path)).toEqual(['/r1', '/r2', '/r3', '/a.png']);
    for (const request of origin.requests) {
      expect(request.headers.cookie).toBeUndefined();
      expect(request.headers.authorization).toBeUndefined();
    }
    expect(resolved).toEqual([HOST, HOST, HOST, HOST]);
  });

  it(`is 502 after ${MAX_REDIRECTS} redirects, without a further request`, async () => {
    routes.set('/loop', redirect(302, '/loop'));
    expect(await failure(at('/loop'))).toMatchObject({ code: 'source_unavailable', detail: `more than ${MAX_REDIRECTS} redirects` });
    expect(origin.requests).toHaveLength(MAX_REDIRECTS + 1);
  });

  it('refuses a redirect into a refused range, reaching nothing there', async () => {
    const targets = [
      `http://0.0.0.0:${origin.port}/a.png`, // would reach the origin on Linux
      `http://[::]:${origin.port6}/a.png`, // likewise
      `http://[::ffff:127.0.0.1]:${origin.port}/a.png`,
      'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
      'http://[fd00:ec2::254]/latest/meta-data/',
      'http://10.0.0.1/a.png',
    ];
    for (const target of targets) {
      routes.set('/go', redirect(302, target));
      const connections = origin.connections();
      const error = await failure(at('/go'), { allowedHosts: [HOST, new URL(target).hostname] });
      expect([error.status, error.code], target).toEqual([403, 'source_not_allowed']);
      expect(origin.connections() - connections, target).toBe(1); // the redirect's own request only
    }
  });

  it('refuses a redirect to a name that resolves to a refused address', async () => {
    routes.set('/go', redirect(302, `http://internal.example.com:${origin.port}/a.png`));
    const resolve = async (name: string): Promise<LookupAddress[]> =>
      name === HOST
        ? toLoopback(name)
        : [
            { address: '127.0.0.1', family: 4 },
            { address: '10.0.0.7', family: 4 },
          ];
    const error = await failure(at('/go'), { allowedHosts: [HOST, 'internal.example.com'], resolve });
    expect(error).toMatchObject({ code: 'source_not_allowed', detail: expect.stringContaining('internal.example.com is 10.0.0.7') });
    expect(origin.requests.map((request) => request.path)).toEqual(['/go']);
  });

  it('refuses a redirect to a host that is not allow-listed, to another scheme, or with credentials', async () => {
    const targets = [
      `http://other.example.com:${origin.port}/a.png`,
      `http://${HOST}.:${origin.port}/a.png`,
      'file:///etc/passwd',
      `ftp://${HOST}/a.png`,
      'data:image/png;base64,iVBORw0KGgo=',
      `http://user:pass@${HOST}:${origin.port}/a.png`,
    ];
    routes.set('/a.png', (response) => image(response));
    for (const target of targets) {
      routes.set('/go', redirect(301, target));
      origin.requests.length = 0;
      expect((await failure(at('/go'))).code, target).toBe('source_not_allowed');
      expect(
        origin.requests.map((request) => request.path),
        target,
      ).toEqual(['/go']);
    }
  });

  it('refuses a redirect from https down to http, on the same host too', () => {
    const from = new URL('https://images.example.com/a.png');
    for (const location of ['http://images.example.com/a.png', 'http://images.example.com:443/b.png']) {
      expect(() => redirectTarget(location, from), location).toThrow(expect.objectContaining({ code: 'source_not_allowed' }));
    }
    expect(redirectTarget('/b.png', from).href).toBe('https://images.example.com/b.png');
    expect(redirectTarget('https://images.example.com/c.png', new URL('http://images.example.com/')).protocol).toBe('https:');
  });
});

describe('bodies', () => {
  it('refuses a Content-Length over maxBytes before reading the body', async () => {
    routes.set('/big.png', (response) => {
      response.writeHead(200, { 'content-length': MAX_BYTES + 1 });
      response.write(png); // and never the rest
    });
    expect(await failure(at('/big.png'))).toMatchObject({ status: 413, code: 'source_too_large' });
    await allClosed();
  });

  it('counts the bytes of an endless body and hangs up at maxBytes', async () => {
    routes.set('/endless.png', (response) => {
      response.writeHead(200, { 'content-type': 'image/png' });
      response.write(png);
      const chunk = Buffer.alloc(64 * 1024, 7);
      const more = () => {
        while (!response.destroyed && response.write(chunk));
      };
      response.on('drain', more);
      more();
    });
    expect(await failure(at('/endless.png'))).toMatchObject({ status: 413, code: 'source_too_large' });
    await allClosed();
  });

  it('takes a body cut short of its Content-Length as a broken origin (502), not as a truncated image', async () => {
    routes.set('/cut.png', (response) => {
      response.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length });
      response.write(png.subarray(0, png.length - 10), () => response.destroy());
    });
    expect(await failure(at('/cut.png'))).toMatchObject({ status: 502, code: 'source_unavailable' });
  });

  it('ends a body that trickles forever at the deadline (504), instead of waiting', async () => {
    routes.set('/slow.png', (response) => {
      response.writeHead(200, { 'content-type': 'image/png' });
      response.write(png.subarray(0, 8));
      const drip = setInterval(() => response.write(Buffer.from([0])), 100);
      response.on('close', () => clearInterval(drip));
    });
    const started = performance.now();
    expect(await failure(at('/slow.png'), { signal: AbortSignal.timeout(1_000) })).toMatchObject({ status: 504, code: 'timeout' });
    expect(performance.now() - started).toBeLessThan(5_000);
    await allClosed();
  });

  it('ends a server that never answers at the deadline (504)', async () => {
    routes.set('/silent.png', () => {});
    expect(await failure(at('/silent.png'), { signal: AbortSignal.timeout(500) })).toMatchObject({ status: 504, code: 'timeout' });
    await allClosed();
  });

  it('ends a name that never resolves at the deadline (504)', async () => {
    const never = () => new Promise<LookupAddress[]>(() => {});
    expect(await failure(at('/a.png'), { signal: AbortSignal.timeout(300), resolve: never })).toMatchObject({
      status: 504,
      code: 'timeout',
    });
  });

  it('does not start when the deadline has passed', async () => {
    const connections = origin.connections();
    expect(await failure(at('/a.png'), { signal: AbortSignal.abort() })).toMatchObject({ status: 504, code: 'timeout' });
    expect(origin.connections()).toBe(connections);
  });

  it('refuses HTML labelled image/png as unsupported media (415)', async () => {
    routes.set('/page.png', (response) =>
      response.writeHead(200, { 'content-type': 'image/png' }).end('<!doctype html><title>Not found</title>'),
    );
    expect(await failure(at('/page.png'))).toMatchObject({ status: 415, code: 'unsupported_media_type', detail: 'declared image/png' });
  });

  it('refuses an empty 200 as unsupported media (415)', async () => {
    routes.set('/empty.png', (response) => response.writeHead(200, { 'content-type': 'image/png', 'content-length': 0 }).end());
    expect((await failure(at('/empty.png'))).code).toBe('unsupported_media_type');
  });

  it('refuses an endless HTML body labelled image/jpeg from its first kilobyte, long before maxBytes', async () => {
    routes.set('/page.jpg', (response) => {
      response.writeHead(200, { 'content-type': 'image/jpeg' });
      const chunk = Buffer.from('<p>spam</p>'.repeat(1000));
      const more = () => {
        while (!response.destroyed && response.write(chunk));
      };
      response.on('drain', more);
      more();
    });
    // With 1 GiB allowed, only the sniff can end it: reading to the cap would take far longer than this test.
    expect(await failure(at('/page.jpg'), { maxBytes: 1 << 30 })).toMatchObject({ status: 415, code: 'unsupported_media_type' });
    await allClosed();
  });
});

describe('https', () => {
  let certificate: { key: Buffer; cert: Buffer } | undefined;
  beforeAll(() => {
    certificate = selfSignedCertificate(HOST);
  });

  it('names the host in TLS (SNI) while connecting to the checked address, and checks the certificate', async () => {
    const names: string[] = [];
    let requests = 0;
    const server = createHttpsServer(
      {
        ...certificate,
        SNICallback: (name, done) => {
          names.push(name);
          done(null);
        },
      },
      (_request, response) => {
        requests++;
        response.end();
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = new URL(`https://${HOST}:${(server.address() as AddressInfo).port}/a.png`);
    try {
      const error = await failure(url);
      expect(error).toMatchObject({ code: 'source_unavailable', detail: expect.stringMatching(/self[- ]signed/i) });
      expect(names).toEqual([HOST]);
      expect(requests).toBe(0); // nothing was sent over a connection whose certificate failed
      // Nor does the environment's switch for every TLS client in the process turn the check off.
      process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
      expect(await failure(url)).toMatchObject({ code: 'source_unavailable', detail: expect.stringMatching(/self[- ]signed/i) });
      expect(requests).toBe(0);
    } finally {
      delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      server.close();
    }
  });

  it('trusts a self-signed certificate only when code passes it (trustedCertificates, for tests)', async () => {
    const server = createHttpsServer(certificate!, (_request, response) => image(response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = new URL(`https://${HOST}:${(server.address() as AddressInfo).port}/a.png`);
    try {
      const result = await fetchWebSource(url, options({ trustedCertificates: certificate!.cert }));
      expect(result).toMatchObject({ status: 'fetched', bytes: png });
      // Another name on the same certificate is still refused: the host name is checked.
      const other = await failure(new URL(url.href.replace(HOST, 'other.example.com')), {
        allowedHosts: ['other.example.com'],
        trustedCertificates: certificate!.cert,
      });
      expect(other).toMatchObject({ code: 'source_unavailable', detail: expect.stringMatching(/altnames|hostname/i) });
    } finally {
      server.close();
    }
  });
});
