import type { Kysely } from 'kysely';
import { capabilitiesOf, type DialectCapabilities } from './dialect.js';
import { StoreError } from './errors.js';
import type { AcquireLockOptions, WriterLock } from './lock.js';
import { migrateToLatest, migrationPlan, schemaNewerError } from './migrate.js';
import type { MirrorDatabase } from './schema.js';
import { createTx, type StoreTx } from './tx.js';
import { attachDatabase, attachState } from './handles.js';
import { StateCache, type StateView } from './state-cache.js';
import { statusReads, type StatusReads } from './status-reads.js';
import { bulkTablesEmpty, deferIndexes, quarantinedTypes, restoreDeferredIndexes } from './deferred-indexes.js';
import { AppendLedger } from './record-upsert.js';
import { tidyTables, type TidyOutcome } from './tidy-tables.js';
import { namedReads, type NamedReads } from './named-reads.js';
import { insertRun } from './run-fold.js';
import { requiredTs } from './values.js';

/** Options of `openStore`. */
/** Connections shared by the stores of many schemas (openSharedPostgres); closing a store leaves them open. */
export interface SharedPostgres {
  readonly url: string;
  /** Ends every connection: after the last store using them has closed. */
  end(): Promise<void>;
}

export interface OpenStoreOptions {
  /** A file path (SQLite; parent directories are created) or a `postgres://` URL. */
  database: string;
  /** Open for reading only: no directories or files are created, no writes, no lock. Default false. */
  readonly?: boolean;
  /**
   * SQLite only. Default false. When true, `close()` leaves the connection for the operating
   * system to release when the process exits, instead of SQLite's checkpoint-on-close, which
   * holds an exclusive lock for a moment: a reader without a busy timeout (the sqlite3 shell)
   * arriving then fails with "database is locked". For CLI processes that exit right after.
   * Nothing committed is at risk: the WAL is on disk and the next opener replays it.
   */
  leaveOpenOnClose?: boolean;
  /** PostgreSQL only: the schema holding this mirror (created by the writer if missing). Default 'public'. */
  schema?: string;
  /** SQLite only: mode of the database and lock files this process creates. Default 0o600. */
  fileMode?: number;
  /** SQLite only: mode of the data directory when this process creates it. Default 0o700. */
  directoryMode?: number;
  /** SQLite only: how often the WAL checkpoint thread looks at the WAL, in ms. Default 250. */
  walCheckpointIntervalMs?: number;
  /**
   * PostgreSQL only: borrow connections from this pool (openSharedPostgres, for the same database)
   * instead of opening a pool and a lock connection of the store's own; closing the store leaves
   * the pool open. Default: none.
   */
  shared?: SharedPostgres;
}

/** What one WAL checkpoint did (SQLite); `busy` when a reader kept it from completing. */
export interface CheckpointResult {
  busy: boolean;
  walPages: number;
  checkpointedPages: number;
}

/**
 * What the rest of wsmirror may do with a mirror: write through `transaction`, ask named questions
 * (here and in StatusReads), and nothing else. No query builder: src/report reaches it through
 * internal.ts, src/sync/state.ts reaches the sync state through sync-state.ts, and
 * eslint.config.js keeps every other module to src/store/index.ts (docs/design.md §5.1).
 */
