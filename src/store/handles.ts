import type { Kysely } from 'kysely';
import { StoreError } from './errors.js';
import type { MirrorDatabase } from './schema.js';
import type { StateView } from './state-cache.js';

/**
 * Where a Store or StoreTx keeps its query builder: a symbol no type declares and only src/store
 * holds, so nothing outside reaches the database except through a named question or one of the
 * two narrow doors (internal.ts, sync-state.ts). A symbol, not a WeakMap: a test's spread copy of
 * a store (`{ ...store, transaction }`) and a Proxy forwarding to one both still carry it.
 */
const DATABASE = Symbol('wsmirror.database');

/** Gives `owner` its database handle; returns `owner`. */
export function attachDatabase<T extends object>(owner: T, db: Kysely<MirrorDatabase>): T {
  (owner as Record<symbol, unknown>)[DATABASE] = db;
  return owner;
}

/** The handle attachDatabase gave; INTERNAL when `owner` is no store or transaction built by src/store. */
export function databaseHandle(owner: object): Kysely<MirrorDatabase> {
  const db = (owner as Record<symbol, unknown>)[DATABASE] as Kysely<MirrorDatabase> | undefined;
  if (!db) throw new StoreError('INTERNAL', 'This object is not a store or transaction opened by openStore; pass the one it returned.');
  return db;
}

const STATE = Symbol('wsmirror.state');

/** Gives a store (a view per read) or a transaction (its own view) its door to `sync_state` (state-cache.ts). */
export function attachState<T extends object>(owner: T, view: () => StateView): T {
  (owner as Record<symbol, unknown>)[STATE] = view;
  return owner;
}

/** The state door attachState gave; INTERNAL as databaseHandle. */
export function stateView(owner: object): StateView {
  const view = (owner as Record<symbol, unknown>)[STATE] as (() => StateView) | undefined;
  if (!view) throw new StoreError('INTERNAL', 'This object is not a store or transaction opened by openStore; pass the one it returned.');
  return view();
}
