import type { Kysely } from 'kysely';
import type { ReportDatabase } from './schema.js';
import { sqlDialect, type SqlDialect } from './dialect.js';
import { withNow } from './sql-util.js';

/**
 * Sync freshness as of the refresh (a table, not a view, so every column keeps a declared type).
 * last_run_outcome is the last FINISHED run's, so an alert on 'failed' can fire; running_since is
 * the start of an unfinished run newer than it (one in progress, or one killed before finishing).
 */
const SYNC_HEALTH = (d: SqlDialect, emptied = d.emptiedInWith('rpt_sync_health')) => `
WITH ${emptied === null ? '' : `${emptied},`}
w AS (
  SELECT ${d.watermark} AS watermark FROM sync_state WHERE key = 'watermark'
),
a AS (SELECT ${d.asOf} AS as_of FROM sync_state WHERE key = 'current_as_of'),
ok AS (SELECT max(finished_at) AS at FROM sync_runs WHERE outcome = 'success'),
last AS (SELECT outcome, started_at FROM sync_runs WHERE finished_at IS NOT NULL ORDER BY finished_at DESC, id DESC LIMIT 1)
INSERT INTO rpt_sync_health
  (refreshed_at, watermark, last_success_at, last_run_outcome, lag_seconds, watermark_age_seconds, runs_24h,
   failed_runs_24h, dirty_records, quarantined_records, running_since, current_as_of, current_as_of_age_seconds)
SELECT :now, (SELECT watermark FROM w), (SELECT at FROM ok),
  (SELECT outcome FROM last),
  (SELECT CAST(${d.msBetween('at', ':now')} AS ${d.real}) / 1000 FROM ok),
  (SELECT CAST(${d.msBetween('watermark', ':now')} AS ${d.real}) / 1000 FROM w),
  (SELECT coalesce(sum(cycles), 0) FROM sync_runs WHERE started_at > ${d.dayBefore(':now')}),
  (SELECT coalesce(sum(cycles), 0) FROM sync_runs WHERE started_at > ${d.dayBefore(':now')} AND outcome = 'failed'),
  (SELECT count(*) FROM dirty), (SELECT count(*) FROM quarantine),
  (SELECT max(r.started_at) FROM sync_runs r WHERE r.finished_at IS NULL
     AND (NOT EXISTS (SELECT 1 FROM last) OR r.started_at >= (SELECT started_at FROM last))),
  (SELECT as_of FROM a),
  (SELECT CAST(${d.msBetween('as_of', ':now')} AS ${d.real}) / 1000 FROM a)`;

/** Rewrites the one row; in one statement where the dialect can (syncHealthInOneStatement below). */
export async function refreshSyncHealth(db: Kysely<ReportDatabase>, now: string): Promise<void> {
  const d = sqlDialect(db);
  if (d.emptiedInWith('rpt_sync_health') === null) await withNow(d, 'DELETE FROM rpt_sync_health', now).execute(db);
  await withNow(d, SYNC_HEALTH(d), now).execute(db);
}

/** True when refreshSyncHealth is one statement, which needs no transaction of its own to be atomic. */
export function syncHealthInOneStatement(db: Kysely<ReportDatabase>): boolean {
  return sqlDialect(db).emptiedInWith('rpt_sync_health') !== null;
}
