import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * `writer_requests`: the writer's inbox (docs/operations.md, "Repairing one record or a period").
 * A command that must write while another process holds the writer lock (`resync`, `backfill
 * --since`) adds a row here instead of writing, and waits for the writer (`run`, or itself once
 * the lock is free) to serve it: the writer runs the request and fills `outcome`, `result_json`,
 * `error_code` and `error`. The one table a process without the lock writes: a row of ids and
 * dates, never mirror content. Frozen: it names its own types and imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const ts = sql.raw(pg ? 'timestamptz' : 'datetime');
  await db.schema
    .createTable('writer_requests')
    .ifNotExists()
    .addColumn('id', sql.raw(pg ? 'bigserial' : 'integer'), (c) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('params_json', 'text', (c) => c.notNull())
    .addColumn('requested_at', ts, (c) => c.notNull())
    .addColumn('started_at', ts)
    .addColumn('finished_at', ts)
    .addColumn('outcome', 'text')
    .addColumn('result_json', 'text')
    .addColumn('error_code', 'text')
    .addColumn('error', 'text')
    .execute();
  // The writer asks for the unfinished rows at every cycle: an index keeps that one look-up.
  await db.schema.createIndex('writer_requests_pending_idx').ifNotExists().on('writer_requests').columns(['finished_at', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('writer_requests').ifExists().execute();
}
