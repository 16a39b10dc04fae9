import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import pg from 'pg';
import { refreshRptTables, RPT_TABLE_NAMES } from '../src/report/index.js';
import { openStore, type Store } from '../src/store/index.js';
import {
  buildMirror,
  changedIds,
  FILTERED,
  incrementalEqualsFull,
  NOW,
  printRefreshAndViews,
  type ReportingFigures,
  type TableTimings,
} from './reporting.js';
import { databaseOf } from '../src/store/internal.js';

/** The reporting figures on PostgreSQL, plus the time to copy the SQLite mirror over and ANALYZE it. */
export interface ReportingPostgresFigures extends ReportingFigures {
  copyMs: number;
  analyzeMs: number;
}

/**
 * The reporting benchmark on PostgreSQL: the SQLite mirror of reporting.ts (50,000 tickets,
 * 250,000 messages, 10,000 deals with history) is built as there, then every mirror table is copied
 * into a fresh PostgreSQL database (`wsmirror_bench_<pid>` on the server of `url`, dropped at the
 * end) through a migrated store, in parameterised multi-row INSERTs, and ANALYZEd. Then the same
 * steps as on SQLite are timed: a full refresh, an incremental refresh after 100 tickets and 20
 * deals change, a sync-health-only refresh, and `SELECT *` plus a filtered query per rpt_ table.
 *
 * Run: `WSMIRROR_BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test npm run bench`, or
 * `node dist/bench/reporting-pg.js <url>` for this part alone. The role needs CREATEDB.
 */

/** PostgreSQL's limit on bind parameters per statement. */
const MAX_PARAMS = 65_535;
const MAX_BATCH_ROWS = 5_000;
/** Parents before children (foreign keys are enforced); tables not listed follow in name order. */
const COPY_ORDER = ['users', 'contacts', 'companies', 'tickets', 'pipelines', 'stages', 'deals'];

const ms = (t: number) => Math.round((performance.now() - t) * 10) / 10;

