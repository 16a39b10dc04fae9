import { sql } from 'kysely';
import { entityOf, type RecordType } from '../entities/index.js';
import { databaseHandle } from './handles.js';
import type { Store } from './store.js';

/**
 * One record as the mirror holds it: its row and the rows of its child tables, in a stable order.
 * What `resync` compares before and after its re-read to say what changed (docs/operations.md).
 */
export interface RecordSnapshot {
  row: Record<string, unknown>;
  /** Child table name -> its rows of this record, as JSON text, sorted. */
  children: Record<string, string[]>;
}

/** Columns that change with every write, whatever was read: left out of the comparison. */
const WRITE_STAMPS = new Set(['synced_at']);

/**
 * The record's row and child rows; null when the mirror holds no row for it. Every child table of
 * a record type names its owner by the column its history table uses (`ticket_id`, `deal_id`).
 */
export async function recordSnapshot(store: Store, type: RecordType, id: string): Promise<RecordSnapshot | null> {
  const db = databaseHandle(store);
  const entity = entityOf(type);
  const rows = await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(entity.table)} WHERE id = ${id}`.execute(db);
  const row = rows.rows[0];
  if (!row) return null;
  const children: Record<string, string[]> = {};
  for (const table of entity.childTables) {
    const got = await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(table)} WHERE ${sql.ref(entity.historyOwner)} = ${id}`.execute(
      db,
    );
    children[table] = got.rows.map((r) => JSON.stringify(r)).sort();
  }
  return { row, children };
}

/** The columns and child tables that differ between two snapshots of one record (write stamps left out). */
export function snapshotDifferences(before: RecordSnapshot | null, after: RecordSnapshot | null): string[] {
  if (!before || !after) return before === after ? [] : ['(the whole record)'];
  const out: string[] = [];
  const columns = new Set([...Object.keys(before.row), ...Object.keys(after.row)]);
  for (const c of columns) {
    if (WRITE_STAMPS.has(c)) continue;
    if (JSON.stringify(before.row[c] ?? null) !== JSON.stringify(after.row[c] ?? null)) out.push(c);
  }
  for (const table of Object.keys(after.children)) {
    const a = before.children[table] ?? [];
    const b = after.children[table] ?? [];
    if (a.length !== b.length || a.some((r, i) => r !== b[i])) out.push(table);
  }
  return out;
}
