import { refreshRptTables, RPT_TABLE_NAMES, type ReportingChanges } from '../report/index.js';
import type { SyncContext } from './context.js';
import { isReportingStale, setReportingStale } from './state.js';
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
  try {
    const window = ctx.config?.dailyWindowDays;
    // The context's clock: the wall clock in a command, the simulator's in tests that script days.
    const result = await refreshRptTables(ctx.store, scope, {
      ...(window === undefined ? {} : { dailyWindowDays: window }),
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
    if (stale) await ctx.store.transaction((tx) => setReportingStale(tx, false));
  } catch (err) {
    await ctx.store.transaction((tx) => setReportingStale(tx, true)).catch(() => undefined);
    ctx.logger.error({ err }, 'refreshing the rpt_ tables failed; the next run rebuilds them in full');
    throw err;
  }
  if (scope.tickets === 'all' || scope.deals === 'all') await tidyAfterBulkLoad(ctx, RPT_TABLE_NAMES, 'the rpt_ tables');
}
