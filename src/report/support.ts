import type { Kysely } from 'kysely';
import { withNow } from './sql-util.js';

/**
 * percentile_cont (linear interpolation between closest ranks, as PostgreSQL computes it) from a
 * row set carrying `v`, its 1-based rank `rn` among n values, and n; evaluated as an aggregate.
 */
export function percentileCont(p: number): string {
  const pos = `((n - 1) * ${p})`;
  const lo = `(CAST(${pos} AS INTEGER) + 1)`;
  const hi = `(${lo} + (${pos} > CAST(${pos} AS INTEGER)))`;
  const frac = `(${pos} - CAST(${pos} AS INTEGER))`;
  const at = (rank: string) => `max(CASE WHEN rn = ${rank} THEN v END)`;
  return `(${at(lo)} + (${at(hi)} - ${at(lo)}) * max(${frac}))`;
}

/**
 * Resolution moves: every move into a resolved status seen in the history, plus, for resolved
 * tickets whose resolution the history never saw, the upstream resolvedAt. Used by both dailies
 * and, narrowed to the changed tickets, by their incremental deltas (aggregate-facts.ts).
 */
export const resolutions = (ticketFilter = 'IS NOT NULL') => `
  SELECT i.ticket_id, i.valid_from AS at, i.assignee_id FROM rpt_ticket_status_intervals i
  WHERE i.ticket_id ${ticketFilter} AND i.is_resolution = 1
  UNION ALL
  SELECT r.ticket_id, r.full_resolved_at, r.assignee_id FROM rpt_tickets r
  WHERE r.ticket_id ${ticketFilter} AND r.is_resolved = 1 AND r.resolved_from_history = 0 AND r.full_resolved_at IS NOT NULL`;
const RESOLUTIONS = resolutions();

/**
 * One row per UTC day from the first ticket's creation to today, no gaps. Stored timestamps are the
 * fixed 24-char form, so substr(x, 1, 10) is their UTC day at a fraction of date()'s cost.
 */
export const SUPPORT_DAILY_FULL = `
INSERT INTO rpt_support_daily
  (day, created, solved, reopened, backlog, first_replies, first_reply_median_minutes, first_reply_p90_minutes,
   first_reply_sla_achieved, first_reply_sla_breached, resolve_sla_achieved, resolve_sla_breached, sla_achieved, sla_breached)
WITH RECURSIVE
bounds AS (
  SELECT min(substr(created_at, 1, 10)) AS first_day, max(date(:now), coalesce(max(substr(updated_at, 1, 10)), date(:now))) AS last_day
  FROM rpt_tickets
),
days(day) AS (
  SELECT first_day FROM bounds WHERE first_day IS NOT NULL
  UNION ALL SELECT date(day, '+1 day') FROM days, bounds WHERE day < bounds.last_day
),
created AS (SELECT substr(created_at, 1, 10) AS day, count(*) AS n FROM rpt_tickets GROUP BY 1),
solved AS (SELECT substr(at, 1, 10) AS day, count(*) AS n FROM (${RESOLUTIONS}) GROUP BY 1),
reopened AS (SELECT substr(valid_from, 1, 10) AS day, count(*) AS n FROM rpt_ticket_status_intervals WHERE is_reopen = 1 GROUP BY 1),
-- Backlog at the end of day D = unresolved stays that started on or before D and end after D.
delta AS (
  SELECT day, sum(d) AS d FROM (
    SELECT substr(valid_from, 1, 10) AS day, 1 AS d FROM rpt_ticket_status_intervals WHERE is_resolved = 0
    UNION ALL
    SELECT substr(valid_to, 1, 10), -1 FROM rpt_ticket_status_intervals WHERE is_resolved = 0 AND valid_to IS NOT NULL
  ) GROUP BY day
),
fr AS (
  SELECT substr(first_agent_reply_at, 1, 10) AS day, first_reply_minutes AS v,
    row_number() OVER (PARTITION BY substr(first_agent_reply_at, 1, 10) ORDER BY first_reply_minutes) AS rn,
    count(*) OVER (PARTITION BY substr(first_agent_reply_at, 1, 10)) AS n
  FROM rpt_tickets WHERE first_agent_reply_at IS NOT NULL AND first_reply_minutes IS NOT NULL
),
frd AS (SELECT day, max(n) AS n, ${percentileCont(0.5)} AS p50, ${percentileCont(0.9)} AS p90 FROM fr GROUP BY day),
sla AS (
  SELECT day, sum(fa) AS fa, sum(fb) AS fb, sum(ra) AS ra, sum(rb) AS rb FROM (
    SELECT substr(first_reply_sla_at, 1, 10) AS day, first_reply_sla = 'achieved' AS fa, first_reply_sla = 'breached' AS fb, 0 AS ra, 0 AS rb
    FROM rpt_tickets WHERE first_reply_sla_at IS NOT NULL
    UNION ALL
    SELECT substr(resolve_sla_at, 1, 10), 0, 0, resolve_sla = 'achieved', resolve_sla = 'breached'
    FROM rpt_tickets WHERE resolve_sla_at IS NOT NULL
  ) GROUP BY day
)
SELECT days.day, coalesce(created.n, 0), coalesce(solved.n, 0), coalesce(reopened.n, 0),
  sum(coalesce(delta.d, 0)) OVER (ORDER BY days.day ROWS UNBOUNDED PRECEDING),
  coalesce(frd.n, 0), frd.p50, frd.p90,
  coalesce(sla.fa, 0), coalesce(sla.fb, 0), coalesce(sla.ra, 0), coalesce(sla.rb, 0),
  coalesce(sla.fa, 0) + coalesce(sla.ra, 0), coalesce(sla.fb, 0) + coalesce(sla.rb, 0)
FROM days
LEFT JOIN created ON created.day = days.day LEFT JOIN solved ON solved.day = days.day
LEFT JOIN reopened ON reopened.day = days.day LEFT JOIN delta ON delta.day = days.day
LEFT JOIN frd ON frd.day = days.day LEFT JOIN sla ON sla.day = days.day`;

