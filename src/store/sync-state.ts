import { stateView } from './handles.js';
import type { Store } from './store.js';
import type { StoreTx } from './tx.js';

/**
 * The raw `sync_state` accessors, for src/sync/state.ts alone: it declares each key's shape and
 * the transitions between its values, so no other caller may read a key with a type of its own
 * or write one (eslint.config.js makes importing this module an error anywhere else in src;
 * tests may, to set up a mirror as an older build left it). While the store holds the writer
 * lock, both go through its cache (state-cache.ts).
 */
export function readSyncState(from: Store | StoreTx, key: string): Promise<unknown> {
  return stateView(from).get(key);
}

/** Stores `value` as JSON inside the transaction; undefined or null deletes the key. A value already stored writes nothing. */
export function writeSyncState(tx: StoreTx, key: string, value: unknown): Promise<void> {
  return stateView(tx).set(key, value);
}

/** One key as one statement of its own, outside any transaction (Store.writeStateAlone): for a write that is the whole of its transaction. */
export function writeSyncStateAlone(store: Store, key: string, value: unknown): Promise<void> {
  return store.writeStateAlone(key, value);
}