export interface Store extends StatusReads, NamedReads {
  /** The database's name, for tests and messages; code asks `capabilities` what to do instead. */
  readonly dialect: 'sqlite' | 'postgres';
  /** What the database does differently (src/store/dialect.ts): the only dialect question code outside the store asks. */
  readonly capabilities: DialectCapabilities;
  /**
   * Applies pending migrations; call it only while holding the writer lock. SCHEMA_NEWER when the
   * database was migrated by a newer build (writers only: a reader of a newer schema still reads).
   * Read-only: returns [] when none pend, else MIGRATION_PENDING.
   */
  migrate(): Promise<{ applied: string[] }>;
  /** Names the database in messages and output (never includes a password). */
  readonly label: string;
  /**
   * SQLite: a TRUNCATE checkpoint, so the WAL stays bounded while readers come and go (a reader
   * holding an old snapshot makes it report busy; the next one catches up). PostgreSQL: null.
   */
  checkpoint(): Promise<CheckpointResult | null>;
  /** SQLite: bytes of the database file and its WAL. PostgreSQL: null. */
  fileSizes(): { database: number; wal: number } | null;
  /** Deletes change-log events that occurred before `cutoff` (ISO); history rows stay. Returns the count. */
  pruneEvents(cutoff: string): Promise<number>;
  /**
   * A first backfill only: drops the record tables' secondary indexes while no ticket or deal is
   * mirrored, saving their definitions (docs/sync.md, "Backfill"). Returns how many it dropped (0:
   * the mirror already holds records, or they are already deferred).
   */
  deferIndexes(): Promise<number>;
  /**
   * A first backfill only: when no record table holds a row, record writes from now on skip
   * reading the stored copies and children of ids not written since (they cannot exist), until
   * `endAppend` (docs/sync.md, "Backfill"). Returns whether it started.
   */
  startAppend(): Promise<boolean>;
  endAppend(): void;
  /** Rebuilds the indexes `deferIndexes` dropped; `migrate` does it too, so a killed backfill loses none. Returns how many. */
  restoreIndexes(): Promise<number>;
  /**
   * After a bulk load: PostgreSQL runs VACUUM and ANALYZE on these tables at once, so the planner's
   * statistics and the visibility map describe the rows, instead of whenever autovacuum comes
   * round; a table under `vacuumMinPages` (default TIDY_VACUUM_MIN_PAGES, 128) is only analyzed.
   * SQLite does nothing (tidy-tables.ts says why). Returns null when nothing ran, else which
   * tables had to be vacuumed twice and which were only analyzed.
   */
  afterBulkLoad(tables: readonly string[], options?: { vacuumMinPages?: number }): Promise<TidyOutcome | null>;
  /** One database transaction (SQLite: serialised with every other query of this store). Do not nest. */
  transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  /** StoreTx.startRun as one statement of its own (no transaction around a single insert): every run begins so. */
  startRun(kind: string, at: string): Promise<number>;
  /**
   * One sync_state key written as one statement of its own (an upsert is atomic alone: no BEGIN and
   * COMMIT around it, two round trips fewer on PostgreSQL), through the cache as a committed
   * transaction's writes. For src/sync/state.ts alone, through sync-state.ts.
   */
  writeStateAlone(key: string, value: unknown): Promise<void>;
  acquireWriterLock(opts: AcquireLockOptions): Promise<WriterLock>;
  /**
   * True when the database refused one record's rows: a value it cannot hold or a constraint they
   * break (the dialect's `refusedRecord` capability, dialect.ts): the record's problem, to
   * quarantine, not the cycle's.
   */
  isRefusedValue(err: unknown): boolean;
  /** Releases any writer lock taken through this store, then closes the database. */
  close(): Promise<void>;
}

/** What a dialect supplies; everything else a Store does is dialect-neutral. */
export interface StoreBackend {
  dialect: 'sqlite' | 'postgres';
  db: Kysely<MirrorDatabase>;
  readonly: boolean;
  /** Names the database in messages (never includes a password). */
  label: string;
  acquireLock(opts: AcquireLockOptions): Promise<WriterLock>;
  /** PostgreSQL: the mirror's schema, which also holds the migration bookkeeping. */
  schema?: string;
  checkpoint?: () => Promise<CheckpointResult>;
  fileSizes?: () => { database: number; wal: number };
  /** The transaction was rolled back whole (a deadlock victim): running it again is safe. */
  isRetryable: (err: unknown) => boolean;
  /** After each `transaction` commits (SQLite: keeps the WAL under its bound). */
  afterCommit?: () => Promise<void>;
  /** Stops what the dialect runs beside the connection (SQLite: the WAL checkpoint thread). */
  beforeClose?: () => Promise<void>;
  /** PostgreSQL: the schemas of this database that hold a mirror (its migration bookkeeping). */
  mirrorSchemas?: () => Promise<string[]>;
}

export function buildStore(backend: StoreBackend): Store {
  const { db, readonly, label } = backend;
  const locks = new Set<WriterLock>();
  let ledger: AppendLedger | null = null;
  const state = new StateCache();

  const store: Store = {
    ...statusReads(db),
    dialect: backend.dialect,
    capabilities: capabilitiesOf(db),
    label,
    migrate: () => migrateThroughCache(backend, state),
    async transaction(fn) {
      // Each attempt (a deadlock victim runs again) has its own view; only the one that committed reaches the cache.
      let last: StateView | null = null;
      const attempt = (trx: Kysely<MirrorDatabase>) => fn(createTx(trx, (last = state.view(trx)), ledger));
      const result = await withRetry(() => db.transaction().execute(attempt), backend.isRetryable);
      if (last) state.commit((last as StateView).writes);
      await backend.afterCommit?.();
      return result;
    },
    isRefusedValue: (err) => capabilitiesOf(db).refusedRecord(err) !== null,
    async startRun(kind, at) {
      if (readonly) throw new StoreError('READONLY', 'A read-only store cannot write.');
      const id = await insertRun(db, kind, requiredTs(at, 'at'));
      await backend.afterCommit?.();
      return id;
    },
    async writeStateAlone(key, value) {
      if (readonly) throw new StoreError('READONLY', 'A read-only store cannot write.');
      const view = state.view(db);
      await view.set(key, value);
      state.commit(view.writes);
      if (view.writes.size > 0) await backend.afterCommit?.();
    },
    async deferIndexes() {
      if (readonly) throw new StoreError('READONLY', 'A read-only store cannot change indexes.');
      return (await deferIndexes(db).finally(() => state.invalidate())).length;
    },
    async startAppend() {
      if (readonly) throw new StoreError('READONLY', 'A read-only store cannot write.');
      ledger = (await bulkTablesEmpty(db)) ? new AppendLedger(await quarantinedTypes(db)) : null;
      return ledger !== null;
    },
    endAppend() {
      ledger = null;
    },
    async restoreIndexes() {
      if (readonly) throw new StoreError('READONLY', 'A read-only store cannot change indexes.');
      return restoreDeferredIndexes(db).finally(() => state.invalidate());
    },
    async afterBulkLoad(tables, options) {
      if (readonly) throw new StoreError('READONLY', 'A read-only store cannot vacuum or analyze.');
      return tidyTables(db, tables, options?.vacuumMinPages);
    },
    async acquireWriterLock(opts) {
      if (readonly) throw new StoreError('READONLY', 'A read-only store cannot take the writer lock.');
      return trackLock(await backend.acquireLock(opts), locks, state);
    },
    checkpoint: async () => (backend.checkpoint && !readonly ? backend.checkpoint() : null),
    fileSizes: () => (backend.fileSizes ? backend.fileSizes() : null),
    async pruneEvents(cutoff) {
      if (readonly) throw new StoreError('READONLY', 'A read-only store cannot prune events.');
      const deleted = await db.deleteFrom('events').where('occurred_at', '<', cutoff).executeTakeFirst();
      return Number(deleted.numDeletedRows);
    },
    ...namedReads(db),
    async close() {
      for (const lock of [...locks]) await lock.release();
      await backend.beforeClose?.();
      await db.destroy();
    },
  };
  return attachState(attachDatabase(store, db), () => state.view(db));
}

