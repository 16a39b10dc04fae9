import type { Kysely } from 'kysely';
import type { ReportDatabase } from './schema.js';
import { AGENT_DELTA, DAY_DELTA, factStatements, FR_DELTA } from './aggregate-facts.js';
import { sqlDialect, type SqlDialect } from './dialect.js';
import { freshTemp, nowed, runAll, TICKET_SCOPE, withNow } from './sql-util.js';
import { AGENT_DAILY_FULL, percentileCont, SUPPORT_DAILY_FULL } from './support.js';

/**
 * Incremental rpt_support_daily / rpt_agent_daily: applies the deltas captured in aggregate-facts.ts
 * and recomputes only what is not additive (percentiles of the days whose first-reply samples
 * changed, message figures of the agent × day keys the changed tickets wrote on). The figures equal
 * a full rebuild's (test/report/incremental.test.ts compares them byte for byte).
 */

/** The day range a full rebuild would produce, and the one stored. */
const BOUNDS = (d: SqlDialect) => `
SELECT (SELECT ${d.day('min(created_at)')} FROM rpt_tickets) AS first_day,
  ${d.greatest(d.day(':now'), `coalesce((SELECT ${d.day('max(updated_at)')} FROM rpt_tickets), ${d.day(':now')})`)} AS last_day,
  (SELECT min(day) FROM rpt_support_daily) AS old_first, (SELECT max(day) FROM rpt_support_daily) AS old_last`;

const DAY_COUNTS = (d: SqlDialect) => `
UPDATE rpt_support_daily AS s SET created = s.created + dd.created, solved = s.solved + dd.solved,
  reopened = s.reopened + dd.reopened,
  first_reply_sla_achieved = s.first_reply_sla_achieved + dd.fa, first_reply_sla_breached = s.first_reply_sla_breached + dd.fb,
  resolve_sla_achieved = s.resolve_sla_achieved + dd.ra, resolve_sla_breached = s.resolve_sla_breached + dd.rb,
  sla_achieved = s.sla_achieved + dd.fa + dd.ra, sla_breached = s.sla_breached + dd.fb + dd.rb
FROM (
  SELECT day, sum(created) AS created, sum(solved) AS solved, sum(reopened) AS reopened,
    sum(fa) AS fa, sum(fb) AS fb, sum(ra) AS ra, sum(rb) AS rb
  FROM ${d.temp(DAY_DELTA)} GROUP BY day
  HAVING sum(created) != 0 OR sum(solved) != 0 OR sum(reopened) != 0 OR sum(fa) != 0 OR sum(fb) != 0 OR sum(ra) != 0 OR sum(rb) != 0
) AS dd
WHERE s.day = dd.day`;

/**
 * Backlog at the end of day D is the running sum of the stays' start (+1) and end (-1) steps over
 * the range's days up to D, so a changed step on day X moves every day from X on by the same
 * amount: one pass over the (few hundred) day rows with the (few) changed steps, not the intervals.
 */
const BACKLOG = (d: SqlDialect) => `
WITH dd AS (SELECT day, sum(bl) AS bl FROM ${d.temp(DAY_DELTA)} WHERE day >= :first GROUP BY day HAVING sum(bl) != 0)
UPDATE rpt_support_daily SET backlog = backlog + (SELECT sum(dd.bl) FROM dd WHERE dd.day <= rpt_support_daily.day)
WHERE day >= (SELECT min(day) FROM dd)`;

/** Days whose multiset of first-reply samples changed; their count and percentiles are recomputed. */
const FR_DAYS = (d: SqlDialect) => `SELECT day FROM ${d.temp(FR_DELTA)} GROUP BY day, v HAVING sum(sign) != 0`;

/**
 * SUPPORT_DAILY's fr / frd for the given days, through the first_agent_reply_at index: the CROSS
 * JOIN keeps SQLite's order (days outer), which otherwise scanned every rpt_tickets row.
 */
export const FIRST_REPLIES = (d: SqlDialect) => `
WITH fd AS (SELECT DISTINCT day FROM (${FR_DAYS(d)}) AS x),
fr AS (
  SELECT fd.day, r.first_reply_minutes AS v,
    row_number() OVER (PARTITION BY fd.day ORDER BY r.first_reply_minutes) AS rn, count(*) OVER (PARTITION BY fd.day) AS n
  FROM fd CROSS JOIN rpt_tickets r
  WHERE r.first_agent_reply_at >= ${d.dayStart('fd.day')} AND r.first_agent_reply_at < ${d.dayStart(d.nextDay('fd.day'))}
    AND ${d.day('r.first_agent_reply_at')} = fd.day AND r.first_reply_minutes IS NOT NULL
),
frd AS (SELECT day, max(n) AS n, ${percentileCont(d, 0.5)} AS p50, ${percentileCont(d, 0.9)} AS p90 FROM fr GROUP BY day),
all_days AS (SELECT fd.day, frd.n, frd.p50, frd.p90 FROM fd LEFT JOIN frd ON frd.day = fd.day)
UPDATE rpt_support_daily AS s SET first_replies = coalesce(a.n, 0), first_reply_median_minutes = a.p50, first_reply_p90_minutes = a.p90
FROM all_days AS a WHERE s.day = a.day`;

/** Keys whose message figures are recomputed: where the changed tickets' current agent messages fall. */
const AGENT_KEYS = 'rpt_agent_keys';
const FILL_AGENT_KEYS = (d: SqlDialect) => `
${d.insertIgnore(d.temp(AGENT_KEYS))} (agent_id, day)
SELECT author_id, ${d.day('created_at')} FROM ticket_messages
WHERE ticket_id IN (SELECT id FROM ${d.temp(TICKET_SCOPE)}) AND author_type = 'agent' AND author_id IS NOT NULL AND created_at IS NOT NULL
UNION
SELECT agent_id, day FROM ${d.temp(AGENT_DELTA)} GROUP BY agent_id, day HAVING sum(solved) != 0 OR sum(one_touch) != 0${d.ignoreTail}`;

