import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshRptTables } from '../../src/report/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { recordRun, runBackfill, type SyncContext } from '../../src/sync/index.js';
import { dialects, type Dialect } from '../helpers/dialects.js';
import { harness, type Harness } from '../sync/harness.js';
import { databaseOf } from '../../src/store/internal.js';

interface Block {
  dialect: 'sqlite' | 'postgres';
  text: string;
  /** Offset in the document, to pair an example's two versions. */
  at: number;
}

/** The SQL blocks of docs/bi.md, read from the markdown itself so the doc and this test cannot drift. */
const DOC = readFileSync(join(import.meta.dirname, '../../docs/bi.md'), 'utf8');
const BLOCKS: Block[] = [...DOC.matchAll(/```sql (sqlite|postgres)\n([\s\S]*?)```/g)].map((m) => ({
  dialect: m[1] as Block['dialect'],
  text: m[2]!,
  at: m.index,
}));
const EXAMPLES_AT = DOC.indexOf('## Five example queries');

/**
 * The clock the relative filters see, pinned so both dialects answer for the same moment: SQLite's
 * 'now' and PostgreSQL's now() are replaced by one literal (a minute after the data's newest time).
 */
function pinClock(block: Block, nowIso: string): string {
  return block.dialect === 'sqlite'
    ? block.text.replaceAll("'now'", `'${nowIso.slice(0, 19).replace('T', ' ')}'`)
    : block.text.replaceAll('now()', `CAST('${nowIso}' AS timestamptz)`);
}

/** One statement per `;` at a line end (the examples hold no such `;` inside a literal). */
const statements = (text: string) =>
  text
    .split(/;\s*$/m)
    .map((s) => s.trim())
    .filter((s) => s.length > 0 && !/^(--[^\n]*\n?)+$/.test(s));

const normal = (rows: Record<string, unknown>[]) =>
  rows.map((r) =>
    Object.fromEntries(
      Object.entries(r).map(([k, v]) => [
        k,
        typeof v === 'boolean' ? Number(v) : typeof v === 'number' ? Math.round(v * 1e6) / 1e6 : typeof v === 'bigint' ? Number(v) : v,
      ]),
    ),
  );

