import { sql, type Kysely } from 'kysely';
import { TICKET_SCOPE, withNow } from './sql-util.js';
import { resolutions } from './support.js';
import { FIRST_REPLY_SLA_LAPSES, RESOLVE_SLA_LAPSES } from './tickets.js';

/**
 * What the changed tickets contribute to the daily aggregates, captured from the per-record tables
 * once before they are rebuilt (sign -1) and once after (sign +1). Summed per key, the two captures
 * are the exact change of every additive figure, so the aggregates move by a delta instead of being
 * recomputed: the cost follows the number of changed tickets, not the size of the mirror.
 */

/** Tickets whose contribution may change this cycle: the re-read ones plus those the clock step changes. */
export const AGG_TICKETS = 'temp.rpt_agg_tickets';
/** Per-day deltas of rpt_support_daily's additive columns (bl: backlog's start/end-of-stay steps). */
export const DAY_DELTA = 'temp.rpt_day_delta';
/** First-reply (day, minutes) samples with their sign: a day whose multiset changed needs its percentiles again. */
export const FR_DELTA = 'temp.rpt_fr_delta';
/** Per agent × day deltas of the solve columns. */
export const AGENT_DELTA = 'temp.rpt_agent_delta';

const TEMP_TABLES: Record<string, string> = {
  [AGG_TICKETS]: 'id TEXT PRIMARY KEY',
  [DAY_DELTA]: 'day TEXT, created INTEGER, solved INTEGER, reopened INTEGER, bl INTEGER, fa INTEGER, fb INTEGER, ra INTEGER, rb INTEGER',
  [FR_DELTA]: 'day TEXT, v REAL, sign INTEGER',
  [AGENT_DELTA]: 'agent_id TEXT, day TEXT, solved INTEGER, one_touch INTEGER',
};

const IN_AGG = `IN (SELECT id FROM ${AGG_TICKETS})`;

/** Same day keys and filters as SUPPORT_DAILY in support.ts, one row per fact. */
const DAY_FACTS = (sign: number) => `
INSERT INTO ${DAY_DELTA} (day, created, solved, reopened, bl, fa, fb, ra, rb)
SELECT day, ${sign} * sum(c), ${sign} * sum(s), ${sign} * sum(ro), ${sign} * sum(bl),
  ${sign} * sum(fa), ${sign} * sum(fb), ${sign} * sum(ra), ${sign} * sum(rb)
FROM (
  SELECT substr(created_at, 1, 10) AS day, 1 AS c, 0 AS s, 0 AS ro, 0 AS bl, 0 AS fa, 0 AS fb, 0 AS ra, 0 AS rb
  FROM rpt_tickets WHERE ticket_id ${IN_AGG}
  UNION ALL
  SELECT substr(valid_from, 1, 10), 0, is_resolution = 1, is_reopen = 1, 0, 0, 0, 0, 0
  FROM rpt_ticket_status_intervals WHERE ticket_id ${IN_AGG} AND (is_resolution = 1 OR is_reopen = 1)
  UNION ALL
  SELECT substr(full_resolved_at, 1, 10), 0, 1, 0, 0, 0, 0, 0, 0 FROM rpt_tickets
  WHERE ticket_id ${IN_AGG} AND is_resolved = 1 AND resolved_from_history = 0 AND full_resolved_at IS NOT NULL
  UNION ALL
  SELECT substr(valid_from, 1, 10), 0, 0, 0, 1, 0, 0, 0, 0
  FROM rpt_ticket_status_intervals WHERE ticket_id ${IN_AGG} AND is_resolved = 0
  UNION ALL
  SELECT substr(valid_to, 1, 10), 0, 0, 0, -1, 0, 0, 0, 0
  FROM rpt_ticket_status_intervals WHERE ticket_id ${IN_AGG} AND is_resolved = 0 AND valid_to IS NOT NULL
  UNION ALL
  SELECT substr(first_reply_sla_at, 1, 10), 0, 0, 0, 0, first_reply_sla = 'achieved', first_reply_sla = 'breached', 0, 0
  FROM rpt_tickets WHERE ticket_id ${IN_AGG} AND first_reply_sla_at IS NOT NULL
  UNION ALL
  SELECT substr(resolve_sla_at, 1, 10), 0, 0, 0, 0, 0, 0, resolve_sla = 'achieved', resolve_sla = 'breached'
  FROM rpt_tickets WHERE ticket_id ${IN_AGG} AND resolve_sla_at IS NOT NULL
) GROUP BY day`;

