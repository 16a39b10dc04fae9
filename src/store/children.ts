import type { Kysely } from 'kysely';
import type { MirrorDatabase } from './schema.js';
import { appendRows, insertRows, insertStatement, overwrite, q, type InsertStatement } from './sql.js';
import { deleteIn, runTuples, selectIn, tupleStatement, type TupleStatement } from './key-sets.js';

type Db = Kysely<MirrorDatabase>;

/** A child table of tickets or deals, keyed by (parent, key) or, for messages, by key alone. */
export interface ChildTable {
  table: string;
  parent: string;
  key: string;
  /** Every other column, in the order the rows give them. */
  values: readonly string[];
  /**
   * True when the key is the primary key on its own (messages): a row may sit under another
   * parent, so new rows are upserted. Otherwise new rows are plain inserts, as they always were,
   * and a repeated key fails the same way.
   */
  globalKey?: boolean;
  /** The value columns that hold JSON text (compared by value: see `same`). */
  json?: readonly string[];
}

/** A child row: the key, then the value columns in `ChildTable.values` order. */
export type ChildRow = readonly [key: string, ...values: unknown[]];

/**
 * Stored values come back as the dialect gives them: booleans as 0/1 (SQLite) or true/false
 * (PostgreSQL), while the rows to write hold 0/1; JSON as the text written (SQLite) or as jsonb
 * spells it (PostgreSQL: its own key order and spacing), so a JSON column compares by value.
 * Compared as text, every message of every re-read ticket counted as changed on PostgreSQL and
 * was written again. Values equal as JSON are stored as equal jsonb, so nothing is lost.
 */
export function same(stored: unknown, next: unknown, json: boolean): boolean {
  const s = typeof stored === 'boolean' ? (stored ? 1 : 0) : (stored ?? null);
  const n = next ?? null;
  if (s === n) return true;
  if (!json || typeof s !== 'string' || typeof n !== 'string') return false;
  try {
    return sameValue(JSON.parse(s), JSON.parse(n));
  } catch {
    return false;
  }
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((v, i) => sameValue(v, other[i]));
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  return keys.length === Object.keys(y).length && keys.every((k) => Object.hasOwn(y, k) && sameValue(x[k], y[k]));
}

interface Statements {
  insert: InsertStatement;
  /** Deletes rows by (parent, key). */
  remove: TupleStatement;
}

const statements = new WeakMap<ChildTable, Statements>();

function statementsOf(spec: ChildTable): Statements {
  let s = statements.get(spec);
  if (!s) {
    const tail = spec.globalKey ? overwrite([spec.key], [spec.parent, ...spec.values]) : '';
    s = {
      insert: insertStatement(spec.table, [spec.parent, spec.key, ...spec.values], tail),
      // Parents' and children's keys are text ids (migration 0001).
      remove: tupleStatement(`delete from ${q(spec.table)} where`, `(${q(spec.parent)} = ? and ${q(spec.key)} = ?)`, '', ['text', 'text']),
    };
    statements.set(spec, s);
  }
  return s;
}

/** Children of parents new to the mirror, each row led by its parent id: multi-row statements. */
async function insertChildren(db: Db, spec: ChildTable, rows: readonly (readonly unknown[])[]): Promise<void> {
  if (rows.length > 0) await insertRows(db, statementsOf(spec).insert, rows);
}

/** A parent the mirror holds, and the children its latest read lists. */
interface ChildrenOf {
  parentId: string;
  rows: readonly ChildRow[];
}

/**
 * Makes the children of each parent exactly its `rows`, writing only what differs from what is
 * stored: a re-read record usually changes one or two children, and rewriting all of them was
 * most of a sync's writes. The parents are distinct and all held by the mirror. One read covers
 * every parent, then one delete and one insert cover them all (a few statements per batch
 * instead of several per record), with the outcome of replacing them one parent after another.
 */
