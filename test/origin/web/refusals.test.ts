// The web-source fetcher against a web origin listening on 127.0.0.1 and ::1:
// every refused address form, named in the URL or answered by a resolver, is
// a 403 source_not_allowed and reaches nothing (the origin counts the
// connections it accepts). The same URLs with loopback allowed, as in tests
// and the emulator, do reach it: the count is a real witness, and the
// refusal, not luck, kept the fetch away.

import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HttpError } from '../../../lambda/origin/errors';
import { fetchWebSource, type WebFetchOptions } from '../../../lambda/origin/web/fetch';
import { opaquePng } from '../../support/images';
import { startWebOrigin, type WebOrigin } from '../../support/web-origin';

let origin: WebOrigin;
let png: Buffer;

beforeAll(async () => {
  png = await opaquePng(8, 8);
  origin = await startWebOrigin((_request, response) => response.writeHead(200, { 'content-type': 'image/png' }).end(png));
});
afterAll(() => origin.close());

let connectionsBefore = 0;
beforeEach(() => {
  connectionsBefore = origin.connections();
});
const reached = () => origin.connections() - connectionsBefore;

/** The fetch's HttpError (any other outcome fails the test). */
async function refusal(url: string, options: Partial<WebFetchOptions> = {}): Promise<HttpError> {
  const parsed = new URL(url);
  const error = await fetchWebSource(parsed, {
    allowedHosts: [parsed.hostname],
    maxBytes: 1 << 20,
    signal: AbortSignal.timeout(5_000),
    ...options,
  }).then(
    (result) => result,
    (failure: unknown) => failure,
  );
  expect(error, url).toBeInstanceOf(HttpError);
  return error as HttpError;
}

const resolvingTo =
  (...addresses: string[]) =>
  async (): Promise<LookupAddress[]> =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

/** Spellings of a loopback or "this host" address, each host allow-listed as the URL names it; all would connect on Linux. */
const REACHABLE = (port: number, port6: number): string[] => [
  `http://127.0.0.1:${port}/a.png`,
  `http://2130706433:${port}/a.png`,
  `http://0177.0.0.1:${port}/a.png`,
  `http://0x7f.1:${port}/a.png`,
  `http://0x7f000001:${port}/a.png`,
  `http://127.1:${port}/a.png`,
  `http://127.0.0.1.:${port}/a.png`,
  `http://0:${port}/a.png`,
  `http://0.0.0.0:${port}/a.png`,
  `http://[::ffff:127.0.0.1]:${port}/a.png`,
  `http://[::ffff:7f00:1]:${port}/a.png`,
  `http://[::ffff:0:0]:${port}/a.png`,
  `http://[::1]:${port6}/a.png`,
  `http://[0:0:0:0:0:0:0:1]:${port6}/a.png`,
  `http://[::]:${port6}/a.png`,
  `https://127.0.0.1:${port}/a.png`,
];

