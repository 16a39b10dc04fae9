import type { Kysely } from 'kysely';
import type { HistoryGapsTable, MirrorDatabase } from './schema.js';
import type { HistoryGap } from './event-history.js';
import { insertRows, insertStatement, q } from './sql.js';
import { columnsOf } from '../entities/table-decl.js';
import { SUPPORT_TABLES } from './tables-sync.js';

type Db = Kysely<MirrorDatabase>;

const TABLE = SUPPORT_TABLES.history_gaps;
const COLUMNS = columnsOf(TABLE);
// A gap already recorded (same record and event) stays as first written.
const GAPS = insertStatement('history_gaps', COLUMNS, `on conflict (${TABLE.primaryKey.map(q).join(', ')}) do nothing`);

/**
 * Records the events that may hide a tracked change (docs/schema.md, history_gaps), in the
 * transaction that stores the events, on the live path and in `backfill --history` alike. A gap
 * is never removed: no later read can tell what such an event changed, or when.
 */
export async function writeHistoryGaps(db: Db, gaps: readonly HistoryGap[]): Promise<void> {
  if (gaps.length === 0) return;
  await insertRows(
    db,
    GAPS,
    gaps.map((g) => {
      const row: HistoryGapsTable = {
        entity_type: g.kind,
        entity_id: g.entityId,
        event_id: g.eventId,
        event_type: g.eventType,
        occurred_at: g.at,
        fields: g.fields.join(','),
        reason: g.reason,
      };
      return COLUMNS.map((c) => row[c]);
    }),
  );
}