const FR_FACTS = (sign: number) => `
INSERT INTO ${FR_DELTA} (day, v, sign)
SELECT substr(first_agent_reply_at, 1, 10), first_reply_minutes, ${sign} FROM rpt_tickets
WHERE ticket_id ${IN_AGG} AND first_agent_reply_at IS NOT NULL AND first_reply_minutes IS NOT NULL`;

/** Same attribution as AGENT_DAILY's solves in support.ts, restricted to the tickets in play. */
const AGENT_FACTS = (sign: number) => `
INSERT INTO ${AGENT_DELTA} (agent_id, day, solved, one_touch)
SELECT x.assignee_id, substr(x.at, 1, 10), ${sign} * count(*), ${sign} * sum(r.is_one_touch = 1 AND x.at = r.full_resolved_at)
FROM (${resolutions(IN_AGG)}) x
JOIN rpt_tickets r ON r.ticket_id = x.ticket_id
WHERE x.assignee_id IS NOT NULL GROUP BY x.assignee_id, substr(x.at, 1, 10)`;

/**
 * Message figures cannot be captured "before": the store rewrites and deletes a ticket's messages
 * before the refresh runs. The incremental path recomputes the agent × day keys of the changed
 * tickets' current messages, which is exact unless a message of the previous copy left or moved.
 * This finds that case: the previous copy's counts must equal those of today's messages written
 * no later than the previous copy's updated_at. On a mismatch the agent table is rebuilt in full.
 */
const MESSAGES_LEFT = `
SELECT 1 AS hit FROM rpt_tickets r
WHERE r.ticket_id IN (SELECT id FROM ${TICKET_SCOPE})
  AND (r.public_agent_replies, r.internal_notes, r.customer_messages) IS NOT (
    SELECT coalesce(sum(m.author_type = 'agent' AND coalesce(m.is_internal, 0) = 0), 0),
      coalesce(sum(coalesce(m.is_internal, 0) = 1), 0),
      coalesce(sum(coalesce(m.is_internal, 0) = 0 AND coalesce(m.author_type, '') NOT IN ('agent', 'system')), 0)
    FROM ticket_messages m WHERE m.ticket_id = r.ticket_id AND (m.created_at IS NULL OR m.created_at <= r.updated_at))
LIMIT 1`;

/**
 * Before the per-record rebuild: fixes the set of tickets in play (the scope plus the rows the clock
 * step will move to 'breached') and captures their current contribution with sign -1. Returns
 * whether a message of a changed ticket may have left, which the message delta cannot see.
 */
export async function captureBefore(db: Kysely<any>, now: string): Promise<{ messagesLeft: boolean }> {
  for (const [table, columns] of Object.entries(TEMP_TABLES)) {
    await sql.raw(`CREATE TEMP TABLE IF NOT EXISTS ${table.replace('temp.', '')} (${columns})`).execute(db);
    await sql.raw(`DELETE FROM ${table}`).execute(db);
  }
  await sql.raw(`INSERT INTO ${AGG_TICKETS} (id) SELECT id FROM ${TICKET_SCOPE}`).execute(db);
  await withNow(`INSERT OR IGNORE INTO ${AGG_TICKETS} (id)
    SELECT ticket_id FROM rpt_tickets WHERE (${FIRST_REPLY_SLA_LAPSES}) OR (${RESOLVE_SLA_LAPSES})`, now).execute(db);
  await captureFacts(db, -1);
  const left = await sql.raw<{ hit: number }>(MESSAGES_LEFT).execute(db);
  return { messagesLeft: left.rows.length > 0 };
}

/** Captures the contribution of the tickets in play with the given sign. */
export async function captureFacts(db: Kysely<any>, sign: 1 | -1): Promise<void> {
  for (const stmt of [DAY_FACTS, FR_FACTS, AGENT_FACTS]) await sql.raw(stmt(sign)).execute(db);
}
