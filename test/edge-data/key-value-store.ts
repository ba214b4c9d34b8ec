// An in-memory CloudFront KeyValueStore, answering the data-plane calls the
// edge data writer makes as the real API does: a new version (ETag) after
// every write, a write naming another version refused with ConflictException,
// UpdateKeys refused past 50 keys per call or CloudFront's sizes, ListKeys in
// pages. `serveOverHttp` puts it behind the REST API's own routes, for the
// real SDK client.

import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MAX_STORE_KEY_BYTES, MAX_STORE_VALUE_BYTES } from '../../lambda/edge/store';
import type { KeyValueStoreApi, StoreEntry } from '../../lambda/edge-data/sync';

export const KVS_ARN = 'arn:aws:cloudfront::123456789012:key-value-store/11111111-2222-3333-4444-555555555555';

/** CloudFront's limits: keys per UpdateKeys call (puts and deletes together), and a whole store's keys and values. */
const UPDATE_KEYS_LIMIT = 50;
const MAX_STORE_BYTES = 5 * 1024 * 1024;

const failure = (name: string, message: string) => Object.assign(new Error(message), { name });
const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

export class MemoryKeyValueStore implements KeyValueStoreApi {
  readonly entries = new Map<string, string>();
  /** Every UpdateKeys that was applied, in order. */
  readonly updates: { puts: StoreEntry[]; deletes: string[] }[] = [];
  /** Every call, by name: `version`, `list`, `update`, `conflict`. */
  readonly calls: string[] = [];
  private etagNumber = 1;
  /** Run at the start of the next UpdateKeys calls, one each: someone else writing meanwhile. */
  private readonly interleaved: (() => void)[] = [];

  constructor(
    initial: Record<string, string> = {},
    private readonly pageSize = 2,
  ) {
    for (const [key, value] of Object.entries(initial)) this.entries.set(key, value);
  }

  get etag(): string {
    return `KV${this.etagNumber}`;
  }

  /** A write by the operator (the CLI's put-key), which changes the store's version. */
  operatorPut(key: string, value: string): void {
    this.entries.set(key, value);
    this.etagNumber++;
  }

  /** Makes `write` happen just before the next UpdateKeys arrives (after the writer read the version). */
  beforeNextUpdate(write: () => void): void {
    this.interleaved.push(write);
  }

  async version(kvsArn: string): Promise<string> {
    this.check(kvsArn);
    this.calls.push('version');
    return this.etag;
  }

  async listEntries(kvsArn: string, nextToken?: string): Promise<{ entries: StoreEntry[]; nextToken?: string }> {
    this.check(kvsArn);
    this.calls.push('list');
    const start = nextToken === undefined ? 0 : Number(nextToken);
    const keys = [...this.entries.keys()].sort();
    const page = keys.slice(start, start + this.pageSize).map((key) => ({ key, value: this.entries.get(key)! }));
    return start + this.pageSize < keys.length ? { entries: page, nextToken: String(start + this.pageSize) } : { entries: page };
  }

  async update(kvsArn: string, ifMatch: string, puts: StoreEntry[], deletes: string[]): Promise<string> {
    this.check(kvsArn);
    this.interleaved.shift()?.();
    if (ifMatch !== this.etag) {
      this.calls.push('conflict');
      throw failure('ConflictException', `The store is at version ${this.etag}, not ${ifMatch}.`);
    }
    this.calls.push('update');
    const count = puts.length + deletes.length;
    if (count === 0 || count > UPDATE_KEYS_LIMIT)
      throw failure('ValidationException', `UpdateKeys takes 1 to ${UPDATE_KEYS_LIMIT} keys, not ${count}.`);
    for (const { key, value } of puts) {
      if (bytes(key) > MAX_STORE_KEY_BYTES || bytes(value) > MAX_STORE_VALUE_BYTES)
        throw failure('ValidationException', `Key or value too long: ${key}.`);
    }
    const next = new Map(this.entries);
    for (const { key, value } of puts) next.set(key, value);
    for (const key of deletes) next.delete(key);
    const size = [...next].reduce((sum, [key, value]) => sum + bytes(key) + bytes(value), 0);
    if (size > MAX_STORE_BYTES) throw failure('ServiceQuotaExceededException', `The store would hold ${size} bytes.`);
    this.entries.clear();
    for (const [key, value] of next) this.entries.set(key, value);
    this.updates.push({ puts, deletes });
    this.etagNumber++;
    return this.etag;
  }

  private check(kvsArn: string): void {
    if (kvsArn !== KVS_ARN) throw failure('ResourceNotFoundException', `No store ${kvsArn}.`);
  }
}

/** Every request the REST front received: method, path and the headers that carry the signature. */
export interface ReceivedRequest {
  method: string;
  path: string;
  authorization: string;
  regionSet: string | undefined;
  host: string | undefined;
}

/** `store` behind the KeyValueStore REST API's routes, on a local port. */
export async function serveOverHttp(store: MemoryKeyValueStore): Promise<{ server: Server; port: number; received: ReceivedRequest[] }> {
  const received: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://kvs');
    received.push({
      method: request.method ?? '',
      path: url.pathname,
      authorization: String(request.headers.authorization ?? ''),
      regionSet: request.headers['x-amz-region-set'] as string | undefined,
      host: request.headers.host,
    });
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'application/json', ...headers });
      response.end(JSON.stringify(body));
    };
    const route = /^\/key-value-stores\/([^/]+)(\/keys)?$/.exec(url.pathname);
    const kvsArn = decodeURIComponent(route?.[1] ?? '');
    const handle = async () => {
      if (request.method === 'GET' && route && !route[2]) {
        const etag = await store.version(kvsArn);
        return answer(
          200,
          { KvsARN: kvsArn, ItemCount: store.entries.size, TotalSizeInBytes: 0, Created: 1_700_000_000, Status: 'READY' },
          { etag },
        );
      }
      if (request.method === 'GET' && route?.[2]) {
        const page = await store.listEntries(kvsArn, url.searchParams.get('NextToken') ?? undefined);
        return answer(200, {
          Items: page.entries.map(({ key, value }) => ({ Key: key, Value: value })),
          ...(page.nextToken ? { NextToken: page.nextToken } : {}),
        });
      }
      if (request.method === 'POST' && route?.[2]) {
        const body = JSON.parse(await text(request)) as { Puts?: { Key: string; Value: string }[]; Deletes?: { Key: string }[] };
        const etag = await store.update(
          kvsArn,
          String(request.headers['if-match'] ?? ''),
          (body.Puts ?? []).map(({ Key, Value }) => ({ key: Key, value: Value })),
          (body.Deletes ?? []).map(({ Key }) => Key),
        );
        return answer(200, { ItemCount: store.entries.size, TotalSizeInBytes: 0 }, { etag });
      }
      return answer(404, { message: `No route ${request.method} ${url.pathname}` }, { 'x-amzn-errortype': 'ResourceNotFoundException' });
    };
    handle().catch((error: Error) => {
      const status =
        { ConflictException: 409, ValidationException: 400, ServiceQuotaExceededException: 402, ResourceNotFoundException: 404 }[
          error.name
        ] ?? 500;
      answer(status, { message: error.message }, { 'x-amzn-errortype': error.name });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, received };
}

async function text(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
