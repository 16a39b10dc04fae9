import type { RecordType } from '../entities/index.js';
import { insertChildLists, replaceChildLists, type ChildList } from './children.js';
import { writeObservedHistory, type FieldChange } from './history.js';
import type { PreparedRecord, RecordKind } from './record-upsert.js';
import type { rowUpsert } from './sql.js';

type Prev = { id: string; updated_at: string | null };

/**
 * A kind's `insertNew` and `updateKnown` as every record table is written (tickets, deals, a
 * declared type): its rows through their upsert statements, its child lists, and the history
 * observed between the stored copy and the new one. Kinds differ only in what that history
 * compares (`changes`: a deal's amount as its exact cents).
 */
export function recordWrites<P extends PreparedRecord, B extends Prev>(
  type: RecordType,
  rows: ReturnType<typeof rowUpsert<string>>,
  children: readonly ChildList<P>[],
  changes: (before: B, row: P['row']) => FieldChange[],
): Pick<RecordKind<unknown, P, B>, 'insertNew' | 'updateKnown'> {
  return {
    async insertNew(db, added, childless) {
      // Childless ids have no row either (AppendLedger), and the batch's ids are distinct (bulk.ts).
      const fresh = added.map((p) => p.row);
      await (childless ? rows.append(db, fresh) : rows.many(db, fresh));
      await insertChildLists(db, children, added, (p) => p.row.id, childless);
    },
    async updateKnown(db, known) {
      await rows.known(
        db,
        known.map((k) => ({ row: k.p.row, stored: k.before })),
      );
      await replaceChildLists(
        db,
        children,
        known.map((k) => k.p),
        (p) => p.row.id,
      );
      return writeObservedHistory(
        db,
        type,
        known.map(({ p, before }) => ({
          id: p.row.id,
          changes: changes(before, p.row),
          observedSince: before.updated_at === null ? null : String(before.updated_at),
          changedAt: p.row.updated_at!,
        })),
      );
    },
  };
}
