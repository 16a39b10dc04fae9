/**
 * Where the tick's lean equivalent (bench/floor-sync.ts) stores its groups: the cheapest writes
 * each database allows for rows that may already exist. A ticket taken from its list item
 * (`Group.listed`) has no messages in the answer, so its stored messages stay: its row is updated
 * in place (not replaced, whose cascade would delete them), its `raw_json` keeps the stored
 * copy's messages (as wsmirror's list plan writes it), and only its tags and fields are rewritten.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import Database from 'better-sqlite3';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { copyField } from '../src/store/postgres-copy.js';
import { Rows, TABLES } from './floor-rows.js';

export type RecordTable = 'tickets' | 'deals';

/** The rows of one transaction, the tickets among them taken from list items, and the records deleted upstream. */
export interface Group {
  rows: Rows;
  listed: Set<string>;
  deleted: { table: RecordTable; id: string; at: string }[];
}

export const newGroup = (): Group => ({ rows: new Rows(), listed: new Set(), deleted: [] });

export interface Sink {
  /** ms inside the database calls, serially, when measured in-process (SQLite). */
  storeMs: number | null;
  write(group: Group): Promise<void>;
  close(): Promise<void>;
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

const TICKET_COLUMNS = TABLES.find((t) => t.name === 'tickets')!.columns;

/** The ids of the records whose copies a group holds. */
const copied = (rows: Rows, table: RecordTable) => rows.of(table).map((r) => r[0] as string);

/**
 * Same pragmas as wsmirror's writer (src/store/sqlite.ts). A replaced ticket or deal row is
 * deleted first, and its child tables' `ON DELETE CASCADE` deletes its child rows with it; the
 * copy's children follow (TABLES lists them after their parents), so no statement of its own
 * clears them. A listed ticket's row is updated in place instead, so the cascade does not run.
 */
export function sqliteSink(file: string): Sink {
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
  const set = TICKET_COLUMNS.filter((c) => c !== 'id' && c !== 'raw_json').map((c) => `"${c}" = excluded."${c}"`);
  const listedTicket = db.prepare(
    `insert into "tickets" (${TICKET_COLUMNS.join(',')}) values (${TICKET_COLUMNS.map(() => '?').join(',')})
      on conflict ("id") do update set ${set.join(',')}, "deleted_at" = null,
        "raw_json" = json_set(excluded."raw_json", '$.messages', "tickets"."raw_json" -> '$.messages')`,
  );
  const clearListed = CHILDREN.tickets
    .filter((c) => c.table !== 'ticket_messages')
    .map((c) => db.prepare(`delete from "${c.table}" where "${c.parent}" = ?`));
  const markDeleted = {
    tickets: db.prepare('update "tickets" set "deleted_at" = coalesce("deleted_at", ?) where "id" = ?'),
    deals: db.prepare('update "deals" set "deleted_at" = coalesce("deleted_at", ?) where "id" = ?'),
  };
  // SQLite stores the 23-character text form (docs/schema.md).
  const ts = (v: string) => `${v.slice(0, 10)} ${v.slice(11, 23)}`;
  const sink: Sink & { storeMs: number } = {
    storeMs: 0,
    write({ rows, listed, deleted }) {
      const started = performance.now();
      db.exec('begin');
      for (const t of TABLES) {
        const stmt = upsert.get(t.name)!;
        for (const row of rows.of(t.name)) {
          if (t.name !== 'tickets' || !listed.has(row[0] as string)) stmt.run(row);
          else {
            listedTicket.run(row);
            for (const clear of clearListed) clear.run(row[0]);
          }
        }
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

/**
 * COPY into a staging table per table (emptied at each commit), then one upsert from it per
 * table. A listed ticket (`$1` of the tickets' upsert) keeps its messages rows and its stored
 * copy's messages in `raw_json`.
 */
export async function postgresSink(url: string): Promise<Sink> {
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
    const value = (c: string) =>
      t.name === 'tickets' && c === 'raw_json'
        ? `case when excluded.id = any($1::text[]) then excluded.raw_json || jsonb_build_object('messages', "tickets".raw_json -> 'messages') else excluded.raw_json end`
        : `excluded.${c}`;
    const set = [...t.columns.filter((c) => !keys.includes(c)).map((c) => `${c} = ${value(c)}`), ...live];
    const action = set.length === 0 ? 'do nothing' : `do update set ${set.join(',')}`;
    upserts.set(
      t.name,
      `insert into "${t.name}" (${cols}) select ${cols} from "stage_${t.name}" on conflict (${keys.join(',')}) ${action}`,
    );
  }
  return {
    storeMs: null,
    async write({ rows, listed, deleted }) {
      await client.query('begin');
      for (const t of TABLES) {
        const list = rows.of(t.name);
        if (list.length === 0) continue;
        const text = list.map((r) => r.map(copyField).join('\t')).join('\n') + '\n';
        await pipeline(Readable.from([text]), client.query(copyFrom(`copy "stage_${t.name}" (${t.columns.join(',')}) from stdin`)));
      }
      for (const table of ['tickets', 'deals'] as const) {
        const ids = copied(rows, table);
        const read = ids.filter((id) => !listed.has(id));
        for (const c of CHILDREN[table]) {
          // A listed ticket's answer has no messages: its stored ones stay.
          const of = c.table === 'ticket_messages' ? read : ids;
          if (of.length > 0) await client.query(`delete from "${c.table}" where "${c.parent}" = any($1)`, [of]);
        }
      }
      for (const t of TABLES)
        if (rows.of(t.name).length > 0) await client.query(upserts.get(t.name)!, t.name === 'tickets' ? [[...listed]] : []);
      for (const d of deleted)
        await client.query(`update "${d.table}" set deleted_at = coalesce(deleted_at, $1) where id = $2`, [d.at, d.id]);
      await client.query('commit');
    },
    close: () => client.end(),
  };
}
