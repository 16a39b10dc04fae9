import type { Kysely } from 'kysely';
import type { ReportDatabase } from './schema.js';
import { daysBetween, minutesBetween, sqlDialect, wholeMinuteDaysBetween, type SqlDialect } from './dialect.js';
import { historyComplete, historyIncompleteReason } from './history-complete.js';
import { DEAL_SCOPE, nowed, runAll, scopedLive } from './sql-util.js';

const HISTORY_COMPLETE = (id: string) => historyComplete('deal', id);

/** The live deals in scope, binding `d` (scopedLive). */
export const SCOPED_DEALS = (d: SqlDialect) => scopedLive(d, DEAL_SCOPE, 'deals', 'd');

/**
 * Stays in a stage, from deal_history field 'stage_id'. The first stay starts at created_at in the
 * stage the earliest move left (the current stage when there is no history). Direction compares
 * stage positions with the previous stay; the first stay has none. A stage id names a stage of the
 * deal's own pipeline: two pipelines may share one (migration 0700_owner_keyed_children).
 */
const INSERT_INTERVALS = (d: SqlDialect) => `
INSERT INTO rpt_deal_stage_intervals
  (deal_id, seq, pipeline_id, stage_id, stage_name, stage_position, is_won, is_lost, entered_at, exited_at, minutes,
   direction, source, history_complete)
WITH scope AS (
  SELECT d.id, d.created_at, d.stage_id, d.pipeline_id FROM ${SCOPED_DEALS(d)}
),
h AS (
  SELECT h.deal_id, h.from_value, h.to_value, h.changed_at, h.source,
         row_number() OVER (PARTITION BY h.deal_id ORDER BY h.changed_at, h.id) AS rn
  FROM deal_history h WHERE h.field = 'stage_id' AND h.deal_id IN (SELECT id FROM scope)
),
moves AS (
  SELECT s.id AS deal_id, 0 AS rn, coalesce(h1.from_value, s.stage_id) AS stage_id, s.created_at AS at, 'created' AS source
  FROM scope s LEFT JOIN h h1 ON h1.deal_id = s.id AND h1.rn = 1
  UNION ALL
  SELECT deal_id, rn, to_value, changed_at, source FROM h
),
marked AS (SELECT m.*, lag(m.stage_id) OVER (PARTITION BY m.deal_id ORDER BY m.rn) AS before FROM moves m),
kept AS (SELECT * FROM marked WHERE rn = 0 OR stage_id IS DISTINCT FROM before),
iv AS (
  SELECT deal_id, row_number() OVER w AS seq, stage_id, at AS entered_at, lead(at) OVER w AS exited_at,
         lag(stage_id) OVER w AS prev_stage, source
  FROM kept WINDOW w AS (PARTITION BY deal_id ORDER BY rn)
)
SELECT iv.deal_id, iv.seq, coalesce(st.pipeline_id, s.pipeline_id), iv.stage_id, st.name, st.position,
  coalesce(st.is_won, ${d.F}), coalesce(st.is_lost, ${d.F}), iv.entered_at, iv.exited_at,
  CASE WHEN iv.exited_at IS NOT NULL THEN ${minutesBetween(d, 'iv.entered_at', 'iv.exited_at')} END,
  CASE WHEN iv.seq = 1 OR st.position IS NULL OR ps.position IS NULL THEN NULL
       WHEN st.position >= ps.position THEN 'forward' ELSE 'back' END,
  iv.source, ${HISTORY_COMPLETE('iv.deal_id')}
FROM iv JOIN scope s ON s.id = iv.deal_id
LEFT JOIN stages st ON st.pipeline_id = s.pipeline_id AND st.id = iv.stage_id
LEFT JOIN stages ps ON ps.pipeline_id = s.pipeline_id AND ps.id = iv.prev_stage`;

/**
 * One row per live deal in scope. won_at / lost_at: the first stay in a won / lost stage. When
 * that stay is the first one and the history is incomplete (the deal was already won when first
 * copied), the move was never seen and the deal's updated_at stands in.
 */
