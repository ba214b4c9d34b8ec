// Brings the deployment's entries in the viewer-request function's
// KeyValueStore (lambda/edge/store.ts) to what the template says: puts what is
// new or changed, deletes the deployment keys no longer wanted, and leaves
// every other key alone (the operator's `signing-secrets` above all). The
// desired entries are compared with the store itself, not with the previous
// deploy's, so a store edited by hand is repaired too.
//
// Every write names the store's version (ETag). An operator rotating secrets
// at the same moment changes the version, the write fails with
// ConflictException, and the sync reads the store again and retries: nothing
// of theirs is ever overwritten.

import { isDeploymentKey, isVersionedKey } from '../edge/store';

export interface StoreEntry {
  key: string;
  value: string;
}

/** The KeyValueStore data-plane calls the sync needs, behind an interface so that tests can answer them. */
export interface KeyValueStoreApi {
  /** The store's current version (DescribeKeyValueStore's ETag), which a write must name. */
  version(kvsArn: string): Promise<string>;
  /** One page of the store's entries (ListKeys), and the token of the next page if there is one. */
  listEntries(kvsArn: string, nextToken?: string): Promise<{ entries: StoreEntry[]; nextToken?: string }>;
  /**
   * Puts and deletes, all or nothing (UpdateKeys), if the store is still at
   * version `ifMatch` (else a ConflictException); the store's new version.
   */
  update(kvsArn: string, ifMatch: string, puts: StoreEntry[], deletes: string[]): Promise<string>;
}

/**
 * What the store should hold: the deployment's entries, and those of the
 * previous deploy's that no function of this one reads (its data, under the
 * hash of that data: isVersionedKey). The function CloudFront is replacing
 * during this deploy still reads them; the next deploy deletes them.
 */
export function desiredEntries(entries: Record<string, string>, previous: Record<string, string> = {}): Map<string, string> {
  const desired = new Map(Object.entries(entries));
  for (const [key, value] of Object.entries(previous)) if (isVersionedKey(key) && !desired.has(key)) desired.set(key, value);
  return desired;
}

/** UpdateKeys takes at most 50 keys per call, puts and deletes together (CloudFront's quota; its other one, 3 MB a call, 50 entries never reach). */
export const MAX_KEYS_PER_UPDATE = 50;
/** Rounds of read-and-write before giving up on a store that keeps changing. */
export const MAX_ATTEMPTS = 5;

export interface StoreChanges {
  puts: StoreEntry[];
  deletes: string[];
}

/**
 * What to put and delete to bring the store from `current` to `desired`.
 * Throws, before anything is written, if that would touch a key that is not
 * the deployment's.
 */
export function storeChanges(current: ReadonlyMap<string, string>, desired: ReadonlyMap<string, string>): StoreChanges {
  const puts = [...desired].filter(([key, value]) => current.get(key) !== value).map(([key, value]) => ({ key, value }));
  const deletes = [...current.keys()].filter((key) => isDeploymentKey(key) && !desired.has(key));
  const foreign = [...puts.map((put) => put.key), ...deletes].filter((key) => !isDeploymentKey(key));
  if (foreign.length > 0) {
    throw new Error(
      `Refusing to write ${foreign.map((key) => JSON.stringify(key)).join(', ')} in the KeyValueStore: ` +
        "a deploy writes only its data and presets; every other key is the operator's.",
    );
  }
  return { puts, deletes };
}

/** `changes` cut into UpdateKeys calls: puts first, so that a failure part-way leaves extra keys rather than missing ones. */
export function updateBatches(changes: StoreChanges): StoreChanges[] {
  const operations: (StoreEntry | string)[] = [...changes.puts, ...changes.deletes];
  const batches: StoreChanges[] = [];
  for (let start = 0; start < operations.length; start += MAX_KEYS_PER_UPDATE) {
    const batch = operations.slice(start, start + MAX_KEYS_PER_UPDATE);
    batches.push({
      puts: batch.filter((operation): operation is StoreEntry => typeof operation !== 'string'),
      deletes: batch.filter((operation): operation is string => typeof operation === 'string'),
    });
  }
  return batches;
}

async function readStore(api: KeyValueStoreApi, kvsArn: string): Promise<Map<string, string>> {
  const entries = new Map<string, string>();
  let nextToken: string | undefined;
  do {
    const page = await api.listEntries(kvsArn, nextToken);
    for (const { key, value } of page.entries) entries.set(key, value);
    nextToken = page.nextToken;
  } while (nextToken);
  return entries;
}

export interface SyncOutcome {
  /** Keys written (new or changed) and deleted, over every attempt. */
  put: number;
  deleted: number;
  /** The desired keys the store already had. */
  unchanged: number;
  /** Rounds it took: more than 1 when the store changed under a write. */
  attempts: number;
}

const isConflict = (error: unknown) => (error as { name?: string } | undefined)?.name === 'ConflictException';
const pauseBeforeAttempt = (attempt: number) => new Promise((resolve) => setTimeout(resolve, 100 * attempt));

/** Writes `desired` (the deployment's entries) into the store `kvsArn`, as described above. */
export async function syncStore(api: KeyValueStoreApi, kvsArn: string, desired: ReadonlyMap<string, string>): Promise<SyncOutcome> {
  const written = new Set<string>();
  const deleted = new Set<string>();
  for (let attempt = 1; ; attempt++) {
    // The version first: a write that lands between it and the listing makes our writes conflict, never miss it.
    let version = await api.version(kvsArn);
    const changes = storeChanges(await readStore(api, kvsArn), desired);
    try {
      for (const batch of updateBatches(changes)) {
        version = await api.update(kvsArn, version, batch.puts, batch.deletes);
        for (const { key } of batch.puts) written.add(key);
        for (const key of batch.deletes) deleted.add(key);
      }
      return { put: written.size, deleted: deleted.size, unchanged: desired.size - written.size, attempts: attempt };
    } catch (error) {
      if (!isConflict(error)) throw error;
      if (attempt === MAX_ATTEMPTS) {
        throw new Error(
          `The KeyValueStore changed under every one of ${MAX_ATTEMPTS} attempts to write the deployment's entries; deploy again. (${(error as Error).message})`,
          { cause: error },
        );
      }
      await pauseBeforeAttempt(attempt);
    }
  }
}
