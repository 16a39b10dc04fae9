import { Migrator, sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMigrations } from '../../migrations/index.js';
import * as m0700 from '../../migrations/0700_owner_keyed_children.js';
import { openStore, type Store } from '../../src/store/index.js';
import { dialects } from '../helpers/dialects.js';
import { databaseOf } from '../../src/store/internal.js';

const migrations = await loadMigrations();

/** Primary-key columns of a table, in key order, and its other index names. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the tables as each migration leaves them
async function keyAndIndexes(db: Kysely<any>, table: string, pg: boolean): Promise<{ key: string[]; indexes: string[] }> {
  if (pg) {
    const key = await sql<{ name: string }>`
      SELECT a.attname AS name FROM pg_constraint c
      JOIN LATERAL unnest(c.conkey) WITH ORDINALITY k(attnum, n) ON true
      JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
      WHERE c.conrelid = to_regclass(${table}::text) AND c.contype = 'p' ORDER BY k.n`.execute(db);
    const idx = await sql<{ name: string }>`SELECT indexname AS name FROM pg_indexes WHERE tablename = ${table}`.execute(db);
    return { key: key.rows.map((r) => r.name), indexes: idx.rows.map((r) => r.name).filter((n) => !/_(pk|pkey)$/.test(n)) };
  }
  const cols = await sql<{ name: string; pk: number }>`SELECT name, pk FROM pragma_table_info(${table})`.execute(db);
  const idx = await sql<{ name: string }>`
    SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ${table} AND sql IS NOT NULL`.execute(db);
  return {
    key: cols.rows
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => c.name),
    indexes: idx.rows.map((r) => r.name),
  };
}

for (const dialect of dialects)
  describe(`migration 0700 keys messages by ticket and stages by pipeline (${dialect.name})`, () => {
    let store: Store | null = null;
    let drop: (() => Promise<void>) | null = null;
    afterEach(async () => {
      await store?.close();
      await drop?.();
      store = null;
    });

    it('keeps every row and index, is safe to run twice, and then holds one id under two owners', async () => {
      const target = await dialect.newDatabase();
      drop = target.drop;
      store = await openStore({ database: target.database });
      const pg = dialect.name === 'postgres';
      const migrator = new Migrator({ db: databaseOf(store), provider: { getMigrations: () => Promise.resolve(migrations) } });
      expect((await migrator.migrateTo('0500_messages_author_covering')).error).toBeUndefined();
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the tables as 0500 left them
      const db = databaseOf(store) as Kysely<any>;
      const at = '2024-05-01 09:00:00.000';
      await db
        .insertInto('tickets')
        .values([{ id: 't1' }, { id: 't2' }])
        .execute();
      await db
        .insertInto('ticket_messages')
        .values([
          { id: 'm1', ticket_id: 't1', body: 'one', is_internal: 0, created_at: at, raw_json: '{"id":"m1"}' },
          { id: 'm2', ticket_id: 't1', body: 'two', is_internal: 1, created_at: at, raw_json: '{"id":"m2"}' },
        ])
        .execute();
      await db
        .insertInto('pipelines')
        .values([{ id: 'p1' }, { id: 'p2' }])
        .execute();
      await db
        .insertInto('stages')
        .values({ id: 's1', pipeline_id: 'p1', name: 'Qualified', position: 1, is_won: 0, is_lost: 0 })
        .execute();
      const before = { messages: await keyAndIndexes(db, 'ticket_messages', pg), stages: await keyAndIndexes(db, 'stages', pg) };
      expect(before.messages.key).toEqual(['id']);

      expect((await migrator.migrateTo('0700_owner_keyed_children')).error).toBeUndefined();
      await m0700.up(db); // a run cut after its commit and repeated changes nothing
      const after = { messages: await keyAndIndexes(db, 'ticket_messages', pg), stages: await keyAndIndexes(db, 'stages', pg) };
      expect(after.messages.key).toEqual(['ticket_id', 'id']);
      expect(after.stages.key).toEqual(['pipeline_id', 'id']);
      expect(after.messages.indexes.sort()).toEqual(before.messages.indexes.sort());
      expect(after.stages.indexes.sort()).toEqual(before.stages.indexes.sort());
      const messages = await db.selectFrom('ticket_messages').select(['id', 'ticket_id', 'body', 'is_internal']).orderBy('id').execute();
      expect(messages.map((m) => [m.id, m.ticket_id, m.body, Number(m.is_internal)])).toEqual([
        ['m1', 't1', 'one', 0],
        ['m2', 't1', 'two', 1],
      ]);

      // One id under two owners, as the upstream may send it.
      await db.insertInto('ticket_messages').values({ id: 'm1', ticket_id: 't2', body: 'other', is_internal: 0 }).execute();
      await db.insertInto('stages').values({ id: 's1', pipeline_id: 'p2', name: 'Won', position: 4, is_won: 1, is_lost: 0 }).execute();
      expect(await db.selectFrom('ticket_messages').select('ticket_id').where('id', '=', 'm1').orderBy('ticket_id').execute()).toEqual([
        { ticket_id: 't1' },
        { ticket_id: 't2' },
      ]);
      expect(
        (await db.selectFrom('stages').select('name').where('id', '=', 's1').orderBy('pipeline_id').execute()).map((s) => s.name),
      ).toEqual(['Qualified', 'Won']);
      // The cascade from the parent still holds after SQLite's rebuild.
      await db.deleteFrom('tickets').where('id', '=', 't2').execute();
      expect(await db.selectFrom('ticket_messages').select('id').where('ticket_id', '=', 't2').execute()).toEqual([]);
      expect((await store.migrate()).applied).toContain('0800_dirty_failed_reads');
    });
  });
