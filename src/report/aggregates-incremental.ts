import { sql, type Kysely } from 'kysely';
import { AGENT_DELTA, captureFacts, DAY_DELTA, FR_DELTA } from './aggregate-facts.js';
import { TICKET_SCOPE, withNow } from './sql-util.js';
import { AGENT_DAILY_FULL, percentileCont, SUPPORT_DAILY_FULL } from './support.js';

/**
 * Incremental rpt_support_daily / rpt_agent_daily: applies the deltas captured in aggregate-facts.ts
 * and recomputes only what is not additive (percentiles of the days whose first-reply samples
 * changed, message figures of the agent × day keys the changed tickets wrote on). The figures equal
 * a full rebuild's (test/report/incremental.test.ts compares them byte for byte).
 */

/** The day range a full rebuild would produce, and the one stored. */
const BOUNDS = `
SELECT (SELECT substr(min(created_at), 1, 10) FROM rpt_tickets) AS first_day,
  max(date(:now), coalesce((SELECT substr(max(updated_at), 1, 10) FROM rpt_tickets), date(:now))) AS last_day,
  (SELECT min(day) FROM rpt_support_daily) AS old_first, (SELECT max(day) FROM rpt_support_daily) AS old_last`;

const DAY_COUNTS = `
UPDATE rpt_support_daily AS s SET created = s.created + d.created, solved = s.solved + d.solved,
  reopened = s.reopened + d.reopened,
  first_reply_sla_achieved = s.first_reply_sla_achieved + d.fa, first_reply_sla_breached = s.first_reply_sla_breached + d.fb,
  resolve_sla_achieved = s.resolve_sla_achieved + d.ra, resolve_sla_breached = s.resolve_sla_breached + d.rb,
  sla_achieved = s.sla_achieved + d.fa + d.ra, sla_breached = s.sla_breached + d.fb + d.rb
FROM (
  SELECT day, sum(created) AS created, sum(solved) AS solved, sum(reopened) AS reopened,
    sum(fa) AS fa, sum(fb) AS fb, sum(ra) AS ra, sum(rb) AS rb
  FROM ${DAY_DELTA} GROUP BY day
  HAVING sum(created) != 0 OR sum(solved) != 0 OR sum(reopened) != 0 OR sum(fa) != 0 OR sum(fb) != 0 OR sum(ra) != 0 OR sum(rb) != 0
) AS d
WHERE s.day = d.day`;

/**
 * Backlog at the end of day D is the running sum of the stays' start (+1) and end (-1) steps over
 * the range's days up to D, so a changed step on day X moves every day from X on by the same
 * amount: one pass over the (few hundred) day rows with the (few) changed steps, not the intervals.
 */
const BACKLOG = `
WITH d AS (SELECT day, sum(bl) AS bl FROM ${DAY_DELTA} WHERE day >= :first GROUP BY day HAVING sum(bl) != 0)
UPDATE rpt_support_daily SET backlog = backlog + (SELECT sum(d.bl) FROM d WHERE d.day <= rpt_support_daily.day)
WHERE day >= (SELECT min(day) FROM d)`;

/** Days whose multiset of first-reply samples changed; their count and percentiles are recomputed. */
const FR_DAYS = `SELECT day FROM ${FR_DELTA} GROUP BY day, v HAVING sum(sign) != 0`;

/** SUPPORT_DAILY's fr / frd for the given days, through the first_agent_reply_at index. */
const FIRST_REPLIES = `
WITH fd AS (SELECT DISTINCT day FROM (${FR_DAYS})),
fr AS (
  SELECT fd.day, r.first_reply_minutes AS v,
    row_number() OVER (PARTITION BY fd.day ORDER BY r.first_reply_minutes) AS rn, count(*) OVER (PARTITION BY fd.day) AS n
  FROM fd JOIN rpt_tickets r ON r.first_agent_reply_at >= fd.day AND r.first_agent_reply_at < date(fd.day, '+1 day')
  WHERE substr(r.first_agent_reply_at, 1, 10) = fd.day AND r.first_reply_minutes IS NOT NULL
),
frd AS (SELECT day, max(n) AS n, ${percentileCont(0.5)} AS p50, ${percentileCont(0.9)} AS p90 FROM fr GROUP BY day),
all_days AS (SELECT fd.day, frd.n, frd.p50, frd.p90 FROM fd LEFT JOIN frd ON frd.day = fd.day)
UPDATE rpt_support_daily AS s SET first_replies = coalesce(a.n, 0), first_reply_median_minutes = a.p50, first_reply_p90_minutes = a.p90
FROM all_days AS a WHERE s.day = a.day`;

/** Keys whose message figures are recomputed: where the changed tickets' current agent messages fall. */
const AGENT_KEYS = 'temp.rpt_agent_keys';
const FILL_AGENT_KEYS = `
INSERT OR IGNORE INTO ${AGENT_KEYS} (agent_id, day)
SELECT author_id, substr(created_at, 1, 10) FROM ticket_messages
WHERE ticket_id IN (SELECT id FROM ${TICKET_SCOPE}) AND author_type = 'agent' AND author_id IS NOT NULL AND created_at IS NOT NULL
UNION
SELECT agent_id, day FROM ${AGENT_DELTA} GROUP BY agent_id, day HAVING sum(solved) != 0 OR sum(one_touch) != 0`;

