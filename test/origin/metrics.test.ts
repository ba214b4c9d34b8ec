// The origin's CloudWatch metrics, in Embedded Metric Format (EMF): through
// the real handler on LocalStack S3 and real sharp, every request's last log
// line must be a valid EMF document (the specification's rules, checked
// below) that publishes the documented metrics, for a success and for each
// class of error the contract has.

import type { S3Client } from '@aws-sdk/client-s3';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createOriginHandler, type InvocationContext } from '../../lambda/origin/handler';
import { jsonLogger } from '../../lambda/common/log';
import { DEFAULT_METRICS_NAMESPACE, ERROR_CODES, METRIC_UNITS, formatOf, requestMetrics } from '../../lambda/origin/metrics';
import { decodeResult, functionUrlEvent } from '../../local/emulator/function-url';
import { localS3Client } from '../../local/harness/s3-client';
import { gradientJpeg, noiseImage } from '../support/images';
import { createTestOrigin, type TestOrigin } from '../support/origin';
import { unreachableS3Endpoint } from '../support/s3';

type Json = Record<string, any>;

/** CloudWatch's units (MetricDatum), as the EMF JSON schema lists them. */
const UNITS = new Set(
  'Seconds Microseconds Milliseconds Bytes Kilobytes Megabytes Gigabytes Terabytes Bits Kilobits Megabits Gigabits Terabits Percent Count Bytes/Second Kilobytes/Second Megabytes/Second Gigabytes/Second Terabytes/Second Bits/Second Kilobits/Second Megabits/Second Gigabits/Second Terabits/Second Count/Second None'.split(
    ' ',
  ),
);

/**
 * Checks `doc` against the EMF specification (CloudWatch User Guide,
 * "Specification: Embedded metric format") and returns its metrics as
 * `{ namespace, dimensions: [[name, value], ...], name, unit, value }`.
 */
function parseEmf(doc: Json) {
  expect(doc, 'a JSON object').toBeTypeOf('object');
  expect(Buffer.byteLength(JSON.stringify(doc))).toBeLessThan(256 * 1024);
  const aws = doc._aws;
  expect(Object.keys(aws).sort()).toEqual(['CloudWatchMetrics', 'Timestamp']);
  // Milliseconds since the epoch, an integer, and now.
  expect(Number.isInteger(aws.Timestamp)).toBe(true);
  expect(Math.abs(aws.Timestamp - Date.now())).toBeLessThan(60_000);
  expect(Array.isArray(aws.CloudWatchMetrics)).toBe(true);
  expect(aws.CloudWatchMetrics.length).toBeGreaterThan(0);

  const published: { namespace: string; dimensions: [string, string][]; name: string; unit: string; value: number }[] = [];
  for (const directive of aws.CloudWatchMetrics as Json[]) {
    expect(Object.keys(directive).sort()).toEqual(['Dimensions', 'Metrics', 'Namespace']);
    expect(directive.Namespace).toMatch(/^.{1,255}$/);
    expect(Array.isArray(directive.Dimensions)).toBe(true);
    expect(directive.Dimensions.length).toBeGreaterThanOrEqual(1);
    for (const set of directive.Dimensions as unknown[]) {
      expect(Array.isArray(set)).toBe(true);
      expect((set as unknown[]).length).toBeLessThanOrEqual(9);
      for (const key of set as unknown[]) {
        expect(key).toBeTypeOf('string');
        // A dimension's target member: on the root, a string.
        expect(doc[key as string], `dimension ${String(key)}`).toBeTypeOf('string');
      }
    }
    expect(directive.Metrics.length).toBeGreaterThan(0);
    expect(directive.Metrics.length).toBeLessThanOrEqual(100);
    for (const definition of directive.Metrics as Json[]) {
      expect(Object.keys(definition).every((key) => ['Name', 'Unit', 'StorageResolution'].includes(key))).toBe(true);
      expect(definition.Name).toMatch(/^.{1,255}$/);
      expect(UNITS.has(definition.Unit), `unit ${definition.Unit}`).toBe(true);
      // A metric's target member: on the root (not nested), a number.
      const value = doc[definition.Name];
      expect(typeof value === 'number' && Number.isFinite(value), `${definition.Name}=${JSON.stringify(value)}`).toBe(true);
      for (const set of directive.Dimensions as string[][]) {
        published.push({
          namespace: directive.Namespace,
          dimensions: set.map((key) => [key, doc[key]]),
          name: definition.Name,
          unit: definition.Unit,
          value,
        });
      }
    }
  }
  return published;
}

