import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { StoreError } from './errors.js';
import { acquireSqliteLock } from './lock.js';
import type { MirrorDatabase } from './schema.js';
import { buildStore, type CheckpointResult, type Store } from './store.js';
import { startWalCheckpointer, type WalCheckpointer } from './wal-checkpointer.js';

/** Modes of what the writer creates: the mirror holds customer conversations. */
export interface SqliteOpenOptions {
  /** Database and lock files. Default 0o600 (SQLite gives the WAL and -shm the database's mode). */
  fileMode?: number;
  /** The data directory, when created. Default 0o700. */
  directoryMode?: number;
  /** How often the WAL checkpoint thread looks at the WAL, in ms. Default 250. */
  walCheckpointIntervalMs?: number;
}

const BUSY_TIMEOUT_MS = 5000;
const CHECKPOINT_BUSY_MS = 250;

/** After a checkpoint resets the WAL, SQLite truncates it to this size instead of keeping its peak. */
const JOURNAL_SIZE_LIMIT = 16 * 1024 * 1024;

/**
 * The writer's own automatic checkpoint, in 4 KiB pages: a backstop at 64 MiB of WAL for when the
 * checkpoint thread is gone (SQLite's default, 1,000 pages, is what the thread replaces). Above
 * the 16 MiB at which a commit has the thread catch up, and above one transaction of a large
 * backfill's group: at 16 MiB it fired inside most commits of the L workspace's backfill, where
 * the event loop stood still while it copied and synced (docs/operations.md, "Growth").
 */
const BACKSTOP_AUTOCHECKPOINT_PAGES = 16384;

/**
 * One better-sqlite3 connection per store. Kysely's SQLite driver serialises every query and
 * transaction on it, which is what makes `Store.transaction` one writer at a time in-process.
 */