/**
 * A lock taken through this store: released with the store, and, while held, the store's sync
 * state may come from memory (state-cache.ts: only the lock holder writes it), until it is
 * released or lost (another writer may then take over).
 */
function trackLock(lock: WriterLock, locks: Set<WriterLock>, state: StateCache): WriterLock {
  const tracked: WriterLock = {
    lost: lock.lost,
    async release() {
      locks.delete(tracked);
      if (locks.size === 0) state.setActive(false);
      await lock.release();
    },
  };
  locks.add(tracked);
  state.setActive(true);
  lock.lost.addEventListener('abort', () => state.setActive(false), { once: true });
  return tracked;
}

/**
 * Only what changed the table makes the cache read it afresh: an up-to-date mirror's open reads
 * sync_state once, the deferred-index question served from that read.
 */
async function migrateThroughCache(backend: StoreBackend, state: StateCache): Promise<{ applied: string[] }> {
  const out = await migrateStore(backend, (key) => state.view(backend.db).get(key)).catch((err: unknown) => {
    state.invalidate();
    throw err;
  });
  if (out.applied.length > 0 || out.rebuilt > 0) state.invalidate();
  return { applied: out.applied };
}

/**
 * Writers migrate (refusing a schema newer than this build knows); readers only check that none
 * pends, since a reader must never change the schema under the writer (docs/design.md §4.7).
 */
async function migrateStore(
  backend: StoreBackend,
  peek: (key: string) => Promise<unknown>,
): Promise<{ applied: string[]; rebuilt: number }> {
  const { db, label, schema } = backend;
  const plan = await migrationPlan(db, schema);
  if (!backend.readonly) {
    if (plan.unknown.length > 0) throw schemaNewerError(label, plan.unknown);
    // Before the migrations, which were written against the schema with every index present.
    const rebuilt = await restoreDeferredIndexes(db, plan.pending.length < plan.known, plan.pending.length === 0 ? peek : undefined);
    return { rebuilt, ...(plan.pending.length === 0 ? { applied: [] } : await migrateToLatest(db, schema)) };
  }
  const { pending } = plan;
  if (pending.length > 0 && pending.length === plan.known) throw await noMirrorError(backend);
  if (pending.length > 0) {
    throw new StoreError(
      'MIGRATION_PENDING',
      `The mirror at ${label} needs migrations (${pending.join(', ')}); run \`wsmirror migrate\` first.`,
    );
  }
  return { applied: [], rebuilt: 0 };
}

/**
 * A reader on a schema with no mirror in it: `migrate` would make an empty mirror there, so the
 * likely fix is the `schema` setting; the schemas that hold one are named.
 */
async function noMirrorError(backend: StoreBackend): Promise<StoreError> {
  const { label, schema } = backend;
  if (!backend.mirrorSchemas) return new StoreError('NO_MIRROR', `No mirror at ${label} yet; run \`wsmirror backfill\` to make one.`);
  const held = await backend.mirrorSchemas();
  const where =
    held.length === 0
      ? 'no schema of this database holds a mirror yet (run `wsmirror backfill` to make one)'
      : `the schemas holding a mirror are ${held.map((h) => `\`${h}\``).join(', ')}: set \`schema\` in the config file to yours`;
  return new StoreError('NO_MIRROR', `Schema \`${schema ?? 'public'}\` of ${label} is missing or holds no mirror; ${where}.`);
}

/**
 * Runs a transaction again when the dialect says it was rolled back whole (PostgreSQL may abort
 * one of two concurrent transactions that touch the same rows), after a short jittered pause.
 */
async function withRetry<T>(run: () => Promise<T>, retryable: (err: unknown) => boolean, attempts = 4): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (attempt >= attempts || !retryable(err)) throw err;
      await new Promise((r) => setTimeout(r, 5 * attempt + Math.random() * 20));
    }
  }
}
