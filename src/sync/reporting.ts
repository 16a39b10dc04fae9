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
  ctx: Pick<SyncContext, 'store' | 'logger'>,
  stats: RunStats,
  changes: ReportingChanges,
): Promise<void> {
  const stale = await isReportingStale(ctx.store);
  const scope: ReportingChanges = stale ? { tickets: 'all', deals: 'all' } : changes;
  try {
    const result = await refreshRptTables(ctx.store, scope);
    stats.reportRefreshMs += result.durationMs;
    if (stale) await ctx.store.transaction((tx) => setReportingStale(tx, false));
  } catch (err) {
    await ctx.store.transaction((tx) => setReportingStale(tx, true)).catch(() => undefined);
    ctx.logger.error({ err }, 'refreshing the rpt_ tables failed; the next run rebuilds them in full');
    throw err;
  }
  if (scope.tickets === 'all' || scope.deals === 'all') await tidyAfterBulkLoad(ctx, RPT_TABLE_NAMES, 'the rpt_ tables');
}
