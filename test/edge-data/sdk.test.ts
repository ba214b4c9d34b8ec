// The edge data writer as deployed: lambda/edge-data bundled the way the
// stack bundles it (esbuild, the SDK inside, minified), its real SDK client
// talking HTTP to the in-memory store behind the KeyValueStore REST routes.
// The data-plane API accepts only SigV4A signatures; this proves the bundle
// registers the SigV4A signer and signs every call with it, with no AWS.

import { buildSync } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploymentEntries, SIGNING_SECRETS_KEY } from '../../lambda/edge/store';
import type * as EdgeData from '../../lambda/edge-data';
import { customResourceEvent } from '../support/custom-resource';
import { KVS_ARN, MemoryKeyValueStore, serveOverHttp, type ReceivedRequest } from './key-value-store';

const ENTRY = fileURLToPath(new URL('../../lambda/edge-data/index.ts', import.meta.url));

let dir: string;
let bundled: typeof EdgeData;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'eit-edge-data-'));
  const outfile = join(dir, 'index.cjs');
  // As NodejsFunction with SMALL_BUNDLING: CommonJS for Node, the SDK bundled, minified.
  buildSync({
    entryPoints: [ENTRY],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    minify: true,
    logLevel: 'error',
  });
  bundled = createRequire(import.meta.url)(outfile) as typeof EdgeData;
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the bundled Lambda against the KeyValueStore REST API', () => {
  let server: Server;
  let received: ReceivedRequest[];
  let store: MemoryKeyValueStore;
  let port: number;

  beforeAll(async () => {
    store = new MemoryKeyValueStore({ [SIGNING_SECRETS_KEY]: 'secret', 'preset:gone': 'w=1' });
    ({ server, port, received } = await serveOverHttp(store));
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
  });

  it('writes the entries, retries a conflict, and signs every call with SigV4A for every region', async () => {
    // The endpoint comes from the store's ARN: <account>.<endpoint host>. Any host resolves to this machine.
    const lookup = (_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) =>
      options.all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4);
    const api = bundled.keyValueStoreApi({
      region: 'eu-west-1',
      endpoint: `http://kvs.test:${port}`,
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-real-secret' },
      requestHandler: { httpAgent: new Agent({ lookup: lookup as never }) },
    });
    const entries = deploymentEntries({ maxDimension: 4096, sizes: [320, 640], presets: { thumb: { w: '320' } } });
    store.beforeNextUpdate(() => store.operatorPut(SIGNING_SECRETS_KEY, 'rotated'));
    const answer = await bundled.createEdgeDataHandler(api)(
      customResourceEvent('Create', {
        logicalId: 'ImageTransformerEdgeData',
        type: 'Custom::EdgeData',
        properties: { KeyValueStoreArn: KVS_ARN, Entries: entries },
      }),
    );

    expect(answer?.Data?.Message).toContain('written on attempt 2');
    expect(Object.fromEntries(store.entries)).toEqual({ ...entries, [SIGNING_SECRETS_KEY]: 'rotated' });
    // Describe, list, a refused update (ConflictException over HTTP 409), then all again.
    expect(received.map((request) => `${request.method} ${request.path.endsWith('/keys') ? 'keys' : 'store'}`)).toEqual([
      'GET store',
      'GET keys',
      'POST keys',
      'GET store',
      'GET keys',
      'POST keys',
    ]);
    for (const request of received) {
      expect(request.path).toContain(encodeURIComponent(KVS_ARN));
      expect(request.host).toBe(`123456789012.kvs.test:${port}`);
      expect(request.authorization).toMatch(
        /^AWS4-ECDSA-P256-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/cloudfront-keyvaluestore\/aws4_request, SignedHeaders=[a-z0-9;-]*x-amz-region-set[a-z0-9;-]*, Signature=[0-9a-f]+$/,
      );
      expect(request.regionSet).toBe('*');
    }
  });
});
