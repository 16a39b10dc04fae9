import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Messages and stages keyed by their owner as well as their own id (docs/schema.md, changelog;
 * docs/sync.md, "Hostile upstream"). The upstream document does not promise that a message id is
 * unique across tickets, nor a stage id across pipelines; keyed by the id alone, a second ticket's
 * message silently replaced the first's, and a second pipeline's stage the first's (a deal in the
 * lost one's won stage then read as open). Now:
 * - `ticket_messages` primary key (ticket_id, id), was (id);
 * - `stages` primary key (pipeline_id, id), was (id); pipeline_id becomes NOT NULL (every stage the
 *   mirror writes has one: a deal always names its pipeline).
 * PostgreSQL swaps the constraints in place. SQLite cannot change a primary key, so each table is
 * rebuilt under a new name, filled, and renamed, with its indexes (whatever they are now, a
 * user's included) created again. Frozen: it imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    // The migrator runs PostgreSQL migrations in one transaction.
    await swapPostgresKey(db, 'ticket_messages', 'ticket_messages_pk', ['ticket_id', 'id']);
    await sql`DELETE FROM stages WHERE pipeline_id IS NULL`.execute(db);
    await sql`ALTER TABLE stages ALTER COLUMN pipeline_id SET NOT NULL`.execute(db);
    await swapPostgresKey(db, 'stages', 'stages_pk', ['pipeline_id', 'id']);
    return;
  }
  // SQLite runs migrations outside a transaction: one transaction here, and a table whose key is
  // already the new one is left alone, so a run cut after the commit is harmless when repeated.
  await db.transaction().execute(async (trx) => {
    await rebuildSqlite(trx, 'ticket_messages', MESSAGES_DDL, 2);
    await sql`DELETE FROM stages WHERE pipeline_id IS NULL`.execute(trx);
    await rebuildSqlite(trx, 'stages', STAGES_DDL, 2);
  });
}

async function swapPostgresKey(db: Kysely<any>, table: string, name: string, columns: string[]): Promise<void> {
  const current = await sql<{ conname: string; n: number }>`
    SELECT conname, array_length(conkey, 1) AS n FROM pg_constraint
    WHERE conrelid = to_regclass(${table}::text) AND contype = 'p'`.execute(db);
  const pk = current.rows[0];
  if (pk && Number(pk.n) === columns.length) return;
  if (pk) await sql.raw(`ALTER TABLE "${table}" DROP CONSTRAINT "${pk.conname}"`).execute(db);
  await sql.raw(`ALTER TABLE "${table}" ADD CONSTRAINT "${name}" PRIMARY KEY (${columns.map((c) => `"${c}"`).join(', ')})`).execute(db);
}

// The tables as 0001 and 0200 left them (0200 re-declared the booleans), with the new keys.
const MESSAGES_DDL = (name: string) => `CREATE TABLE "${name}" (
  "id" text NOT NULL,
  "ticket_id" text NOT NULL REFERENCES "tickets" ("id") ON DELETE CASCADE,
  "body" text,
  "author_type" text,
  "author_id" text,
  "is_internal" boolean,
  "attachments_json" text,
  "created_at" datetime,
  "raw_json" text,
  PRIMARY KEY ("ticket_id", "id")
)`;

const STAGES_DDL = (name: string) => `CREATE TABLE "${name}" (
  "id" text NOT NULL,
  "pipeline_id" text NOT NULL REFERENCES "pipelines" ("id") ON DELETE CASCADE,
  "name" text,
  "position" integer,
  "is_won" boolean,
  "is_lost" boolean,
  "raw_json" text,
  PRIMARY KEY ("pipeline_id", "id")
)`;

async function rebuildSqlite(db: Kysely<any>, table: string, ddl: (name: string) => string, keyColumns: number): Promise<void> {
  const cols = await sql<{ name: string; pk: number }>`SELECT name, pk FROM pragma_table_info(${table})`.execute(db);
  if (cols.rows.filter((c) => c.pk > 0).length === keyColumns) return;
  const indexes = await sql<{ sql: string }>`
    SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ${table} AND sql IS NOT NULL`.execute(db);
  const tmp = `${table}__0700`;
  await sql.raw(`DROP TABLE IF EXISTS "${tmp}"`).execute(db);
  await sql.raw(ddl(tmp)).execute(db);
  const names = cols.rows.map((c) => `"${c.name}"`).join(', ');
  await sql.raw(`INSERT INTO "${tmp}" (${names}) SELECT ${names} FROM "${table}"`).execute(db);
  await sql.raw(`DROP TABLE "${table}"`).execute(db);
  await sql.raw(`ALTER TABLE "${tmp}" RENAME TO "${table}"`).execute(db);
  for (const { sql: create } of indexes.rows) await sql.raw(create).execute(db);
}

export async function down(): Promise<void> {
  // Forward only: keyed by id alone again, a message or stage that shares its id would be lost.
}
