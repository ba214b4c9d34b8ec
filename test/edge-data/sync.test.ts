// The edge data writer (lambda/edge-data): on every deploy it brings the
// deployment's data and presets in the KeyValueStore to what the template
// says, keeping the previous deploy's data for the function being replaced,
// never touching the operator's `signing-secrets`, also when the operator
// rotates them during the deploy. The store is an in-memory double
// that refuses what the real data-plane API refuses (key-value-store.ts).

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deploymentEntries, isDeploymentKey, SIGNING_SECRETS_KEY, storedData } from '../../lambda/edge/store';
import { createEdgeDataHandler } from '../../lambda/edge-data';
import { MAX_ATTEMPTS, MAX_KEYS_PER_UPDATE, storeChanges, syncStore } from '../../lambda/edge-data/sync';
import { customResourceEvent } from '../support/custom-resource';
import { KVS_ARN, MemoryKeyValueStore } from './key-value-store';

const GRAMMAR = {
  maxDimension: 4096,
  sizes: [320, 640, 1280],
  presets: {
    thumb: { width: '320', height: '320', fit: 'cover' },
    hero: { w: '1280', format: 'webp' },
    old: { w: '100' },
  },
};
const SECRETS = 'new-secret,old-secret';

const properties = (entries: Record<string, string> | undefined) => ({
  KeyValueStoreArn: KVS_ARN,
  ...(entries ? { Entries: entries } : {}),
});

/** A request; an Update names the entries of the deploy before it (none: the same). */
const event = (requestType: 'Create' | 'Update' | 'Delete', entries: Record<string, string> | undefined, previous = entries) => {
  const request = customResourceEvent(requestType, {
    logicalId: 'ImageTransformerEdgeData',
    type: 'Custom::EdgeData',
    properties: properties(entries),
  });
  return requestType === 'Update' ? { ...request, OldResourceProperties: { ServiceToken: 'x', ...properties(previous) } } : request;
};

/** Runs one request through the onEvent handler; what it returns for the Provider framework to answer CloudFormation with. */
function deploy(
  store: MemoryKeyValueStore,
  requestType: 'Create' | 'Update' | 'Delete',
  entries: Record<string, string> | undefined,
  previous?: Record<string, string>,
) {
  return createEdgeDataHandler(store)(event(requestType, entries, previous ?? entries));
}

const keysWritten = (store: MemoryKeyValueStore) =>
  store.updates.flatMap((update) => [...update.puts.map((put) => put.key), ...update.deletes]);

