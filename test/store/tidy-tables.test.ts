import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { dialects, withTransactionElsewhere } from '../helpers/dialects.js';
import { databaseOf } from '../../src/store/internal.js';
import { SYNCED, deal, ticket, useDialectStore, upsertOne } from './fixtures.js';
import { TIDY_VACUUM_MIN_PAGES } from '../../src/store/tidy-tables.js';

// The tidy after a bulk load (src/store/tidy-tables.ts): a VACUUM (of a table of TIDY_VACUUM_MIN_PAGES
// or more), then an ANALYZE, per table, two at a time on PostgreSQL; nothing on SQLite.
// test/sync/tidy-tables.test.ts covers it after a backfill. The VACUUM's own cases pass
// vacuumMinPages 0, so that a few rows are vacuumed too.
for (const dialect of dialects) {
  describe(`tidying after a bulk load (${dialect.name})`, () => {
    const store = useDialectStore(dialect);

    /** Rows the planner expects (-1: never analyzed), from PostgreSQL's catalog. */
    async function analyzedRows(table: string): Promise<number> {
      const r = await sql<{ reltuples: number }>`
        select c.reltuples::float8 as reltuples from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = current_schema() and c.relname = ${table}`.execute(databaseOf(store));
      return r.rows[0]!.reltuples;
    }

    async function fill(): Promise<void> {
      await store.transaction(async (tx) => {
        for (const id of ['t1', 't2', 't3']) await upsertOne(tx, 'ticket', ticket({ id, number: Number(id.slice(1)) }), SYNCED);
        await upsertOne(tx, 'deal', deal({ id: 'd1' }), SYNCED);
      });
    }

    const noTidy = 'this database has no tidy after a bulk load (SQLite: store.capabilities.tidiesAfterBulkLoad is false)';

    it('analyzes every table it is given, each on its own statement', async ({ skip }) => {
      await fill();
      const tables = ['tickets', 'ticket_messages', 'ticket_tags', 'deals', 'users'];
      const outcome = await store.afterBulkLoad(tables);
      expect(outcome !== null).toBe(store.capabilities.tidiesAfterBulkLoad);
      if (outcome === null) return skip(noTidy);
      // The second look runs alone, and nothing else holds a snapshot in this database.
      expect(outcome.notAllVisible).toEqual([]);
      const counts = await Promise.all(
        tables.map(async (t) =>
          Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(t)}`.execute(databaseOf(store))).rows[0]!.n),
        ),
      );
      expect(await Promise.all(tables.map(analyzedRows))).toEqual(counts);
    });

    it('vacuums a table of TIDY_VACUUM_MIN_PAGES or more, and only analyzes a smaller one', async ({ skip }) => {
      skip(!store.capabilities.tidiesAfterBulkLoad, noTidy);
      await fill();
      const db = databaseOf(store);
      await sql`create table bulk_scratch (x text)`.execute(db);
      // Over 1 MiB of rows TOAST leaves in line (1,000 bytes each): 190 pages or so.
      await sql`insert into bulk_scratch select repeat(md5(i::text), 31) from generate_series(1, 1500) i`.execute(db);
      const outcome = await store.afterBulkLoad(['bulk_scratch', 'tickets']);
      expect(outcome).toMatchObject({ analyzedOnly: ['tickets'], notAllVisible: [] });
      const pages = async (table: string) =>
        (
          await sql<{ relpages: number; relallvisible: number }>`
            select c.relpages::int as relpages, c.relallvisible::int as relallvisible from pg_class c
            join pg_namespace n on n.oid = c.relnamespace where n.nspname = current_schema() and c.relname = ${table}`.execute(db)
        ).rows[0]!;
      const big = await pages('bulk_scratch');
      expect(big.relpages).toBeGreaterThanOrEqual(TIDY_VACUUM_MIN_PAGES);
      expect(big.relallvisible).toBe(big.relpages);
      // Analyzed (the planner has its rows) but not vacuumed (no visibility map set).
      expect(await analyzedRows('tickets')).toBe(3);
      expect((await pages('tickets')).relallvisible).toBe(0);
      expect(await analyzedRows('bulk_scratch')).toBe(1500);
    });

    it('vacuums again a table a snapshot kept from being marked all-visible, and says which stay so', async ({ skip }) => {
      skip(!store.capabilities.tidiesAfterBulkLoad, noTidy);
      // A transaction open in another database, older than the rows written next, and a snapshot
      // in the mirror's own database, whose xmin is that transaction: no VACUUM may mark the rows'
      // pages all-visible while the snapshot is held, the second look included.
      await withTransactionElsewhere(async () => {
        await fill();
        const held = await databaseOf(store)
          .connection()
          .execute(async (reader) => {
            await sql`begin isolation level repeatable read`.execute(reader);
            await sql`select 1`.execute(reader);
            try {
              return await store.afterBulkLoad(['tickets', 'deals'], { vacuumMinPages: 0 });
            } finally {
              await sql`rollback`.execute(reader);
            }
          });
        expect(held).toEqual({ vacuumedAgain: ['tickets', 'deals'], notAllVisible: ['tickets', 'deals'], analyzedOnly: [] });
      });
      // Once both are gone, they are marked (by one pass, or by the second look should a test file
      // beside this one hold a transaction open as the two VACUUMs start).
      expect((await store.afterBulkLoad(['tickets', 'deals'], { vacuumMinPages: 0 }))?.notAllVisible).toEqual([]);
    });

    it('throws the first failure only once no statement of its own is still running', async ({ skip }) => {
      skip(!store.capabilities.tidiesAfterBulkLoad, noTidy);
      await fill();
      const tables = ['tickets', 'no_such_table', 'ticket_messages', 'deals', 'users', 'contacts'];
      await expect(store.afterBulkLoad(tables, { vacuumMinPages: 0 })).rejects.toThrow(/no_such_table/);
      // Whatever ran beside the failed statement has finished: nothing is left vacuuming behind the caller.
      const running = await sql<{ n: number }>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid() and state = 'active' and query ilike 'vacuum%'`.execute(
        databaseOf(store),
      );
      expect(running.rows[0]!.n).toBe(0);
      expect(await analyzedRows('tickets')).toBe(3);
    });
  });
}
