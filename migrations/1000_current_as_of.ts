import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * "Current as of" for BI tools (docs/design.md §4.11, docs/schema.md rpt_sync_health):
 * `rpt_sync_health.current_as_of`, the upstream instant up to which every change is in the mirror,
 * and `current_as_of_age_seconds`, how far it lies behind the refresh. The sync writes them with
 * every refresh (each cycle). Frozen: it names its own types and imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const columns: [string, string][] = [
    ['current_as_of', postgres ? 'timestamptz' : 'datetime'],
    ['current_as_of_age_seconds', postgres ? 'double precision' : 'real'],
  ];
  if (postgres) {
    for (const [name, type] of columns)
      await sql`ALTER TABLE rpt_sync_health ADD COLUMN IF NOT EXISTS ${sql.ref(name)} ${sql.raw(type)}`.execute(db);
    return;
  }
  // SQLite runs migrations outside a transaction: a process killed before the migrator's
  // bookkeeping runs this again, so each step must be safe to repeat.
  const have = await sql<{ name: string }>`SELECT name FROM pragma_table_info('rpt_sync_health')`.execute(db);
  for (const [name, type] of columns)
    if (!have.rows.some((c) => c.name === name))
      await sql`ALTER TABLE rpt_sync_health ADD COLUMN ${sql.ref(name)} ${sql.raw(type)}`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const name of ['current_as_of', 'current_as_of_age_seconds'])
    await sql`ALTER TABLE rpt_sync_health DROP COLUMN ${sql.ref(name)}`.execute(db);
}