describe('the custom resource', () => {
  it('on Create, writes every entry beside the secrets the operator already put in, and says so in its Message', async () => {
    const store = new MemoryKeyValueStore({ [SIGNING_SECRETS_KEY]: SECRETS });
    const entries = deploymentEntries(GRAMMAR);

    const answer = await deploy(store, 'Create', entries);

    expect(Object.fromEntries(store.entries)).toEqual({ ...entries, [SIGNING_SECRETS_KEY]: SECRETS });
    expect(answer).toEqual({
      Data: {
        Message: `KeyValueStore: ${Object.keys(entries).length} deployment entries written, 0 deleted, 0 unchanged; other keys untouched.`,
      },
    });
    expect(keysWritten(store)).not.toContain(SIGNING_SECRETS_KEY);
  });

  it('on Update, deletes a removed preset, rewrites a changed one, and leaves the unchanged ones and the secrets alone, under the same physical id', async () => {
    const store = new MemoryKeyValueStore({ ...deploymentEntries(GRAMMAR), [SIGNING_SECRETS_KEY]: SECRETS });
    const { old: _removed, ...kept } = GRAMMAR.presets;
    const next = deploymentEntries({ ...GRAMMAR, presets: { ...kept, thumb: { width: '400', fit: 'cover' } } });

    const answer = await deploy(store, 'Update', next, deploymentEntries(GRAMMAR));

    expect(Object.fromEntries(store.entries)).toEqual({ ...next, [SIGNING_SECRETS_KEY]: SECRETS });
    expect(store.entries.get('preset:thumb')).toBe('{"width":"400","fit":"cover"}');
    expect(store.entries.has('preset:old')).toBe(false);
    // Only what changed is written: the names list, the changed preset, the removed one.
    expect(keysWritten(store).sort()).toEqual(['preset:old', 'preset:thumb', 'presets']);
    // No PhysicalResourceId: the framework keeps the current one, where a new one would make CloudFormation delete the resource.
    expect(answer).toEqual({
      Data: {
        Message: `KeyValueStore: 2 deployment entries written, 1 deleted, ${Object.keys(next).length - 2} unchanged; other keys untouched.`,
      },
    });
  });

  it("on Update, keeps the previous deploy's data for the function CloudFront is replacing, and deletes it on the deploy after", async () => {
    const first = deploymentEntries(GRAMMAR);
    // A deploy from before the data held the sizes and watermarks.
    const store = new MemoryKeyValueStore({ ...first, sizes: '320,640,1280', watermarks: '{"logo":"1"}', [SIGNING_SECRETS_KEY]: SECRETS });
    const second = deploymentEntries({ ...GRAMMAR, sizes: [320, 640] });
    const third = deploymentEntries({ ...GRAMMAR, sizes: [640] });
    const dataKeys = (grammar: typeof GRAMMAR) => storedData(grammar).parts.map((_part, index) => storedData(grammar).keyPrefix + index);

    await deploy(store, 'Update', second, { ...first, sizes: '320,640,1280', watermarks: '{"logo":"1"}' });
    for (const key of [...dataKeys(GRAMMAR), ...dataKeys({ ...GRAMMAR, sizes: [320, 640] }), 'sizes', 'watermarks'])
      expect(store.entries.has(key), key).toBe(true);

    await deploy(store, 'Update', third, second);
    expect(Object.fromEntries(store.entries)).toEqual({ ...second, ...third, [SIGNING_SECRETS_KEY]: SECRETS });
    for (const key of [...dataKeys(GRAMMAR), 'sizes', 'watermarks']) expect(store.entries.has(key), key).toBe(false);
  });

  it('when the deployment has no sizes or presets any more, deletes the ones it wrote and keeps the secrets', async () => {
    const store = new MemoryKeyValueStore({ ...deploymentEntries(GRAMMAR), [SIGNING_SECRETS_KEY]: SECRETS });
    await deploy(store, 'Update', undefined);
    expect(Object.fromEntries(store.entries)).toEqual({ [SIGNING_SECRETS_KEY]: SECRETS });
  });

  it('writes nothing when the store already holds the entries', async () => {
    const store = new MemoryKeyValueStore({ ...deploymentEntries(GRAMMAR), [SIGNING_SECRETS_KEY]: SECRETS });
    const answer = await deploy(store, 'Update', deploymentEntries(GRAMMAR));
    expect(store.updates).toEqual([]);
    expect(answer?.Data).toEqual({
      Message: `KeyValueStore: 0 deployment entries written, 0 deleted, ${Object.keys(deploymentEntries(GRAMMAR)).length} unchanged; other keys untouched.`,
    });
  });

  it('retries when the operator rotates the secrets between its read and its write, and keeps the rotated secrets', async () => {
    const store = new MemoryKeyValueStore({ ...deploymentEntries(GRAMMAR), [SIGNING_SECRETS_KEY]: SECRETS });
    store.beforeNextUpdate(() => store.operatorPut(SIGNING_SECRETS_KEY, 'newest-secret,new-secret'));
    const next = deploymentEntries({ ...GRAMMAR, presets: { thumb: { w: '200' } } });

    const answer = await deploy(store, 'Update', next, deploymentEntries(GRAMMAR));

    const listing = Array.from({ length: store.calls.indexOf('conflict') - 1 }, () => 'list');
    expect(store.calls).toEqual(['version', ...listing, 'conflict', 'version', ...listing, 'update']);
    expect(Object.fromEntries(store.entries)).toEqual({ ...next, [SIGNING_SECRETS_KEY]: 'newest-secret,new-secret' });
    expect(keysWritten(store)).not.toContain(SIGNING_SECRETS_KEY);
    expect(answer?.Data?.Message).toContain('the store changed during the deploy; written on attempt 2');
  });

  it(`fails the deploy, with the reason, when the store changes under all ${MAX_ATTEMPTS} attempts`, async () => {
    const store = new MemoryKeyValueStore({ [SIGNING_SECRETS_KEY]: SECRETS });
    for (let rotation = 1; rotation <= MAX_ATTEMPTS; rotation++)
      store.beforeNextUpdate(() => store.operatorPut(SIGNING_SECRETS_KEY, `secret-${rotation}`));

    await expect(deploy(store, 'Update', deploymentEntries(GRAMMAR))).rejects.toThrow(
      /changed under every one of 5 attempts.*deploy again/,
    );
    expect(store.calls.filter((call) => call === 'conflict')).toHaveLength(MAX_ATTEMPTS);
    expect(Object.fromEntries(store.entries)).toEqual({ [SIGNING_SECRETS_KEY]: `secret-${MAX_ATTEMPTS}` });
  });

  it('fails at once on any other error (no retry), with the reason', async () => {
    const denied = new MemoryKeyValueStore();
    let reads = 0;
    denied.version = async () => {
      reads++;
      throw Object.assign(new Error('not authorized to perform: cloudfront-keyvaluestore:DescribeKeyValueStore'), {
        name: 'AccessDeniedException',
      });
    };
    await expect(deploy(denied, 'Create', deploymentEntries(GRAMMAR))).rejects.toThrow(
      'not authorized to perform: cloudfront-keyvaluestore:DescribeKeyValueStore',
    );
    expect(reads).toBe(1);
  });

  it('on Delete, succeeds and leaves the store as it is', async () => {
    const before = { ...deploymentEntries(GRAMMAR), [SIGNING_SECRETS_KEY]: SECRETS };
    const store = new MemoryKeyValueStore(before);
    const answer = await deploy(store, 'Delete', deploymentEntries(GRAMMAR));
    expect(answer).toEqual({});
    expect(store.calls).toEqual([]);
    expect(Object.fromEntries(store.entries)).toEqual(before);
  });
});

