import { sql } from 'kysely';
import type { Store } from '../../src/store/index.js';
import { RPT_TABLES } from '../../migrations/0100_reporting.js';
import { fromDbTimestamp, parseTimestamp } from '../../src/util/time.js';
import { databaseOf } from '../../src/store/internal.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** percentile_cont in plain JS (PostgreSQL's definition), the tests' independent reference. */
export function percentileCont(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const v = [...values].sort((a, b) => a - b);
  const pos = (v.length - 1) * p;
  const lo = v[Math.floor(pos)] as number;
  const hi = v[Math.ceil(pos)] as number;
  return lo + (hi - lo) * (pos - Math.floor(pos));
}

export const MIN = 60_000;
export const DAY = 86_400_000;
export const minutes = (a: string, b: string) => (parseTimestamp(b) - parseTimestamp(a)) / MIN;
export const days = (a: string, b: string) => (parseTimestamp(b) - parseTimestamp(a)) / DAY;

/** rpt_ columns declared numeric(20,2) in PostgreSQL, which the store returns as exact decimal text. */
const MONEY = new Set(Object.values(RPT_TABLES).flatMap((t) => t.columns.filter(([, k]) => k === 'money').map(([c]) => c)));

const STORED_TS = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/;

/**
 * Rows in one shape for both dialects, so one expectation serves both: a PostgreSQL boolean becomes
 * 1/0, a money column's decimal text the number SQLite stores (both exact: the nearest double to
 * the decimal in either case), and a stored timestamp (docs/schema.md) the ISO text the
 * expectations are written in. The stored form itself is checked by test/bi.
 */
export async function rows(store: Store, query: string): Promise<any[]> {
  const out = (await sql.raw<any>(query).execute(databaseOf(store))).rows;
  return out.map((r: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(r).map(([k, v]) => [
        k,
        typeof v === 'boolean'
          ? Number(v)
          : MONEY.has(k) && typeof v === 'string'
            ? Number(v)
            : typeof v === 'string' && STORED_TS.test(v)
              ? fromDbTimestamp(v)
              : v,
      ]),
    ),
  );
}

/** Every rpt_ row, keyed for comparison (refreshed_at left out: it differs between refreshes by design). */
export async function snapshot(store: Store, tables: readonly string[]): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const t of tables) {
    const r = await rows(store, `SELECT * FROM ${t}`);
    out[t] = r
      .map((x) => {
        const { refreshed_at: _r, ...rest } = x;
        return JSON.stringify(rest);
      })
      .sort();
  }
  return out;
}
