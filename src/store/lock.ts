import { chmodSync, closeSync, existsSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';
import { StoreError } from './errors.js';

export interface WriterLock {
  release(): Promise<void>;
  /**
   * Aborts if the lock is lost while held (PostgreSQL: the lock's connection dropped, so another
   * replica may take over). The holder must stop writing. Never aborts for SQLite.
   */
  readonly lost: AbortSignal;
}

/** Options of `Store.acquireWriterLock`. */
export interface AcquireLockOptions {
  /** Wait (hot standby) until the lock is free instead of failing with LOCK_HELD. */
  wait: boolean;
  /** Stops waiting; the call then rejects with StoreError('LOCK_ABORTED'). */
  signal?: AbortSignal;
  /** Interval between attempts while waiting. Default 1000 ms. */
  pollMs?: number;
  /** Called once, when the first attempt finds the lock held and `wait` is true. */
  onWaiting?: () => void;
}

/**
 * One attempt at the SQLite writer lock: an exclusive transaction on a side file, held by this
 * connection until it closes. The OS drops the file lock when the process dies, even on SIGKILL,
 * so there is no stale PID file to clean up. Returns null when another connection holds it.
 */
function tryLock(lockPath: string, fileMode: number): Database.Database | null {
  let conn: Database.Database | undefined;
  try {
    if (!existsSync(lockPath)) {
      closeSync(openSync(lockPath, 'a', fileMode));
      chmodSync(lockPath, fileMode);
    }
    conn = new Database(lockPath);
    conn.pragma('busy_timeout = 0');
    conn.pragma('locking_mode = EXCLUSIVE');
    conn.exec('BEGIN EXCLUSIVE');
    return conn;
  } catch (err) {
    conn?.close();
    const code = (err as { code?: string }).code ?? '';
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return null;
    throw new StoreError('OPEN_FAILED', `Cannot open the writer lock file ${lockPath}: ${(err as Error).message}`, { cause: err });
  }
}

export async function acquireSqliteLock(databasePath: string, opts: AcquireLockOptions, fileMode = 0o600): Promise<WriterLock> {
  const lockPath = `${databasePath}.lock`;
  const conn = await pollForLock(() => Promise.resolve(tryLock(lockPath, fileMode)), opts, {
    name: databasePath,
    holder: `it holds ${lockPath}`,
  });
  let released = false;
  return {
    lost: new AbortController().signal,
    release() {
      if (released) return Promise.resolve();
      released = true;
      try {
        conn.exec('ROLLBACK');
      } finally {
        conn.close();
      }
      return Promise.resolve();
    },
  };
}

/**
 * The wait shared by both dialects' writer locks: try once; when held, fail with LOCK_HELD or (a
 * hot standby) announce the wait once and try again every `pollMs` until the signal stops it.
 * `tryOnce` resolves null while another process holds the lock.
 */
export async function pollForLock<T>(
  tryOnce: () => Promise<T | null>,
  opts: AcquireLockOptions,
  where: { name: string; holder: string },
): Promise<T> {
  let announced = false;
  for (;;) {
    if (opts.signal?.aborted) {
      throw new StoreError('LOCK_ABORTED', `Stopped waiting for the writer lock on ${where.name}.`, { cause: opts.signal.reason });
    }
    const held = await tryOnce();
    if (held !== null) return held;
    if (!opts.wait) {
      throw new StoreError(
        'LOCK_HELD',
        `Another wsmirror process is writing to ${where.name} (${where.holder}); stop it or wait for it to finish, then try again.`,
      );
    }
    if (!announced) {
      announced = true;
      opts.onWaiting?.();
    }
    await sleep(opts.pollMs ?? 1000, opts.signal);
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
