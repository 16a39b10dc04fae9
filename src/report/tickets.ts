import type { Kysely } from 'kysely';
import type { ReportDatabase } from './schema.js';
import { minutesBetween, sqlDialect, wholeMinutesBetween, type SqlDialect } from './dialect.js';
import { historyComplete, historyIncompleteReason } from './history-complete.js';
import { isResolved, nowed, runAll, scopedLive, TICKET_SCOPE } from './sql-util.js';

/**
 * Per-ticket reporting rows, rebuilt for the ids in the ticket scope table (every live ticket on a
 * full refresh). Deleted tickets are removed and not re-inserted.
 */

const HISTORY_COMPLETE = (id: string) => historyComplete('ticket', id);

/** The live tickets in scope, binding `t` (scopedLive). */
export const SCOPED_TICKETS = (d: SqlDialect) => scopedLive(d, TICKET_SCOPE, 'tickets', 't');

/**
 * The assignee at a moment: the last assignee change at or before it, else the first change's
 * from, else the current assignee. Each probe returns '=' + id ('=' alone for "unassigned"), so a
 * found NULL is told apart from "no row" with one index probe per case.
 */
const ASSIGNEE_AT = (id: string, at: string, current: string) => `nullif(substr(coalesce(
    (SELECT '=' || coalesce(a.to_value, '') FROM ticket_history a
      WHERE a.ticket_id = ${id} AND a.field = 'assignee_id' AND a.changed_at <= ${at} ORDER BY a.changed_at DESC, a.id DESC LIMIT 1),
    (SELECT '=' || coalesce(a.from_value, '') FROM ticket_history a
      WHERE a.ticket_id = ${id} AND a.field = 'assignee_id' ORDER BY a.changed_at, a.id LIMIT 1),
    '=' || coalesce(${current}, '')), 2), '')`;

/**
 * Stays in a status. The first stay starts at created_at in the status the earliest history row
 * moved away from (the current status when there is no history). Rows that "move" to the status
 * already held are dropped, so consecutive stays always differ.
 */
export const INSERT_INTERVALS = (d: SqlDialect) => `
INSERT INTO rpt_ticket_status_intervals
  (ticket_id, seq, status, is_resolved, valid_from, valid_to, minutes, is_resolution, is_reopen, assignee_id, source, history_complete)
WITH scope AS (
  SELECT t.id, t.created_at, t.status FROM ${SCOPED_TICKETS(d)}
),
-- One window pass gives each move its predecessor's status (the initial status for the first).
h AS (
  SELECT h.ticket_id, h.to_value, h.changed_at, h.source, s.created_at, row_number() OVER w AS rn,
    coalesce(first_value(h.from_value) OVER w, s.status) AS initial, lag(h.to_value) OVER w AS prev_to
  FROM scope s CROSS JOIN ticket_history h WHERE h.ticket_id = s.id AND h.field = 'status'
  WINDOW w AS (PARTITION BY h.ticket_id ORDER BY h.changed_at, h.id)
),
-- Joins go through primary keys or indexes only: a materialised CTE has no index to join on.
-- The two CROSS JOINs keep SQLite's order as written (scopedLive): joined the other way round,
-- it walked all of ticket_history in (ticket_id, changed_at) order, which spares the window's
-- sort, or scanned every ticket to probe the intervals; either grows with the mirror, not with
-- the scope (docs/schema.md, "Reporting tables").
kept AS (
  SELECT ticket_id, 0 AS rn, initial AS status, created_at AS at, 'created' AS source FROM h WHERE rn = 1
  UNION ALL
  SELECT s.id, 0, s.status, s.created_at, 'created' FROM scope s
  WHERE NOT EXISTS (SELECT 1 FROM ticket_history x WHERE x.ticket_id = s.id AND x.field = 'status')
  UNION ALL
  SELECT ticket_id, rn, to_value, changed_at, source FROM h
  WHERE to_value IS DISTINCT FROM (CASE WHEN rn = 1 THEN initial ELSE prev_to END)
),
iv AS (
  SELECT ticket_id, row_number() OVER w AS seq, status, at AS valid_from, lead(at) OVER w AS valid_to,
         lag(status) OVER w AS prev_status, source
  FROM kept WINDOW w AS (PARTITION BY ticket_id ORDER BY rn)
)
SELECT iv.ticket_id, iv.seq, iv.status, ${isResolved('iv.status')}, iv.valid_from, iv.valid_to,
  CASE WHEN iv.valid_to IS NOT NULL THEN ${minutesBetween(d, 'iv.valid_from', 'iv.valid_to')} END,
  iv.seq > 1 AND ${isResolved('iv.status')} AND NOT ${isResolved('iv.prev_status')},
  iv.seq > 1 AND NOT ${isResolved('iv.status')} AND ${isResolved('iv.prev_status')},
  ${ASSIGNEE_AT('iv.ticket_id', 'iv.valid_from', 't.assignee_id')},
  iv.source,
  ${HISTORY_COMPLETE('iv.ticket_id')}
FROM iv CROSS JOIN tickets t WHERE t.id = iv.ticket_id`;

