import type { RecordTable, RecordType } from '../entities/index.js';
import type { ChildList } from './children.js';
import { diffFields } from './history.js';
import { recordWrites } from './record-writes.js';
import type { Compared } from './content-check.js';
import { NOTHING_UNLISTED, type RecordStore } from './record-store.js';
import type { RecordKind } from './record-upsert.js';
import { rowUpsert } from './sql.js';
import { columnsOf, type TableDecl } from '../entities/table-decl.js';
import { trackedFields } from './tracked-fields.js';

/** A record's row as its declaration makes it: the stamps the one upsert path reads, then any declared column. */
export type DeclaredRow = { id: string; updated_at: string | null; synced_at: string | null } & Record<string, unknown>;

/** One record converted for writing: its row and the rows of each child table, every value checked. */
export interface DeclaredPrepared {
  readonly row: DeclaredRow;
}

/**
 * A record type whose store follows from its declarations (docs/design.md §7): one record table,
 * its child tables, the row a copy makes. Its list items are whole copies, so verify compares an
 * item as the writer would write it, and the stored copies hold nothing a list item lacks.
 */
export interface DeclaredRecord<R extends { id: string }, P extends DeclaredPrepared> {
  readonly type: RecordType;
  /** The record table's name and declaration (beside its entity, src/entities/<type>.ts, or a test's own). */
  readonly table: RecordTable;
  readonly decl: TableDecl;
  /** The copy converted for writing; throws StoreError('INVALID_VALUE') for a value the store cannot hold. */
  prepare(record: R, syncedAt: string): P;
  /** Child tables, written in this order for new and re-read records alike. */
  readonly children?: readonly ChildList<P>[];
}

/**
 * The store of a declared record type: its kind on the one upsert path (record-upsert.ts), whose
 * observed history diffs the entity's tracked fields, and verify's comparison of every declared
 * column and child table. The tracked fields are read from the registry at each write, so the
 * entity may register after this is made.
 */
export function declaredRecordStore<R extends { id: string }, P extends DeclaredPrepared>(d: DeclaredRecord<R, P>): RecordStore<R, R> {
  const columns = columnsOf(d.decl);
  if (!columns.includes('id') || !columns.includes('updated_at'))
    throw new Error(`${d.table}: a record table declares id and updated_at (the one upsert path reads them)`);
  const upsert = rowUpsert(d.table, columns, []);
  const children = d.children ?? [];
  const tracked = () => trackedFields(d.type).map((f) => ({ column: f.field, field: f.field }));
  const kind: RecordKind<R, P, { id: string; updated_at: string | null }> = {
    entityType: d.type,
    table: d.table,
    prepare: (record, syncedAt) => d.prepare(record, syncedAt),
    get previousColumns() {
      return [...new Set(['updated_at', ...tracked().map((t) => t.column)])];
    },
    writeRefs: () => Promise.resolve(),
    ...recordWrites<P, Record<string, unknown> & { id: string; updated_at: string | null }>(d.type, upsert, children, (before, row) =>
      diffFields<Record<string, unknown>>(before, row, tracked()),
    ),
  };
  const compared: Compared<R, P> = {
    table: d.table,
    decl: d.decl,
    prepare: (item, at) => d.prepare(item, at),
    row: (p) => p.row,
    children: children.map((c) => ({ spec: c.table, rows: (p: P) => c.rows(p) })),
  };
  return { kind, compared, heldUnlisted: NOTHING_UNLISTED };
}
