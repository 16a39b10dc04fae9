import { sql } from 'kysely';
import { join } from 'node:path';
import { refreshRptTables, RPT_TABLE_NAMES } from '../../src/report/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import type { Dialect } from '../helpers/dialects.js';
import { afterEach, beforeEach } from 'vitest';
import { forwardTo } from '../helpers/forward.js';
import { rows } from './oracle.js';
import { buildScenario, NOW } from './scenario.js';
import { databaseOf } from '../../src/store/internal.js';

/** A fresh, migrated mirror of the dialect; close() also drops the database. */
export async function reportStore(dialect: Dialect): Promise<{ store: Store; close: () => Promise<void> }> {
  const target = await dialect.newDatabase();
  const store = await openStore({ database: target.database });
  await store.migrate();
  return {
    store,
    close: async () => {
      await store.close();
      await target.drop();
    },
  };
}

/**
 * For each test of the calling describe block: a fresh mirror of the dialect holding the
 * hand-written scenario, refreshed in full at NOW; dropped after the test. The returned store
 * forwards to the current test's.
 */
export function useScenarioStore(dialect: Dialect): Store {
  let current: { store: Store; close(): Promise<void> } | null = null;
  beforeEach(async () => {
    current = await reportStore(dialect);
    await buildScenario(current.store);
    await refreshRptTables(current.store, { tickets: 'all', deals: 'all' }, { now: NOW });
  });
  afterEach(async () => {
    await current?.close();
  });
  return forwardTo(() => {
    if (!current) throw new Error('the scenario store opens in beforeEach; use it inside a test');
    return current.store;
  });
}

/**
 * Every rpt_ table as sorted text lines, one per row. SQLite: each value through quote() so a type
 * difference (1 vs 1.0) shows. PostgreSQL: quote_nullable() (column types are fixed there, and
 * float8 text is the shortest exact form). refreshed_at of the per-record tables is left out: a
 * row keeps the time it was last written by design, while a full rebuild rewrites every row.
 */
export async function dump(store: Store): Promise<Record<string, string[]>> {
  const pg = store.dialect === 'postgres';
  const out: Record<string, string[]> = {};
  for (const table of RPT_TABLE_NAMES) {
    const cols = pg
      ? (
          await rows(
            store,
            `SELECT column_name AS name FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name = '${table}' ORDER BY ordinal_position`,
          )
        ).map((c) => String(c.name))
      : (await rows(store, `PRAGMA table_info(${table})`)).map((c) => String(c.name));
    const perRecord = table === 'rpt_tickets' || table === 'rpt_deals';
    const exprs = cols
      .map((c) => (perRecord && c === 'refreshed_at' ? "'-'" : pg ? `quote_nullable(${c})` : `quote(${c})`))
      .join(` || '|' || `);
    out[table] = (await rows(store, `SELECT ${exprs} AS line FROM ${table} ORDER BY 1`)).map((r) => String(r.line));
  }
  return out;
}

let copies = 0;

/**
 * The dump a full rebuild at `now` gives, leaving the store's own rpt_ tables as they were.
 * SQLite: the rebuild runs on a copy of the file. PostgreSQL: the rpt_ tables are saved to plain
 * tables (a temp table would live on one pooled connection only), rebuilt, dumped and put back.
 */
export async function fullRebuildDump(store: Store, now: Date, dir: string): Promise<Record<string, string[]>> {
  if (store.dialect !== 'postgres') {
    const copy = join(dir, `copy${++copies}.sqlite`);
    await sql.raw(`VACUUM INTO '${copy}'`).execute(databaseOf(store));
    const full = await openStore({ database: copy });
    try {
      await refreshRptTables(full, { tickets: 'all', deals: 'all' }, { now });
      return await dump(full);
    } finally {
      await full.close();
    }
  }
  for (const t of RPT_TABLE_NAMES) await sql.raw(`CREATE TABLE bak_${t} AS SELECT * FROM ${t}`).execute(databaseOf(store));
  try {
    await refreshRptTables(store, { tickets: 'all', deals: 'all' }, { now });
    return await dump(store);
  } finally {
    await databaseOf(store)
      .transaction()
      .execute(async (trx) => {
        for (const t of RPT_TABLE_NAMES) {
          await sql.raw(`DELETE FROM ${t}`).execute(trx);
          await sql.raw(`INSERT INTO ${t} SELECT * FROM bak_${t}`).execute(trx);
          await sql.raw(`DROP TABLE bak_${t}`).execute(trx);
        }
      });
  }
}