/**
 * Agent × day. Messages count when author_type is 'agent'; solves are attributed to the assignee at
 * the moment of the resolution move; a one-touch solve is the final resolution of a one-touch ticket.
 */
export const AGENT_DAILY_FULL = `
INSERT INTO rpt_agent_daily
  (agent_id, agent_name, agent_email, day, public_replies, internal_notes, tickets_touched, tickets_solved, one_touch_solves)
WITH msgs AS (
  SELECT m.author_id AS agent_id, substr(m.created_at, 1, 10) AS day,
    sum(coalesce(m.is_internal, 0) = 0) AS replies, sum(coalesce(m.is_internal, 0) = 1) AS notes,
    count(DISTINCT m.ticket_id) AS touched
  FROM ticket_messages m JOIN rpt_tickets r ON r.ticket_id = m.ticket_id
  WHERE m.author_type = 'agent' AND m.author_id IS NOT NULL AND m.created_at IS NOT NULL
  GROUP BY m.author_id, substr(m.created_at, 1, 10)
),
solves AS (
  SELECT x.assignee_id AS agent_id, substr(x.at, 1, 10) AS day, count(*) AS solved,
    sum(r.is_one_touch = 1 AND x.at = r.full_resolved_at) AS one_touch
  FROM (${RESOLUTIONS}) x JOIN rpt_tickets r ON r.ticket_id = x.ticket_id
  WHERE x.assignee_id IS NOT NULL GROUP BY x.assignee_id, substr(x.at, 1, 10)
),
keys AS (SELECT agent_id, day FROM msgs UNION SELECT agent_id, day FROM solves)
SELECT k.agent_id, u.name, u.email, k.day, coalesce(m.replies, 0), coalesce(m.notes, 0), coalesce(m.touched, 0),
  coalesce(s.solved, 0), coalesce(s.one_touch, 0)
FROM keys k LEFT JOIN msgs m ON m.agent_id = k.agent_id AND m.day = k.day
LEFT JOIN solves s ON s.agent_id = k.agent_id AND s.day = k.day
LEFT JOIN users u ON u.id = k.agent_id`;

export async function refreshSupportAggregates(db: Kysely<any>, now: string): Promise<void> {
  await withNow('DELETE FROM rpt_support_daily', now).execute(db);
  await withNow(SUPPORT_DAILY_FULL, now).execute(db);
  await withNow('DELETE FROM rpt_agent_daily', now).execute(db);
  await withNow(AGENT_DAILY_FULL, now).execute(db);
}
