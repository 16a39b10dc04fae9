/**
 * Where the tick's lean equivalent (bench/floor-sync.ts) stores its groups: the cheapest writes
 * each database allows for rows that may already exist, which are writes of only the rows that
 * changed (bench/README.md, "Twenty-first pass"). A ticket taken from its list item
 * (`Group.listed`) has no messages in the answer, so its stored messages stay: its row is updated
 * in place (not replaced, whose cascade would delete them), its `raw_json` keeps the stored
 * copy's messages (as wsmirror's list plan writes it), and only its tags and fields are rewritten.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import Database from 'better-sqlite3';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { RECORD_ENTITIES, type RecordTable } from '../src/entities/index.js';
import { copyField } from '../src/store/postgres-copy.js';
import { columnsOf, Rows, TABLES } from './floor-rows.js';

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

/**
 * The rows a changed record's copy replaces, per record table, read off the registry (the bench
 * registers no entity, so the built-in ones): each child table with the column naming the record
 * and the rest of its key, as its declaration keys it. A record table the floor writes no rows of
 * (bench/floor-rows.ts converts tickets and deals) has nothing to prune.
 */
const CHILDREN = new Map(
  RECORD_ENTITIES.map((e) => [
    e.table,
    e.childTables.map((table) => {
      const [parent, key] = e.tables[table]!.primaryKey;
      return { table, parent: parent!, key: key! };
    }),
  ]),
);

/** The ids of the records whose copies a group holds. */
const copied = (rows: Rows, table: string) => rows.of(table).map((r) => r[0] as string);

/** A child table's new keys per record of the group: what its stored rows are pruned to. */
function keysByParent(rows: Rows, child: { table: string; parent: string; key: string }): Map<string, string[]> {
  const cols = columnsOf(child.table);
  const p = cols.indexOf(child.parent);
  const k = cols.indexOf(child.key);
  const out = new Map<string, string[]>();
  for (const r of rows.of(child.table)) {
    const list = out.get(r[p] as string);
    if (list) list.push(String(r[k]));
    else out.set(r[p] as string, [String(r[k])]);
  }
  return out;
}

/**
 * An upsert of `table` (primary key `keys`) from `from` (a VALUES list or a SELECT) that writes a
 * row only where it differs from the stored one, so an unchanged row (most of a changed ticket's
 * messages) costs no write and no index update. A record row is live again, as wsmirror's upsert
 * makes it. `value` gives a column's new value (default: the incoming one).
 */
function guardedUpsert(
  table: string,
  keys: readonly string[],
  distinct: 'is not' | 'is distinct from',
  from: string,
  value: (column: string) => string = (c) => `excluded."${c}"`,
): string {
  const cols = columnsOf(table);
  const rest = cols.filter((c) => !keys.includes(c));
  const head = `insert into "${table}" (${cols.map((c) => `"${c}"`).join(',')}) ${from} on conflict (${keys.map((c) => `"${c}"`).join(',')})`;
  if (rest.length === 0) return `${head} do nothing`;
  const live = CHILDREN.has(table as RecordTable);
  const set = [...rest.map((c) => `"${c}" = ${value(c)}`), ...(live ? ['"deleted_at" = null'] : [])];
  const differs = `(${rest.map((c) => `"${table}"."${c}"`).join(',')}) ${distinct} (${rest.map((c) => `excluded."${c}"`).join(',')})`;
  return `${head} do update set ${set.join(',')} where ${differs}${live ? ` or "${table}"."deleted_at" is not null` : ''}`;
}

/**
 * Same pragmas as wsmirror's writer (src/store/sqlite.ts). Every row goes through a guarded
 * upsert (no `INSERT OR REPLACE`, whose delete cascades to the record's child rows and rewrites
 * them all), then a changed record's child rows its copy no longer holds are deleted. A listed
 * ticket's messages are left alone, and its `raw_json` keeps the stored copy's messages.
 */
