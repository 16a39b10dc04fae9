import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { RPT_TABLE_NAMES } from '../../src/report/index.js';
import { countedTables } from '../../src/store/index.js';
import { emptyStats, runBackfill } from '../../src/sync/index.js';
import { dialects, withTransactionElsewhere } from '../helpers/dialects.js';
import { harness as makeHarness, type Harness } from './harness.js';
import { databaseOf } from '../../src/store/internal.js';
import { TIDY_VACUUM_MIN_PAGES } from '../../src/store/tidy-tables.js';

/**
 * A backfill is a bulk load: on PostgreSQL it ends with ANALYZE (and VACUUM, of a table of 1 MiB or
 * more) of the tables it filled and of the rebuilt rpt_ tables, so the next cycles are planned from statistics that describe the
 * rows and index-only scans need not visit them (src/store/tidy-tables.ts). SQLite keeps planning
 * without statistics, on purpose.
 */
for (const dialect of dialects)
  describe(`statistics after a backfill on ${dialect.name}`, () => {
    let h: Harness | null = null;
    afterEach(async () => {
      await h?.close();
      h = null;
    });

    /** The catalog's view of a table: rows the planner expects, and pages the visibility map marks all-visible. */
    async function catalog(hh: Harness, table: string): Promise<{ reltuples: number; relpages: number; relallvisible: number }> {
      const r = await sql<{ reltuples: number; relpages: number; relallvisible: number }>`
        select c.reltuples::float8 as reltuples, c.relpages::int as relpages, c.relallvisible::int as relallvisible
        from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = current_schema() and c.relname = ${table}`.execute(databaseOf(hh.store));
      return r.rows[0]!;
    }

    const count = async (hh: Harness, table: string) =>
      Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(databaseOf(hh.store))).rows[0]!.n);

    it('leaves the planner an exact picture of every table the backfill filled and rebuilt', async () => {
      // 600 tickets: tickets, their messages and their daily rows pass TIDY_VACUUM_MIN_PAGES on PostgreSQL.
      h = await makeHarness({ sim: { seed: 47, tickets: 600, deals: 40 }, pageSize: 25, dialect });
      const hh = h;
      if (dialect.name === 'sqlite') {
        // Before and after: a mirror wsmirror made has no statistics table at all.
        await hh.backfill();
        const stat = await sql`select name from sqlite_master where name like 'sqlite_stat%'`.execute(databaseOf(hh.store));
        expect(stat.rows).toEqual([]);
        expect(await hh.diff()).toEqual([]);
        return;
      }
      // A fresh table's catalog says "never analyzed" (-1) before anything is written.
      expect((await catalog(hh, 'ticket_messages')).reltuples).toBe(-1);
      await hh.backfill();
      for (const table of [...countedTables(), ...RPT_TABLE_NAMES]) {
        const rows = await count(hh, table);
        const seen = await catalog(hh, table);
        // Small tables are analyzed whole, so the estimate is the count itself.
        expect(seen.reltuples, table).toBe(rows);
      }
      // Tables of TIDY_VACUUM_MIN_PAGES or more are vacuumed too (their visibility map set); the
      // smaller ones only analyzed.
      const big: string[] = [];
      for (const table of [...countedTables(), ...RPT_TABLE_NAMES]) {
        const seen = await catalog(hh, table);
        if (seen.relpages >= TIDY_VACUUM_MIN_PAGES) big.push(table);
        expect(seen.relallvisible > 0, table).toBe(seen.relpages >= TIDY_VACUUM_MIN_PAGES);
      }
      expect(big).toEqual(expect.arrayContaining(['tickets', 'ticket_messages']));
      expect(await hh.diff()).toEqual([]);
    });

    it('marks the pages all-visible while another database holds a transaction open', async ({ skip }) => {
      skip(dialect.name === 'sqlite', 'PostgreSQL only: SQLite has no visibility map nor snapshots of other databases');
      // A snapshot taken in the mirror's database while another database's transaction is open
      // carries that transaction's id as its xmin, and holds back what VACUUM may call visible to
      // all. Each table's VACUUM must therefore start while no snapshot of the mirror's database
      // is held: not beside another table's ANALYZE, nor beside a connection starting up. CI runs
      // test files in parallel on one server, which is how this was first seen.
      // 600 tickets: the tables vacuumed (TIDY_VACUUM_MIN_PAGES or more) include tickets and messages.
      h = await makeHarness({ sim: { seed: 49, tickets: 600, deals: 40 }, pageSize: 25, dialect });
      const hh = h;
      await withTransactionElsewhere(async () => {
        await hh.backfill();
        const vacuumed: string[] = [];
        for (const table of [...countedTables(), ...RPT_TABLE_NAMES]) {
          const seen = await catalog(hh, table);
          if (seen.relpages < TIDY_VACUUM_MIN_PAGES) continue;
          vacuumed.push(table);
          expect(seen.relallvisible, table).toBe(seen.relpages);
        }
        expect(vacuumed).toEqual(expect.arrayContaining(['tickets', 'ticket_messages']));
      });
    });

    it('does not tidy after a backfill a stop ended early: the rest is still to come', async () => {
      // 15 ticket pages: SQLite commits up to 10 in one transaction, so the stop lands between groups.
      const stop = new AbortController();
      h = await makeHarness({
        sim: { seed: 48, tickets: 300, deals: 10 },
        pageSize: 20,
        dialect,
        hooks: { onPage: (kind) => (kind === 'tickets' ? stop.abort() : undefined) },
      });
      const hh = h;
      const state = await runBackfill({ ...hh.ctx, stopSignal: stop.signal }, emptyStats());
      expect(state.phase).toBe('tickets');
      if (dialect.name === 'postgres') expect((await catalog(hh, 'ticket_messages')).reltuples).toBe(-1);
      // Run on to its end: then it tidies.
      await hh.backfill();
      if (dialect.name === 'postgres') expect((await catalog(hh, 'ticket_messages')).reltuples).toBe(await count(hh, 'ticket_messages'));
      expect(await hh.diff()).toEqual([]);
    });
  });