export function openSqlite(database: string, readonly: boolean, leaveOpenOnClose = false, modes: SqliteOpenOptions = {}): Store {
  const fileMode = modes.fileMode ?? 0o600;
  const memory = database === ':memory:';
  const path = memory ? database : resolve(database);
  let sqlite: Database.Database;
  let checkpointer: WalCheckpointer | undefined;
  try {
    if (!memory && !readonly) createPrivately(path, fileMode, modes.directoryMode ?? 0o700);
    sqlite = new Database(path, { readonly, fileMustExist: readonly });
    sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    if (!readonly) {
      // WAL lets readers (status, BI tools) read while the writer writes.
      sqlite.pragma('journal_mode = WAL');
      sqlite.pragma('synchronous = NORMAL');
      sqlite.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT}`);
    }
    sqlite.pragma('foreign_keys = ON');
    if (!memory && !readonly) {
      checkpointer = startWalCheckpointer({ path, intervalMs: modes.walCheckpointIntervalMs });
      sqlite.pragma(`wal_autocheckpoint = ${BACKSTOP_AUTOCHECKPOINT_PAGES}`);
    }
  } catch (cause) {
    void checkpointer?.stop();
    const what = readonly
      ? `No readable mirror at ${path}; run \`wsmirror backfill\` first or check the path`
      : `Cannot open the mirror database ${path}; check the path and its permissions`;
    throw new StoreError('OPEN_FAILED', `${what} (${(cause as Error).message}).`, { cause });
  }
  const db = new Kysely<MirrorDatabase>({ dialect: new SqliteDialect({ database: cachingDatabase(sqlite, leaveOpenOnClose) }) });
  return buildStore({
    dialect: 'sqlite',
    db,
    readonly,
    label: path,
    // SQLite serialises transactions on the one connection: none is ever rolled back for another.
    isRetryable: () => false,
    // Before the connection closes, so the thread's connection is never the last one (which would
    // checkpoint and delete the WAL on close).
    beforeClose: () => checkpointer?.stop() ?? Promise.resolve(),
    async afterCommit() {
      // The thread's passes fell behind a writer committing back to back (past the size the WAL is
      // truncated to on a restart, it holds that many bytes of frames): have everything copied now,
      // with the writer's connection held between transactions, so the next transaction starts the
      // WAL over. The thread copies while the event loop goes on; the writer only if it is gone.
      if (!checkpointer || sizeOf(`${path}-wal`) <= JOURNAL_SIZE_LIMIT) return;
      const thread = checkpointer;
      await db.connection().execute(async () => {
        if (!(await thread.catchUp())) sqlite.pragma('wal_checkpoint(PASSIVE)');
      });
    },
    async acquireLock(opts) {
      if (memory) throw new StoreError('DIALECT_UNSUPPORTED', 'An in-memory database has no writer lock; use a file.');
      return acquireSqliteLock(path, opts, fileMode);
    },
    ...(memory
      ? {}
      : {
          checkpoint: () => (checkpointer ? checkpointer.exclusive(() => checkpoint(sqlite)) : Promise.resolve(checkpoint(sqlite))),
          fileSizes: () => ({ database: sizeOf(path), wal: sizeOf(`${path}-wal`) }),
        }),
  });
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/**
 * The data directory and the database file are created here, before SQLite, so they get private
 * modes whatever the umask; existing ones are left as the operator set them.
 */
function createPrivately(path: string, fileMode: number, directoryMode: number): void {
  const dir = dirname(path);
  if (!existsSync(dir)) {
    const first = mkdirSync(dir, { recursive: true, mode: directoryMode });
    if (first) chmodSync(first, directoryMode);
    if (first && first !== dir) chmodSync(dir, directoryMode);
  }
  if (!existsSync(path)) {
    closeSync(openSync(path, 'a', fileMode));
    chmodSync(path, fileMode);
  }
}

/**
 * TRUNCATE waits (up to busy_timeout) for readers on older snapshots, then resets the WAL to zero
 * bytes. Run between cycles, it is what keeps the WAL bounded in a daemon that runs for months.
 */
function checkpoint(sqlite: Database.Database): CheckpointResult {
  // better-sqlite3 is synchronous: a long wait for readers would freeze the health server too, so
  // wait briefly and let the next cycle retry.
  sqlite.pragma(`busy_timeout = ${CHECKPOINT_BUSY_MS}`);
  let row: { busy: number; log: number; checkpointed: number }[];
  try {
    row = sqlite.pragma('wal_checkpoint(TRUNCATE)') as typeof row;
  } finally {
    sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  }
  const r = row[0] ?? { busy: 0, log: 0, checkpointed: 0 };
  return { busy: r.busy !== 0, walPages: r.log, checkpointedPages: r.checkpointed };
}

export const STATEMENT_CACHE_SIZE = 512;
/**
 * The cache is also bounded by the SQL text it holds: a prepared statement's native memory grows
 * with its text, and `in (?, ?, …)` lists of every length from 1 to 500 would otherwise fill it
 * with 512 distinct large statements, about 26 MB that a long-running daemon's RSS showed as a
 * slow rise (docs/operations.md, "Growth").
 */
export const STATEMENT_CACHE_TEXT_BYTES = 256 * 1024;

/**
 * Kysely's SQLite driver prepares every query anew; the mirror runs the same few hundred
 * statements millions of times, so preparing showed up as a tenth of a backfill's CPU. Statements
 * are reused by SQL text (LRU, bounded by count and by text size); Kysely serialises queries on
 * the connection, so a cached statement is never in use twice at once.
 */
export function cachingDatabase(sqlite: Database.Database, leaveOpenOnClose: boolean) {
  const cache = new Map<string, Database.Statement>();
  let textBytes = 0;
  return {
    prepare(sql: string): Database.Statement {
      let stmt = cache.get(sql);
      if (stmt) {
        cache.delete(sql);
      } else {
        stmt = sqlite.prepare(sql);
        textBytes += sql.length;
        while (cache.size > 0 && (cache.size >= STATEMENT_CACHE_SIZE || textBytes > STATEMENT_CACHE_TEXT_BYTES)) {
          const oldest = cache.keys().next().value as string;
          cache.delete(oldest);
          textBytes -= oldest.length;
        }
      }
      cache.set(sql, stmt);
      return stmt;
    },
    /** What the cache holds now (tests and diagnostics). */
    cached(): { statements: number; textBytes: number } {
      return { statements: cache.size, textBytes };
    },
    close(): void {
      cache.clear();
      textBytes = 0;
      if (!leaveOpenOnClose) {
        sqlite.close();
        return;
      }
      // Keep the WAL short for whoever opens next, without the exclusive lock of a full close.
      if (!sqlite.readonly) sqlite.pragma('wal_checkpoint(PASSIVE)');
    },
  };
}