/** The EMF documents among `entries`: exactly one per request. */
const emfLines = (entries: Json[]) => entries.filter((entry) => entry._aws !== undefined);

const published = (doc: Json) =>
  parseEmf(doc).map(
    ({ dimensions, name, unit, value }) => `${dimensions.map((d) => d.join('=')).join(',') || '-'} ${name} ${unit} ${value}`,
  );

const context = (awsRequestId: string): InvocationContext => ({ getRemainingTimeInMillis: () => 60_000, awsRequestId });

let origin: TestOrigin;
let source: Buffer;

beforeAll(async () => {
  origin = await createTestOrigin('metrics');
  source = await gradientJpeg(320, 240);
  await origin.putSource('photos/cat.jpg', source, 'image/jpeg');
});

/** Requests `uri`, returns the one EMF line it logged. */
async function requestEmf(target: TestOrigin, uri: string, requestId: string, method?: string) {
  const before = target.logs.length;
  const response = await target.request(uri, { context: context(requestId), method });
  const lines = emfLines(target.logs.slice(before));
  expect(lines, JSON.stringify(target.logs.slice(before))).toHaveLength(1);
  return { response, doc: lines[0]! };
}

describe('a served variant', () => {
  it('logs one EMF line: every documented metric, without and with OutputFormat, and its request id and URI', async () => {
    const uri = '/photos/cat.jpg/width=160,format=webp';
    const { response, doc } = await requestEmf(origin, uri, 'req-ok-1');
    expect(response.status).toBe(200);

    const metrics = parseEmf(doc);
    expect(new Set(metrics.map((m) => m.namespace))).toEqual(new Set([DEFAULT_METRICS_NAMESPACE]));
    // Without dimensions: all nine, each with its documented unit.
    const plain = metrics.filter((m) => m.dimensions.length === 0);
    expect(plain.map((m) => m.name).sort()).toEqual(Object.keys(METRIC_UNITS).sort());
    for (const metric of plain) expect(metric.unit).toBe(METRIC_UNITS[metric.name as keyof typeof METRIC_UNITS]);
    // By output format: requests, transform time and output size.
    expect(metrics.filter((m) => m.dimensions.length > 0).map((m) => `${m.dimensions.join('=')} ${m.name}`)).toEqual([
      'OutputFormat,webp Requests',
      'OutputFormat,webp TransformTime',
      'OutputFormat,webp OutputBytes',
    ]);

    expect(doc).toMatchObject({
      level: 'info',
      event: 'variant',
      uri,
      requestId: 'req-ok-1',
      status: 200,
      OutputFormat: 'webp',
      Requests: 1,
      Errors: 0,
      ServerErrors: 0,
      SourceBytes: source.length,
      OutputBytes: response.body.length,
    });
    expect(doc.ErrorCode).toBeUndefined();
    for (const name of ['FetchTime', 'TransformTime', 'StoreTime']) {
      expect(doc[name]).toBeGreaterThan(0);
      expect(doc[name]).toBeLessThan(30_000);
    }
    // The Server-Timing header and the metrics measure the same thing.
    const serverTiming = Object.fromEntries(
      response.headers['server-timing']!.split(', ').map((part) => part.split(';dur=') as [string, string]),
    );
    expect(Number(serverTiming.transform)).toBeCloseTo(doc.TransformTime, 0);
    // Resident memory of this process: tens to thousands of MB.
    expect(doc.MemoryRss).toBeGreaterThan(10);
    expect(doc.MemoryRss).toBeLessThan(64 * 1024);
  });

  it('names the format that was made: jpeg, png, avif, gif, json', async () => {
    const cases: [string, string][] = [
      ['/photos/cat.jpg/width=100', 'jpeg'],
      ['/photos/cat.jpg/width=100,format=png', 'png'],
      ['/photos/cat.jpg/width=64,format=avif', 'avif'],
      ['/photos/cat.jpg/width=64,format=gif', 'gif'],
      ['/photos/cat.jpg/format=json', 'json'],
    ];
    for (const [uri, format] of cases) {
      const { response, doc } = await requestEmf(origin, uri, `req-${format}`);
      expect(response.status, uri).toBe(200);
      parseEmf(doc);
      expect(doc, uri).toMatchObject({ OutputFormat: format, Requests: 1, Errors: 0, OutputBytes: response.body.length });
    }
  });

  it('a 304 and a redirect are requests too, with their status', async () => {
    const uri = '/photos/cat.jpg/width=120';
    const first = await origin.request(uri);
    const before = origin.logs.length;
    const revalidated = await origin.request(uri, { headers: { 'if-none-match': first.headers.etag! } });
    expect(revalidated.status).toBe(304);
    const [doc] = emfLines(origin.logs.slice(before));
    expect(doc).toMatchObject({ status: 304, Requests: 1, Errors: 0, OutputFormat: 'jpeg' });

    const small = await createTestOrigin('metrics redirect', { maxInlineBytes: 100 });
    await small.putSource('photos/cat.jpg', source, 'image/jpeg');
    const { response, doc: redirected } = await requestEmf(small, '/photos/cat.jpg/width=200', 'req-302');
    expect(response.status).toBe(302);
    parseEmf(redirected);
    expect(redirected).toMatchObject({ status: 302, Requests: 1, Errors: 0, ServerErrors: 0 });
  });
});

