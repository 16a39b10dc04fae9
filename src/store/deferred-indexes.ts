/**
 * A first backfill builds the record tables' secondary indexes once, at its end, instead of row by
 * row (docs/sync.md, "Backfill"). Record ids are random, so each page of inserts lands on
 * scattered pages of every index, and SQLite's commit writes each page it touched to the WAL: at
 * 50,000 tickets this cut the backfill by about an eighth (bench/README.md, "Fifth pass").
 * On PostgreSQL only the indexes whose entries have a fixed size (timestamps: `updated_at`,
 * `(deleted_at, created_at)`, ...): a B-tree entry there holds at most 2,704 bytes, and a text value
 * from upstream has no such bound; with the index in place such a row is refused as it is written
 * and only its record is quarantined, where a build at the end would fail the whole mirror
 * (test/hostile/index-limits.test.ts). Setting such rows aside before the build does not work: a
 * build indexes the rows its own transaction deleted, and those another session may still see
 * (bench/README.md, "Sixteenth pass").
 *
 * Crash safety: the definitions are saved in `sync_state` in the transaction that drops them, and
 * every writer recreates whatever is saved before it migrates (`restoreDeferredIndexes`), so a
 * backfill killed half way never leaves a mirror without its indexes once wsmirror runs again.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import { RECORD_ENTITIES } from '../entities/index.js';
import type { MirrorDatabase } from './schema.js';
import { getState, setState } from './sync-tables.js';
import { capabilitiesOf } from './dialect.js';

type Db = Kysely<MirrorDatabase> | Transaction<MirrorDatabase>;

/**
 * The memory an index build's sort may take in wsmirror's own process (SQLite). With the 16 MB a
 * sort takes by default, building `ticket_messages (ticket_id, created_at)` at the end of an L
 * backfill (256,000 rows) added 14-28 MB to the process's peak RSS; bounded to 4 MiB, about 2 MB,
 * in as long (bench/README.md, "Seventeenth pass").
 */
const INDEX_BUILD_SORT_KIB = 4096;

/** The sync_state key holding the dropped definitions. */
export const DEFERRED_INDEXES_KEY = 'deferred_indexes';

/**
 * Tables a backfill fills in bulk: every record table and its child tables (src/entities). Their
 * primary keys and unique indexes always stay: upserts need them.
 */
export const bulkTables = (): readonly string[] => RECORD_ENTITIES.flatMap((e) => [e.table, ...e.childTables]);
const recordTableNames = (): readonly string[] => RECORD_ENTITIES.map((e) => e.table);

/** One dropped index: its name and the statement that made it, as the database reports it. */
export interface DeferredIndex {
  name: string;
  sql: string;
}

/**
 * Drops the plain secondary indexes of the bulk tables, when no ticket and no deal is mirrored yet
 * (a first backfill; a resumed or repeated one keeps them, since rebuilding over rows already
 * there costs more than it saves). Returns what it dropped (none: nothing to do). Indexes a user
 * added to those tables are deferred and rebuilt the same way.
 */
export async function deferIndexes(db: Kysely<MirrorDatabase>): Promise<DeferredIndex[]> {
  const can = capabilitiesOf(db);
  if (!can.defersIndexesInBulkLoad) return [];
  try {
    return await db.transaction().execute(async (trx) => {
      if ((await getState(trx, DEFERRED_INDEXES_KEY)) !== undefined) return [];
      if (!(await tablesEmpty(trx, recordTableNames()))) return [];
      // On SQLite ticket_messages (ticket_id, created_at) goes too: the primary key (ticket_id, id)
      // serves the reads by ticket id of a ticket listed twice (docs/sync.md, "Backfill").
      const indexes = (await indexesOf(trx)).filter((i) => !i.unique && i.bounded);
      if (indexes.length === 0) return [];
      await can.boundLockWait(DROP_LOCK_WAIT_MS)?.execute(trx);
      await setState(
        trx,
        DEFERRED_INDEXES_KEY,
        indexes.map(({ name, sql: text }) => ({ name, sql: text })),
      );
      for (const index of indexes) await sql`drop index ${sql.id(index.name)}`.execute(trx);
      return indexes;
    });
  } catch (err) {
    // A reader holds a table open: the backfill keeps the indexes (slower, never wrong) instead of waiting on it.
    if (can.lockWaitEnded(err)) return [];
    throw err;
  }
}

