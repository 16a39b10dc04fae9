import type { Kysely } from 'kysely';
import type { MirrorDatabase } from './schema.js';
import { deleteKeys, insertRows, insertStatement, overwrite, q, run, type InsertStatement } from './sql.js';

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
}

/** A child row: the key, then the value columns in `ChildTable.values` order. */
export type ChildRow = readonly [key: string, ...values: unknown[]];

/**
 * Stored values come back as the dialect gives them: booleans as 0/1 (SQLite) or true/false
 * (PostgreSQL); the rows to write hold 0/1. Anything else compares as is, so a JSON column that
 * PostgreSQL re-formatted (jsonb) merely counts as changed and is rewritten, as before.
 */
const same = (stored: unknown, next: unknown) => (typeof stored === 'boolean' ? (stored ? 1 : 0) : (stored ?? null)) === (next ?? null);

const statements = new WeakMap<ChildTable, { insert: InsertStatement; select: string }>();

function statementsOf(spec: ChildTable): { insert: InsertStatement; select: string } {
  let s = statements.get(spec);
  if (!s) {
    const tail = spec.globalKey ? overwrite([spec.key], [spec.parent, ...spec.values]) : '';
    s = {
      insert: insertStatement(spec.table, [spec.parent, spec.key, ...spec.values], tail),
      select: `select ${[spec.key, ...spec.values].map(q).join(',')} from ${q(spec.table)} where ${q(spec.parent)} = ?`,
    };
    statements.set(spec, s);
  }
  return s;
}

/** Children of parents new to the mirror, each row led by its parent id: multi-row statements. */
export async function insertChildren(db: Db, spec: ChildTable, rows: readonly (readonly unknown[])[]): Promise<void> {
  if (rows.length > 0) await insertRows(db, statementsOf(spec).insert, rows);
}

/**
 * Makes the children of one parent exactly `rows`, writing only what differs from what is stored:
 * a re-read record usually changes one or two children, and rewriting all of them was most of a
 * sync's writes. `parentExisted` false (a record new to the mirror) skips the read: a child table
 * references its parent, so there is nothing stored to compare with.
 */
export async function replaceChildren(
  db: Db,
  spec: ChildTable,
  parentId: string,
  rows: readonly ChildRow[],
  parentExisted: boolean,
): Promise<void> {
  const { insert, select } = statementsOf(spec);
  const full = (r: ChildRow) => [parentId, ...r];
  if (!parentExisted) {
    if (rows.length > 0) await insertRows(db, insert, rows.map(full));
    return;
  }

  const stored = await run<Record<string, unknown>>(db, select, [parentId]);
  const byKey = new Map(stored.map((s) => [String(s[spec.key]), s]));
  const write: ChildRow[] = [];
  const seen = new Set<string>();
  for (const r of rows) {
    seen.add(r[0]);
    const s = byKey.get(r[0]);
    if (s && spec.values.every((c, i) => same(s[c], r[i + 1]))) continue;
    write.push(r);
  }
  const gone = stored.map((s) => String(s[spec.key])).filter((k) => !seen.has(k));
  // Changed rows of a (parent, key) table are deleted and inserted again, as the full rewrite did.
  const remove = spec.globalKey ? gone : [...gone, ...write.map((r) => r[0]).filter((k) => byKey.has(k))];
  if (!spec.globalKey && remove.length > 0) await deleteKeys(db, spec.table, spec.parent, parentId, spec.key, remove);
  if (write.length > 0) await insertRows(db, insert, write.map(full));
  // Messages gone upstream leave the mirror (docs/design.md §4.3), after the upserts as before.
  if (spec.globalKey && remove.length > 0) await deleteKeys(db, spec.table, spec.parent, parentId, spec.key, remove);
}
