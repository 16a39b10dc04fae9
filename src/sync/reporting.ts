import { DEFAULT_DAILY_WINDOW_DAYS, refreshRptTables, RPT_TABLE_NAMES, type ReportingChanges } from '../report/index.js';
import type { SyncContext } from './context.js';
import { isReportingStale, reportedDay, setReportingStale } from './state.js';
import type { RunStats } from './stats.js';
import { tidyAfterBulkLoad } from './tidy.js';

/**
 * Brings the rpt_ tables up to date with what a run wrote. The tables are derived data: if a
 * refresh fails, the synced rows stay committed and a flag makes the next refresh a full rebuild,
 * so a failed refresh never leaves a report silently behind. A full rebuild rewrites every rpt_
 * row: the statistics of the old ones would mislead the next cycles' plans (tidy.ts).
 */
export async function refreshReports(
  ctx: Pick<SyncContext, 'store' | 'logger'> & Partial<Pick<SyncContext, 'config' | 'now'>>,
  stats: RunStats,
  changes: ReportingChanges,
): Promise<void> {
  const stale = await isReportingStale(ctx.store);
  const scope: ReportingChanges = stale ? { tickets: 'all', deals: 'all' } : changes;
  const window = ctx.config?.dailyWindowDays;
  // The UTC day (and window) the daily tables were last brought to: a run that changed nothing on
  // that same day has nothing to refresh (its rpt_sync_health is rewritten after the run).
  const day = `${(ctx.now ? ctx.now() : new Date().toISOString()).slice(0, 10)}/${window ?? DEFAULT_DAILY_WINDOW_DAYS}`;
  const before = await reportedDay.read(ctx.store);
  // An idle run leaves rpt_sync_health to the rewrite after it (src/sync/runs.ts); a run that
  // changed something also shows itself running there, with the figures it changed.
  const healthLater = isEmptyScope(scope) && stats.healthAfterRun === true;
  if (healthLater && before === day) return;
  try {
    // The context's clock: the wall clock in a command, the simulator's in tests that script days.
    const result = await refreshRptTables(ctx.store, scope, {
      ...(window === undefined ? {} : { dailyWindowDays: window }),
      ...(healthLater ? { syncHealth: false } : {}),
      ...(ctx.now ? { now: new Date(ctx.now()) } : {}),
    });
    stats.reportRefreshMs += result.durationMs;
    for (const w of result.customFields.widened)
      ctx.logger.warn(
        { entityType: w.entityType, key: w.key, column: w.column, from: w.from },
        `custom field ${JSON.stringify(w.key)} of ${w.entityType}s had a value that is not a ${w.from}: its column ${w.column} is text from now on (docs/schema.md, "Custom fields as columns")`,
      );
    for (const a of result.customFields.added)
      ctx.logger.info({ entityType: a.entityType, key: a.key, column: a.column, type: a.type }, 'custom field column added');
    if (stale || before !== day)
      await ctx.store.transaction(async (tx) => {
        await setReportingStale(tx, false);
        await reportedDay.record(tx, day);
      });
  } catch (err) {
    await ctx.store.transaction((tx) => setReportingStale(tx, true)).catch(() => undefined);
    ctx.logger.error({ err }, 'refreshing the rpt_ tables failed; the next run rebuilds them in full');
    throw err;
  }
  if (scope.tickets === 'all' || scope.deals === 'all') await tidyAfterBulkLoad(ctx, RPT_TABLE_NAMES, 'the rpt_ tables');
}

function isEmptyScope(scope: ReportingChanges): boolean {
  return scope.tickets !== 'all' && scope.tickets.size === 0 && scope.deals !== 'all' && scope.deals.size === 0;
}
