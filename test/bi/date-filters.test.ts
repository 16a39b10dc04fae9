import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordRun, runBackfill } from '../../src/sync/index.js';
import { parseTimestamp } from '../../src/util/time.js';
import { harness, type Harness } from '../sync/harness.js';
import { databaseOf } from '../../src/store/internal.js';

const COLUMNS: readonly [table: string, column: string][] = [
  ['tickets', 'created_at'],
  ['tickets', 'updated_at'],
  ['ticket_messages', 'created_at'],
  ['events', 'occurred_at'],
  ['deals', 'created_at'],
  ['rpt_tickets', 'created_at'],
  ['rpt_ticket_status_intervals', 'valid_from'],
];

/** Metabase writes zone-less literals in the report time zone (UTC here); the stored text is UTC. */
const literal = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');

/**
 * Issue 7 acceptance, "date filters are right": the filters BI tools generate against the SQLite
 * mirror, counted in SQL and again in JavaScript from the same rows' instants.
 */
describe('date filters on the SQLite mirror', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ sim: { seed: 11, tickets: 150, deals: 40 } });
    await recordRun(h.ctx, 'backfill', (s) => runBackfill(h.ctx, s, { history: 'all' }));
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  const instants = async (table: string, column: string): Promise<number[]> => {
    const r = await sql<{
      v: string;
    }>`SELECT ${sql.ref(column)} AS v FROM ${sql.table(table)} WHERE ${sql.ref(column)} IS NOT NULL`.execute(databaseOf(h.store));
    return r.rows.map((x) => parseTimestamp(x.v));
  };
  const count = async (table: string, where: string): Promise<number> => {
    const r = await sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(table)} WHERE ${sql.raw(where)}`.execute(databaseOf(h.store));
    return Number(r.rows[0]!.n);
  };

  it('every DATETIME value of every table is the 23-char stored form, every DATE value YYYY-MM-DD', async () => {
    h.sim.control.act(30);
    await recordRun(h.ctx, 'sync', () => h.sync());
    const db = databaseOf(h.store);
    const tables = await sql<{
      name: string;
    }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'kysely_%'`.execute(db);
    let datetimes = 0;
    let dates = 0;
    for (const { name } of tables.rows) {
      const cols = await sql<{ name: string; type: string }>`SELECT name, type FROM pragma_table_info(${name})`.execute(db);
      for (const c of cols.rows) {
        const type = c.type.toUpperCase();
        if (type !== 'DATETIME' && type !== 'DATE') continue;
        const bad = await sql<{ n: number; total: number }>`
          SELECT sum(CASE WHEN typeof(${sql.ref(c.name)}) <> 'text' OR ${sql.ref(c.name)} NOT GLOB ${type === 'DATE' ? '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]' : '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]'} THEN 1 ELSE 0 END) AS n,
                 count(*) AS total
          FROM ${sql.table(name)} WHERE ${sql.ref(c.name)} IS NOT NULL`.execute(db);
        expect(Number(bad.rows[0]!.n ?? 0), `${name}.${c.name}`).toBe(0);
        if (type === 'DATE') dates += Number(bad.rows[0]!.total);
        else datetimes += Number(bad.rows[0]!.total);
      }
    }
    expect(datetimes).toBeGreaterThan(1000);
    expect(dates).toBeGreaterThan(10);
  });

  const splitByNow = new Set<string>();
  for (const [table, column] of COLUMNS) {
    it(`${table}.${column}: literal bounds and datetime('now', …) agree with JavaScript`, async () => {
      const all = await instants(table, column);
      expect(all.length).toBeGreaterThan(10);
      const sorted = [...all].sort((a, b) => a - b);
      // A bound inside the data, on a whole hour like the ones Metabase writes ("since 18:00").
      const mid = sorted[Math.floor(sorted.length / 2)]!;
      const hour = Math.floor(mid / 3_600_000) * 3_600_000;
      const since = await count(table, `${column} >= '${literal(hour)}'`);
      expect(since).toBe(all.filter((t) => t >= hour).length);
      const before = await count(table, `${column} < '${literal(hour)}'`);
      expect(before).toBe(all.filter((t) => t < hour).length);
      expect(since + before).toBe(all.length);
      expect(before).toBeGreaterThan(0);
      // A bound with milliseconds compares by time too.
      const exact = sorted[Math.floor(sorted.length / 3)]!;
      expect(await count(table, `${column} > '${new Date(exact).toISOString().slice(0, 23).replace('T', ' ')}'`)).toBe(
        all.filter((t) => t > exact).length,
      );

      // SQLite's own clock arithmetic, as docs/bi.md shows for "older than a day" and "last 24 hours".
      for (const [where, keep] of [
        [`${column} < datetime('now', '-1 day')`, (t: number, now: number) => t < Math.floor((now - 86_400_000) / 1000) * 1000],
        [`${column} >= datetime('now', '-24 hours')`, (t: number, now: number) => t >= Math.floor((now - 86_400_000) / 1000) * 1000],
      ] as const) {
        const from = Date.now();
        const n = await count(table, where);
        const to = Date.now();
        // datetime('now') has whole seconds; a row could only fall between the two clocks read around the query.
        const low = Math.min(all.filter((t) => keep(t, from)).length, all.filter((t) => keep(t, to)).length);
        const high = Math.max(all.filter((t) => keep(t, from)).length, all.filter((t) => keep(t, to)).length);
        expect(n, where).toBeGreaterThanOrEqual(low);
        expect(n, where).toBeLessThanOrEqual(high);
        if (n > 0 && n < all.length) splitByNow.add(`${table}.${column}`);
      }
    });
  }

  it("the datetime('now', …) bounds really cut through the data (the comparisons above were not trivially all or none)", () => {
    expect(splitByNow.size).toBeGreaterThanOrEqual(3);
  });
});
