import { refreshReporting, type ReportingChanges } from '../report/index.js';
import { STATE, type SyncContext } from './context.js';
import type { RunStats } from './stats.js';

/**
 * Brings the rpt_ tables up to date with what a run wrote. The tables are derived data: if a
 * refresh fails, the synced rows stay committed and a flag makes the next refresh a full rebuild,
 * so a failed refresh never leaves a report silently behind.
 */
export async function refreshReports(ctx: SyncContext, stats: RunStats, changes: ReportingChanges): Promise<void> {
  const stale = (await ctx.store.getState<boolean>(STATE.reportingStale)) === true;
  const scope: ReportingChanges = stale ? { tickets: 'all', deals: 'all' } : changes;
  try {
    const result = await refreshReporting(ctx.store, scope);
    stats.reportRefreshMs += result.durationMs;
    if (stale) await ctx.store.transaction((tx) => tx.setState(STATE.reportingStale, null));
  } catch (err) {
    await ctx.store.transaction((tx) => tx.setState(STATE.reportingStale, true)).catch(() => undefined);
    ctx.logger.error({ err }, 'refreshing the rpt_ tables failed; the next run rebuilds them in full');
    throw err;
  }
}