/**
 * How long dropping the indexes may wait for a table another session holds (a BI query's open
 * transaction on PostgreSQL) before the backfill keeps them instead; while it waits, every new
 * query of that table waits behind it.
 */
const DROP_LOCK_WAIT_MS = 2000;

/** True when no bulk table holds a row: a first backfill's start (Store.startAppend). */
export function bulkTablesEmpty(db: Kysely<MirrorDatabase>): Promise<boolean> {
  return tablesEmpty(db, bulkTables());
}

/** The record types the quarantine holds rows of (Store.startAppend: AppendLedger). */
export async function quarantinedTypes(db: Kysely<MirrorDatabase>): Promise<string[]> {
  const out: string[] = [];
  for (const { type } of RECORD_ENTITIES) {
    const rows = await sql`select 1 from "quarantine" where "entity_type" = ${type} limit 1`.execute(db);
    if (rows.rows.length > 0) out.push(type);
  }
  return out;
}

async function tablesEmpty(db: Db, tables: readonly string[]): Promise<boolean> {
  for (const table of tables) {
    if ((await sql`select 1 from ${sql.table(table)} limit 1`.execute(db)).rows.length > 0) return false;
  }
  return true;
}

/**
 * Recreates every saved index the database does not have, then forgets them, in one transaction.
 * Returns how many it built. Safe to call at any time and more than once. `stateTable`: the caller
 * knows sync_state exists (a migrated mirror), so it is not looked up.
 */
export async function restoreDeferredIndexes(
  db: Kysely<MirrorDatabase>,
  stateTable?: boolean,
  peek: (key: string) => Promise<unknown> = (key) => getState(db, key),
): Promise<number> {
  if (!capabilitiesOf(db).defersIndexesInBulkLoad || !(stateTable ?? (await hasStateTable(db)))) return 0;
  // Every open of a writer asks: nothing saved (the usual answer) needs no transaction. A writer's
  // `peek` reads through its state cache, whose one read of the table the cycle needs anyway.
  if ((await peek(DEFERRED_INDEXES_KEY)) === undefined) return 0;
  return db.transaction().execute(async (trx) => {
    const saved = await getState<DeferredIndex[]>(trx, DEFERRED_INDEXES_KEY);
    if (saved === undefined) return 0;
    const present = new Set((await indexesOf(trx)).map((i) => i.name));
    let built = 0;
    await capabilitiesOf(trx).boundSortMemory(trx, INDEX_BUILD_SORT_KIB, async () => {
      for (const index of saved) {
        if (present.has(index.name)) continue;
        await sql.raw(index.sql).execute(trx);
        built++;
      }
    });
    await setState(trx, DEFERRED_INDEXES_KEY, null);
    return built;
  });
}

/** Indexes on the bulk tables made by CREATE INDEX (a constraint's own index is not one). */
async function indexesOf(db: Db): Promise<(DeferredIndex & { unique: boolean; bounded: boolean })[]> {
  const rows = await capabilitiesOf(db).createdIndexes(bulkTables()).execute(db);
  return rows.rows.map((r) => ({ name: r.name, sql: r.sql, bounded: Boolean(r.bounded), unique: /^\s*create\s+unique\b/i.test(r.sql) }));
}

async function hasStateTable(db: Db): Promise<boolean> {
  return (await capabilitiesOf(db).tableExists('sync_state').execute(db)).rows.length > 0;
}
