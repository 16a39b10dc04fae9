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
import { capabilitiesOf } from './dialect.js';
import type { MirrorDatabase } from './schema.js';

/**
 * VACUUM (ANALYZE) of these tables, in the mirror's schema (the connection's search_path). Outside
 * any transaction: VACUUM cannot run in one. It blocks neither readers nor writers. Returns false
 * when the dialect has nothing to do.
 */
export async function tidyTables(db: Kysely<MirrorDatabase>, tables: readonly string[]): Promise<boolean> {
  if (!capabilitiesOf(db).tidiesAfterBulkLoad || tables.length === 0) return false;
  await sql`VACUUM (ANALYZE) ${sql.join(tables.map((t) => sql.table(t)))}`.execute(db);
  return true;
}