/**
 * Every row of an agent carries the same name and email (the invariant a full rebuild leaves), so
 * one row per agent tells whether the users row changed since; only such agents are rewritten.
 */
const AGENT_NAMES = `
WITH cur AS (SELECT agent_id, agent_name, agent_email FROM rpt_agent_daily GROUP BY agent_id),
stale AS (
  SELECT c.agent_id FROM cur c LEFT JOIN users u ON u.id = c.agent_id
  WHERE c.agent_name IS NOT u.name OR c.agent_email IS NOT u.email
)
UPDATE rpt_agent_daily SET agent_name = (SELECT name FROM users WHERE id = rpt_agent_daily.agent_id),
  agent_email = (SELECT email FROM users WHERE id = rpt_agent_daily.agent_id)
WHERE agent_id IN (SELECT agent_id FROM stale)`;

/** An agent message on a live ticket for the row's key, through ticket_messages (author_id, created_at). */
const KEY_MESSAGES = `FROM ticket_messages m JOIN rpt_tickets r ON r.ticket_id = m.ticket_id
  WHERE m.author_id = a.agent_id AND m.created_at >= a.day AND m.created_at < date(a.day, '+1 day')
    AND substr(m.created_at, 1, 10) = a.day AND m.author_type = 'agent'`;

const AGENT_STATEMENTS = [
  AGENT_NAMES,
  `INSERT OR IGNORE INTO rpt_agent_daily
     (agent_id, agent_name, agent_email, day, public_replies, internal_notes, tickets_touched, tickets_solved, one_touch_solves)
   SELECT k.agent_id, u.name, u.email, k.day, 0, 0, 0, 0, 0 FROM ${AGENT_KEYS} k LEFT JOIN users u ON u.id = k.agent_id`,
  `UPDATE rpt_agent_daily AS a SET tickets_solved = a.tickets_solved + d.solved, one_touch_solves = a.one_touch_solves + d.one_touch
   FROM (SELECT agent_id, day, sum(solved) AS solved, sum(one_touch) AS one_touch FROM ${AGENT_DELTA} GROUP BY agent_id, day) AS d
   WHERE a.agent_id = d.agent_id AND a.day = d.day`,
  `UPDATE rpt_agent_daily AS a SET (public_replies, internal_notes, tickets_touched) = (
     SELECT coalesce(sum(coalesce(m.is_internal, 0) = 0), 0), coalesce(sum(coalesce(m.is_internal, 0) = 1), 0),
       count(DISTINCT m.ticket_id) ${KEY_MESSAGES})
   WHERE (a.agent_id, a.day) IN (SELECT agent_id, day FROM ${AGENT_KEYS})`,
  // A full rebuild has a row for a key with an agent message or a solve; keys left with neither go.
  `DELETE FROM rpt_agent_daily AS a WHERE (a.agent_id, a.day) IN (SELECT agent_id, day FROM ${AGENT_KEYS})
     AND a.tickets_solved = 0 AND NOT EXISTS (SELECT 1 ${KEY_MESSAGES})`,
];

/**
 * After the per-record rebuild and the clock step: captures the new contribution and applies the
 * deltas. The support table falls back to a full rebuild when its day range moved (a new day began,
 * or the first ticket changed), the agent table when a message of a changed ticket may have left.
 */
export async function applyAggregateDeltas(db: Kysely<any>, now: string, messagesLeft: boolean): Promise<void> {
  await captureFacts(db, 1);
  const b = (await withNow(BOUNDS, now).execute(db)).rows[0] as Record<string, string | null>;
  const first = b.first_day ?? null;
  if (first === null || first !== b.old_first || b.last_day !== b.old_last) {
    await withNow('DELETE FROM rpt_support_daily', now).execute(db);
    await withNow(SUPPORT_DAILY_FULL, now).execute(db);
  } else {
    await sql.raw(DAY_COUNTS).execute(db);
    await sql.raw(BACKLOG.replace(':first', `'${first.replaceAll("'", "''")}'`)).execute(db);
    await sql.raw(FIRST_REPLIES).execute(db);
  }
  if (messagesLeft) {
    await sql.raw('DELETE FROM rpt_agent_daily').execute(db);
    await sql.raw(AGENT_DAILY_FULL).execute(db);
    return;
  }
  await sql.raw(`CREATE TEMP TABLE IF NOT EXISTS ${AGENT_KEYS.replace('temp.', '')} (agent_id TEXT, day TEXT, PRIMARY KEY (agent_id, day))`).execute(db);
  await sql.raw(`DELETE FROM ${AGENT_KEYS}`).execute(db);
  await sql.raw(FILL_AGENT_KEYS).execute(db);
  for (const stmt of AGENT_STATEMENTS) await sql.raw(stmt).execute(db);
}
