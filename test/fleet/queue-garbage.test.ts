import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueGarbageWatch, readOldestSnapshot, readQueueGarbage, type QueueTableGarbage } from '../../src/fleet/queue-garbage.js';
import { postgresDialect } from '../helpers/dialects.js';

/**
 * The worker's own check of the queue's tables (src/fleet/queue-garbage.ts), which replaces
 * pg-boss's: the same figures as pg_stat_user_tables for the queue's schema alone, and the two
 * diagnoses on consecutive checks.
 */
describe.skipIf(postgresDialect === null)('vacuum of the job queue, checked on its own tables', () => {
  let drop: () => Promise<void>;
  let pool: pg.Pool;

  beforeAll(async () => {
    const target = await postgresDialect!.newDatabase();
    drop = target.drop;
    pool = new pg.Pool({ connectionString: target.database, max: 1 });
    // The database is dropped with force after pool.end(): a closing client may still hear it.
    pool.on('error', () => undefined);
    // Autovacuum off on the table that gathers dead rows, so nothing but this test vacuums it.
    // pg-boss's shape: job tables named by its queue table, beside tables of its own that are not.
    await pool.query(`create schema q;
      create table q.queue (name text primary key, table_name text not null);
      insert into q.queue values ('wsmirror-slice', 'job_common');
      create table q.job_common (id int primary key, v text) with (autovacuum_enabled = false, autovacuum_vacuum_threshold = 10);
      create table q.job (id int primary key);
      create table q.version (v int);
      create schema other; create table other.job_common (id int)`);
  });

  afterAll(async () => {
    await pool?.end();
    await drop?.();
  });

  // Statistics reach shared memory when a backend flushes them (at most once a second unless forced).
  const churn = async (rows: number) => {
    await pool.query(`insert into q.job_common select g, 'x' from generate_series(1, $1) g on conflict (id) do update set v = excluded.v`, [
      rows,
    ]);
    await pool.query('delete from q.job_common');
    await pool.query('select pg_stat_force_next_flush()');
  };
  const read = async () => {
    await pool.query('select pg_stat_clear_snapshot()');
    return readQueueGarbage(pool, 'q');
  };

  it('reads the queue’s job tables alone, with the figures pg_stat_user_tables gives and the table’s own threshold', async () => {
    await churn(100);
    const mine = await read();
    expect(mine.map((t) => t.table)).toEqual(['job', 'job_common']);
    const { rows } = await pool.query<{ relname: string; n_live_tup: string; n_dead_tup: string }>(
      `select relname, n_live_tup, n_dead_tup from pg_stat_user_tables where schemaname = 'q' and relname like 'job%' order by relname`,
    );
    expect(mine.map((t) => [t.table, t.live, t.dead])).toEqual(rows.map((r) => [r.relname, Number(r.n_live_tup), Number(r.n_dead_tup)]));
    const busy = mine.find((t) => t.table === 'job_common')!;
    expect(busy.dead).toBe(100);
    // The table's own autovacuum_vacuum_threshold (10), the server's scale factor over no live rows.
    expect(busy.budget).toBe(10);
    expect(busy.lastVacuumAt).toBeNull();
  });

  it('warns unvacuumed after three checks over budget with no vacuum, and pinned when a vacuum could not free what a held snapshot keeps', async () => {
    const watch = new QueueGarbageWatch({ pinnedAfterMs: 0 });
    const observe = async () => {
      const [tables, oldest] = [await read(), await readOldestSnapshot(pool)];
      return { found: watch.observe(tables, oldest), tables, oldest };
    };
    await pool.query('vacuum q.job_common');
    expect(await readOldestSnapshot(pool)).toBeNull();
    // An open transaction with a snapshot holds every row deleted after it began.
    const holder = new pg.Client({ connectionString: pool.options.connectionString });
    holder.on('error', () => undefined);
    await holder.connect();
    try {
      await holder.query('begin isolation level repeatable read');
      await holder.query('select count(*) from q.job');
      await churn(50);
      expect((await observe()).found).toEqual([]);
      await churn(50);
      expect((await observe()).found).toEqual([]);
      await churn(50);
      const third = await observe();
      expect(third.found.map((w) => [w.table, w.reason, w.dead])).toEqual([['job_common', 'unvacuumed', 150]]);
      expect(third.oldest).toBeInstanceOf(Date);

      await pool.query('vacuum q.job_common');
      await pool.query('select pg_stat_force_next_flush()');
      const pinned = await observe();
      expect(pinned.found.map((w) => [w.table, w.reason, w.dead])).toEqual([['job_common', 'pinned', 150]]);
      expect(pinned.found[0]!.heldSince).toEqual(pinned.oldest);
      // The same readings, with a holder younger than a minute: a slice's own transaction, not a pin.
      const young = new QueueGarbageWatch();
      young.observe(third.tables, third.oldest);
      expect(young.observe(pinned.tables, pinned.oldest)).toEqual([]);
    } finally {
      await holder.query('rollback').catch(() => undefined);
      await holder.end();
    }

    // The holder gone, a vacuum frees them: under budget, no warning.
    await pool.query('vacuum q.job_common');
    await pool.query('select pg_stat_force_next_flush()');
    const after = await read();
    expect(after.find((t) => t.table === 'job_common')!.dead).toBe(0);
    expect(watch.observe(after, await readOldestSnapshot(pool))).toEqual([]);
  });

  it('does not call a busy queue pinned: more dead rows a minute after a vacuum, with no old snapshot held', () => {
    const watch = new QueueGarbageWatch();
    const t0 = Date.parse('2026-12-02T14:00:00Z');
    const at = (s: number) => new Date(t0 + s * 1000);
    // Seen at 1,000 workspaces: 3,518 dead rows a minute after a vacuum that freed the 2,155 before.
    expect(
      watch.observe([{ table: 'job_common', live: 4000, dead: 2155, budget: 850, lastVacuumAt: at(0) }], at(59.99), t0 + 60_000),
    ).toEqual([]);
    expect(
      watch.observe([{ table: 'job_common', live: 4500, dead: 3518, budget: 950, lastVacuumAt: at(100) }], at(119.99), t0 + 120_000),
    ).toEqual([]);
  });

  it('never warns for a table under its budget, however often it is checked', () => {
    const watch = new QueueGarbageWatch();
    const t: QueueTableGarbage = { table: 'job', live: 1000, dead: 150, budget: 250, lastVacuumAt: null };
    for (let i = 0; i < 4; i++) expect(watch.observe([{ ...t, dead: t.dead + i * 10 }], new Date(0))).toEqual([]);
  });
});
