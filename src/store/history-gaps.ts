import type { Kysely } from 'kysely';
import type { MirrorDatabase } from './schema.js';
import type { HistoryGap } from './event-history.js';
import { insertRows, insertStatement } from './sql.js';

type Db = Kysely<MirrorDatabase>;

const GAPS = insertStatement(
  'history_gaps',
  ['entity_type', 'entity_id', 'event_id', 'event_type', 'occurred_at', 'fields', 'reason'],
  'on conflict ("entity_type", "entity_id", "event_id") do nothing',
);

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
    gaps.map((g) => [g.kind, g.entityId, g.eventId, g.eventType, g.at, g.fields.join(','), g.reason]),
  );
}
