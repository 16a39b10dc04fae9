import type { Kysely } from 'kysely';
import type { ReportDatabase } from './schema.js';
import { sqlDialect, type SqlDialect } from './dialect.js';
import { nowed, runAll } from './sql-util.js';

/**
 * Open deals per pipeline × stage × currency. Averages divide integer sums (milliseconds, cents)
 * once, so they do not depend on summation order and a test can reproduce them exactly.
 */
const PIPELINE_STAGES = (d: SqlDialect) => `
INSERT INTO rpt_pipeline_stages
  (pipeline_id, pipeline_name, pipeline_position, stage_id, stage_name, stage_position, currency, open_deals,
   total_amount, total_amount_cents, avg_days_in_stage, refreshed_at)
SELECT d.pipeline_id, p.name, p.position, d.stage_id, st.name, st.position, d.currency, count(*),
  sum(d.amount_cents) / 100.0, sum(d.amount_cents),
  CAST(sum(${d.msBetween('coalesce(d.stage_entered_at, d.created_at)', ':now')}) AS ${d.real}) / count(*) / 86400000.0,
  :now
FROM rpt_deals d LEFT JOIN pipelines p ON p.id = d.pipeline_id
LEFT JOIN stages st ON st.pipeline_id = d.pipeline_id AND st.id = d.stage_id
WHERE d.status = 'open'
GROUP BY d.pipeline_id, d.stage_id, d.currency, p.name, p.position, st.name, st.position`;

/**
 * Month × pipeline × owner × currency. A deal counts as created in the month of created_at, and
 * as won / lost (by its current status) in the month of won_at / lost_at. Amounts are never summed
 * across currencies. avg_days_to_close is over the deals won in the month.
 */
const SALES_MONTHLY = (d: SqlDialect) => `
INSERT INTO rpt_sales_monthly
  (month, pipeline_id, pipeline_name, owner_id, owner_name, currency, deals_created, won_count, won_amount,
   won_amount_cents, lost_count, lost_amount, lost_amount_cents, win_rate_count, win_rate_value, avg_won_amount,
   avg_days_to_close)
WITH facts AS (
  SELECT ${d.month('created_at')} AS month, pipeline_id, owner_id, currency,
    -- Typed NULLs: PostgreSQL types a UNION column from its first branches, and a bare NULL pair is text.
    1 AS created, 0 AS won, CAST(NULL AS bigint) AS won_cents, 0 AS won_with_amount, CAST(NULL AS bigint) AS won_ms, 0 AS lost,
    CAST(NULL AS bigint) AS lost_cents, 0 AS lost_with_amount
  FROM rpt_deals WHERE created_at IS NOT NULL
  UNION ALL
  SELECT ${d.month('won_at')}, pipeline_id, owner_id, currency,
    0, 1, amount_cents, ${d.int('amount_cents IS NOT NULL')}, ${d.msBetween('created_at', 'won_at')}, 0, NULL, 0
  FROM rpt_deals WHERE status = 'won' AND won_at IS NOT NULL
  UNION ALL
  SELECT ${d.month('lost_at')}, pipeline_id, owner_id, currency, 0, 0, NULL, 0, NULL, 1, amount_cents, ${d.int('amount_cents IS NOT NULL')}
  FROM rpt_deals WHERE status = 'lost' AND lost_at IS NOT NULL
),
g AS (
  SELECT month, pipeline_id, owner_id, currency, sum(created) AS created, sum(won) AS won,
    -- Deals won (lost) but none with an amount: the value is unknown (NULL), never 0.
    CASE WHEN sum(won) > 0 AND sum(won_with_amount) = 0 THEN NULL ELSE coalesce(sum(won_cents), 0) END AS won_cents,
    sum(won_with_amount) AS won_with_amount, sum(won_ms) AS won_ms, sum(lost) AS lost,
    CASE WHEN sum(lost) > 0 AND sum(lost_with_amount) = 0 THEN NULL ELSE coalesce(sum(lost_cents), 0) END AS lost_cents
  FROM facts GROUP BY month, pipeline_id, owner_id, currency
)
SELECT ${d.monthDate('g.month')}, g.pipeline_id, p.name, g.owner_id, u.name, g.currency, g.created,
  g.won, g.won_cents / 100.0, g.won_cents, g.lost, g.lost_cents / 100.0, g.lost_cents,
  CASE WHEN g.won + g.lost > 0 THEN CAST(g.won AS ${d.real}) / (g.won + g.lost) END,
  CASE WHEN g.won_cents + g.lost_cents > 0 THEN CAST(g.won_cents AS ${d.real}) / (g.won_cents + g.lost_cents) END,
  CASE WHEN g.won_with_amount > 0 THEN CAST(g.won_cents AS ${d.real}) / g.won_with_amount / 100.0 END,
  CASE WHEN g.won > 0 THEN CAST(g.won_ms AS ${d.real}) / g.won / 86400000.0 END
FROM g LEFT JOIN pipelines p ON p.id = g.pipeline_id LEFT JOIN users u ON u.id = g.owner_id`;

export async function refreshSalesAggregates(db: Kysely<ReportDatabase>, now: string): Promise<void> {
  const d = sqlDialect(db);
  await runAll(
    d,
    db,
    ['DELETE FROM rpt_pipeline_stages', PIPELINE_STAGES(d), 'DELETE FROM rpt_sales_monthly', SALES_MONTHLY(d)].map((text) =>
      nowed(d, text, now),
    ),
  );
}
