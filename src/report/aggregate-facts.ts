import { sql, type Kysely } from 'kysely';
import type { ReportDatabase } from './schema.js';
import { sqlDialect, type SqlDialect } from './dialect.js';
import { freshTemp, nowed, runAll, TICKET_SCOPE } from './sql-util.js';
import { resolutions } from './support.js';
import { FIRST_REPLY_SLA_LAPSES, RESOLVE_SLA_LAPSES } from './tickets.js';

/**
 * What the changed tickets contribute to the daily aggregates, captured from the per-record tables
 * once before they are rebuilt (sign -1) and once after (sign +1). Summed per key, the two captures
 * are the exact change of every additive figure, so the aggregates move by a delta instead of being
 * recomputed: the cost follows the number of changed tickets, not the size of the mirror.
 */

/** Tickets whose contribution may change this cycle: the re-read ones plus those the clock step changes. */
export const AGG_TICKETS = 'rpt_agg_tickets';
/** Per-day deltas of rpt_support_daily's additive columns (bl: backlog's start/end-of-stay steps). */
export const DAY_DELTA = 'rpt_day_delta';
/** First-reply (day, minutes) samples with their sign: a day whose multiset changed needs its percentiles again. */
export const FR_DELTA = 'rpt_fr_delta';
/** Per agent × day deltas of the solve columns. */
export const AGENT_DELTA = 'rpt_agent_delta';

const TEMP_TABLES = (d: SqlDialect): Record<string, string> => ({
  [AGG_TICKETS]: 'id TEXT PRIMARY KEY',
  [DAY_DELTA]: `day ${d.dayType}, created INTEGER, solved INTEGER, reopened INTEGER, bl INTEGER, fa INTEGER, fb INTEGER, ra INTEGER, rb INTEGER`,
  [FR_DELTA]: `day ${d.dayType}, v ${d.real}, sign INTEGER`,
  [AGENT_DELTA]: `agent_id TEXT, day ${d.dayType}, solved INTEGER, one_touch INTEGER`,
});

const IN_AGG = (d: SqlDialect) => `IN (SELECT id FROM ${d.temp(AGG_TICKETS)})`;

/** Same day keys and filters as SUPPORT_DAILY in support.ts, one row per fact. */
const DAY_FACTS = (d: SqlDialect, sign: number) => `
INSERT INTO ${d.temp(DAY_DELTA)} (day, created, solved, reopened, bl, fa, fb, ra, rb)
SELECT day, ${sign} * sum(c), ${sign} * sum(s), ${sign} * sum(ro), ${sign} * sum(bl),
  ${sign} * sum(fa), ${sign} * sum(fb), ${sign} * sum(ra), ${sign} * sum(rb)
FROM (
  SELECT ${d.day('created_at')} AS day, 1 AS c, 0 AS s, 0 AS ro, 0 AS bl, 0 AS fa, 0 AS fb, 0 AS ra, 0 AS rb
  FROM rpt_tickets WHERE ticket_id ${IN_AGG(d)}
  UNION ALL
  SELECT ${d.day('valid_from')}, 0, ${d.int(`is_resolution = ${d.T}`)}, ${d.int(`is_reopen = ${d.T}`)}, 0, 0, 0, 0, 0
  FROM rpt_ticket_status_intervals WHERE ticket_id ${IN_AGG(d)} AND (is_resolution = ${d.T} OR is_reopen = ${d.T})
  UNION ALL
  SELECT ${d.day('full_resolved_at')}, 0, 1, 0, 0, 0, 0, 0, 0 FROM rpt_tickets
  WHERE ticket_id ${IN_AGG(d)} AND is_resolved = ${d.T} AND resolved_from_history = ${d.F} AND full_resolved_at IS NOT NULL
  UNION ALL
  SELECT ${d.day('valid_from')}, 0, 0, 0, 1, 0, 0, 0, 0
  FROM rpt_ticket_status_intervals WHERE ticket_id ${IN_AGG(d)} AND is_resolved = ${d.F}
  UNION ALL
  SELECT ${d.day('valid_to')}, 0, 0, 0, -1, 0, 0, 0, 0
  FROM rpt_ticket_status_intervals WHERE ticket_id ${IN_AGG(d)} AND is_resolved = ${d.F} AND valid_to IS NOT NULL
  UNION ALL
  SELECT ${d.day('first_reply_sla_at')}, 0, 0, 0, 0, ${d.int("first_reply_sla = 'achieved'")}, ${d.int("first_reply_sla = 'breached'")}, 0, 0
  FROM rpt_tickets WHERE ticket_id ${IN_AGG(d)} AND first_reply_sla_at IS NOT NULL
  UNION ALL
  SELECT ${d.day('resolve_sla_at')}, 0, 0, 0, 0, 0, 0, ${d.int("resolve_sla = 'achieved'")}, ${d.int("resolve_sla = 'breached'")}
  FROM rpt_tickets WHERE ticket_id ${IN_AGG(d)} AND resolve_sla_at IS NOT NULL
) AS f GROUP BY day`;

