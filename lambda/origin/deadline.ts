// A request's one deadline. Every bound on a request's time is read from it:
// the answer is due when the time budget ends or the invocation is about to,
// whichever comes first; work after the answer (storing the variant, an AVIF
// that follows a WebP) stops when the invocation is about to end.

import { HttpError } from './errors';

/** The part of Lambda's context the handler uses: how long until the invocation is killed, and its id. */
export interface InvocationContext {
  getRemainingTimeInMillis(): number;
  /** Lambda's id of this invocation, logged with the request. */
  awsRequestId?: string;
}

/** Time kept back from Lambda's own timeout to answer 504 and log it. */
export const TIMEOUT_MARGIN_MS = 1000;

export interface Deadline {
  /** When the answer is due (performance.now() time). */
  readonly answerBy: number;
  /** When the invocation is about to end (performance.now() time); Infinity without an invocation (tests, the emulator). */
  readonly endsAt: number;
  /** Milliseconds left until the answer is due, at least 1 (an AbortSignal's timeout). */
  left(): number;
  /** `work`, or a 504 once the answer is due. */
  race<T>(work: Promise<T>): Promise<T>;
  /** Aborts when the invocation is about to end; undefined when it never does. */
  endSignal(): AbortSignal | undefined;
}

const timedOut = () => new HttpError('timeout', 'The image took too long to transform.');

/** The deadline of a request that starts now with `timeBudgetMs` to answer, in `invocation` (if any). */
export function deadlineOf(timeBudgetMs: number, invocation?: InvocationContext, now = performance.now()): Deadline {
  const remaining = invocation ? invocation.getRemainingTimeInMillis() - TIMEOUT_MARGIN_MS : Infinity;
  const answerBy = now + Math.min(timeBudgetMs, remaining);
  const endsAt = now + remaining;
  const untilMs = (end: number) => Math.max(1, Math.floor(end - performance.now()));
  return {
    answerBy,
    endsAt,
    left: () => untilMs(answerBy),
    race<T>(work: Promise<T>) {
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(timedOut()), Math.max(0, answerBy - performance.now()));
      });
      return Promise.race([work, expired]).finally(() => clearTimeout(timer));
    },
    endSignal: () => (Number.isFinite(endsAt) ? AbortSignal.timeout(untilMs(endsAt)) : undefined),
  };
}
