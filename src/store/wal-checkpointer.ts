import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** Options of `startWalCheckpointer`. */
export interface WalCheckpointerOptions {
  /** Absolute path of the mirror (its WAL is `<path>-wal`). */
  path: string;
  /** How often the thread looks for new WAL frames to copy back. Default 250 ms. */
  intervalMs?: number;
}

/** A thread that copies committed WAL frames back into the database while the writer goes on. */
export interface WalCheckpointer {
  /**
   * Runs `fn` while the thread is between passes and holds off the next one. A TRUNCATE checkpoint
   * needs this: one started while the thread's PASSIVE pass holds SQLite's checkpoint lock gives
   * up at once (busy, no page counts), which would read as a reader holding the WAL.
   */
  exclusive<T>(fn: () => T): Promise<T>;
  /**
   * Has the thread run a PASSIVE checkpoint now, between its passes, and resolves when it is done:
   * true, or false when the thread is gone (the caller then checkpoints itself). The copy and the
   * database file's sync happen on the thread, so the caller's event loop goes on meanwhile.
   */
  catchUp(): Promise<boolean>;
  /** Stops the thread and closes its connection; resolves once both are gone. */
  stop(): Promise<void>;
}

/**
 * Why a thread: SQLite's automatic checkpoint runs inside the commit that crosses its threshold,
 * on the writer's own connection, and better-sqlite3 is synchronous, so every few commits the
 * event loop stood still while pages were copied and fsynced: 17.8 s of a 58.6 s backfill of the
 * L workspace (bench/README.md), 0.5 s of 4.0 s at S. A PASSIVE checkpoint on a second connection
 * never blocks the writer or a reader; it copies what is committed and leaves the rest for the
 * next pass. Once it has copied everything, the writer's next transaction starts the WAL over
 * from its beginning, so the WAL stays short without the writer ever checkpointing. A writer
 * that commits back to back can keep every pass a little behind, and the WAL starts over only
 * once one has caught up: so after a commit that leaves the WAL past its size limit the store has
 * the thread catch up (`catchUp`) before its next transaction, and checkpoints itself only when
 * the thread is gone (docs/operations.md, "Growth").
 *
 * The thread runs inline JavaScript, not a module file, so it works the same from the built
 * package and from the TypeScript sources the tests run.
 */
export function startWalCheckpointer(opts: WalCheckpointerOptions): WalCheckpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver, path: opts.path, intervalMs: opts.intervalMs ?? 250 },
    // The thread allocates next to nothing; V8's defaults would reserve tens of MB for its heap.
    resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16, stackSizeMb: 1 },
  });
  // A failing thread (the file gone, a driver error) only loses the help: the writer's own
  // automatic checkpoint still bounds the WAL.
  let alive = true;
  worker.on('error', () => undefined);
  worker.once('exit', () => (alive = false));
  worker.unref();
  let stopped: Promise<void> | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  /** Sends `message` and resolves true on the thread's answer, false when it is gone. */
  const ask = (message: 'pause' | 'catch-up') =>
    new Promise<boolean>((resolve) => {
      if (!alive || stopped) return resolve(false);
      const onExit = () => resolve(false);
      worker.once('exit', onExit);
      worker.once('message', () => {
        worker.off('exit', onExit);
        resolve(true);
      });
      worker.postMessage(message);
    });
  /** One request at a time: each waits for the thread's answer to the one before. */
  const queued = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn);
    queue = run.catch(() => undefined);
    return run;
  };
  return {
    exclusive<T>(fn: () => T): Promise<T> {
      return queued(async () => {
        const held = await ask('pause');
        try {
          return fn();
        } finally {
          if (held && alive) worker.postMessage('resume');
        }
      });
    },
    catchUp: () => queued(() => ask('catch-up')),
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        if (worker.threadId === -1) return resolve();
        worker.once('exit', () => resolve());
        // Unreferenced, the thread would not keep the process alive long enough to close.
        worker.ref();
        worker.postMessage('stop');
      });
      return stopped;
    },
  };
}

/**
 * Looks at the WAL's modification time each interval and checkpoints only when it moved, so an
 * idle daemon costs one stat per interval. busy_timeout 0: when the writer's backstop or a
 * TRUNCATE checkpoint holds the checkpoint lock, this pass is skipped rather than waited for.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { statSync } = require('node:fs');
const Database = require(workerData.driver);
const wal = workerData.path + '-wal';
let db;
try {
  db = new Database(workerData.path, { fileMustExist: true });
  db.pragma('busy_timeout = 0');
} catch {
  process.exit(0);
}
let seen = -1;
let timer;
function checkpoint(st) {
  seen = st.mtimeMs;
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // SQLITE_BUSY and the like: the next pass tries again.
  }
}
function pass() {
  try {
    const st = statSync(wal, { throwIfNoEntry: false });
    if (st && st.size > 0 && st.mtimeMs !== seen) checkpoint(st);
  } catch {
    // The WAL unreadable for a moment: the next pass looks again.
  }
  timer = setTimeout(pass, workerData.intervalMs);
}
timer = setTimeout(pass, workerData.intervalMs);
parentPort.on('message', (m) => {
  // Messages arrive only between passes: a pass is synchronous.
  clearTimeout(timer);
  if (m === 'pause') return parentPort.postMessage('paused');
  if (m === 'resume') return void (timer = setTimeout(pass, workerData.intervalMs));
  if (m === 'catch-up') {
    // Whatever the modification time says: the writer asks once its commit is in the WAL.
    try {
      checkpoint(statSync(wal, { throwIfNoEntry: false }) ?? { mtimeMs: -1 });
    } catch {}
    parentPort.postMessage('caught-up');
    return void (timer = setTimeout(pass, workerData.intervalMs));
  }
  try { db.close(); } catch {}
  parentPort.close();
});
`;
