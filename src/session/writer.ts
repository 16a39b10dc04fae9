import type { ApiClient } from '../api/index.js';
import type { AcquireLockOptions, Store, WriterLock } from '../store/index.js';
import { plausibleHead } from '../sync/index.js';
import type { Lifecycle } from './lifecycle.js';
import { openLockedMirror, type Resources } from './resources.js';

/** What `openWriterSession` hands a writer: the mirror, migrated, under the writer lock. */
export interface WriterMirror {
  store: Store;
  lock: WriterLock;
  /** Migrations this open applied (logged already). */
  applied: string[];
  /** The newest plausible event upstream at the probe (null: the log is empty; undefined: no probe). */
  head: string | null | undefined;
}

export interface WriterSessionOptions {
  /** The client whose probe request proves the key first; null for `migrate`, which needs no upstream. */
  client: ApiClient | null;
  lock: AcquireLockOptions;
  /** Once the lock is held and before migrating: the daemon arms its lock-lost handler here. */
  onLockHeld?: (store: Store, lock: WriterLock) => void;
}

/**
 * The one way every writing command (backfill, sync, run, migrate, demo) opens
 * the mirror, in an order that keeps a wrong key from writing anything: one probe request (auth,
 * and the upstream head), then the database, the writer lock and, only once it is held, the
 * migrations (docs/design.md §4.7).
 */
export async function openWriterSession(res: Resources, life: Lifecycle, options: WriterSessionOptions): Promise<WriterMirror> {
  const probe = options.client ? await options.client.eventsPage({ limit: 1 }) : null;
  // An event beyond the upstream's clock is no head: it would show a lag of 0 (docs/sync.md).
  const head = probe ? plausibleHead(probe, new Date().toISOString()).head : undefined;
  const { store, lock, applied } = await openLockedMirror(res, life, options.lock, options.onLockHeld);
  return { store, lock, applied, head };
}