describe('what a deploy may write', () => {
  it('refuses, before writing anything, entries that name a key that is not a deployment key', async () => {
    const store = new MemoryKeyValueStore({ [SIGNING_SECRETS_KEY]: SECRETS });
    await expect(deploy(store, 'Update', { ...deploymentEntries(GRAMMAR), [SIGNING_SECRETS_KEY]: 'attacker-secret' })).rejects.toThrow(
      'Refusing to write "signing-secrets"',
    );
    expect(store.updates).toEqual([]);
    expect(store.entries.get(SIGNING_SECRETS_KEY)).toBe(SECRETS);
  });

  it('for any store and any deployment, changes only deployment keys and leaves the store holding exactly the deployment entries besides its other keys', async () => {
    const presetNames = fc.constantFrom('thumb', 'hero', 'card', 'a:b', 'x y');
    const deploymentKey = fc.oneof(
      fc.constantFrom('sizes', 'presets'),
      presetNames.map((name) => `preset:${name}`),
    );
    const otherKey = fc.constantFrom(SIGNING_SECRETS_KEY, 'operator-note', 'presets-archive', 'size', 'Preset:thumb', 'xpreset:thumb');
    const value = fc.string({ maxLength: 20 });
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.oneof(deploymentKey, otherKey), value),
        fc.dictionary(deploymentKey, value),
        fc.integer({ min: 1, max: 4 }),
        async (initial, desired, pageSize) => {
          const store = new MemoryKeyValueStore(initial, pageSize);
          await syncStore(store, KVS_ARN, new Map(Object.entries(desired)));
          for (const key of keysWritten(store)) expect(isDeploymentKey(key), key).toBe(true);
          const others = Object.fromEntries(Object.entries(initial).filter(([key]) => !isDeploymentKey(key)));
          expect(Object.fromEntries(store.entries)).toEqual({ ...others, ...desired });
        },
      ),
      { numRuns: 200 },
    );
  });

  it('storeChanges never yields a key outside the deployment, even for a store full of other keys', () => {
    const current = new Map([
      [SIGNING_SECRETS_KEY, SECRETS],
      ['presets', 'thumb'],
      ['preset:thumb', 'w=1'],
    ]);
    expect(storeChanges(current, new Map())).toEqual({ puts: [], deletes: ['presets', 'preset:thumb'] });
    expect(() => storeChanges(current, new Map([[SIGNING_SECRETS_KEY, '']]))).toThrow(/Refusing to write "signing-secrets"/);
  });
});

describe('many presets', () => {
  it(`writes them in UpdateKeys calls of at most ${MAX_KEYS_PER_UPDATE} keys, reading every page of the store`, async () => {
    const presets = Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`p${i}`, { w: String(100 + i) }]));
    const store = new MemoryKeyValueStore({ [SIGNING_SECRETS_KEY]: SECRETS, 'preset:gone': 'w=1' }, 7);
    const entries = deploymentEntries({ maxDimension: 4096, presets });

    await deploy(store, 'Create', entries);

    // The puts and a delete in calls of 50, the double refusing any over the limit.
    const operations = Object.keys(entries).length + 1;
    expect(store.updates.map((update) => update.puts.length + update.deletes.length)).toEqual([50, 50, operations - 100]);
    expect(Object.fromEntries(store.entries)).toEqual({ ...entries, [SIGNING_SECRETS_KEY]: SECRETS });
    // A second deploy after a change reads every key, 7 to a page, and rewrites one.
    store.calls.length = 0;
    store.updates.length = 0;
    await deploy(store, 'Update', { ...entries, 'preset:p7': 'w=70' }, entries);
    expect(store.calls.filter((call) => call === 'list')).toHaveLength(Math.ceil(store.entries.size / 7));
    expect(keysWritten(store)).toEqual(['preset:p7']);
  });
});