/**
 * The filter that keeps a per-ticket aggregate to the tickets in scope. A full rebuild has every
 * live ticket in scope, so there each aggregate reads its table whole, one scan grouped once,
 * instead of probing it once per ticket (the LEFT JOINs below drop deleted tickets' groups): at
 * 50,000 tickets on PostgreSQL the statement took 3.3-4.5 s with the filters, 2.2-2.3 s without
 * (bench/README.md, "Eighteenth pass").
 */
const inScope = (all: boolean, column: string) => (all ? '' : ` WHERE ${column} IN (SELECT id FROM scope)`);

/** One row per live ticket in scope (every live ticket when `all`); reads the intervals just rebuilt. */
const INSERT_TICKETS = (d: SqlDialect, all: boolean) => `
INSERT INTO rpt_tickets
  (ticket_id, number, key, subject, status, is_resolved, priority, team_id, team_name, assignee_id, assignee_name,
   assignee_email, requester_id, requester_name, requester_email, tags, created_at, updated_at, first_agent_reply_at,
   first_resolved_at, full_resolved_at, resolved_from_history, first_reply_minutes, first_resolution_minutes,
   full_resolution_minutes, reopen_count, public_agent_replies, internal_notes, customer_messages, is_one_touch,
   first_reply_due_at, first_reply_sla, first_reply_sla_at, resolve_due_at, resolve_sla, resolve_sla_at, age_minutes,
   history_complete, history_incomplete_reason, refreshed_at)
WITH scope AS (
  SELECT t.* FROM ${SCOPED_TICKETS(d)}
),
msg AS (
  SELECT m.ticket_id,
    ${d.countIf(`m.author_type = 'agent' AND coalesce(m.is_internal, ${d.F}) = ${d.F}`)} AS public_agent_replies,
    ${d.countIf(`coalesce(m.is_internal, ${d.F}) = ${d.T}`)} AS internal_notes,
    ${d.countIf(`coalesce(m.is_internal, ${d.F}) = ${d.F} AND coalesce(m.author_type, '') NOT IN ('agent', 'system')`)} AS customer_messages
  FROM ticket_messages m${inScope(all, 'm.ticket_id')} GROUP BY m.ticket_id
),
tg AS (
  SELECT ticket_id, string_agg(tag, ',' ORDER BY tag) AS tags
  FROM ticket_tags${inScope(all, 'ticket_id')} GROUP BY ticket_id
),
iv AS (
  SELECT ticket_id,
    min(CASE WHEN is_resolution = ${d.T} THEN valid_from END) AS first_res,
    max(CASE WHEN is_resolution = ${d.T} THEN valid_from END) AS last_res,
    ${d.countIf(`is_reopen = ${d.T}`)} AS reopens
  FROM rpt_ticket_status_intervals${inScope(all, 'ticket_id')} GROUP BY ticket_id
),
b AS (
  SELECT s.*, ${isResolved('s.status')} AS resolved, iv.reopens,
    -- Without a resolution move in the history, a resolved ticket's upstream resolvedAt stands in.
    CASE WHEN iv.first_res IS NOT NULL THEN iv.first_res
         WHEN ${isResolved('s.status')} THEN coalesce(s.resolved_at, s.status_changed_at) END AS first_res,
    CASE WHEN NOT ${isResolved('s.status')} THEN NULL
         WHEN iv.last_res IS NOT NULL THEN iv.last_res ELSE coalesce(s.resolved_at, s.status_changed_at) END AS full_res,
    iv.first_res IS NOT NULL AS from_history,
    coalesce(msg.public_agent_replies, 0) AS par, coalesce(msg.internal_notes, 0) AS notes,
    coalesce(msg.customer_messages, 0) AS cust, tg.tags
  FROM scope s LEFT JOIN iv ON iv.ticket_id = s.id LEFT JOIN msg ON msg.ticket_id = s.id LEFT JOIN tg ON tg.ticket_id = s.id
),
c AS (
  SELECT b.*,
    CASE
      WHEN b.first_reply_due_at IS NULL AND b.first_reply_breached_at IS NULL THEN 'none'
      WHEN b.first_reply_breached_at IS NOT NULL OR b.first_agent_reply_at > b.first_reply_due_at THEN 'breached'
      WHEN b.first_agent_reply_at IS NOT NULL THEN 'achieved'
      WHEN b.resolved THEN 'none'
      WHEN :now > b.first_reply_due_at THEN 'breached'
      ELSE 'active' END AS fr_sla,
    CASE
      WHEN b.resolve_due_at IS NULL AND b.resolve_breached_at IS NULL THEN 'none'
      WHEN b.resolve_breached_at IS NOT NULL THEN 'breached'
      WHEN b.resolved AND b.full_res > b.resolve_due_at THEN 'breached'
      WHEN b.resolved THEN 'achieved'
      WHEN :now > b.resolve_due_at THEN 'breached'
      ELSE 'active' END AS res_sla
  FROM b
)
SELECT c.id, c.number, c.key, c.subject, c.status, c.resolved, c.priority, c.team_id, c.team_name,
  c.assignee_id, au.name, au.email, c.contact_id, nullif(trim(coalesce(ct.first_name, '') || ' ' || coalesce(ct.last_name, '')), ''),
  ct.email, c.tags, c.created_at, c.updated_at, c.first_agent_reply_at, c.first_res, c.full_res, c.from_history,
  CASE WHEN c.first_agent_reply_at IS NOT NULL THEN ${minutesBetween(d, 'c.created_at', 'c.first_agent_reply_at')} END,
  CASE WHEN c.first_res IS NOT NULL THEN ${minutesBetween(d, 'c.created_at', 'c.first_res')} END,
  CASE WHEN c.full_res IS NOT NULL THEN ${minutesBetween(d, 'c.created_at', 'c.full_res')} END,
  coalesce(c.reopens, 0), c.par, c.notes, c.cust, c.resolved AND c.par = 1,
  c.first_reply_due_at, c.fr_sla,
  CASE c.fr_sla WHEN 'achieved' THEN c.first_agent_reply_at WHEN 'breached' THEN coalesce(c.first_reply_breached_at, c.first_reply_due_at) END,
  c.resolve_due_at, c.res_sla,
  CASE c.res_sla WHEN 'achieved' THEN c.full_res WHEN 'breached' THEN coalesce(c.resolve_breached_at, c.resolve_due_at) END,
  CASE WHEN NOT c.resolved THEN ${wholeMinutesBetween(d, 'c.created_at', ':now')} END,
  ${HISTORY_COMPLETE('c.id')}, ${historyIncompleteReason('ticket', 'c.id')}, :now
FROM c LEFT JOIN users au ON au.id = c.assignee_id LEFT JOIN contacts ct ON ct.id = c.contact_id`;

