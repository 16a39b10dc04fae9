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
 * VACUUM (ANALYZE) of these tables, in the mirror's schema (the connection's search_path), a
 * statement per table, `TIDY_CONCURRENCY` at a time in the order given (put the largest first).
 * Outside any transaction: VACUUM cannot run in one. It blocks neither readers nor writers. On a
 * failure the statements in flight finish and the first error is thrown. Returns false when the
 * dialect has nothing to do.
 */
export async function tidyTables(db: Kysely<MirrorDatabase>, tables: readonly string[]): Promise<boolean> {
  if (!capabilitiesOf(db).tidiesAfterBulkLoad || tables.length === 0) return false;
  await mapConcurrent(tables, TIDY_CONCURRENCY, async (table) => {
    await sql`VACUUM (ANALYZE) ${sql.table(table)}`.execute(db);
  });
  return true;
}
