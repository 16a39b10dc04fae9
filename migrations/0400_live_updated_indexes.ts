import { sql, type Kysely } from 'kysely';

/**
 * The drain's cost model asks for the newest live records updated since a time (`listedSince`,
 * docs/sync.md "Drain"): `deleted_at IS NULL AND updated_at >= ? ORDER BY updated_at DESC LIMIT ?`.
 * With only `tickets_deleted_created_idx (deleted_at, created_at)` and `tickets_updated_at_idx`,
 * SQLite (no statistics) searched the first by `deleted_at` and sorted every live ticket: 100-230
 * ms per call at 50,000 tickets, 4 calls per drain. An index on (deleted_at, updated_at) serves the
 * filter, the range and the order at once (1 ms). `IF NOT EXISTS` makes a rerun after a kill
 * harmless (SQLite runs migrations outside a transaction). Frozen: it imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX IF NOT EXISTS tickets_deleted_updated_idx ON tickets (deleted_at, updated_at)`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS deals_deleted_updated_idx ON deals (deleted_at, updated_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS deals_deleted_updated_idx`.execute(db);
  await sql`DROP INDEX IF EXISTS tickets_deleted_updated_idx`.execute(db);
}
