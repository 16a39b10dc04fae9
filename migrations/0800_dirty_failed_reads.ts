import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * The dirty set counts a record's reads that failed after all their retries (a body trickled past
 * the request timeout, a 5xx on that record alone) while the upstream answered others
 * (docs/sync.md, "Hostile upstream"): such a record stays dirty while the rest of the drain
 * commits, and is quarantined after a bounded number of failed reads in a row. 0 for every entry
 * already pending. Frozen: it names its own types and imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    // The migrator runs PostgreSQL migrations in one transaction.
    await sql`ALTER TABLE dirty ADD COLUMN IF NOT EXISTS failed_reads integer NOT NULL DEFAULT 0`.execute(db);
    return;
  }
  // SQLite runs migrations outside a transaction: a process killed before the migrator's
  // bookkeeping runs this again, so it must be safe to repeat.
  const cols = await sql<{ name: string }>`SELECT name FROM pragma_table_info('dirty')`.execute(db);
  if (cols.rows.some((c) => c.name === 'failed_reads')) return;
  await sql`ALTER TABLE dirty ADD COLUMN failed_reads integer NOT NULL DEFAULT 0`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE dirty DROP COLUMN failed_reads`.execute(db);
}
