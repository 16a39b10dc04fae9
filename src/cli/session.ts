import type { ApiClient } from '../api/index.js';
import type { Store } from '../store/index.js';
import type { SyncContext, SyncHooks } from '../sync/index.js';
import { EXIT, ExitError } from '../util/errors.js';
import {
  exitAtOnce,
  Lifecycle,
  loadResources,
  openClient,
  openMirror,
  openWriterSession,
  syncContext,
  type GlobalFlags,
  type Resources,
} from '../session/index.js';
import type { SecretRedactor } from '../util/redact.js';

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
