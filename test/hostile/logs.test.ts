// Structured logs and what a viewer is told: every error path of the origin
// handler writes exactly one JSON-able entry with its `code`, `status` and
// the canonical URI (the raw path when the request never parsed), keeps the
// internal cause (SDK, libvips, stack) in that entry's `detail`, and answers
// a body that carries none of it. The production logger writes each entry as
// one line of JSON, so no viewer input can forge or split a log line.

import { createServer } from 'node:net';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createOriginHandler, type OriginHandler } from '../../lambda/origin/handler';
import { jsonLogger } from '../../lambda/common/log';
import { decodeResult, functionUrlEvent } from '../../local/emulator/function-url';
import { localS3Client } from '../../local/harness/s3-client';
import { createTestOrigin, type TestOrigin } from '../support/origin';
import { testS3Client } from '../support/s3';
import { expectAnswer, expectErrorLogged, OK_KEY, okJpeg, truncated, type Expected } from './support';

let origin: TestOrigin;
let byteLimited: TestOrigin;
let pixelLimited: TestOrigin;
let hurried: TestOrigin;
let unreachable: OriginHandler;
let bare: OriginHandler;
const unreachableLogs: Record<string, unknown>[] = [];
const bareLogs: Record<string, unknown>[] = [];

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  [origin, byteLimited, pixelLimited, hurried] = await Promise.all([
    createTestOrigin('logs'),
    createTestOrigin('logs bytes', { maxSourceBytes: 500 }),
    createTestOrigin('logs pixels', { maxInputPixels: 1000 }),
    createTestOrigin('logs budget', { timeBudgetMs: 1 }),
  ]);
  const ok = await okJpeg();
  await Promise.all([
    ...[origin, byteLimited, pixelLimited, hurried].map((target) => target.putSource(OK_KEY, ok, 'image/jpeg')),
    origin.putSource('bad/notes.jpg', 'just text', 'image/jpeg'),
    origin.putSource('bad/cut.jpg', truncated(ok, 0.5), 'image/jpeg'),
  ]);
  unreachable = createOriginHandler({
    s3: localS3Client(`http://127.0.0.1:${await closedPort()}`),
    config: origin.config,
    log: (entry) => unreachableLogs.push(entry),
  });
  bare = createOriginHandler({ s3: testS3Client(), config: origin.config, log: (entry) => bareLogs.push(entry) });
});

interface ErrorPath {
  name: string;
  expected: Expected;
  /** The URI the request names (and the log's uri unless `loggedUri`). */
  uri: string;
  /** Makes the request; returns the answer and the entries it logged. */
  run(): Promise<{ status: number; headers: Record<string, string>; body: Buffer; entries: Record<string, unknown>[]; buckets: string[] }>;
  /** What the operator's `detail` holds that the viewer's body must not. */
  detail?: RegExp;
}

function via(target: TestOrigin, uri: string, method = 'GET'): ErrorPath['run'] {
  return async () => {
    const at = target.logs.length;
    const response = await target.request(uri, { method });
    return { ...response, entries: target.logs.slice(at), buckets: [target.sourceBucket, target.cacheBucket] };
  };
}

function direct(handle: () => OriginHandler, logs: Record<string, unknown>[], event: () => LambdaFunctionURLEvent): ErrorPath['run'] {
  return async () => {
    const at = logs.length;
    const response = decodeResult(await handle()(event()));
    return { ...response, entries: logs.slice(at), buckets: [origin.sourceBucket, origin.cacheBucket] };
  };
}

