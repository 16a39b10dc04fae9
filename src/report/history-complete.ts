import type { ReportedType } from './sql-util.js';

/**
 * Whether the mirror knows a record's whole tracked history, and why not (docs/schema.md,
 * `history_complete`). Complete means both: the mirror holds the record's creation event (so the
 * log it holds covers the record's whole life), and none of the record's events may hide a
 * tracked change it could not read (no `history_gaps` row). SQL fragments over the record id
 * expression `id`, shared by the per-record and interval rows so they always agree.
 */
type Kind = ReportedType;

const created = (kind: Kind, id: string) =>
  `EXISTS (SELECT 1 FROM events e WHERE e.type = '${kind}.created' AND e.entity_id = ${id} AND e.entity_type = '${kind}')`;

const gaps = (kind: Kind, id: string) => `history_gaps g WHERE g.entity_type = '${kind}' AND g.entity_id = ${id}`;

/** SQL boolean: the record's history is complete. */
export const historyComplete = (kind: Kind, id: string) => `(${created(kind, id)} AND NOT EXISTS (SELECT 1 FROM ${gaps(kind, id)}))`;

/**
 * SQL text, NULL when complete: "not created inside the change log the mirror holds", else the
 * first gap's reason (event type, id, time, the fields it may hide and what could not be read),
 * each followed by how many more gaps there are.
 */
export function historyIncompleteReason(kind: Kind, id: string): string {
  const count = `(SELECT count(*) FROM ${gaps(kind, id)})`;
  const beforeLog = `'not created inside the change log the mirror holds (no ${kind}.created event): changes before the log starts are unknown'`;
  // The complete records (almost all) cost the two probes of historyComplete and no more.
  return `CASE
    WHEN ${historyComplete(kind, id)} THEN NULL
    WHEN NOT ${created(kind, id)} THEN ${beforeLog} ||
      CASE WHEN ${count} > 0 THEN '; and ' || CAST(${count} AS TEXT) || ' change-log event(s) may hide changes (see history_gaps)' ELSE '' END
    ELSE (SELECT g.reason FROM ${gaps(kind, id)} ORDER BY g.occurred_at, g.event_id LIMIT 1) ||
      CASE WHEN ${count} > 1 THEN '; and ' || CAST(${count} - 1 AS TEXT) || ' more such event(s) (see history_gaps)' ELSE '' END
  END`;
}