describe('every error class: one EMF line with Errors, ServerErrors and the ErrorCode dimension', () => {
  let bytesLimited: TestOrigin;
  let hurried: TestOrigin;

  beforeAll(async () => {
    [bytesLimited, hurried] = await Promise.all([
      createTestOrigin('metrics bytes limit', { maxSourceBytes: 1000 }),
      createTestOrigin('metrics time budget', { timeBudgetMs: 5 }),
    ]);
    const whole = await gradientJpeg(400, 300);
    await Promise.all([
      bytesLimited.putSource('big.jpg', source, 'image/jpeg'),
      hurried.putSource('noise.jpg', await noiseImage(1500, 1500, 'jpeg'), 'image/jpeg'),
      origin.putSource('text/photo.jpg', 'These are words, not pixels.\n', 'image/jpeg'),
      origin.putSource('broken/truncated.jpg', whole.subarray(0, Math.floor(whole.length / 2)), 'image/jpeg'),
    ]);
  });

  /** The EMF line of one refused request, checked for everything an error line must say. */
  function expectErrorEmf(doc: Json, status: number, code: string, uri: string) {
    const metrics = parseEmf(doc);
    expect(doc).toMatchObject({
      level: status >= 500 ? 'error' : 'warn',
      code,
      status,
      uri,
      ErrorCode: code,
      Requests: 1,
      Errors: 1,
      ServerErrors: status >= 500 ? 1 : 0,
    });
    expect(doc.OutputFormat).toBeUndefined();
    expect(doc.OutputBytes).toBeUndefined();
    expect(metrics.filter((m) => m.dimensions.length > 0).map((m) => `${m.dimensions.join('=')} ${m.name} ${m.value}`)).toEqual([
      `ErrorCode,${code} Errors 1`,
    ]);
    const plain = metrics.filter((m) => m.dimensions.length === 0).map((m) => m.name);
    expect(plain).toEqual(expect.arrayContaining(['Requests', 'Errors', 'ServerErrors', 'MemoryRss']));
    expect(plain.every((name) => name in METRIC_UNITS)).toBe(true);
    expect(ERROR_CODES).toContain(code);
  }

  it.each([
    ['invalid_parameter', 400, '/photos/cat.jpg/width=0'],
    ['not_canonical', 400, '/photos/cat.jpg/w=10'],
    ['invalid_key', 400, '/a/../b.jpg/original'],
    ['not_found', 404, '/missing.jpg/width=100'],
    ['unsupported_media_type', 415, '/text/photo.jpg/width=100'],
    ['undecodable_image', 422, '/broken/truncated.jpg/width=100'],
  ])('%s (%i)', async (code, status, uri) => {
    const { response, doc } = await requestEmf(origin, uri, `req-${code}`);
    expect(response.status).toBe(status);
    expectErrorEmf(doc, status, code, uri);
    expect(doc.requestId).toBe(`req-${code}`);
  });

  it('method_not_allowed (405)', async () => {
    const { response, doc } = await requestEmf(origin, '/photos/cat.jpg/width=100', 'req-405', 'POST');
    expect(response.status).toBe(405);
    expectErrorEmf(doc, 405, 'method_not_allowed', '/photos/cat.jpg/width=100');
  });

  it('source_too_large (413), with the fetch time and no bytes it did not keep', async () => {
    const { response, doc } = await requestEmf(bytesLimited, '/big.jpg/width=100', 'req-413');
    expect(response.status).toBe(413);
    expectErrorEmf(doc, 413, 'source_too_large', '/big.jpg/width=100');
    expect(doc.FetchTime).toBeGreaterThan(0);
    expect(doc.SourceBytes).toBeUndefined();
    expect(doc.TransformTime).toBeUndefined();
  });

  it('storage_unavailable (503) when S3 cannot be reached', async () => {
    const s3 = localS3Client(await unreachableS3Endpoint());
    const logs: Json[] = [];
    const handle = createOriginHandler({ s3, config: origin.config, log: (entry) => logs.push(entry) });
    const response = decodeResult(await handle(functionUrlEvent('/photos/cat.jpg/width=100'), context('req-503')));
    s3.destroy();
    expect(response.status).toBe(503);
    const lines = emfLines(logs);
    expect(lines).toHaveLength(1);
    expectErrorEmf(lines[0]!, 503, 'storage_unavailable', '/photos/cat.jpg/width=100');
  });

  it('timeout (504) when the transform overruns the time budget', async () => {
    const { response, doc } = await requestEmf(hurried, '/noise.jpg/width=1000', 'req-504');
    expect(response.status).toBe(504);
    expectErrorEmf(doc, 504, 'timeout', '/noise.jpg/width=1000');
  });

  it('internal_error (500) for a failure the handler did not expect', async () => {
    // An S3 answer that throws when read: a bug-shaped failure, not a storage one.
    const s3 = {
      send: async () => ({
        get ContentLength(): number {
          throw new TypeError('not what an S3 client returns');
        },
      }),
    } as unknown as S3Client;
    const logs: Json[] = [];
    const handle = createOriginHandler({ s3, config: origin.config, log: (entry) => logs.push(entry) });
    const response = decodeResult(await handle(functionUrlEvent('/photos/cat.jpg/width=100'), context('req-500')));
    expect(response.status).toBe(500);
    const lines = emfLines(logs);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ event: 'unexpected', requestId: 'req-500' });
    expectErrorEmf(lines[0]!, 500, 'internal_error', '/photos/cat.jpg/width=100');
  });
});

