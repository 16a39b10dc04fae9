import type { Kysely } from 'kysely';
import { msBetween, withNow } from './sql-util.js';

/**
 * Open deals per pipeline × stage × currency. Averages divide integer sums (milliseconds, cents)
 * once, so they do not depend on summation order and a test can reproduce them exactly.
 */
const PIPELINE_STAGES = `
INSERT INTO rpt_pipeline_stages
  (pipeline_id, pipeline_name, pipeline_position, stage_id, stage_name, stage_position, currency, open_deals,
   total_amount, total_amount_cents, avg_days_in_stage, refreshed_at)
SELECT d.pipeline_id, p.name, p.position, d.stage_id, st.name, st.position, d.currency, count(*),
  sum(d.amount_cents) / 100.0, sum(d.amount_cents),
  CAST(sum(${msBetween('coalesce(d.stage_entered_at, d.created_at)', ':now')}) AS REAL) / count(*) / 86400000.0,
  :now
FROM rpt_deals d LEFT JOIN pipelines p ON p.id = d.pipeline_id LEFT JOIN stages st ON st.id = d.stage_id
WHERE d.status = 'open'
GROUP BY d.pipeline_id, d.stage_id, d.currency`;

/**
 * Month × pipeline × owner × currency. A deal counts as created in the month of created_at, and
 * as won / lost (by its current status) in the month of won_at / lost_at. Amounts are never summed
 * across currencies. avg_days_to_close is over the deals won in the month.
 */
const SALES_MONTHLY = `
INSERT INTO rpt_sales_monthly
  (month, pipeline_id, pipeline_name, owner_id, owner_name, currency, deals_created, won_count, won_amount,
   won_amount_cents, lost_count, lost_amount, lost_amount_cents, win_rate_count, win_rate_value, avg_won_amount,
   avg_days_to_close)
WITH facts AS (
  SELECT substr(created_at, 1, 7) AS month, pipeline_id, owner_id, currency,
    1 AS created, 0 AS won, NULL AS won_cents, 0 AS won_with_amount, NULL AS won_ms, 0 AS lost, NULL AS lost_cents
  FROM rpt_deals WHERE created_at IS NOT NULL
  UNION ALL
  SELECT substr(won_at, 1, 7), pipeline_id, owner_id, currency,
    0, 1, amount_cents, amount_cents IS NOT NULL, ${msBetween('created_at', 'won_at')}, 0, NULL
  FROM rpt_deals WHERE status = 'won' AND won_at IS NOT NULL
  UNION ALL
  SELECT substr(lost_at, 1, 7), pipeline_id, owner_id, currency, 0, 0, NULL, 0, NULL, 1, amount_cents
  FROM rpt_deals WHERE status = 'lost' AND lost_at IS NOT NULL
),
g AS (
  SELECT month, pipeline_id, owner_id, currency, sum(created) AS created, sum(won) AS won,
    coalesce(sum(won_cents), 0) AS won_cents, sum(won_with_amount) AS won_with_amount, sum(won_ms) AS won_ms,
    sum(lost) AS lost, coalesce(sum(lost_cents), 0) AS lost_cents
  FROM facts GROUP BY month, pipeline_id, owner_id, currency
)
SELECT g.month || '-01', g.pipeline_id, p.name, g.owner_id, u.name, g.currency, g.created,
  g.won, g.won_cents / 100.0, g.won_cents, g.lost, g.lost_cents / 100.0, g.lost_cents,
  CASE WHEN g.won + g.lost > 0 THEN CAST(g.won AS REAL) / (g.won + g.lost) END,
  CASE WHEN g.won_cents + g.lost_cents > 0 THEN CAST(g.won_cents AS REAL) / (g.won_cents + g.lost_cents) END,
  CASE WHEN g.won_with_amount > 0 THEN CAST(g.won_cents AS REAL) / g.won_with_amount / 100.0 END,
  CASE WHEN g.won > 0 THEN CAST(g.won_ms AS REAL) / g.won / 86400000.0 END
FROM g LEFT JOIN pipelines p ON p.id = g.pipeline_id LEFT JOIN users u ON u.id = g.owner_id`;

export async function refreshSalesAggregates(db: Kysely<any>, now: string): Promise<void> {
  await withNow('DELETE FROM rpt_pipeline_stages', now).execute(db);
  await withNow(PIPELINE_STAGES, now).execute(db);
  await withNow('DELETE FROM rpt_sales_monthly', now).execute(db);
  await withNow(SALES_MONTHLY, now).execute(db);
}

/** Sync freshness as of the refresh (a table, not a view, so every column keeps a declared type). */
const SYNC_HEALTH = `
INSERT INTO rpt_sync_health
  (refreshed_at, watermark, last_success_at, last_run_outcome, lag_seconds, watermark_age_seconds, runs_24h,
   failed_runs_24h, dirty_records, quarantined_records)
WITH w AS (
  SELECT strftime('%Y-%m-%dT%H:%M:%fZ', json_extract(value_json, '$')) AS watermark FROM sync_state WHERE key = 'watermark'
),
ok AS (SELECT max(finished_at) AS at FROM sync_runs WHERE outcome = 'success')
SELECT :now, (SELECT watermark FROM w), (SELECT at FROM ok),
  (SELECT outcome FROM sync_runs ORDER BY started_at DESC, id DESC LIMIT 1),
  (SELECT ${msBetween('at', ':now')} / 1000.0 FROM ok),
  (SELECT ${msBetween('watermark', ':now')} / 1000.0 FROM w),
  (SELECT count(*) FROM sync_runs WHERE started_at > strftime('%Y-%m-%dT%H:%M:%fZ', :now, '-1 day')),
  (SELECT count(*) FROM sync_runs WHERE started_at > strftime('%Y-%m-%dT%H:%M:%fZ', :now, '-1 day') AND outcome = 'failed'),
  (SELECT count(*) FROM dirty), (SELECT count(*) FROM quarantine)`;

export async function refreshSyncHealth(db: Kysely<any>, now: string): Promise<void> {
  await withNow('DELETE FROM rpt_sync_health', now).execute(db);
  await withNow(SYNC_HEALTH, now).execute(db);
}
