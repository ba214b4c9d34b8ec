// The origin's deploy-time concurrency cap (lambda/concurrency): the sizing
// against the accounts that break a fixed reservation (quotas of 10 and 50),
// the custom resource's answers to CloudFormation, and the Lambda API calls
// it makes. The Lambda API is answered by a double that enforces Lambda's own
// rule (at least 100, or the whole quota, stays unreserved), as
// PutFunctionConcurrency does.

import { describe, expect, it } from 'vitest';
import { applyCap, createCapHandler, type ConcurrencyApi } from '../../lambda/concurrency';
import { originConcurrencyCap, UNRESERVED_MINIMUM } from '../../lambda/concurrency/sizing';
import { customResourceEvent } from '../support/custom-resource';

describe('originConcurrencyCap (sizing)', () => {
  it('reserves the cap where the account has room', () => {
    expect(originConcurrencyCap(50, 0, { quota: 1000, unreserved: 1000 })).toEqual({
      reserve: 50,
      message: 'The origin may run 50 invocations at once (reserved concurrency).',
    });
  });

  it.each([10, 50, 100])('reserves nothing on an account whose quota is %i, and says what to do', (quota) => {
    const decision = originConcurrencyCap(50, 0, { quota, unreserved: quota });
    expect(decision.reserve).toBeUndefined();
    expect(decision.message).toBe(
      `No concurrency cap on the origin: the account's concurrency quota is ${quota}, Lambda keeps ${quota} of it unreserved, ` +
        'and other functions reserve 0, which leaves 0 to reserve. Ask for a higher "Concurrent executions" quota (Service Quotas, Lambda) and deploy again.',
    );
  });

  it('reserves what the account can spare when that is below the cap, and says why', () => {
    expect(originConcurrencyCap(50, 0, { quota: 130, unreserved: 130 })).toEqual({
      reserve: 30,
      message:
        "The origin may run 30 invocations at once (reserved concurrency), not 50: the account's concurrency quota is 130, " +
        'Lambda keeps 100 of it unreserved, and other functions reserve 0.',
    });
    // Other functions' reservations count; the origin's own current one is given back first.
    expect(originConcurrencyCap(50, 0, { quota: 1000, unreserved: 120 }).reserve).toBe(20);
    expect(originConcurrencyCap(50, 0, { quota: 1000, unreserved: 120, current: 50 }).reserve).toBe(50);
  });

  it('never leaves less than Lambda keeps unreserved (property over quotas and reservations)', () => {
    for (const quota of [1, 10, 50, 99, 100, 101, 150, 1000, 5000]) {
      for (const others of [0, 1, 10, 100, 900]) {
        for (const current of [undefined, 5, 50]) {
          const unreserved = quota - others - (current ?? 0);
          if (unreserved < 0) continue;
          const { reserve } = originConcurrencyCap(50, 0, { quota, unreserved, current });
          if (reserve === undefined) continue;
          expect(reserve).toBeGreaterThanOrEqual(1);
          expect(reserve).toBeLessThanOrEqual(50);
          expect(quota - others - reserve, `quota ${quota}, others ${others}`).toBeGreaterThanOrEqual(Math.min(UNRESERVED_MINIMUM, quota));
        }
      }
    }
  });

  it('covers the provisioned concurrency, or reserves nothing when it cannot', () => {
    expect(originConcurrencyCap(50, 60, { quota: 1000, unreserved: 1000 }).reserve).toBe(60);
    expect(originConcurrencyCap(50, 60, { quota: 150, unreserved: 150 }).reserve).toBeUndefined();
    expect(originConcurrencyCap(50, 60, { quota: 150, unreserved: 150 }).message).toMatch(
      /leaves 50 to reserve \(at least 60 needed for its provisioned concurrency\)/,
    );
  });

  it('a cap of 0 means no cap', () => {
    expect(originConcurrencyCap(0, 0, { quota: 1000, unreserved: 1000 })).toEqual({
      message: 'No concurrency cap on the origin (originConcurrencyCap: false).',
    });
  });
});

