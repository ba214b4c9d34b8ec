// The request path's phases on their own, without S3 or a transform: the
// parse and check a request must pass, its one deadline, the answer to a
// failure and the line it logs, and the ETag match that turns an answer into
// a 304. The phases' work with storage and sharp is tested through the
// handler (responses, errors, metrics, web-sources and avif-first-view tests).

import { describe, expect, it } from 'vitest';
import { originConfig } from '../../lambda/origin/config';
import { deadlineOf, TIMEOUT_MARGIN_MS } from '../../lambda/origin/deadline';
import { ERROR_CODES, HttpError } from '../../lambda/origin/errors';
import { requestMetrics } from '../../lambda/origin/metrics';
import { answerError, check, parse } from '../../lambda/origin/phases';
import { etagMatches } from '../../lambda/origin/responses';
import { functionUrlEvent } from '../../local/emulator/function-url';

const config = originConfig({ sourceBucket: 'sources', cacheBucket: 'cache' }, { requireWatermark: { 'users/': 'corner' } });

/** The HttpError `work` throws: its status and code. */
function refusal(work: () => unknown): { status: number; code: string } {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    return { status: (error as HttpError).status, code: (error as HttpError).code };
  }
  throw new Error('expected a refusal');
}

describe('parse', () => {
  it('gives the canonical request of a GET or HEAD of a canonical URI', () => {
    for (const method of ['GET', 'HEAD']) {
      const request = parse(functionUrlEvent('/photos/cat.jpg/width=160,format=webp', method), config);
      expect(request).toMatchObject({
        key: 'photos/cat.jpg',
        uri: '/photos/cat.jpg/width=160,format=webp',
        ops: { width: 160, format: 'webp' },
      });
    }
  });

  it('refuses other methods with 405 and the grammar refusals with their own codes', () => {
    expect(refusal(() => parse(functionUrlEvent('/cat.jpg/width=160', 'POST'), config))).toEqual({
      status: 405,
      code: 'method_not_allowed',
    });
    expect(refusal(() => parse(functionUrlEvent('/cat.jpg/width=0'), config))).toEqual({ status: 400, code: 'invalid_parameter' });
    expect(refusal(() => parse(functionUrlEvent('/cat.jpg/format=webp,width=160'), config))).toEqual({
      status: 400,
      code: 'not_canonical',
    });
  });
});

describe('check', () => {
  it('refuses with 403 a request without the watermark its prefix requires, and lets the others through', () => {
    expect(refusal(() => check(parse(functionUrlEvent('/users/me.jpg/width=160'), config), config))).toEqual({
      status: 403,
      code: 'watermark_required',
    });
    expect(() => check(parse(functionUrlEvent('/photos/me.jpg/width=160'), config), config)).not.toThrow();
  });
});

describe('the deadline', () => {
  const invocation = (remainingMs: number) => ({ getRemainingTimeInMillis: () => remainingMs });

  it('is the time budget, or what Lambda has left less the margin to answer, whichever ends first', () => {
    expect(deadlineOf(5_000, invocation(60_000), 100)).toMatchObject({ answerBy: 5_100, endsAt: 100 + 60_000 - TIMEOUT_MARGIN_MS });
    expect(deadlineOf(5_000, invocation(3_000), 100).answerBy).toBe(100 + 3_000 - TIMEOUT_MARGIN_MS);
  });

  it('without an invocation, work after the answer is never cut short', () => {
    const deadline = deadlineOf(5_000);
    expect(deadline.endsAt).toBe(Infinity);
    expect(deadline.endSignal()).toBeUndefined();
    expect(deadline.left()).toBeGreaterThan(4_000);
  });

  it('turns work still running when the answer is due into a 504', async () => {
    const deadline = deadlineOf(30);
    const never = new Promise(() => {});
    await expect(deadline.race(never)).rejects.toMatchObject({ status: 504, code: 'timeout' });
    await expect(deadlineOf(1_000).race(Promise.resolve('done'))).resolves.toBe('done');
  });

  it('aborts work after the answer when the invocation is about to end', async () => {
    const signal = deadlineOf(5_000, invocation(TIMEOUT_MARGIN_MS + 20)).endSignal()!;
    expect(signal.aborted).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(signal.aborted).toBe(true);
  });
});

describe('answering a failure', () => {
  it('answers a contract error with its status and code, and logs one line of one shape with its metrics', () => {
    const logs: Record<string, unknown>[] = [];
    const error = new HttpError('not_found', 'No source image has this key.', 'NoSuchKey');
    const response = answerError((entry) => logs.push(entry), '/cat.jpg/width=1', requestMetrics({ enabled: false }), error);
    expect(response.statusCode).toBe(404);
    expect(JSON.parse(response.body.toString())).toEqual({ error: 'not_found', message: 'No source image has this key.' });
    expect(logs).toEqual([
      expect.objectContaining({
        level: 'warn',
        event: 'error',
        uri: '/cat.jpg/width=1',
        code: 'not_found',
        status: 404,
        detail: 'NoSuchKey',
        Errors: 1,
      }),
    ]);
  });

  it('answers a bug with a 500 that says nothing internal, and logs its stack', () => {
    const logs: Record<string, unknown>[] = [];
    const response = answerError(
      (entry) => logs.push(entry),
      '/cat.jpg/width=1',
      requestMetrics({ enabled: false }),
      new TypeError('secret internals'),
    );
    expect(response.statusCode).toBe(500);
    expect(response.body.toString()).not.toContain('secret');
    expect(logs).toEqual([
      expect.objectContaining({ level: 'error', event: 'unexpected', code: 'internal_error', status: 500, ServerErrors: 1 }),
    ]);
    expect(logs[0]!.detail).toMatch(/TypeError: secret internals\n\s+at /);
  });

  it('every code of the contract has its status from the one table', () => {
    for (const code of ERROR_CODES) expect(new HttpError(code, '').status).toBeGreaterThanOrEqual(400);
    expect(ERROR_CODES).toContain('timeout');
    expect(new HttpError('timeout', '').status).toBe(504);
  });
});

describe('If-None-Match', () => {
  const etag = '"abc"';
  it('matches the ETag in a list, weak or strong, and *', () => {
    expect(etagMatches('"abc"', etag)).toBe(true);
    expect(etagMatches('"x", W/"abc"', etag)).toBe(true);
    expect(etagMatches('*', etag)).toBe(true);
  });
  it('matches nothing else', () => {
    expect(etagMatches(undefined, etag)).toBe(false);
    expect(etagMatches('', etag)).toBe(false);
    expect(etagMatches('"abcd", "ab"', etag)).toBe(false);
  });
});
