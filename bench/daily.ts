import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { refreshRptTables } from '../src/report/index.js';
import { openStore } from '../src/store/index.js';
import { databaseOf } from '../src/store/internal.js';
import { buildMirror, changedIds, NOW } from './reporting.js';

/**
 * The daily state table at size (docs/schema.md, "Daily state"): the reporting bench's mirror
 * (50,000 tickets over a year, 10,000 deals, with history), a full build of every rpt_ table with
 * the default 90-day window, then the refresh after a cycle that changed 100 tickets and 20 deals
 * (each gets a status change in its history), and the refresh when the day turns with nothing
 * changed (every live record's rows move forward a day). SQLite; not part of `npm run bench`'s
 * default parts: `npm run build && node dist/bench/daily.js`.
 */

export interface DailyFigures {
  fullRefreshMs: number;
  fullSteps: Record<string, number>;
  changedRefreshMs: number;
  changedSteps: Record<string, number>;
  nextDayRefreshMs: number;
  nextDaySteps: Record<string, number>;
  rows: Record<string, number>;
  /** This process's CPU time (user + system) of each refresh: on a shared machine the wall time also waits for the disk. */
  cpuMs: { full: number; changed: number; nextDay: number };
  /** Bytes of each table with its indexes (SQLite's dbstat). */
  bytes: Record<string, number>;
}

const TABLES = ['rpt_ticket_daily', 'rpt_ticket_versions', 'rpt_deal_daily', 'rpt_deal_versions'];

function sizes(database: string): { rows: Record<string, number>; bytes: Record<string, number> } {
  const db = new Database(database, { readonly: true });
  const rows: Record<string, number> = {};
  const bytes: Record<string, number> = {};
  for (const t of TABLES) {
    rows[t] = (db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n;
    const b = db.prepare(`SELECT sum(pgsize) AS b FROM dbstat WHERE name IN (SELECT name FROM sqlite_master WHERE tbl_name = ?)`);
    bytes[t] = (b.get(t) as { b: number }).b;
  }
  db.close();
  return { rows, bytes };
}

export async function benchDaily(): Promise<DailyFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-bench-daily-'));
  const database = join(dir, 'mirror.sqlite');
  try {
    await buildMirror(database);
    const store = await openStore({ database });
    const cpu = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
      const before = process.cpuUsage();
      const out = await work();
      const used = process.cpuUsage(before);
      return [out, Math.round((used.user + used.system) / 1000)];
    };
    const [full, fullCpu] = await cpu(() => refreshRptTables(store, { tickets: 'all', deals: 'all' }, { now: NOW }));
    const { tickets, deals } = changedIds();
    const at = new Date(NOW.getTime() - 60_000).toISOString();
    const db = databaseOf(store);
    await db
      .updateTable('tickets')
      .set({ status: 'open', updated_at: at })
      .where('id', 'in', [...tickets])
      .execute();
    await db
      .insertInto('ticket_history')
      .values(
        [...tickets].map((id) => ({
          ticket_id: id,
          field: 'status',
          from_value: 'solved',
          to_value: 'open',
          changed_at: at,
          source: 'observed',
        })),
      )
      .execute();
    await db
      .updateTable('deals')
      .set({ amount_cents: 12345, amount: '123.45' })
      .where('id', 'in', [...deals])
      .execute();
    const [changed, changedCpu] = await cpu(() => refreshRptTables(store, { tickets, deals }, { now: NOW }));
    const next = new Date(NOW.getTime() + 86_400_000);
    const [nextDay, nextDayCpu] = await cpu(() => refreshRptTables(store, { tickets: new Set(), deals: new Set() }, { now: next }));
    await store.close();
    return {
      fullRefreshMs: full.durationMs,
      fullSteps: full.steps,
      changedRefreshMs: changed.durationMs,
      changedSteps: changed.steps,
      nextDayRefreshMs: nextDay.durationMs,
      nextDaySteps: nextDay.steps,
      cpuMs: { full: fullCpu, changed: changedCpu, nextDay: nextDayCpu },
      ...sizes(database),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchDaily().then(
    (r) => console.log(JSON.stringify(r, null, 2)),
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
