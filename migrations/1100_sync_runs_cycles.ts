import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * `sync_runs.cycles`: how many cycles one row stands for. In continuous mode an idle poll (nothing
 * new, nothing re-read) folds into the idle row before it (docs/schema.md, sync_runs), so a day of
 * polling a quiet workspace is a few rows, not one a second. Every older row stands for one cycle.
 * Frozen: it imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`ALTER TABLE sync_runs ADD COLUMN IF NOT EXISTS cycles integer NOT NULL DEFAULT 1`.execute(db);
    return;
  }
  // SQLite runs migrations outside a transaction: a process killed before the migrator's
  // bookkeeping runs this again, so the step must be safe to repeat.
  const have = await sql<{ name: string }>`SELECT name FROM pragma_table_info('sync_runs')`.execute(db);
  if (!have.rows.some((c) => c.name === 'cycles'))
    await sql`ALTER TABLE sync_runs ADD COLUMN cycles INTEGER NOT NULL DEFAULT 1`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE sync_runs DROP COLUMN cycles`.execute(db);
}
