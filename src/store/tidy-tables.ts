/**
 * Tidying after a bulk load (docs/design.md §4.6). PostgreSQL plans from statistics, and answers
 * index-only scans from the visibility map, that only VACUUM and ANALYZE keep; autovacuum comes
 * round a minute or more after a table changes, and never while it is turned off. Until then a
 * table a backfill filled from empty still looks empty to the planner, which scanned all of
 * ticket_messages for the messages of 170 tickets (81 ms at 256,000 messages), and the agent
 * figures' index-only scan fetched 137,713 heap rows (500 ms of a tick): bench/README.md,
 * "Sixth pass".
 *
 * SQLite does nothing here: without `sqlite_stat1` its planner takes every index as selective,
 * which is what wsmirror's statements were written and measured against; statistics would let it
 * choose plans no test has seen. It has no visibility map to set.
 */
import { sql, type Kysely } from 'kysely';
import { mapConcurrent } from '../util/concurrency.js';
import { capabilitiesOf } from './dialect.js';
import type { MirrorDatabase } from './schema.js';

/**
 * How many tables are vacuumed at once, each on a connection of its own. One VACUUM is one server
 * process working alone, and at the end of a backfill nothing else keeps the server busy: at L the
 * mirrored tables took 2.3-2.7 s as one statement, 1.3-1.6 s two at a time (bench/README.md,
 * "Eighteenth pass"). On a one-core server two take as long as one.
 */
const TIDY_CONCURRENCY = 2;

/**
 * Tables under this many pages (1 MiB) are analyzed, not vacuumed. What the VACUUM buys (the
 * visibility map of an index-only scan) is worth nothing on a few pages, and each VACUUM ends by
 * recomputing the database's oldest transaction id from every row of pg_class under one lock
 * for the whole database: a fleet of 1,000 small workspaces in one database (150,000 relations)
 * queued every backfill's forty VACUUMs behind each other's, 13 s a backfill slice
 * (bench/README.md, "Fleet, third pass"). ANALYZE takes no such lock, and it alone gives the
 * planner the rows.
 */
export const TIDY_VACUUM_MIN_PAGES = 128;

/**
 * VACUUM, then ANALYZE, of these tables, in the mirror's schema (the connection's search_path), a
 * statement per table, `TIDY_CONCURRENCY` at a time in the order given (put the largest first).
 * Outside any transaction: VACUUM cannot run in one. It blocks neither readers nor writers. On a
 * failure the statements in flight finish and the first error is thrown. Returns null when the
 * dialect has nothing to do.
 *
 * Why a second look: VACUUM marks a page all-visible only for rows older than every snapshot held
 * in the same database when it starts, and a snapshot's xmin is the oldest transaction open
 * anywhere on the server. A VACUUM statement holds an ordinary snapshot for a moment as it starts,
 * and an ANALYZE throughout, so two side by side let any long transaction in another database of
 * the server leave a table without its visibility map (seen in CI, where test files share one
 * server: test/sync/tidy-tables.test.ts). Tables that came out so are vacuumed again in one
 * statement, which works through them alone; ANALYZE runs after every VACUUM for the same reason.
 */
export async function tidyTables(
  db: Kysely<MirrorDatabase>,
  tables: readonly string[],
  vacuumMinPages = TIDY_VACUUM_MIN_PAGES,
): Promise<TidyOutcome | null> {
  if (!capabilitiesOf(db).tidiesAfterBulkLoad || tables.length === 0) return null;
  const outcome: TidyOutcome = { vacuumedAgain: [], notAllVisible: [], analyzedOnly: [] };
  const small = await smallTables(db, tables, vacuumMinPages);
  outcome.analyzedOnly = tables.filter((t) => small.has(t));
  const vacuumed = tables.filter((t) => !small.has(t));
  await holdConnections(db, Math.min(TIDY_CONCURRENCY, tables.length), async (connections) => {
    const run = (list: readonly string[], statement: (table: string) => ReturnType<typeof sql>) =>
      mapConcurrent(list, connections.length, async (table) => {
        // At most `connections.length` in flight, so one is always free.
        const connection = connections.pop()!;
        try {
          await statement(table).execute(connection);
        } finally {
          connections.push(connection);
        }
      });
    await run(vacuumed, (table) => sql`VACUUM ${sql.table(table)}`);
    outcome.vacuumedAgain = vacuumed.length === 0 ? [] : await tablesNotAllVisible(connections[0]!, vacuumed);
    if (outcome.vacuumedAgain.length > 0) {
      await sql`VACUUM ${sql.join(outcome.vacuumedAgain.map((table) => sql.table(table)))}`.execute(connections[0]!);
      outcome.notAllVisible = await tablesNotAllVisible(connections[0]!, outcome.vacuumedAgain);
    }
    await run(tables, (table) => sql`ANALYZE ${sql.table(table)}`);
  });
  return outcome;
}

/** What a tidy had to do twice, for its log line (src/sync/tidy.ts). */
export interface TidyOutcome {
  /** Tables the first pass left with pages not marked all-visible, vacuumed again alone. */
  vacuumedAgain: string[];
  /** Of those, the ones still so: a snapshot in the mirror's own database held them back; autovacuum will do it. */
  notAllVisible: string[];
  /** Tables under `vacuumMinPages`: analyzed, not vacuumed. */
  analyzedOnly: string[];
}

/** Of these tables, those of the mirror's schema under `minPages` pages (a table the catalog does not know is not small: its VACUUM names it). */
async function smallTables(db: Kysely<MirrorDatabase>, tables: readonly string[], minPages: number): Promise<Set<string>> {
  if (minPages <= 0) return new Set();
  const rows = await sql<{ relname: string; pages: number }>`
    select c.relname, (pg_relation_size(c.oid) / current_setting('block_size')::int)::int as pages
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relname = any(${[...tables]}) and c.relkind = 'r'`.execute(db);
  return new Set(rows.rows.filter((r) => r.pages < minPages).map((r) => r.relname));
}

/** Of these tables, those with pages the visibility map does not mark all-visible, by the catalog VACUUM just updated. */
async function tablesNotAllVisible(db: Kysely<MirrorDatabase>, tables: readonly string[]): Promise<string[]> {
  const rows = await sql<{ relname: string }>`
    select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relname = any(${[...tables]}) and c.relallvisible < c.relpages`.execute(db);
  return tables.filter((table) => rows.rows.some((row) => row.relname === table));
}

/** Runs `body` with `count` pool connections held, so no connection starts up beside a VACUUM. */
function holdConnections(
  db: Kysely<MirrorDatabase>,
  count: number,
  body: (connections: Kysely<MirrorDatabase>[]) => Promise<void>,
  held: Kysely<MirrorDatabase>[] = [],
): Promise<void> {
  if (held.length >= count) return body(held);
  return db.connection().execute((connection) => holdConnections(db, count, body, [...held, connection]));
}