const INSERT_DEALS = (d: SqlDialect) => `
INSERT INTO rpt_deals
  (deal_id, name, pipeline_id, pipeline_name, stage_id, stage_name, stage_position, status, amount, amount_cents,
   currency, owner_id, owner_name, owner_email, company_id, company_name, primary_contact_id, primary_contact_name,
   primary_contact_email, created_at, updated_at, close_date, stage_entered_at, won_at, lost_at, closed_at, days_open,
   days_to_close, history_complete, history_incomplete_reason, refreshed_at)
WITH scope AS (
  SELECT d.* FROM ${SCOPED_DEALS(d)}
),
iv AS (
  SELECT i.deal_id,
    min(CASE WHEN i.is_won = ${d.T} THEN CASE WHEN i.seq = 1 AND i.history_complete = ${d.F} THEN s.updated_at ELSE i.entered_at END END) AS won_at,
    min(CASE WHEN i.is_lost = ${d.T} THEN CASE WHEN i.seq = 1 AND i.history_complete = ${d.F} THEN s.updated_at ELSE i.entered_at END END) AS lost_at,
    max(CASE WHEN i.exited_at IS NULL THEN i.entered_at END) AS stage_entered_at,
    ${d.boolOr('i.history_complete')} AS history_complete
  FROM rpt_deal_stage_intervals i JOIN scope s ON s.id = i.deal_id GROUP BY i.deal_id
),
b AS (
  SELECT s.*, iv.won_at, iv.lost_at, iv.stage_entered_at, iv.history_complete AS hc,
    CASE s.status WHEN 'won' THEN iv.won_at WHEN 'lost' THEN iv.lost_at END AS closed_at,
    (SELECT dc.contact_id FROM deal_contacts dc WHERE dc.deal_id = s.id
       ORDER BY coalesce(dc.is_primary, ${d.F}) DESC, dc.position LIMIT 1) AS contact_id
  FROM scope s LEFT JOIN iv ON iv.deal_id = s.id
)
SELECT b.id, b.name, b.pipeline_id, p.name, b.stage_id, st.name, st.position, b.status,
  b.amount_cents / 100.0, b.amount_cents, b.currency, b.owner_id, u.name, u.email, b.company_id, co.name,
  b.contact_id, nullif(trim(coalesce(ct.first_name, '') || ' ' || coalesce(ct.last_name, '')), ''), ct.email,
  b.created_at, b.updated_at, b.close_date, b.stage_entered_at, b.won_at, b.lost_at, b.closed_at,
  CASE WHEN b.status = 'open' THEN ${wholeMinuteDaysBetween(d, 'b.created_at', ':now')} END,
  CASE WHEN b.closed_at IS NOT NULL THEN ${daysBetween(d, 'b.created_at', 'b.closed_at')} END,
  coalesce(b.hc, ${d.F}), ${historyIncompleteReason('deal', 'b.id')}, :now
FROM b LEFT JOIN pipelines p ON p.id = b.pipeline_id LEFT JOIN stages st ON st.pipeline_id = b.pipeline_id AND st.id = b.stage_id
LEFT JOIN users u ON u.id = b.owner_id LEFT JOIN companies co ON co.id = b.company_id
LEFT JOIN contacts ct ON ct.id = b.contact_id`;

export async function refreshDealRows(db: Kysely<ReportDatabase>, all: boolean, now: string): Promise<void> {
  const d = sqlDialect(db);
  const where = all ? '' : ` WHERE deal_id IN (SELECT id FROM ${d.temp(DEAL_SCOPE)})`;
  const statements = [
    ...['rpt_deal_stage_intervals', 'rpt_deals'].map((table) => `DELETE FROM ${table}${where}`),
    INSERT_INTERVALS(d),
    INSERT_DEALS(d),
  ];
  await runAll(
    d,
    db,
    statements.map((text) => nowed(d, text, now)),
  );
}

/**
 * days_open of open deals the cycle did not touch moves with the clock. It counts whole minutes, so
 * only the rows whose value moved are written: a fractional value rewrote every open deal each
 * cycle (docs/schema.md, rpt_deals).
 */
export function dealClockStatement(d: SqlDialect, now: string): string {
  const open = wholeMinuteDaysBetween(d, 'created_at', ':now');
  return nowed(
    d,
    `UPDATE rpt_deals SET days_open = ${open}, refreshed_at = :now WHERE status = 'open' AND days_open IS DISTINCT FROM ${open}`,
    now,
  );
}
