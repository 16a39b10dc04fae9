import type { Kysely } from 'kysely';
import type { ReportDatabase } from './schema.js';
import { sqlDialect, type SqlDialect } from './dialect.js';
import { nowed, runAll } from './sql-util.js';

/**
 * percentile_cont (linear interpolation between closest ranks, as PostgreSQL computes it) from a
 * row set carrying `v`, its 1-based rank `rn` among n values, and n; evaluated as an aggregate.
 */
export function percentileCont(d: SqlDialect, p: number): string {
  // The position in 8-byte float arithmetic in both dialects (PostgreSQL would otherwise use exact
  // numeric), so the interpolation weight, and with it the figure, is bit-for-bit the same.
  const pos = `(CAST(n - 1 AS ${d.real}) * ${p})`;
  const lo = `(${d.trunc(pos)} + 1)`;
  const hi = `(${lo} + CASE WHEN ${pos} > ${d.trunc(pos)} THEN 1 ELSE 0 END)`;
  const frac = `(${pos} - ${d.trunc(pos)})`;
  const at = (rank: string) => `max(CASE WHEN rn = ${rank} THEN v END)`;
  return `(${at(lo)} + (${at(hi)} - ${at(lo)}) * max(${frac}))`;
}

/**
 * Resolution moves: every move into a resolved status seen in the history, plus, for resolved
 * tickets whose resolution the history never saw, the upstream resolvedAt. Used by both dailies
 * and, narrowed to the changed tickets, by their incremental deltas (aggregate-facts.ts).
 */
export const resolutions = (d: SqlDialect, ticketFilter = 'IS NOT NULL') => `
  SELECT i.ticket_id, i.valid_from AS at, i.assignee_id FROM rpt_ticket_status_intervals i
  WHERE i.ticket_id ${ticketFilter} AND i.is_resolution = ${d.T}
  UNION ALL
  SELECT r.ticket_id, r.full_resolved_at, r.assignee_id FROM rpt_tickets r
  WHERE r.ticket_id ${ticketFilter} AND r.is_resolved = ${d.T} AND r.resolved_from_history = ${d.F} AND r.full_resolved_at IS NOT NULL`;

/** One row per UTC day from the first ticket's creation to today, no gaps. */
export const SUPPORT_DAILY_FULL = (d: SqlDialect) => `
INSERT INTO rpt_support_daily
  (day, created, solved, reopened, backlog, first_replies, first_reply_median_minutes, first_reply_p90_minutes,
   first_reply_sla_achieved, first_reply_sla_breached, resolve_sla_achieved, resolve_sla_breached, sla_achieved, sla_breached)
WITH RECURSIVE
bounds AS (
  SELECT min(${d.day('created_at')}) AS first_day, ${d.greatest(d.day(':now'), `coalesce(max(${d.day('updated_at')}), ${d.day(':now')})`)} AS last_day
  FROM rpt_tickets
),
days(day) AS (
  SELECT first_day FROM bounds WHERE first_day IS NOT NULL
  UNION ALL SELECT ${d.nextDay('day')} FROM days, bounds WHERE day < bounds.last_day
),
created AS (SELECT ${d.day('created_at')} AS day, count(*) AS n FROM rpt_tickets GROUP BY 1),
solved AS (SELECT ${d.day('at')} AS day, count(*) AS n FROM (${resolutions(d)}) AS x GROUP BY 1),
reopened AS (SELECT ${d.day('valid_from')} AS day, count(*) AS n FROM rpt_ticket_status_intervals WHERE is_reopen = ${d.T} GROUP BY 1),
-- Backlog at the end of day D = unresolved stays that started on or before D and end after D.
delta AS (
  SELECT day, sum(d) AS d FROM (
    SELECT ${d.day('valid_from')} AS day, 1 AS d FROM rpt_ticket_status_intervals WHERE is_resolved = ${d.F}
    UNION ALL
    SELECT ${d.day('valid_to')}, -1 FROM rpt_ticket_status_intervals WHERE is_resolved = ${d.F} AND valid_to IS NOT NULL
  ) AS x GROUP BY day
),
fr AS (
  SELECT ${d.day('first_agent_reply_at')} AS day, first_reply_minutes AS v,
    row_number() OVER (PARTITION BY ${d.day('first_agent_reply_at')} ORDER BY first_reply_minutes) AS rn,
    count(*) OVER (PARTITION BY ${d.day('first_agent_reply_at')}) AS n
  FROM rpt_tickets WHERE first_agent_reply_at IS NOT NULL AND first_reply_minutes IS NOT NULL
),
frd AS (SELECT day, max(n) AS n, ${percentileCont(d, 0.5)} AS p50, ${percentileCont(d, 0.9)} AS p90 FROM fr GROUP BY day),
sla AS (
  SELECT day, sum(fa) AS fa, sum(fb) AS fb, sum(ra) AS ra, sum(rb) AS rb FROM (
    SELECT ${d.day('first_reply_sla_at')} AS day, ${d.int("first_reply_sla = 'achieved'")} AS fa,
      ${d.int("first_reply_sla = 'breached'")} AS fb, 0 AS ra, 0 AS rb
    FROM rpt_tickets WHERE first_reply_sla_at IS NOT NULL
    UNION ALL
    SELECT ${d.day('resolve_sla_at')}, 0, 0, ${d.int("resolve_sla = 'achieved'")}, ${d.int("resolve_sla = 'breached'")}
    FROM rpt_tickets WHERE resolve_sla_at IS NOT NULL
  ) AS x GROUP BY day
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
export const AGENT_DAILY_FULL = (d: SqlDialect) => `
INSERT INTO rpt_agent_daily
  (agent_id, agent_name, agent_email, day, public_replies, internal_notes, tickets_touched, tickets_solved, one_touch_solves)