/**
 * Untouched rows whose SLA target passes its due time at :now. Exported so the incremental
 * aggregates can count exactly the rows the clock step is about to change.
 */
export const FIRST_REPLY_SLA_LAPSES = (d: SqlDialect) =>
  `is_resolved = ${d.F} AND first_reply_sla = 'active' AND first_reply_due_at < :now`;
export const RESOLVE_SLA_LAPSES = (d: SqlDialect) => `is_resolved = ${d.F} AND resolve_sla = 'active' AND resolve_due_at < :now`;

/**
 * Columns that move with the clock alone (age, an SLA target passing its due time) on tickets the
 * cycle did not touch. The age is in whole minutes, so only the rows whose age moved are written:
 * between two refreshes a few seconds apart that is a few percent of the unresolved tickets, where
 * a fractional age rewrote every one of them each cycle (38,000 rows at 50,000 tickets: most of a
 * refresh's WAL on SQLite and as many dead tuples on PostgreSQL; docs/schema.md, rpt_tickets).
 */
const CLOCK_UPDATES = (d: SqlDialect) => {
  const age = wholeMinutesBetween(d, 'created_at', ':now');
  return [
    `UPDATE rpt_tickets SET age_minutes = ${age}, refreshed_at = :now WHERE is_resolved = ${d.F} AND age_minutes IS DISTINCT FROM ${age}`,
    `UPDATE rpt_tickets SET first_reply_sla = 'breached', first_reply_sla_at = first_reply_due_at, refreshed_at = :now WHERE ${FIRST_REPLY_SLA_LAPSES(d)}`,
    `UPDATE rpt_tickets SET resolve_sla = 'breached', resolve_sla_at = resolve_due_at, refreshed_at = :now WHERE ${RESOLVE_SLA_LAPSES(d)}`,
  ];
};

/** Rebuilds intervals and ticket rows for the scope; `all` empties the tables first (faster than a keyed delete). */
export async function refreshTicketRows(db: Kysely<ReportDatabase>, all: boolean, now: string): Promise<void> {
  const d = sqlDialect(db);
  const where = all ? '' : ` WHERE ticket_id IN (SELECT id FROM ${d.temp(TICKET_SCOPE)})`;
  const statements = [
    ...['rpt_ticket_status_intervals', 'rpt_tickets'].map((table) => `DELETE FROM ${table}${where}`),
    INSERT_INTERVALS(d),
    INSERT_TICKETS(d, all),
  ];
  await runAll(
    d,
    db,
    statements.map((text) => nowed(d, text, now)),
  );
}

/** The statements that move the clock-driven columns of the rows the refresh did not rebuild. */
export function ticketClockStatements(d: SqlDialect, now: string): string[] {
  return CLOCK_UPDATES(d).map((stmt) => nowed(d, stmt, now));
}