async function replaceChildren(db: Db, spec: ChildTable, parents: readonly ChildrenOf[]): Promise<void> {
  if (parents.length === 0) return;
  const { insert, remove } = statementsOf(spec);
  const stored = await selectIn<Record<string, unknown>>(
    db,
    [spec.parent, spec.key, ...spec.values],
    spec.table,
    spec.parent,
    parents.map((p) => p.parentId),
  );
  type Stored = Map<string, Record<string, unknown>>;
  const byParent = new Map<string, Stored>();
  for (const s of stored) {
    const parent = String(s[spec.parent]);
    const rows: Stored = byParent.get(parent) ?? new Map<string, Record<string, unknown>>();
    rows.set(String(s[spec.key]), s);
    byParent.set(parent, rows);
  }
  const write: (readonly unknown[])[] = [];
  const removed: [string, string][] = [];
  for (const { parentId, rows } of parents) {
    const byKey: Stored = byParent.get(parentId) ?? new Map<string, Record<string, unknown>>();
    const seen = new Set<string>();
    for (const r of rows) {
      seen.add(r[0]);
      const s = byKey.get(r[0]);
      if (s && spec.values.every((c, i) => same(s[c], r[i + 1], spec.json?.includes(c) ?? false))) continue;
      write.push([parentId, ...r]);
      // Changed rows of a (parent, key) table are deleted and inserted again, as the full rewrite did.
      if (s && !spec.globalKey) removed.push([parentId, r[0]]);
    }
    for (const k of byKey.keys()) if (!seen.has(k)) removed.push([parentId, k]);
  }
  if (!spec.globalKey && removed.length > 0) await runTuples(db, remove, removed);
  if (write.length > 0) await insertRows(db, insert, write);
  // Messages gone upstream leave the mirror (docs/design.md §4.3), after the upserts: a message
  // that moved to another parent of the batch is then no longer under this one, and stays.
  if (spec.globalKey && removed.length > 0) await runTuples(db, remove, removed);
}

/**
 * One child table of a record kind and where a prepared record keeps its rows for it. A kind
 * lists its child tables once, so new records and re-read ones always write the same tables.
 */
export interface ChildList<P> {
  table: ChildTable;
  rows(record: P): readonly ChildRow[];
}

/**
 * The children of records new to the mirror, table after table in list order. Whatever rows
 * already sit under those ids go first: a parent row deleted by hand with foreign keys off (the
 * sqlite3 shell's default) leaves its children behind, and inserting the new copy's children
 * over them failed on the primary key and stopped the whole command. One keyed delete per table
 * and batch, almost always of nothing; none when the caller knows no row can be there (`childless`:
 * a first backfill into empty tables, record-upsert.ts AppendLedger), and the rows are then
 * appended (appendRows: by COPY where the dialect loads rows so): a record's rows of one table
 * never share a key (prepareTicket, prepareDeal), and rows of different records differ in parent
 * (docs/sync.md, "Appended rows are copied straight into their tables").
 */
export async function insertChildLists<P>(
  db: Db,
  lists: readonly ChildList<P>[],
  records: readonly P[],
  idOf: (record: P) => string,
  childless = false,
): Promise<void> {
  const ids = records.map(idOf);
  for (const list of lists) {
    const rows = records.flatMap((r) => list.rows(r).map((row) => [idOf(r), ...row]));
    if (childless) {
      await appendRows(db, statementsOf(list.table).insert, rows);
      continue;
    }
    await deleteIn(db, list.table.table, list.table.parent, ids);
    await insertChildren(db, list.table, rows);
  }
}

/** The children of records the mirror holds, made exactly what each latest read lists (replaceChildren). */
export async function replaceChildLists<P>(
  db: Db,
  lists: readonly ChildList<P>[],
  records: readonly P[],
  idOf: (record: P) => string,
): Promise<void> {
  for (const list of lists) {
    await replaceChildren(
      db,
      list.table,
      records.map((r) => ({ parentId: idOf(r), rows: list.rows(r) })),
    );
  }
}
