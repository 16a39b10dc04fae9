import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * History that says when it is not exact (docs/sync.md, "History"; docs/schema.md, history_gaps):
 * - `history_gaps`: one row per change-log event that may hide a change of a tracked field but
 *   cannot be read as one (an update without a readable {from, to}), written with the event;
 * - `rpt_tickets.history_incomplete_reason` and `rpt_deals.history_incomplete_reason`: why a
 *   record's `history_complete` is 0.
 * The next refresh rebuilds the rpt_ tables in full (the `reporting_stale` flag the sync reads),
 * so every row gets its reason. Frozen: it names its own types and imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const ts = postgres ? sql.raw('timestamptz') : sql.raw('datetime');
  await sql`CREATE TABLE IF NOT EXISTS history_gaps (
    entity_type text NOT NULL,
    entity_id text NOT NULL,
    event_id text NOT NULL,
    event_type text,
    occurred_at ${ts} NOT NULL,
    fields text NOT NULL,
    reason text NOT NULL,
    PRIMARY KEY (entity_type, entity_id, event_id)
  )`.execute(db);
  for (const table of ['rpt_tickets', 'rpt_deals']) {
    if (postgres) {
      await sql`ALTER TABLE ${sql.table(table)} ADD COLUMN IF NOT EXISTS history_incomplete_reason text`.execute(db);
      continue;
    }
    // SQLite runs migrations outside a transaction: a process killed before the migrator's
    // bookkeeping runs this again, so it must be safe to repeat.
    const cols = await sql<{ name: string }>`SELECT name FROM pragma_table_info(${table})`.execute(db);
    if (!cols.rows.some((c) => c.name === 'history_incomplete_reason'))
      await sql`ALTER TABLE ${sql.table(table)} ADD COLUMN history_incomplete_reason text`.execute(db);
  }
  // The stored timestamp form of both dialects' text input: `YYYY-MM-DD HH:MM:SS.SSS`, UTC.
  const iso = new Date().toISOString();
  const now = `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
  await sql`INSERT INTO sync_state (key, value_json, updated_at) VALUES ('reporting_stale', 'true', ${now})
    ON CONFLICT (key) DO UPDATE SET value_json = excluded.value_json, updated_at = excluded.updated_at`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS history_gaps`.execute(db);
  for (const table of ['rpt_tickets', 'rpt_deals'])
    await sql`ALTER TABLE ${sql.table(table)} DROP COLUMN history_incomplete_reason`.execute(db);
}