/**
 * Every row of an agent carries the same name and email (the invariant a full rebuild leaves), so
 * one row per agent tells whether the users row changed since; only such agents are rewritten.
 */
const AGENT_NAMES = `
WITH cur AS (SELECT agent_id, min(agent_name) AS agent_name, min(agent_email) AS agent_email FROM rpt_agent_daily GROUP BY agent_id),
stale AS (
  SELECT c.agent_id FROM cur c LEFT JOIN users u ON u.id = c.agent_id
  WHERE c.agent_name IS DISTINCT FROM u.name OR c.agent_email IS DISTINCT FROM u.email
)
UPDATE rpt_agent_daily SET agent_name = (SELECT name FROM users WHERE id = rpt_agent_daily.agent_id),
  agent_email = (SELECT email FROM users WHERE id = rpt_agent_daily.agent_id)
WHERE agent_id IN (SELECT agent_id FROM stale)`;

/**
 * An agent message on a live ticket for the row's key, through ticket_messages (author_id,
 * created_at, author_type, is_internal, ticket_id) alone. Live is "not deleted": rpt_tickets holds
 * exactly those, as the per-record rebuild before this made it so. The few deleted ids are read
 * once, through the deleted_at index. Joined to rpt_tickets instead, PostgreSQL probed its primary
 * key once per message (135,000 probes and 0.85 s of a 7.3 s tick at L), each with a heap fetch,
 * as every cycle rewrites rpt_tickets rows and so keeps its visibility map cleared.
 */
const KEY_MESSAGES = (d: SqlDialect) => `FROM ticket_messages m
  WHERE m.author_id = a.agent_id AND m.created_at >= ${d.dayStart('a.day')} AND m.created_at < ${d.dayStart(d.nextDay('a.day'))}
    AND ${d.day('m.created_at')} = a.day AND m.author_type = 'agent'
    AND m.ticket_id NOT IN (SELECT id FROM tickets WHERE ${d.isSet('deleted_at')})`;

const AGENT_STATEMENTS = (d: SqlDialect) => [
  AGENT_NAMES,
  `${d.insertIgnore('rpt_agent_daily')}
     (agent_id, agent_name, agent_email, day, public_replies, internal_notes, tickets_touched, tickets_solved, one_touch_solves)
   SELECT k.agent_id, u.name, u.email, k.day, 0, 0, 0, 0, 0 FROM ${d.temp(AGENT_KEYS)} k LEFT JOIN users u ON u.id = k.agent_id${d.ignoreTail}`,
  `UPDATE rpt_agent_daily AS a SET tickets_solved = a.tickets_solved + dd.solved, one_touch_solves = a.one_touch_solves + dd.one_touch
   FROM (SELECT agent_id, day, sum(solved) AS solved, sum(one_touch) AS one_touch FROM ${d.temp(AGENT_DELTA)} GROUP BY agent_id, day) AS dd
   WHERE a.agent_id = dd.agent_id AND a.day = dd.day`,
  `UPDATE rpt_agent_daily AS a SET (public_replies, internal_notes, tickets_touched) = (
     SELECT coalesce(${d.countIf(`coalesce(m.is_internal, ${d.F}) = ${d.F}`)}, 0), coalesce(${d.countIf(`coalesce(m.is_internal, ${d.F}) = ${d.T}`)}, 0),
       count(DISTINCT m.ticket_id) ${KEY_MESSAGES(d)})
   WHERE (a.agent_id, a.day) IN (SELECT agent_id, day FROM ${d.temp(AGENT_KEYS)})`,
  // A full rebuild has a row for a key with an agent message or a solve; keys left with neither go.
  `DELETE FROM rpt_agent_daily AS a WHERE (a.agent_id, a.day) IN (SELECT agent_id, day FROM ${d.temp(AGENT_KEYS)})
     AND a.tickets_solved = 0 AND NOT EXISTS (SELECT 1 ${KEY_MESSAGES(d)})`,
];

/**
 * After the per-record rebuild and the clock step: captures the new contribution and applies the
 * deltas. The support table falls back to a full rebuild when its day range moved (a new day began,
 * or the first ticket changed), the agent table when a message of a changed ticket may have left.
 */
export async function applyAggregateDeltas(db: Kysely<ReportDatabase>, now: string, messagesLeft: boolean): Promise<void> {
  const d = sqlDialect(db);
  await runAll(d, db, factStatements(d, 1));
  const b = (await withNow(d, BOUNDS(d), now).execute(db)).rows[0] as Record<string, string | null>;
  const first = b.first_day ?? null;
  const support =
    first === null || first !== b.old_first || b.last_day !== b.old_last
      ? ['DELETE FROM rpt_support_daily', nowed(d, SUPPORT_DAILY_FULL(d), now)]
      : [DAY_COUNTS(d), BACKLOG(d).replace(':first', `'${first.replaceAll("'", "''")}'`), FIRST_REPLIES(d)];
  const agents = messagesLeft
    ? ['DELETE FROM rpt_agent_daily', AGENT_DAILY_FULL(d)]
    : [
        ...freshTemp(d, AGENT_KEYS, `agent_id TEXT, day ${d.dayType}, PRIMARY KEY (agent_id, day)`),
        FILL_AGENT_KEYS(d),
        ...AGENT_STATEMENTS(d),
      ];
  await runAll(d, db, [...support, ...agents]);
}