describe('options and the printed line', () => {
  afterEach(() => vi.restoreAllMocks());

  it('a configured namespace, the function version, and no EMF block when turned off', async () => {
    const logs: Json[] = [];
    const make = (metrics: Parameters<typeof createOriginHandler>[0]['metrics']) =>
      createOriginHandler({ s3: origin.s3, config: origin.config, log: (entry) => logs.push(entry), metrics });

    await make({ namespace: 'Photos/Images', functionVersion: '7' })(functionUrlEvent('/photos/cat.jpg/width=90'), context('a'));
    expect(parseEmf(logs[0]!).map((m) => m.namespace)).toEqual(expect.arrayContaining(['Photos/Images']));
    expect(new Set(parseEmf(logs[0]!).map((m) => m.namespace)).size).toBe(1);
    expect(logs[0]).toMatchObject({ functionVersion: '7', requestId: 'a' });

    await make({ enabled: false })(functionUrlEvent('/photos/cat.jpg/width=90'), context('b'));
    expect(logs[1]!._aws).toBeUndefined();
    // The same fields, for Logs Insights.
    expect(logs[1]).toMatchObject({ requestId: 'b', status: 200, Requests: 1, Errors: 0, OutputFormat: 'jpeg' });
  });

  it('jsonLogger prints the document as one line of JSON that is still valid EMF', () => {
    const printed: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: string) => void printed.push(line));
    const metrics = requestMetrics({ now: () => Date.now(), rss: () => 256 * 1024 * 1024 }, 'req-print');
    metrics.timings.fetch = 12.3456;
    metrics.contentType = 'image/avif';
    metrics.outputBytes = 999;
    jsonLogger({ level: 'info', event: 'variant', uri: '/a.jpg/format=avif', ...metrics.done(200) });

    expect(printed).toHaveLength(1);
    expect(printed[0]).not.toContain('\n');
    const doc = JSON.parse(printed[0]!);
    expect(published(doc)).toEqual([
      '- Requests Count 1',
      '- Errors Count 0',
      '- ServerErrors Count 0',
      '- FetchTime Milliseconds 12.346',
      '- OutputBytes Bytes 999',
      '- MemoryRss Megabytes 256',
      'OutputFormat=avif Requests Count 1',
      'OutputFormat=avif OutputBytes Bytes 999',
    ]);
    expect(doc).toMatchObject({ requestId: 'req-print', time: expect.any(String) });
  });

  it('formatOf reads the subtype of a Content-Type', () => {
    expect(formatOf('image/webp')).toBe('webp');
    expect(formatOf('application/json; charset=utf-8')).toBe('json');
    expect(formatOf('nonsense')).toBe('unknown');
  });
});
