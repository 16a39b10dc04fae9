import { StoreError, type Store, type WriterRequestRow } from '../store/index.js';
import { queueWriterRequest, serveWriterRequests, waitForWriterRequest, type WriterRequestKind } from '../sync/index.js';
import { EXIT, ExitError, WsmirrorError } from '../util/errors.js';
import type { SecretRedactor } from '../util/redact.js';
import { toExitError } from './exit.js';
import {
  type Lifecycle,
  loadResources,
  openClient,
  openMirror,
  syncContext,
  takeWriterLock,
  type GlobalFlags,
  type Resources,
} from '../session/index.js';
import { oneShotLifecycle } from './session.js';

/** How long a command waits for the process holding the mirror to serve its request, by default. */
export const DEFAULT_WAIT_SECONDS = 600;

export interface WriterRequestOptions {
  /** Seconds to wait for the writer; 0 queues the request and returns null at once. */
  waitSeconds: number;
}

/**
 * A repair that writes (`resync`, `backfill --since`, `verify --repair`), safe while `run` holds the mirror
 * (docs/operations.md, "Repairing one record or a period"). One probe request first: a rejected
 * key exits 3 and an unreachable upstream 4, before anything is written. Then the request goes
 * into the writer's inbox, and whoever holds the writer lock serves it: this process at once when
 * the lock is free, else the running writer at its next cycle, while this one waits (taking the
 * lock over if it comes free meanwhile, e.g. a one-shot `sync` ended). Returns the request's
 * result, or null when asked not to wait; a failed request throws its error (same exit code as if
 * this process had served it).
 */
export async function runWriterRequest(
  flags: GlobalFlags,
  redactor: SecretRedactor,
  kind: WriterRequestKind,
  params: unknown,
  options: WriterRequestOptions,
): Promise<unknown> {
  const res = loadResources(flags, redactor);
  const life = oneShotLifecycle(res);
  try {
    const client = openClient(res, life);
    await client.eventsPage({ limit: 1 });
    const store = await openMirror(res, life);
    // The lock comes before the request: a mirror this process may write is migrated first, so its inbox exists.
    let held = await lockIfFree(res, life, store);
    const serve = () => serveWriterRequests(syncContext(res, store, client, life));
    const id = await queueWriterRequest(store, kind, params, new Date().toISOString());
    if (held) await serve();
    else if (options.waitSeconds === 0) {
      process.stdout.write(`Queued as writer request ${id}: the process writing this mirror serves it at its next cycle.\n`);
      return null;
    } else {
      res.logger.debug({ request: id }, 'another process holds the mirror: request queued; waiting for it to be served');
      process.stderr.write(
        `wsmirror: another process holds the mirror; queued as writer request ${id}, waiting up to ${options.waitSeconds} s for it to be served.\n`,
      );
    }
    const row = await waitForWriterRequest(store, id, {
      timeoutMs: options.waitSeconds * 1000,
      signal: life.stop.signal,
      takeOver: async () => {
        held ||= await lockIfFree(res, life, store);
        if (held) await serve();
        return held;
      },
    });
    return outcomeOf(
      row,
      life.stop.signal.aborted ? 'not served before this command was stopped' : `not served within ${options.waitSeconds} s`,
    );
  } finally {
    await life.close();
  }
}

/** True once this process holds the writer lock (kept until it exits); false while another does. */
async function lockIfFree(res: Resources, life: Lifecycle, store: Store): Promise<boolean> {
  try {
    await takeWriterLock(res, life, store, { wait: false });
    return true;
  } catch (err) {
    if (err instanceof StoreError && err.code === 'LOCK_HELD') return false;
    throw err;
  }
}

/** `unserved`: why the wait ended before the row was finished, for the sentence. */
function outcomeOf(row: WriterRequestRow, unserved: string): unknown {
  if (row.finished_at === null) {
    throw new ExitError(
      EXIT.unexpected,
      `Writer request ${row.id} was ${unserved}; it stays queued and the process writing this mirror serves it at its next cycle (its run shows in \`wsmirror status\`). Wait longer with --wait <seconds>.`,
      { code: 'REQUEST_NOT_SERVED' },
    );
  }
  if (row.outcome !== 'done') {
    throw toExitError(new WsmirrorError(row.error_code ?? 'REQUEST_FAILED', row.error ?? `writer request ${row.id} failed`));
  }
  return row.result_json === null ? null : JSON.parse(row.result_json);
}