function databaseUrl(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * Copies every mirror table (not rpt_, not the migration bookkeeping) from the SQLite file into
 * the migrated PostgreSQL database, one transaction. Booleans go from 0/1 to true/false, JSON text
 * goes as is; serial ids are copied and their sequences moved past them.
 */
async function copyMirror(sqliteFile: string, client: pg.Client): Promise<Record<string, number>> {
  const source = new Database(sqliteFile, { readonly: true });
  const copied: Record<string, number> = {};
  try {
    const cols = await client.query<{ table_name: string; column_name: string; data_type: string; serial: boolean }>(
      `SELECT table_name, column_name, data_type, coalesce(column_default LIKE 'nextval(%', false) AS serial
       FROM information_schema.columns
       WHERE table_schema = current_schema() AND table_name NOT LIKE 'rpt\\_%' AND table_name NOT LIKE 'kysely\\_%'
       ORDER BY table_name, ordinal_position`,
    );
    const tables = new Map<string, { name: string; bool: boolean; serial: boolean }[]>();
    for (const c of cols.rows) {
      if (!tables.has(c.table_name)) tables.set(c.table_name, []);
      tables.get(c.table_name)!.push({ name: c.column_name, bool: c.data_type === 'boolean', serial: c.serial });
    }
    const order = [...COPY_ORDER.filter((t) => tables.has(t)), ...[...tables.keys()].filter((t) => !COPY_ORDER.includes(t)).sort()];
    await client.query('BEGIN');
    for (const table of order) {
      const columns = tables.get(table)!;
      const sqliteColumns = new Set((source.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name));
      if (sqliteColumns.size === 0) continue;
      const missing = columns.filter((c) => !sqliteColumns.has(c.name)).map((c) => c.name);
      if (missing.length > 0) throw new Error(`${table}: columns ${missing.join(', ')} missing in the SQLite mirror`);
      const names = columns.map((c) => c.name);
      const bools = columns.map((c) => c.bool);
      const batchRows = Math.min(MAX_BATCH_ROWS, Math.floor(MAX_PARAMS / names.length));
      const head = `INSERT INTO ${table} (${names.map((n) => `"${n}"`).join(', ')}) VALUES `;
      const tuple = (row: number) => `(${names.map((_, i) => `$${row * names.length + i + 1}`).join(', ')})`;
      let full: string | undefined; // the statement text for a full batch, built once
      let params: unknown[] = [];
      let rows = 0;
      const flush = async () => {
        const n = params.length / names.length;
        if (n === 0) return;
        const text =
          n === batchRows
            ? (full ??= head + Array.from({ length: n }, (_, r) => tuple(r)).join(', '))
            : head + Array.from({ length: n }, (_, r) => tuple(r)).join(', ');
        await client.query(text, params);
        rows += n;
        params = [];
      };
      for (const row of source
        .prepare(`SELECT ${names.map((n) => `"${n}"`).join(', ')} FROM ${table}`)
        .raw()
        .iterate() as Iterable<unknown[]>) {
        for (let i = 0; i < row.length; i++) {
          const v = row[i];
          params.push(bools[i] && v !== null ? v === 1 || v === true : v);
        }
        if (params.length === batchRows * names.length) await flush();
      }
      await flush();
      copied[table] = rows;
      for (const c of columns.filter((x) => x.serial)) {
        if (rows === 0) break;
        // Serial ids (history, sync_runs) were copied explicitly: move the sequence past them.
        await client.query(`SELECT setval(pg_get_serial_sequence($1, $2), (SELECT max("${c.name}") FROM ${table}))`, [table, c.name]);
      }
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    source.close();
  }
  return copied;
}

/** Copies the SQLite mirror into the migrated PostgreSQL one and ANALYZEs it; checks every row arrived. */
async function copyInto(
  target: string,
  sqliteFile: string,
  counts: Record<string, number>,
): Promise<{ copyMs: number; analyzeMs: number }> {
  const writer = new pg.Client({ connectionString: target });
  await writer.connect();
  try {
    let t = performance.now();
    const copied = await copyMirror(sqliteFile, writer);
    const copyMs = ms(t);
    t = performance.now();
    await writer.query('ANALYZE');
    const analyzeMs = ms(t);
    for (const [table, n] of Object.entries(counts)) {
      if (copied[table] !== n) throw new Error(`copy of ${table}: ${copied[table]} rows, SQLite has ${n}`);
    }
    return { copyMs, analyzeMs };
  } finally {
    await writer.end();
  }
}

/**
 * Timed on a separate connection, as a BI tool reads: `stepMs` receives every row with every
 * column as its wire text (no type parsing, arrays), what psql or a JDBC driver pays;
 * `objectsMs` goes through the store's Kysely pool (type parsers, a JS object per row).
 */
async function timeReads(target: string, store: Store): Promise<Record<string, TableTimings>> {
  const reader = new pg.Client({ connectionString: target, types: { getTypeParser: () => (v: string) => v } });
  await reader.connect();
  const step = async (query: string) => {
    const t = performance.now();
    const r = await reader.query({ text: query, rowMode: 'array' });
    return { ms: ms(t), rows: r.rows.length };
  };
  const objects = async (query: string) => {
    const t = performance.now();
    await sql.raw(query).execute(databaseOf(store));
    return ms(t);
  };
  const views: Record<string, TableTimings> = {};
  try {
    for (const table of RPT_TABLE_NAMES) {
      const all = await step(`SELECT * FROM ${table}`);
      views[table] = {
        rows: all.rows,
        stepMs: all.ms,
        objectsMs: await objects(`SELECT * FROM ${table}`),
        filteredMs: (await step(FILTERED[table] as string)).ms,
      };
    }
  } finally {
    await reader.end();
  }
  return views;
}

export async function benchReportingPostgres(url: string): Promise<ReportingPostgresFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-bench-report-pg-'));
  const sqliteFile = join(dir, 'mirror.sqlite');
  const name = `wsmirror_bench_${process.pid}`;
  const target = databaseUrl(url, name);
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  try {
    const { counts, buildMs } = await buildMirror(sqliteFile);

    const store = await openStore({ database: target });
    await store.migrate();
    const { copyMs, analyzeMs } = await copyInto(target, sqliteFile, counts);
    rmSync(dir, { recursive: true, force: true });

    const full = await refreshRptTables(store, { tickets: 'all', deals: 'all' }, { now: NOW });
    // As the sync does after a full rebuild (src/sync/reporting.ts): PostgreSQL vacuums and analyzes.
    await store.afterBulkLoad(RPT_TABLE_NAMES);
    const { tickets: changedTickets, deals: changedDeals } = changedIds();
    await databaseOf(store)
      .updateTable('tickets')
      .set({ status: 'open', updated_at: NOW.toISOString() })
      .where('id', 'in', [...changedTickets])
      .execute();
    await databaseOf(store)
      .updateTable('deals')
      .set({ amount_cents: 12345, amount: '123.45' })
      .where('id', 'in', [...changedDeals])
      .execute();
    const incremental = await refreshRptTables(store, { tickets: changedTickets, deals: changedDeals }, { now: NOW });
    const healthOnly = await refreshRptTables(store, { tickets: new Set(), deals: new Set() }, { now: NOW });

    const views = await timeReads(target, store);
    const aggregatesMatchFull = await incrementalEqualsFull(store);
    await store.close();
    return {
      mirror: counts,
      buildMs: Math.round(buildMs),
      copyMs: Math.round(copyMs),
      analyzeMs: Math.round(analyzeMs),
      fullRefreshMs: full.durationMs,
      fullRefreshSteps: full.steps,
      incrementalRefreshMs: incremental.durationMs,
      incrementalSteps: incremental.steps,
      healthOnlyRefreshMs: healthOnly.durationMs,
      aggregatesMatchFull,
      views,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    // WSMIRROR_BENCH_KEEP=1 keeps the database for profiling single statements.
    if (process.env.WSMIRROR_BENCH_KEEP) console.error(`kept ${databaseUrl(url, name).replace(/\/\/[^@/]*@/, '//')}`);
    else await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

export function printBenchReportingPostgres(result: ReportingPostgresFigures): void {
  console.log('mirror', JSON.stringify(result.mirror));
  console.log(`SQLite build ${result.buildMs} ms; copy to PostgreSQL ${result.copyMs} ms; ANALYZE ${result.analyzeMs} ms`);
  console.log(`full refresh ${result.fullRefreshMs} ms ${JSON.stringify(result.fullRefreshSteps)}`);
  // Same columns as the SQLite table; "step" here is receiving every row as wire text (see above).
  printRefreshAndViews(result, 'PostgreSQL table');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const url = process.argv[2] ?? process.env.WSMIRROR_BENCH_POSTGRES_URL;
  if (!url) {
    console.error('usage: node dist/bench/reporting-pg.js postgres://user@host:port/db (or set WSMIRROR_BENCH_POSTGRES_URL)');
    process.exitCode = 2;
  } else {
    benchReportingPostgres(url).then(printBenchReportingPostgres, (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    });
  }
}
