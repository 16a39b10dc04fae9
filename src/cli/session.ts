import type { ApiClient } from '../api/index.js';
import type { Store } from '../store/index.js';
import { plausibleHead, type SyncContext, type SyncHooks } from '../sync/index.js';
import { EXIT, ExitError } from '../util/errors.js';
import { exitAtOnce, Lifecycle } from './lifecycle.js';
import { loadResources, openClient, openLockedMirror, openMirror, syncContext, type GlobalFlags, type Resources } from './resources.js';

export interface WriterSession {
  res: Resources;
  life: Lifecycle;
  client: ApiClient;
  store: Store;
  ctx: SyncContext;
  /** The newest event upstream when the command started (null: the log is empty). */
  head: string | null;
}

export interface WriterOptions {
  /** `run` waits as a hot standby; one-shot commands exit 2 when another writer holds the mirror. */
  waitForLock: boolean;
  onStandby?: () => void;
  hooks?: SyncHooks;
  /** Collects secrets for the top-level error reporter. */
  secrets: string[];
}

/**
 * Opens everything a writing command needs, in an order that keeps a wrong key from writing
 * anything: config, client, one probe request (auth, and the upstream head), then the database,
 * the writer lock and, only once it is held, the migrations.
 */
export async function openWriter(flags: GlobalFlags, options: WriterOptions): Promise<WriterSession> {
  const res = loadResources(flags, options.secrets);
  const life = new Lifecycle();
  try {
    life.handleSignals({
      graceMs: 10_000,
      onFirst: (signal) =>
        res.logger.info({ signal }, 'stopping: the work in flight commits first (send the signal again to stop at once)'),
      onForce: exitAtOnce,
    });
    const client = openClient(res, life);
    const probe = await client.eventsPage({ limit: 1 });
    const { store } = await openLockedMirror(res, life, {
      wait: options.waitForLock,
      signal: life.stop.signal,
      ...(options.onStandby ? { onWaiting: options.onStandby } : {}),
    });
    return {
      res,
      life,
      client,
      store,
      ctx: syncContext(res, store, client, life, options.hooks),
      // An event beyond the upstream's clock is no head: it would show a lag of 0 (docs/sync.md).
      head: plausibleHead(probe, new Date().toISOString()).head,
    };
  } catch (err) {
    await life.close().catch(() => undefined);
    throw err;
  }
}

/**
 * For read-only commands: config, logger and the mirror opened read-only, no lock, so a reader
 * never blocks the writer nor waits for it. A mirror with pending migrations asks for `migrate`.
 */
export async function openReader(flags: GlobalFlags, secrets: string[]): Promise<{ res: Resources; life: Lifecycle; store: Store }> {
  const res = loadResources(flags, secrets);
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