export function sqliteSink(file: string): Sink {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  const keysOf = (table: string) =>
    (db.prepare(`pragma table_info("${table}")`).all() as { name: string; pk: number }[])
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => c.name);
  const values = (table: string) =>
    `values (${columnsOf(table)
      .map(() => '?')
      .join(',')})`;
  const upsert = new Map(TABLES.map((t) => [t.name, db.prepare(guardedUpsert(t.name, keysOf(t.name), 'is not', values(t.name)))]));
  const listedTicket = db.prepare(
    guardedUpsert('tickets', ['id'], 'is not', values('tickets'), (c) =>
      c === 'raw_json' ? `json_set(excluded."raw_json", '$.messages', "tickets"."raw_json" -> '$.messages')` : `excluded."${c}"`,
    ),
  );
  const prune = new Map(
    [...CHILDREN.values()]
      .flat()
      .map((c) => [
        c.table,
        db.prepare(`delete from "${c.table}" where "${c.parent}" = ? and "${c.key}" not in (select value from json_each(?))`),
      ]),
  );
  const markDeleted = new Map(
    [...CHILDREN.keys()].map((t) => [t, db.prepare(`update "${t}" set "deleted_at" = coalesce("deleted_at", ?) where "id" = ?`)]),
  );
  // SQLite stores the 23-character text form (docs/schema.md).
  const ts = (v: string) => `${v.slice(0, 10)} ${v.slice(11, 23)}`;
  const sink: Sink & { storeMs: number } = {
    storeMs: 0,
    write({ rows, listed, deleted }) {
      const started = performance.now();
      db.exec('begin');
      for (const t of TABLES) {
        const stmt = upsert.get(t.name)!;
        for (const row of rows.of(t.name)) (t.name === 'tickets' && listed.has(row[0] as string) ? listedTicket : stmt).run(row);
      }
      for (const [table, children] of CHILDREN) {
        const ids = copied(rows, table);
        for (const c of children) {
          const keys = keysByParent(rows, c);
          const stmt = prune.get(c.table)!;
          // A listed ticket's answer has no messages: its stored ones stay.
          for (const id of ids) if (c.table !== 'ticket_messages' || !listed.has(id)) stmt.run(id, JSON.stringify(keys.get(id) ?? []));
        }
      }
      for (const d of deleted) markDeleted.get(d.table)!.run(ts(d.at), d.id);
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
 * COPY into a staging table per table (emptied at each commit), a changed record's child rows its
 * copy no longer holds deleted, then one upsert from the stage per table that writes only the
 * rows that differ from the stored ones. A listed ticket (`$1` of the tickets' upsert) keeps its
 * messages rows and its stored copy's messages in `raw_json`.
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
    const value = (c: string) =>
      t.name === 'tickets' && c === 'raw_json'
        ? `case when excluded.id = any($1::text[]) then excluded.raw_json || jsonb_build_object('messages', "tickets".raw_json -> 'messages') else excluded.raw_json end`
        : `excluded."${c}"`;
    const from = `select ${cols} from "stage_${t.name}"`;
    upserts.set(
      t.name,
      guardedUpsert(
        t.name,
        key.map((k) => k.name),
        'is distinct from',
        from,
        value,
      ),
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
      for (const [table, children] of CHILDREN) {
        const ids = copied(rows, table);
        const read = ids.filter((id) => !listed.has(id));
        for (const c of children) {
          // A listed ticket's answer has no messages: its stored ones stay. Of the others, only the
          // rows the new copy no longer holds go; the rest are upserted below.
          const of = c.table === 'ticket_messages' ? read : ids;
          if (of.length === 0) continue;
          await client.query(
            `delete from "${c.table}" c where c."${c.parent}" = any($1) and not exists
              (select 1 from "stage_${c.table}" s where s."${c.parent}" = c."${c.parent}" and s."${c.key}" = c."${c.key}")`,
            [of],
          );
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
