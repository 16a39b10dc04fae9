/**
 * The lean floor of a backfill (bench/README.md, "Lean floor"): the raw loop's requests, with
 * every answer stored in the mirror's schema (the same tables, columns and indexes as wsmirror's,
 * docs/schema.md) the cheapest way each database offers, and nothing else: no validation, no
 * quarantine, no history, no dirty marks, no saved cursor, no reporting tables. It trusts the
 * simulator's well-formed answers, which wsmirror may not (docs/sync.md, "Hostile upstream").
 *
 * What it answers: how far below wsmirror's time any implementation that stores the same mirror
 * could go on this machine. `storeMs` is the part one database connection does serially (SQLite:
 * the statements and commits, measured in-process; PostgreSQL: the server's CPU, which the
 * benchmark samples), so no overlap of the other work can bring a backfill under it.
 *
 * Cheapest, as measured on the L workspace while this was written: SQLite takes one prepared
 * single-row statement per row, 10 list pages per transaction, every plain secondary index of the
 * bulk tables dropped and built at the end (one more than wsmirror's first backfill drops: it keeps
 * the messages' ticket index for re-listed tickets); PostgreSQL takes COPY per table and group,
 * with the same indexes dropped and built at the end (wsmirror keeps them on PostgreSQL).
 * A group is written while the next one is read.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import Database from 'better-sqlite3';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { Pool } from 'undici';
import { bulkTables } from '../src/store/deferred-indexes.js';
import type { ZodType } from 'zod';
import { EVENT_LIST, DEAL_LIST, TICKET_LIST, TICKET_READ, type WorkspaceEvent } from '../src/api/schemas.js';
import { validateItems } from '../src/api/validate.js';
import { silentLogger } from '../src/log/index.js';
import { countedTables, openStore, type Store } from '../src/store/index.js';
import { emptyStats } from '../src/sync/index.js';
import { refreshReports } from '../src/sync/reporting.js';
import { tidyAfterBulkLoad } from '../src/sync/tidy.js';
import { mapConcurrent } from '../src/util/concurrency.js';
import { copyField } from '../src/store/postgres-copy.js';
import { Rows, TABLES, toRows } from './floor-rows.js';

const CONCURRENCY = 8;
const PAGE = 100;
/** List pages per transaction, as wsmirror's groups (src/sync/page-group.ts). */
const GROUP_PAGES = 10;
const LOOKBACK_MS = 300_000;

/** Where a group of rows goes: one connection, one transaction per group. */
interface Sink {
  /** ms spent in the database calls, serially, when the sink can measure it in-process. */
  storeMs: number | null;
  write(rows: Rows): Promise<void>;
  /** Builds what was deferred; counted in the job's time. */
  finish(): Promise<void>;
  close(): Promise<void>;
}

export interface FloorFigures {
  ms: number;
  cpuMs: number;
  storeMs: number | null;
  requests: number;
  rows: number;
  /** `contract` only: ms of the validation (summed, in-process) and of the work after the copy. */
  validateMs?: number;
  afterCopyMs?: number;
  /** The tick's contract floor only (bench/floor-sync-contract.ts): ms of its `rpt_` refresh. */
  reportMs?: number;
}

export interface FloorOptions {
  /** Store only the raw JSON the specification asks for (floor-rows.ts, `toRows`). Default false. */
  specOnly?: boolean;
  /**
   * Also do what the contract requires of any mirror and the lean job otherwise leaves out
   * (bench/README.md, "The contract floor"): every answer checked by wsmirror's own schemas
   * (docs/sync.md, "Bad data"), and after the copy the work docs/design.md §4.6 requires of a
   * finished backfill: VACUUM (ANALYZE) of the mirrored tables on PostgreSQL and the full build of
   * the rpt_ tables (docs/schema.md), through wsmirror's own code. On PostgreSQL it keeps every
   * index through the load (`postgresSink`). Default false.
   */
  contract?: boolean;
}