describe('every SQL example in docs/bi.md runs on its dialect', () => {
  const stores = new Map<Dialect['name'], Store>();
  const drops: (() => Promise<void>)[] = [];
  let h: Harness;
  let now: string;

  beforeAll(async () => {
    // One workspace (the simulator's clock is the wall clock, so "last 30 days" holds data),
    // imported into each dialect and refreshed with the same clock.
    h = await harness({ sim: { seed: 5, tickets: 200, deals: 60 } });
    now = h.sim.control.now().toISOString();
    for (const dialect of dialects) {
      const target = await dialect.newDatabase();
      drops.push(target.drop);
      const store = await openStore({ database: target.database });
      await store.migrate();
      const ctx: SyncContext = { ...h.ctx, store };
      await recordRun(ctx, 'backfill', (s) => runBackfill(ctx, s, { history: 'all' }));
      await refreshRptTables(store, { tickets: 'all', deals: 'all' }, { now: new Date(now) });
      stores.set(dialect.name, store);
    }
  }, 180_000);
  afterAll(async () => {
    for (const s of stores.values()) await s.close();
    for (const drop of drops) await drop();
    await h?.close();
  });

  const run = async (store: Store, text: string): Promise<Record<string, unknown>[]> => {
    let rows: Record<string, unknown>[] = [];
    for (const statement of statements(text)) rows = (await sql.raw<Record<string, unknown>>(statement).execute(databaseOf(store))).rows;
    return rows;
  };

  it('the document holds the examples this test expects', () => {
    expect(BLOCKS.filter((b) => b.dialect === 'sqlite').length).toBe(15);
    expect(BLOCKS.filter((b) => b.dialect === 'postgres').length).toBe(16);
  });

  it('each SQLite block runs on a SQLite mirror and returns rows', async () => {
    const store = stores.get('sqlite')!;
    for (const block of BLOCKS.filter((b) => b.dialect === 'sqlite')) {
      const rows = await run(store, pinClock(block, now));
      expect(rows.length, block.text).toBeGreaterThan(0);
    }
  });

  it.skipIf(!dialects.some((d) => d.name === 'postgres'))(
    'each PostgreSQL block runs on a PostgreSQL mirror, and both versions of an example give the same rows',
    async () => {
      const pg = stores.get('postgres')!;
      const lite = stores.get('sqlite')!;
      for (const block of BLOCKS.filter((b) => b.dialect === 'postgres')) {
        if (block.text.includes('CREATE ROLE')) {
          // The GRANT example, under a role name of its own (roles are cluster-wide), then undone.
          const role = `bi_reader_t${process.pid}`;
          await run(pg, block.text.replaceAll('bi_reader', role));
          const can = await sql<{ ok: boolean }>`SELECT has_table_privilege(${role}, 'rpt_tickets', 'SELECT') AS ok,
          has_table_privilege(${role}, 'rpt_tickets', 'INSERT') AS w`.execute(databaseOf(pg));
          expect(can.rows[0]).toEqual({ ok: true, w: false });
          await sql.raw(`DROP OWNED BY ${role}`).execute(databaseOf(pg));
          await sql.raw(`DROP ROLE ${role}`).execute(databaseOf(pg));
          continue;
        }
        expect((await run(pg, pinClock(block, now))).length, block.text).toBeGreaterThan(0);
      }
      // Pairs: the "last 24 hours" example, and each SQLite block of the five examples with the
      // PostgreSQL block right after it.
      const pairs: [Block, Block][] = [];
      const first = (d: Block['dialect']) => BLOCKS.find((b) => b.dialect === d)!;
      pairs.push([first('sqlite'), first('postgres')]);
      const examples = BLOCKS.filter((b) => b.at > EXAMPLES_AT);
      for (let i = 0; i + 1 < examples.length; i++) {
        if (examples[i]!.dialect === 'sqlite' && examples[i + 1]!.dialect === 'postgres') pairs.push([examples[i]!, examples[i + 1]!]);
      }
      expect(pairs.length).toBe(10);
      for (const [s, p] of pairs) {
        const a = normal(await run(lite, pinClock(s, now)));
        const b = normal(await run(pg, pinClock(p, now)));
        expect(b, `${s.text}\n--- vs ---\n${p.text}`).toEqual(a);
      }
    },
  );

  it('the ISO week labels of example 1 are ISO 8601 weeks', async () => {
    const block = BLOCKS.find((b) => b.at > EXAMPLES_AT && b.dialect === 'sqlite')!;
    const expr = /printf\('%s-W%02d'.*?\) AS week/s.exec(block.text)![0].replace(/ AS week$/, '');
    const days = [
      '2020-12-31',
      '2021-01-01',
      '2021-01-03',
      '2021-01-04',
      '2024-12-29',
      '2024-12-30',
      '2026-01-01',
      '2027-01-03',
      '2027-01-04',
    ];
    const lite = stores.get('sqlite')!;
    for (const day of days) {
      const r = await sql
        .raw<{ week: string }>(`SELECT ${expr} AS week FROM (SELECT date('${day}', '-3 days', 'weekday 4') AS thursday)`)
        .execute(databaseOf(lite));
      expect(r.rows[0]!.week, day).toBe(isoWeek(day));
    }
  });
});

/** ISO 8601 week of a UTC day, computed independently: the week holding that day's Thursday. */
function isoWeek(day: string): string {
  const d = new Date(`${day}T00:00:00Z`);
  const thursday = new Date(d.getTime() + (3 - ((d.getUTCDay() + 6) % 7)) * 86_400_000);
  const jan1 = Date.UTC(thursday.getUTCFullYear(), 0, 1);
  const week = Math.floor((thursday.getTime() - jan1) / (7 * 86_400_000)) + 1;
  return `${thursday.getUTCFullYear()}-W${String(week).padStart(2, '0')}`;
}
