/**
 * The tick sync's lean equivalent (bench/README.md, "The tick sync's lean equivalent"): the raw
 * loop's sync requests (pipelines, the window's change-log pages, one GET per ticket or deal
 * changed since the watermark), every answer stored in the mirror's tables the cheapest way each
 * database allows for rows that may already exist, one transaction per group of pages, and
 * nothing else: no validation, history, dirty marks, saved cursor or `rpt_` refresh. It runs on a
 * copy of the mirror wsmirror's tick starts from, so both write the same rows.
 *
 * Cheapest for rows that may exist: SQLite takes one prepared `INSERT OR REPLACE` per row;
 * PostgreSQL takes `COPY` into a staging table, then `INSERT … ON CONFLICT DO UPDATE`. A changed
 * record's child rows (messages, tags, fields, deal contacts) are deleted and written again, as
 * its copy replaces them all (on SQLite, by the replaced row's `ON DELETE CASCADE`). A record deleted upstream gets its `deleted_at` (from its `*.deleted`
 * event, else the time its read answered 404), as wsmirror's does: that is an answer stored too.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import Database from 'better-sqlite3';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { Pool } from 'undici';
import { mapConcurrent } from '../src/util/concurrency.js';
import { copyText, type FloorFigures } from './floor.js';
import { Rows, TABLES, toRows } from './floor-rows.js';

const CONCURRENCY = 8;
const PAGE = 100;
/** Pages per transaction, as wsmirror's groups (src/sync/page-group.ts); records read go in groups of as many. */
const GROUP_PAGES = 10;

/** The window the mirror's next cycle reads (from `since`) and its watermark, as the raw loop gets it. */
export interface SyncWindow {
  since: string;
  watermark: string;
}

type RecordTable = 'tickets' | 'deals';

/** The rows of one transaction, and the records in it deleted upstream. */
interface Group {
  rows: Rows;
  deleted: { table: RecordTable; id: string; at: string }[];
}

/** The rows a changed record's copy replaces, by the column naming the record. */
const CHILDREN: Record<RecordTable, { table: string; parent: string }[]> = {
  tickets: [
    { table: 'ticket_messages', parent: 'ticket_id' },
    { table: 'ticket_tags', parent: 'ticket_id' },
    { table: 'ticket_fields', parent: 'ticket_id' },
  ],
  deals: [
    { table: 'deal_contacts', parent: 'deal_id' },
    { table: 'deal_fields', parent: 'deal_id' },
  ],
};

interface Sink {
  /** ms inside the database calls, serially, when measured in-process (SQLite). */
  storeMs: number | null;
  write(group: Group): Promise<void>;
  close(): Promise<void>;
}

interface WireEvent {
  type: string;
  entityType: string;
  entityId: string;
  occurredAt: string;
}