WITH msgs AS (
  SELECT m.author_id AS agent_id, ${d.day('m.created_at')} AS day,
    ${d.countIf(`coalesce(m.is_internal, ${d.F}) = ${d.F}`)} AS replies, ${d.countIf(`coalesce(m.is_internal, ${d.F}) = ${d.T}`)} AS notes,
    count(DISTINCT m.ticket_id) AS touched
  FROM ticket_messages m JOIN rpt_tickets r ON r.ticket_id = m.ticket_id
  WHERE m.author_type = 'agent' AND m.author_id IS NOT NULL AND m.created_at IS NOT NULL
  GROUP BY m.author_id, ${d.day('m.created_at')}
),
solves AS (
  SELECT x.assignee_id AS agent_id, ${d.day('x.at')} AS day, count(*) AS solved,
    ${d.countIf(`r.is_one_touch = ${d.T} AND x.at = r.full_resolved_at`)} AS one_touch
  FROM (${resolutions(d)}) x JOIN rpt_tickets r ON r.ticket_id = x.ticket_id
  WHERE x.assignee_id IS NOT NULL GROUP BY x.assignee_id, ${d.day('x.at')}
),
keys AS (SELECT agent_id, day FROM msgs UNION SELECT agent_id, day FROM solves)
SELECT k.agent_id, u.name, u.email, k.day, coalesce(m.replies, 0), coalesce(m.notes, 0), coalesce(m.touched, 0),
  coalesce(s.solved, 0), coalesce(s.one_touch, 0)
FROM keys k LEFT JOIN msgs m ON m.agent_id = k.agent_id AND m.day = k.day
LEFT JOIN solves s ON s.agent_id = k.agent_id AND s.day = k.day
LEFT JOIN users u ON u.id = k.agent_id`;

export async function refreshSupportAggregates(db: Kysely<ReportDatabase>, now: string): Promise<void> {
  const d = sqlDialect(db);
  await runAll(d, db, [
    'DELETE FROM rpt_support_daily',
    nowed(d, SUPPORT_DAILY_FULL(d), now),
    'DELETE FROM rpt_agent_daily',
    nowed(d, AGENT_DAILY_FULL(d), now),
  ]);
}