export async function floorBackfill(url: string, key: string, database: string, options: FloorOptions = {}): Promise<FloorFigures> {
  const { specOnly = false, contract = false } = options;
  let validateMs = 0;
  /** The answer checked as wsmirror checks it (contract only); the rows come from the raw answer. */
  const check = (entityType: string, schema: ZodType, raws: readonly unknown[]) => {
    if (!contract) return;
    const started = performance.now();
    const { invalid } = validateItems(entityType, schema, raws);
    validateMs += performance.now() - started;
    if (invalid.length > 0) throw new Error(`the simulator served an invalid ${entityType}: ${invalid[0]!.reason}`);
  };
  const postgres = /^postgres(ql)?:\/\//.test(database);
  const store = await openStore({ database });
  await store.migrate();
  // The contract floor stores the hand-over's lookback through wsmirror's own event writer, which
  // also derives the history rows those events give (docs/sync.md, "History from the change log").
  if (!contract) await store.close();
  const sink = postgres ? await postgresSink(database, !contract) : sqliteSink(database);
  const pool = new Pool(url, { connections: CONCURRENCY });
  let requests = 0;
  const get = async <T>(path: string): Promise<T> => {
    requests++;
    const res = await pool.request({ method: 'GET', path, headers: { authorization: `Bearer ${key}` } });
    return (await res.body.json()) as T;
  };
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  const convert = toRows(postgres ? 'postgres' : 'sqlite', new Date().toISOString(), specOnly);
  let written = 0;
  let writing: Promise<void> = Promise.resolve();
  // One group writes while the next is read; a group waits for the one before it.
  const flush = async (rows: Rows) => {
    await writing;
    written += rows.count;
    writing = sink.write(rows);
  };
  try {
    const probe = await get<{ events: Record<string, unknown>[] }>('/api/v1/events?limit=1');
    const head = probe.events[0]?.occurredAt as string | undefined;
    const list = async (first: string, each: (page: Record<string, unknown>, rows: Rows) => void | Promise<void>) => {
      let rows = new Rows();
      let pages = 0;
      for (let cursor: string | null = null, start = true; start || cursor; start = false) {
        const page: Record<string, unknown> = await get(`${first}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        await each(page, rows);
        cursor = page.nextCursor as string | null;
        if (++pages % GROUP_PAGES === 0) {
          await flush(rows);
          rows = new Rows();
        }
      }
      await flush(rows);
    };
    if (head !== undefined) {
      const since = encodeURIComponent(new Date(Date.parse(head) - LOOKBACK_MS).toISOString());
      const path = `/api/v1/events?limit=${PAGE}&since=${since}`;
      // Its rows are dropped: the converter only learns the references the event writer stored.
      if (contract) await recentThroughStore(store, path, get, (e) => convert.event(e, new Rows()));
      else
        await list(path, (page, rows) => {
          for (const e of page.events as Record<string, unknown>[]) convert.event(e, rows);
        });
    }
    if (contract) await store.close();
    const pipelines = await get<{ pipelines: Record<string, unknown>[] }>('/api/v1/pipelines');
    const rows = new Rows();
    pipelines.pipelines.forEach((p, i) => convert.pipeline(p, i, rows));
    await flush(rows);
    await list(`/api/v1/deals?limit=${PAGE}`, (page, rows) => {
      check('deal', DEAL_LIST.schema, page.deals as unknown[]);
      for (const d of page.deals as Record<string, unknown>[]) convert.deal(d, rows);
    });
    await list(`/api/v1/tickets?limit=${PAGE}`, async (page, rows) => {
      check('ticket', TICKET_LIST.schema, page.tickets as unknown[]);
      await mapConcurrent(page.tickets as { id: string }[], CONCURRENCY, async (t) => {
        const { ticket } = await get<{ ticket: Record<string, unknown> }>(`/api/v1/tickets/${t.id}`);
        check('ticket', TICKET_READ.schema, [ticket]);
        convert.ticket(ticket, rows);
      });
    });
    await writing;
    await sink.finish();
  } finally {
    await writing.catch(() => undefined);
    await sink.close();
    await pool.close();
  }
  const afterCopyStarted = performance.now();
  if (contract) await afterCopy(database);
  const afterCopyMs = performance.now() - afterCopyStarted;
  const ms = performance.now() - started;
  const { user, system } = process.cpuUsage(cpuStart);
  const figures = { ms, cpuMs: Math.round((user + system) / 1000), storeMs: sink.storeMs, requests, rows: written };
  return contract ? { ...figures, validateMs: Math.round(validateMs), afterCopyMs: Math.round(afterCopyMs) } : figures;
}

/** The lookback's change-log pages, validated and stored by wsmirror's event writer, ten pages a transaction. */
async function recentThroughStore(
  store: Store,
  first: string,
  get: <T>(path: string) => Promise<T>,
  stored: (event: Record<string, unknown>) => void,
): Promise<void> {
  let group: WorkspaceEvent[] = [];
  let pages = 0;
  const flush = async () => {
    const events = group;
    group = [];
    if (events.length > 0) await store.transaction((tx) => tx.insertEvents(events, new Date().toISOString()));
  };
  for (let cursor: string | null = null, start = true; start || cursor; start = false) {
    const page: { events: unknown[]; nextCursor: string | null } = await get(
      `${first}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    const { items, invalid } = validateItems('event', EVENT_LIST.schema, page.events);
    if (invalid.length > 0) throw new Error(`the simulator served an invalid event: ${invalid[0]!.reason}`);
    group.push(...items);
    for (const e of page.events) stored(e as Record<string, unknown>);
    cursor = page.nextCursor;
    if (++pages % GROUP_PAGES === 0) await flush();
  }
  await flush();
}

/** What a finished backfill does after its copy (src/sync/backfill.ts), by wsmirror's own code. */
async function afterCopy(database: string): Promise<void> {
  const store = await openStore({ database });
  try {
    const ctx = { store, logger: silentLogger() };
    await tidyAfterBulkLoad(ctx, countedTables(), 'the mirrored tables');
    await refreshReports(ctx, emptyStats(), { tickets: 'all', deals: 'all' });
  } finally {
    await store.close();
  }
}

/** Same pragmas as wsmirror's writer (src/store/sqlite.ts). */
function sqliteSink(file: string): Sink {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  const deferred = deferSqliteIndexes(db);
  const statements = new Map(
    TABLES.map((t) => [
      t.name,
      db.prepare(`insert or ignore into "${t.name}" (${t.columns.join(',')}) values (${t.columns.map(() => '?').join(',')})`),
    ]),
  );
  const sink: Sink & { storeMs: number } = {
    storeMs: 0,
    write(rows) {
      const started = performance.now();
      db.exec('begin');
      for (const t of TABLES) {
        const stmt = statements.get(t.name)!;
        for (const row of rows.of(t.name)) stmt.run(row);
      }
      db.exec('commit');
      sink.storeMs += performance.now() - started;
      return Promise.resolve();
    },
    finish() {
      const started = performance.now();
      db.exec('begin');
      for (const sql of deferred) db.exec(sql);
      db.exec('commit');
      sink.storeMs += performance.now() - started;
      return Promise.resolve();
    },
    close() {
      db.close();
      return Promise.resolve();
    },
  };
  return sink;
}

/** The bulk tables' plain secondary indexes, dropped now; returns the statements that build them again. */
function deferSqliteIndexes(db: Database.Database): string[] {
  const list = db
    .prepare(
      `select sql, name from sqlite_master where type = 'index' and sql is not null and tbl_name in (${bulkTables()
        .map(() => '?')
        .join(',')})
       and sql not like 'create unique%' collate nocase`,
    )
    .all(...bulkTables()) as { sql: string; name: string }[];
  for (const i of list) db.exec(`drop index "${i.name}"`);
  return list.map((i) => i.sql);
}

/**
 * `deferIndexes`: drop the bulk tables' secondary indexes for the load and build them at the end,
 * as the lean job does. The contract floor keeps them: a text-keyed index built at the end would
 * fail the whole mirror on one oversized upstream value, where kept through the load it refuses
 * only that row and its record is quarantined (docs/design.md §4.9; src/store/deferred-indexes.ts).
 * Its fixed-width indexes stay as well: with the text-keyed ones in place, deferring only those
 * made its L load slower, not faster (bench/README.md, "Twenty-first pass").
 */
async function postgresSink(url: string, deferIndexes: boolean): Promise<Sink> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows: indexes } = deferIndexes
    ? await client.query<{ indexname: string; indexdef: string }>(
        `select i.indexname, i.indexdef from pg_indexes i
          where i.schemaname = current_schema() and i.tablename = any($1)
            and not exists (select 1 from pg_constraint c where c.conname = i.indexname)
            and i.indexdef not like 'CREATE UNIQUE%'`,
        [[...bulkTables()]],
      )
    : { rows: [] };
  for (const i of indexes) await client.query(`drop index "${i.indexname}"`);
  return {
    storeMs: null,
    async write(rows) {
      await client.query('begin');
      for (const t of TABLES) {
        const list = rows.of(t.name);
        if (list.length === 0) continue;
        const text = list.map((r) => r.map(copyField).join('\t')).join('\n') + '\n';
        await pipeline(Readable.from([text]), client.query(copyFrom(`copy "${t.name}" (${t.columns.join(',')}) from stdin`)));
      }
      await client.query('commit');
    },
    async finish() {
      for (const i of indexes) await client.query(i.indexdef);
    },
    close: () => client.end(),
  };
}
