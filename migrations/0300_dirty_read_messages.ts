import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * The dirty set remembers whether a ticket's messages may have changed (docs/sync.md, "Drain"):
 * only then does the drain need `GET /tickets/:id`; any other change of a ticket is carried by
 * the ticket list. 1 (may have changed) is the safe default for every entry already pending, and
 * for any caller that does not say. Deals ignore it: their list items are the whole record.
 * Frozen: it names its own types and imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    // The migrator runs PostgreSQL migrations in one transaction.
    await sql`ALTER TABLE dirty ADD COLUMN IF NOT EXISTS read_messages integer NOT NULL DEFAULT 1`.execute(db);
    return;
  }
  // SQLite runs migrations outside a transaction: a process killed before the migrator's
  // bookkeeping runs this again, so it must be safe to repeat.
  const cols = await sql<{ name: string }>`SELECT name FROM pragma_table_info('dirty')`.execute(db);
  if (cols.rows.some((c) => c.name === 'read_messages')) return;
  await sql`ALTER TABLE dirty ADD COLUMN read_messages integer NOT NULL DEFAULT 1`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE dirty DROP COLUMN read_messages`.execute(db);
}