/** Lambda's concurrency API for one account, refusing what Lambda refuses. */
function account(quota: number, others = 0) {
  const reservations = new Map<string, number>();
  const calls: string[] = [];
  const api: ConcurrencyApi = {
    async account(name) {
      calls.push(`read ${name}`);
      const reserved = others + [...reservations.values()].reduce((a, b) => a + b, 0);
      return { quota, unreserved: quota - reserved, current: reservations.get(name) };
    },
    async reserve(name, reserve) {
      calls.push(reserve === undefined ? `delete ${name}` : `put ${name} ${reserve}`);
      if (reserve === undefined) return void reservations.delete(name);
      const othersReserved = others + [...reservations].filter(([n]) => n !== name).reduce((a, [, v]) => a + v, 0);
      if (quota - othersReserved - reserve < Math.min(UNRESERVED_MINIMUM, quota)) {
        throw Object.assign(
          new Error(
            "Specified ReservedConcurrentExecutions for function decreases account's UnreservedConcurrentExecution below its minimum value of [10].",
          ),
          { name: 'InvalidParameterValueException' },
        );
      }
      reservations.set(name, reserve);
    },
  };
  return { api, reservations, calls };
}

describe('applyCap', () => {
  const properties = (cap: number, floor = 0) => ({ FunctionName: 'Images-Origin', Cap: String(cap), Floor: String(floor) });

  it('puts the reservation Lambda accepts: the cap on a roomy account, nothing on a new one', async () => {
    const roomy = account(1000);
    expect((await applyCap(roomy.api, properties(50))).reserve).toBe(50);
    expect(roomy.reservations.get('Images-Origin')).toBe(50);

    for (const quota of [10, 50]) {
      const fresh = account(quota);
      const decision = await applyCap(fresh.api, properties(50));
      expect(decision.reserve).toBeUndefined();
      expect(fresh.reservations.size).toBe(0);
      expect(fresh.calls).toEqual(['read Images-Origin', 'delete Images-Origin']);
    }
  });

  it('applied again (a new origin version), keeps the same reservation rather than counting itself as taken', async () => {
    const roomy = account(160);
    await applyCap(roomy.api, properties(50));
    await applyCap(roomy.api, properties(50));
    expect(roomy.reservations.get('Images-Origin')).toBe(50);
  });

  it('turned off, removes the reservation it had set', async () => {
    const roomy = account(1000);
    await applyCap(roomy.api, properties(50));
    await applyCap(roomy.api, properties(0));
    expect(roomy.reservations.size).toBe(0);
  });

  it('an account that changed between the read and the write: no cap, with the reason, not a failed deploy', async () => {
    // Read when the account had room; by the write, other functions reserved 990 of its 1000.
    const stale: ConcurrencyApi = { account: async () => ({ quota: 1000, unreserved: 1000 }), reserve: account(1000, 990).api.reserve };
    const decision = await applyCap(stale, properties(50));
    expect(decision.reserve).toBeUndefined();
    expect(decision.message).toMatch(/^No concurrency cap on the origin: Lambda refused 50 \(Specified ReservedConcurrentExecutions/);
  });
});

describe('the custom resource', () => {
  const event = (requestType: 'Create' | 'Update' | 'Delete', cap = 50) =>
    customResourceEvent(requestType, {
      logicalId: 'ImageTransformerOriginConcurrencyCap',
      type: 'Custom::OriginConcurrencyCap',
      properties: { FunctionName: 'Images-Origin', Cap: String(cap), Floor: '0' },
    });

  it('returns the decision as its Message and ReservedConcurrency, and no physical id of its own (the framework keeps one)', async () => {
    const { api } = account(50);
    const handle = createCapHandler(api);

    for (const requestType of ['Create', 'Update'] as const) {
      expect(await handle(event(requestType))).toEqual({
        Data: {
          ReservedConcurrency: 'none',
          Message: expect.stringMatching(/^No concurrency cap on the origin: the account's concurrency quota is 50/),
        },
      });
    }
  });

  it('leaves the reservation alone on Delete (the stack is going, or a fixed originReservedConcurrency took over)', async () => {
    const roomy = account(1000);
    const handle = createCapHandler(roomy.api);
    expect((await handle(event('Create')))?.Data?.ReservedConcurrency).toBe('50');
    expect(await handle(event('Delete'))).toEqual({});
    expect(roomy.reservations.get('Images-Origin')).toBe(50);
    expect(roomy.calls).toEqual(['read Images-Origin', 'put Images-Origin 50']);
  });

  it('fails, with the reason, when the Lambda API fails otherwise (the framework answers FAILED: a deploy must not hang for an hour)', async () => {
    const denied: ConcurrencyApi = {
      account: async () => {
        throw Object.assign(new Error('not authorized to perform: lambda:GetAccountSettings'), { name: 'AccessDeniedException' });
      },
      reserve: async () => {},
    };
    await expect(createCapHandler(denied)(event('Create'))).rejects.toThrow('not authorized to perform: lambda:GetAccountSettings');
  });
});