const FR_FACTS = (d: SqlDialect, sign: number) => `
INSERT INTO ${d.temp(FR_DELTA)} (day, v, sign)
SELECT ${d.day('first_agent_reply_at')}, first_reply_minutes, ${sign} FROM rpt_tickets
WHERE ticket_id ${IN_AGG(d)} AND first_agent_reply_at IS NOT NULL AND first_reply_minutes IS NOT NULL`;

/** Same attribution as AGENT_DAILY's solves in support.ts, restricted to the tickets in play. */
const AGENT_FACTS = (d: SqlDialect, sign: number) => `
INSERT INTO ${d.temp(AGENT_DELTA)} (agent_id, day, solved, one_touch)
SELECT x.assignee_id, ${d.day('x.at')}, ${sign} * count(*), ${sign} * ${d.countIf(`r.is_one_touch = ${d.T} AND x.at = r.full_resolved_at`)}
FROM (${resolutions(d, IN_AGG(d))}) x
JOIN rpt_tickets r ON r.ticket_id = x.ticket_id
WHERE x.assignee_id IS NOT NULL GROUP BY x.assignee_id, ${d.day('x.at')}`;

/**
 * Message figures cannot be captured "before": the store rewrites and deletes a ticket's messages
 * before the refresh runs. The incremental path recomputes the agent × day keys of the changed
 * tickets' current messages, which is exact unless a message of the previous copy left or moved.
 * This finds that case: the previous copy's counts must equal those of today's messages written
 * no later than the previous copy's updated_at. On a mismatch the agent table is rebuilt in full.
 * `<>` (not IS DISTINCT FROM, which PostgreSQL has no row-vs-subquery form of) is exact: neither side is ever NULL.
 */
const MESSAGES_LEFT = (d: SqlDialect) => `
SELECT 1 AS hit FROM rpt_tickets r
WHERE r.ticket_id IN (SELECT id FROM ${d.temp(TICKET_SCOPE)})
  AND (r.public_agent_replies, r.internal_notes, r.customer_messages) <> (
    SELECT coalesce(${d.countIf(`m.author_type = 'agent' AND coalesce(m.is_internal, ${d.F}) = ${d.F}`)}, 0),
      coalesce(${d.countIf(`coalesce(m.is_internal, ${d.F}) = ${d.T}`)}, 0),
      coalesce(${d.countIf(`coalesce(m.is_internal, ${d.F}) = ${d.F} AND coalesce(m.author_type, '') NOT IN ('agent', 'system')`)}, 0)
    FROM ticket_messages m WHERE m.ticket_id = r.ticket_id AND (m.created_at IS NULL OR m.created_at <= r.updated_at))
LIMIT 1`;

/**
 * Before the per-record rebuild: fixes the set of tickets in play (the scope plus the rows the clock
 * step will move to 'breached') and captures their current contribution with sign -1. Returns
 * whether a message of a changed ticket may have left, which the message delta cannot see.
 */
export async function captureBefore(db: Kysely<ReportDatabase>, now: string): Promise<{ messagesLeft: boolean }> {
  const d = sqlDialect(db);
  await runAll(d, db, [
    ...Object.entries(TEMP_TABLES(d)).flatMap(([table, columns]) => freshTemp(d, table, columns)),
    `INSERT INTO ${d.temp(AGG_TICKETS)} (id) SELECT id FROM ${d.temp(TICKET_SCOPE)}`,
    nowed(
      d,
      `${d.insertIgnore(d.temp(AGG_TICKETS))} (id)
    SELECT ticket_id FROM rpt_tickets WHERE (${FIRST_REPLY_SLA_LAPSES(d)}) OR (${RESOLVE_SLA_LAPSES(d)})${d.ignoreTail}`,
      now,
    ),
    d.analyzeTemp(d.temp(AGG_TICKETS)),
    ...factStatements(d, -1),
  ]);
  const left = await sql.raw<{ hit: number }>(MESSAGES_LEFT(d)).execute(db);
  return { messagesLeft: left.rows.length > 0 };
}

/** The statements that capture the contribution of the tickets in play with the given sign. */
export function factStatements(d: SqlDialect, sign: 1 | -1): string[] {
  return [DAY_FACTS, FR_FACTS, AGENT_FACTS].map((stmt) => stmt(d, sign));
}