/** Runs the lean tick on `database` (a migrated mirror: a copy of the one wsmirror's tick starts from). */
export async function floorSync(url: string, key: string, database: string, window: SyncWindow): Promise<FloorFigures> {
  const postgres = /^postgres(ql)?:\/\//.test(database);
  const sink = postgres ? await postgresSink(database) : sqliteSink(database);
  const pool = new Pool(url, { connections: CONCURRENCY });
  let requests = 0;
  const get = async (path: string): Promise<{ status: number; body: Record<string, unknown> }> => {
    requests++;
    const res = await pool.request({ method: 'GET', path, headers: { authorization: `Bearer ${key}` } });
    return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
  };
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  const now = new Date().toISOString();
  const convert = toRows(postgres ? 'postgres' : 'sqlite', now);
  const watermarkMs = Date.parse(window.watermark);
  let written = 0;
  let writing: Promise<void> = Promise.resolve();
  // One group writes while the next is read; a group waits for the one before it.
  const flush = async (group: Group) => {
    await writing;
    written += group.rows.count;
    writing = sink.write(group);
  };
  const newGroup = (): Group => ({ rows: new Rows(), deleted: [] });
  try {
    let group = newGroup();
    const { body: pipelines } = await get('/api/v1/pipelines');
    (pipelines.pipelines as Record<string, unknown>[]).forEach((p, i) => convert.pipeline(p, i, group.rows));
    const touched = new Map<string, RecordTable>();
    let pages = 0;
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const { body: page } = await get(
        `/api/v1/events?limit=${PAGE}&since=${encodeURIComponent(window.since)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      for (const e of page.events as (Record<string, unknown> & WireEvent)[]) {
        convert.event(e, group.rows);
        if ((e.entityType !== 'ticket' && e.entityType !== 'deal') || Date.parse(e.occurredAt) < watermarkMs) continue;
        touched.set(`${e.entityType}s/${e.entityId}`, `${e.entityType}s`);
        if (e.type === `${e.entityType}.deleted`) group.deleted.push({ table: `${e.entityType}s`, id: e.entityId, at: e.occurredAt });
      }
      cursor = page.nextCursor as string | null;
      if (++pages % GROUP_PAGES === 0) {
        await flush(group);
        group = newGroup();
      }
    }
    await flush(group);
    const paths = [...touched.keys()];
    for (let i = 0; i < paths.length; i += GROUP_PAGES * PAGE) {
      const g = newGroup();
      await mapConcurrent(paths.slice(i, i + GROUP_PAGES * PAGE), CONCURRENCY, async (path) => {
        const { status, body } = await get(`/api/v1/${path}`);
        const table = touched.get(path)!;
        if (status === 404) g.deleted.push({ table, id: path.slice(table.length + 1), at: now });
        else if (table === 'tickets') convert.ticket(body.ticket as Record<string, unknown>, g.rows);
        else convert.deal(body.deal as Record<string, unknown>, g.rows);
      });
      await flush(g);
    }
    await writing;
  } finally {
    await writing.catch(() => undefined);
    await sink.close();
    await pool.close();
  }
  const ms = performance.now() - started;
  const { user, system } = process.cpuUsage(cpuStart);
  return { ms, cpuMs: Math.round((user + system) / 1000), storeMs: sink.storeMs, requests, rows: written };
}

/** The ids of the records whose copies a group holds. */
const copied = (rows: Rows, table: RecordTable) => rows.of(table).map((r) => r[0] as string);

/**
 * Same pragmas as wsmirror's writer (src/store/sqlite.ts). A replaced ticket or deal row is
 * deleted first, and its child tables' `ON DELETE CASCADE` deletes its child rows with it; the
 * copy's children follow (TABLES lists them after their parents), so no statement of its own
 * clears them.
 */
function sqliteSink(file: string): Sink {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  const upsert = new Map(
    TABLES.map((t) => [
      t.name,
      db.prepare(`insert or replace into "${t.name}" (${t.columns.join(',')}) values (${t.columns.map(() => '?').join(',')})`),
    ]),
  );
  const markDeleted = {
    tickets: db.prepare('update "tickets" set "deleted_at" = coalesce("deleted_at", ?) where "id" = ?'),
    deals: db.prepare('update "deals" set "deleted_at" = coalesce("deleted_at", ?) where "id" = ?'),
  };
  // SQLite stores the 23-character text form (docs/schema.md).
  const ts = (v: string) => `${v.slice(0, 10)} ${v.slice(11, 23)}`;
  const sink: Sink & { storeMs: number } = {
    storeMs: 0,
    write({ rows, deleted }) {
      const started = performance.now();
      db.exec('begin');
      for (const t of TABLES) {
        const stmt = upsert.get(t.name)!;
        for (const row of rows.of(t.name)) stmt.run(row);
      }
      for (const d of deleted) markDeleted[d.table].run(ts(d.at), d.id);
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

/** COPY into a staging table per table (emptied at each commit), then one upsert from it per table. */
async function postgresSink(url: string): Promise<Sink> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const upserts = new Map<string, string>();
  for (const t of TABLES) {
    const cols = t.columns.join(',');
    await client.query(`create temp table "stage_${t.name}" on commit delete rows as select ${cols} from "${t.name}" with no data`);
    const { rows: key } = await client.query<{ name: string }>(
      `select a.attname as name from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
        where i.indrelid = to_regclass($1) and i.indisprimary`,
      [`"${t.name}"`],
    );
    const keys = key.map((k) => k.name);
    // A read record is live again, as wsmirror's upsert makes it.
    const live = t.name === 'tickets' || t.name === 'deals' ? ['deleted_at = null'] : [];
    const set = [...t.columns.filter((c) => !keys.includes(c)).map((c) => `${c} = excluded.${c}`), ...live];
    const action = set.length === 0 ? 'do nothing' : `do update set ${set.join(',')}`;
    upserts.set(
      t.name,
      `insert into "${t.name}" (${cols}) select ${cols} from "stage_${t.name}" on conflict (${keys.join(',')}) ${action}`,
    );
  }
  return {
    storeMs: null,
    async write({ rows, deleted }) {
      await client.query('begin');
      for (const t of TABLES) {
        const list = rows.of(t.name);
        if (list.length === 0) continue;
        const text = list.map((r) => r.map(copyText).join('\t')).join('\n') + '\n';
        await pipeline(Readable.from([text]), client.query(copyFrom(`copy "stage_${t.name}" (${t.columns.join(',')}) from stdin`)));
      }
      for (const table of ['tickets', 'deals'] as const) {
        const ids = copied(rows, table);
        if (ids.length > 0)
          for (const c of CHILDREN[table]) await client.query(`delete from "${c.table}" where "${c.parent}" = any($1)`, [ids]);
      }
      for (const t of TABLES) if (rows.of(t.name).length > 0) await client.query(upserts.get(t.name)!);
      for (const d of deleted)
        await client.query(`update "${d.table}" set deleted_at = coalesce(deleted_at, $1) where id = $2`, [d.at, d.id]);
      await client.query('commit');
    },
    close: () => client.end(),
  };
}
