// How much of the account's concurrency the origin Lambda may reserve: the
// cap it was given, but never so much that Lambda refuses it. Lambda keeps at
// least 100 of an account's concurrency unreserved, or the whole quota when
// the quota is lower (new accounts often have 10 or 50): a fixed reservation
// in the template would fail `cdk deploy` there ("decreases account's
// UnreservedConcurrentExecution below its minimum value"), so the cap is
// sized at deploy time from the account's settings.

/** What Lambda keeps unreserved in every account (or the whole quota, when lower). */
export const UNRESERVED_MINIMUM = 100;

export interface AccountConcurrency {
  /** The account's concurrency quota in the region (GetAccountSettings: AccountLimit.ConcurrentExecutions). */
  quota: number;
  /** What no function reserves now (AccountLimit.UnreservedConcurrentExecutions); excludes `current`. */
  unreserved: number;
  /** The origin's own reservation now (GetFunctionConcurrency), which a new one replaces. */
  current?: number;
}

export interface CapDecision {
  /** The reservation to put on the origin; undefined: none (any present is removed). */
  reserve?: number;
  /** What was decided and why, for the stack output and the log. */
  message: string;
}

/**
 * The reservation for a cap of `cap` (0: no cap), at least `floor` (the
 * provisioned concurrency, which Lambda requires the reservation to cover).
 */
export function originConcurrencyCap(cap: number, floor: number, account: AccountConcurrency): CapDecision {
  if (cap === 0) return { message: 'No concurrency cap on the origin (originConcurrencyCap: false).' };
  const kept = Math.min(UNRESERVED_MINIMUM, account.quota);
  const spare = account.unreserved + (account.current ?? 0) - kept;
  const wanted = Math.max(cap, floor);
  const why = `the account's concurrency quota is ${account.quota}, Lambda keeps ${kept} of it unreserved, and other functions reserve ${account.quota - account.unreserved - (account.current ?? 0)}`;
  if (spare < Math.max(1, floor)) {
    return {
      message:
        `No concurrency cap on the origin: ${why}, which leaves ${Math.max(0, spare)} to reserve${floor > 1 ? ` (at least ${floor} needed for its provisioned concurrency)` : ''}. ` +
        'Ask for a higher "Concurrent executions" quota (Service Quotas, Lambda) and deploy again.',
    };
  }
  const reserve = Math.min(wanted, spare);
  return {
    reserve,
    message:
      reserve === wanted
        ? `The origin may run ${reserve} invocations at once (reserved concurrency).`
        : `The origin may run ${reserve} invocations at once (reserved concurrency), not ${wanted}: ${why}.`,
  };
}
