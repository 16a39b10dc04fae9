import type { ApiClient } from '../api/index.js';
import type { AcquireLockOptions, Store, WriterLock } from '../store/index.js';
import { plausibleHead, type SyncContext, type SyncHooks } from '../sync/index.js';
import { EXIT, ExitError } from '../util/errors.js';
import { exitAtOnce, Lifecycle } from './lifecycle.js';
import { loadResources, openClient, openLockedMirror, openMirror, syncContext, type GlobalFlags, type Resources } from './resources.js';
import type { SecretRedactor } from '../util/redact.js';

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

export interface OneShotWriter {
  res: Resources;
  life: Lifecycle;
  client: ApiClient;
  store: Store;
  ctx: SyncContext;
  head: string | null;
}

/**
 * A one-shot writing command: config, signals, client, then `openWriterSession` without waiting
 * for the lock (another writer makes it exit 2).
 */
export async function openWriter(flags: GlobalFlags, redactor: SecretRedactor, hooks?: SyncHooks): Promise<OneShotWriter> {
  const res = loadResources(flags, redactor);
  const life = oneShotLifecycle(res);
  try {
    const client = openClient(res, life);
    const { store, head } = await openWriterSession(res, life, { client, lock: { wait: false } });
    return { res, life, client, store, ctx: syncContext(res, store, client, life, hooks), head: head ?? null };
  } catch (err) {
    await life.close().catch(() => undefined);
    throw err;
  }
}

/** A one-shot writer's lifecycle: the first signal stops gracefully (the work in flight commits), a second at once. */
export function oneShotLifecycle(res: Resources): Lifecycle {
  const life = new Lifecycle();
  life.handleSignals({
    graceMs: 10_000,
    onFirst: (signal) => res.logger.info({ signal }, 'stopping: the work in flight commits first (send the signal again to stop at once)'),
    onForce: exitAtOnce,
  });
  return life;
}

/**
 * For read-only commands: config, logger and the mirror opened read-only, no lock, so a reader
 * never blocks the writer nor waits for it. A mirror with pending migrations asks for `migrate`.
 */
export async function openReader(flags: GlobalFlags, redactor: SecretRedactor): Promise<{ res: Resources; life: Lifecycle; store: Store }> {
  const res = loadResources(flags, redactor);
  const life = new Lifecycle();
  try {
    const store = await openMirror(res, life, { readonly: true });
    return { res, life, store };
  } catch (err) {
    await life.close().catch(() => undefined);
    throw err;
  }
}

export function usageError(message: string): ExitError {
  return new ExitError(EXIT.usage, message, { code: 'USAGE' });
}