describe('a refused address is never connected to', () => {
  it('refuses every loopback and "this host" spelling in the URL, reaching nothing', async () => {
    for (const url of REACHABLE(origin.port, origin.port6)) {
      const error = await refusal(url);
      expect([error.status, error.code], url).toEqual([403, 'source_not_allowed']);
      expect(error.detail, url).toMatch(/127\.0\.0\.0\/8|0\.0\.0\.0\/8|::\/96|::ffff:0:0\/96/);
      // The viewer learns that it is refused, never which address or range: that is for the log.
      expect(error.message, url).toBe('The source is not at an address this service may fetch from.');
    }
    expect(reached()).toBe(0);
  });

  it('refuses IPv6 forms that carry a private IPv4 address, and the metadata services', async () => {
    const urls = [
      'http://[64:ff9b::127.0.0.1]/',
      'http://[64:ff9b::a9fe:a9fe]/',
      'http://[64:ff9b:1::1]/',
      'http://[2002:7f00:1::]/',
      'http://[2002:a9fe:a9fe::]/',
      'http://[::127.0.0.1]/',
      'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
      'http://[fd00:ec2::254]/latest/meta-data/',
      'http://[fe80::1]/',
      'http://[ff02::1]/',
      'http://10.0.0.1/',
      'http://100.64.0.1/',
      'http://192.168.1.1/',
      'http://255.255.255.255/',
    ];
    for (const url of urls) expect((await refusal(url)).code, url).toBe('source_not_allowed');
    expect(reached()).toBe(0);
  });

  it("refuses the Lambda Runtime API's address, as AWS_LAMBDA_RUNTIME_API names it", async () => {
    const error = await refusal('http://127.0.0.1:9001/2018-06-01/runtime/invocation/next');
    expect(error.code).toBe('source_not_allowed');
    expect(error.detail).toContain('Lambda Runtime API');
  });

  it('refuses an allow-listed name that resolves to a refused address, reaching nothing', async () => {
    const answers = [
      '127.0.0.1',
      '::1',
      '0.0.0.0',
      '::',
      '::ffff:127.0.0.1',
      '10.0.0.1',
      '169.254.169.254',
      'fd00:ec2::254',
      'fe80::1%lo',
      '64:ff9b::7f00:1',
    ];
    for (const answer of answers) {
      const error = await refusal(`http://images.example.com:${answer.includes(':') ? origin.port6 : origin.port}/a.png`, {
        resolve: resolvingTo(answer),
      });
      expect([error.code, error.detail], answer).toEqual([
        'source_not_allowed',
        expect.stringContaining(`images.example.com is ${answer}`),
      ]);
    }
    expect(reached()).toBe(0);
  });

  it('refuses a name when any one of its addresses is refused, though the others are allowed', async () => {
    const error = await refusal(`http://images.example.com:${origin.port}/a.png`, {
      allowLoopback: true,
      resolve: resolvingTo('127.0.0.1', '10.1.2.3'),
    });
    expect(error.code).toBe('source_not_allowed');
    expect(error.detail).toContain('10.1.2.3');
    expect(reached()).toBe(0);
  });

  it("refuses 'localhost' through the system's resolver", async () => {
    const error = await refusal(`http://localhost:${origin.port}/a.png`);
    expect(error.code).toBe('source_not_allowed');
    expect(error.detail).toMatch(/^localhost is (127\.0\.0\.1|::1):/);
    expect(reached()).toBe(0);
  });

  it('refuses a host that is not allow-listed, an unknown scheme and credentials before resolving anything', async () => {
    const resolved: string[] = [];
    const resolve = async (name: string) => {
      resolved.push(name);
      return resolvingTo('127.0.0.1')();
    };
    const cases: [url: string, allowedHosts: string[], detail: RegExp][] = [
      [`http://other.example.com:${origin.port}/a.png`, ['images.example.com'], /host other\.example\.com is not allowed/],
      [`http://IMAGES.example.com.:${origin.port}/a.png`, ['images.example.com'], /host images\.example\.com\. is not allowed/],
      [`http://127.0.0.1:${origin.port}/a.png`, ['localhost'], /host 127\.0\.0\.1 is not allowed/],
      [`ftp://images.example.com:${origin.port}/a.png`, ['images.example.com'], /scheme ftp:/],
      ['file:///etc/passwd', [''], /scheme file:/],
      [`http://user:secret@images.example.com:${origin.port}/a.png`, ['images.example.com'], /credentials/],
      [`http://:secret@images.example.com:${origin.port}/a.png`, ['images.example.com'], /credentials/],
    ];
    for (const [url, allowedHosts, detail] of cases) {
      const error = await refusal(url, { allowLoopback: true, allowedHosts, resolve });
      expect([error.status, error.code], url).toEqual([403, 'source_not_allowed']);
      expect(error.detail, url).toMatch(detail);
      expect(error.detail, url).not.toContain('secret');
    }
    expect(resolved).toEqual([]);
    expect(reached()).toBe(0);
  });
});

describe('the same URLs with loopback allowed (tests and the emulator only)', () => {
  it('reach the origin for the loopback spellings, so the zero above is a real count', async () => {
    const loopback = [`http://2130706433:${origin.port}/a.png`, `http://0x7f.1:${origin.port}/a.png`, `http://[::1]:${origin.port6}/a.png`];
    for (const url of loopback) {
      const parsed = new URL(url);
      const result = await fetchWebSource(parsed, {
        allowedHosts: [parsed.hostname],
        maxBytes: 1 << 20,
        signal: AbortSignal.timeout(5_000),
        allowLoopback: true,
      });
      expect(result, url).toMatchObject({ status: 'fetched', bytes: png });
    }
    expect(reached()).toBe(loopback.length);
  });

  it('still refuses "this host" and IPv4-mapped loopback, which are not loopback addresses', async () => {
    for (const url of [
      `http://0.0.0.0:${origin.port}/a.png`,
      `http://[::]:${origin.port6}/a.png`,
      `http://[::ffff:7f00:1]:${origin.port}/a.png`,
    ]) {
      expect((await refusal(url, { allowLoopback: true })).code, url).toBe('source_not_allowed');
    }
    expect(reached()).toBe(0);
  });
});