const PATHS: ErrorPath[] = [
  {
    name: '405 method_not_allowed',
    expected: { status: 405, code: 'method_not_allowed' },
    uri: '/ok/fine.jpg/width=10',
    run: () => via(origin, '/ok/fine.jpg/width=10', 'DELETE')(),
  },
  {
    name: '400 invalid_parameter',
    expected: { status: 400, code: 'invalid_parameter' },
    uri: '/ok/fine.jpg/width=0',
    run: () => via(origin, '/ok/fine.jpg/width=0')(),
  },
  {
    name: '400 invalid_key',
    expected: { status: 400, code: 'invalid_key' },
    uri: '/ok/%00/original',
    run: () => via(origin, '/ok/%00/original')(),
  },
  {
    name: '400 not_canonical',
    expected: { status: 400, code: 'not_canonical' },
    uri: '/ok/fine.jpg/w=10',
    run: () => via(origin, '/ok/fine.jpg/w=10')(),
  },
  {
    name: '404 not_found',
    expected: { status: 404, code: 'not_found' },
    uri: '/no/such.jpg/width=10',
    run: () => via(origin, '/no/such.jpg/width=10')(),
    detail: /NoSuchKey/,
  },
  {
    name: '413 source_too_large',
    expected: { status: 413, code: 'source_too_large' },
    uri: '/ok/fine.jpg/original',
    run: () => via(byteLimited, '/ok/fine.jpg/original')(),
  },
  {
    name: '413 too_many_pixels',
    expected: { status: 413, code: 'too_many_pixels' },
    uri: '/ok/fine.jpg/format=json',
    run: () => via(pixelLimited, '/ok/fine.jpg/format=json')(),
    detail: /pixel limit/,
  },
  {
    name: '415 unsupported_media_type',
    expected: { status: 415, code: 'unsupported_media_type' },
    uri: '/bad/notes.jpg/width=10',
    run: () => via(origin, '/bad/notes.jpg/width=10')(),
  },
  {
    name: '422 undecodable_image',
    expected: { status: 422, code: 'undecodable_image' },
    uri: '/bad/cut.jpg/format=webp',
    run: () => via(origin, '/bad/cut.jpg/format=webp')(),
    detail: /VipsJpeg|premature/i,
  },
  {
    name: '500 internal_error (a bug: here, an event without requestContext)',
    expected: { status: 500, code: 'internal_error' },
    uri: '/ok/fine.jpg/width=10',
    run: direct(
      () => bare,
      bareLogs,
      () => ({ ...functionUrlEvent('/ok/fine.jpg/width=10'), requestContext: undefined }) as unknown as LambdaFunctionURLEvent,
    ),
    detail: /TypeError[\s\S]*\n\s+at /,
  },
  {
    name: '503 storage_unavailable',
    expected: { status: 503, code: 'storage_unavailable' },
    uri: '/ok/fine.jpg/width=10',
    run: direct(
      () => unreachable,
      unreachableLogs,
      () => functionUrlEvent('/ok/fine.jpg/width=10'),
    ),
    detail: /ECONNREFUSED|connect/i,
  },
  {
    name: '504 timeout',
    expected: { status: 504, code: 'timeout' },
    uri: '/ok/fine.jpg/width=10',
    run: () => via(hurried, '/ok/fine.jpg/width=10')(),
  },
];

describe('every error path of the handler', () => {
  it.each(PATHS.map((path) => [path.name, path] as const))(
    '%s: one JSON-able entry with code, status and URI; a body without internal detail',
    async (_name, path) => {
      const { entries, buckets, ...answer } = await path.run();
      expectAnswer(answer, path.expected, { sent: path.uri, buckets });
      expectErrorLogged(entries, path.expected, path.uri);
      const entry = entries.find((one) => one.event === 'error' || one.event === 'unexpected')!;
      if (path.detail) {
        // The cause is the operator's: in the log, never in the body.
        expect(String(entry.detail)).toMatch(path.detail);
        expect(answer.body.toString('utf8')).not.toMatch(path.detail);
      }
      if (answer.status === 503) expect(answer.headers['retry-after']).toMatch(/^\d+$/);
    },
  );

  it('an entry names the canonical URI once the request parsed, and the raw path before', async () => {
    const uris = origin.logs.filter((entry) => entry.event === 'error').map((entry) => entry.uri);
    expect(uris).toContain('/no/such.jpg/width=10');
    expect(uris).toContain('/ok/fine.jpg/w=10');
  });
});

describe('the production logger', () => {
  afterEach(() => vi.restoreAllMocks());

  it('writes each entry as one line of JSON with a time, whatever the viewer put in the URI', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
    const handle = createOriginHandler({ s3: testS3Client(), config: origin.config, log: jsonLogger });
    const forged = '/ok/x\n{"level":"info","event":"variant","uri":"/forged"}\u2028\r.jpg/original';
    for (const uri of [forged, '/ok/\uD800.jpg/original', '/no/such.jpg/width=10', '/ok/fine.jpg/width=0']) {
      const response = decodeResult(await handle(functionUrlEvent(uri)));
      expect(response.status).toBeGreaterThanOrEqual(400);
    }
    expect(lines).toHaveLength(4);
    for (const line of lines) {
      expect(line).not.toMatch(/[\n\r]/);
      const entry = JSON.parse(line) as Record<string, unknown>;
      expect(entry).toMatchObject({
        level: 'warn',
        event: 'error',
        code: expect.any(String),
        status: expect.any(Number),
        uri: expect.any(String),
      });
      expect(Date.parse(String(entry.time))).not.toBeNaN();
    }
    expect(JSON.parse(lines[0]!).uri).toBe(forged);
  });
});
