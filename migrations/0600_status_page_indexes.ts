import { sql, type Kysely } from 'kysely';

/**
 * The status page reads bounded data on every load (docs/operations.md, "The status page"):
 * - the newest quarantined records, `ORDER BY last_seen_at DESC LIMIT 20`: with only the primary
 *   key (entity_type, entity_id) that sorted the whole quarantine; this index is read backwards
 *   and stops after 20 entries, however large the quarantine grows;
 * - the last verify or reconcile run, `WHERE kind = ? ORDER BY started_at DESC LIMIT 1`: without
 *   it, a mirror that never ran one scanned every sync_runs row (one per cycle, forever).
 * `IF NOT EXISTS` makes a rerun after a kill harmless (SQLite runs migrations outside a
 * transaction). Frozen: it imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX IF NOT EXISTS quarantine_last_seen_idx ON quarantine (last_seen_at)`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS sync_runs_kind_started_idx ON sync_runs (kind, started_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS sync_runs_kind_started_idx`.execute(db);
  await sql`DROP INDEX IF EXISTS quarantine_last_seen_idx`.execute(db);
}
