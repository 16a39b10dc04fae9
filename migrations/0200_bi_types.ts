import { PostgresAdapter, sql, type Kysely } from 'kysely';

/** Frozen: the migration tells the dialect itself and imports nothing from src/. */
const isPostgres = (db: Kysely<any>): boolean => db.getExecutor().adapter instanceof PostgresAdapter;

/**
 * Types BI tools read as they are (docs/schema.md, "How values are stored"):
 * - SQLite: every DATETIME column of every table (base, sync and rpt_) is rewritten from the
 *   24-char ISO text (`2026-11-20T17:00:00.000Z`) to SQLite's own form `2026-11-20 17:00:00.000`,
 *   which compares correctly as text with `datetime()` and the literals BI tools write, and which
 *   JDBC drivers parse. raw_json and payload_json keep the upstream text untouched.
 * - SQLite: boolean columns of the base tables are re-declared BOOLEAN (values stay 0/1) and
 *   deals.amount becomes REAL so a BI tool can sum it (amount_cents stays the exact figure).
 *   SQLite cannot change a declared type in place; each column is re-added under the new type,
 *   copied, and the old one dropped (no table rebuild, so no cascade on the child tables).
 * - Both dialects: rpt_sync_health.running_since (docs/bi.md, sync health), and history rows
 *   unique by (event_id, field) instead of event_id: one deal stage move tells two fields (stage
 *   and status), each its own row (docs/sync.md, "History").
 * PostgreSQL already has timestamptz, boolean and numeric: nothing else to do there.
 */

const RETYPED: readonly [table: string, column: string, type: string, convert: string][] = [
  ['ticket_messages', 'is_internal', 'boolean', 'is_internal'],
  ['stages', 'is_won', 'boolean', 'is_won'],
  ['stages', 'is_lost', 'boolean', 'is_lost'],
  ['deal_contacts', 'is_primary', 'boolean', 'is_primary'],
  ['deals', 'amount', 'real', 'CAST(amount AS REAL)'],
];

async function datetimeColumns(db: Kysely<any>): Promise<[string, string][]> {
  const tables = await sql<{ name: string }>`
    SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'kysely_%'`.execute(db);
  const out: [string, string][] = [];
  for (const { name } of tables.rows) {
    const cols = await sql<{ name: string; type: string }>`SELECT name, type FROM pragma_table_info(${name})`.execute(db);
    for (const c of cols.rows) if (c.type.toLowerCase() === 'datetime') out.push([name, c.name]);
  }
  return out;
}

async function historyIndexes(db: Kysely<any>): Promise<void> {
  for (const table of ['ticket_history', 'deal_history']) {
    await db.schema.dropIndex(`${table}_event_id_idx`).ifExists().execute();
    await db.schema.createIndex(`${table}_event_field_idx`).ifNotExists().on(table).columns(['event_id', 'field']).unique().execute();
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    // The migrator runs PostgreSQL migrations in one transaction.
    await historyIndexes(db);
    await sql`ALTER TABLE rpt_sync_health ADD COLUMN IF NOT EXISTS running_since timestamptz`.execute(db);
    return;
  }
  // Kysely runs SQLite migrations outside a transaction, and a process killed between this
  // function's end and the migrator's bookkeeping runs it again: so one transaction, and every
  // step safe to repeat on an already converted mirror.
  await db.transaction().execute(async (trx) => {
    await historyIndexes(trx);
    await convertSqlite(trx);
  });
}

async function columnsOf(db: Kysely<any>, table: string): Promise<Set<string>> {
  const cols = await sql<{ name: string }>`SELECT name FROM pragma_table_info(${table})`.execute(db);
  return new Set(cols.rows.map((c) => c.name));
}

async function convertSqlite(db: Kysely<any>): Promise<void> {
  for (const [table, column] of await datetimeColumns(db)) {
    // Only values in the old ISO shape are rewritten; strftime gives NULL for anything it cannot
    // read, and such a value is left as it was rather than lost.
    await sql
      .raw(
        `UPDATE "${table}" SET "${column}" = strftime('%Y-%m-%d %H:%M:%f', "${column}")
         WHERE "${column}" LIKE '____-__-__T__:__:__%' AND strftime('%Y-%m-%d %H:%M:%f', "${column}") IS NOT NULL`,
      )
      .execute(db);
  }
  for (const [table, column, type, convert] of RETYPED) {
    const tmp = `${column}__0200`;
    await sql.raw(`ALTER TABLE "${table}" ADD COLUMN "${tmp}" ${type}`).execute(db);
    await sql.raw(`UPDATE "${table}" SET "${tmp}" = ${convert}`).execute(db);
    await sql.raw(`ALTER TABLE "${table}" DROP COLUMN "${column}"`).execute(db);
    await sql.raw(`ALTER TABLE "${table}" RENAME COLUMN "${tmp}" TO "${column}"`).execute(db);
  }
  if (!(await columnsOf(db, 'rpt_sync_health')).has('running_since')) {
    await sql`ALTER TABLE rpt_sync_health ADD COLUMN running_since datetime`.execute(db);
  }
}

export async function down(): Promise<void> {
  // Forward only: the old text form compared wrongly, there is nothing to go back to.
}
