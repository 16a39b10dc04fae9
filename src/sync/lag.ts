import type { SyncContext } from './context.js';
import { runSyncCycle, type CycleResult } from './cycle.js';
import { recordRun, type RecordRunOptions } from './runs.js';
import { recordLastCycle, type LastCycle } from './state.js';
import type { StoreTx } from '../store/index.js';
import type { RunStats } from './stats.js';
import { roundedSteps } from './steps.js';

export interface CycleSummary {
  result: CycleResult;
  stats: RunStats;
  durationMs: number;
  lagSeconds: number | null;
}

/**
 * One recorded cycle with its summary log line (one summary line per cycle, as the README
 * promises). With `foldIdle` (continuous mode), an idle cycle that follows an idle cycle folds into
 * its sync_runs row and logs its summary at debug: a quiet workspace polled every second must not
 * write a row and an info line a second.
 */
export async function syncOnce(
  ctx: SyncContext,
  kind: string,
  knownHead: string | null,
  options: RecordRunOptions = {},
): Promise<CycleSummary> {
  let last: LastCycle | null = null;
  const work = async (s: RunStats) => {
    const cycle = await runSyncCycle(ctx, s);
    const head = cycle.head ?? knownHead;
    last = { at: ctx.now(), head, watermark: cycle.watermark, lagSeconds: lagBetween(head, cycle.watermark) };
    return cycle;
  };
  // The last cycle is written with the run's finish, in its transaction.
  const onSuccess = async (tx: StoreTx) => {
    if (last) await recordLastCycle(tx, last);
  };
  const { result, stats, durationMs, folded } = await recordRun(ctx, kind, work, { ...options, onSuccess });
  const lagSeconds = lagBetween(result.head ?? knownHead, result.watermark);
  ctx.logger[folded ? 'debug' : 'info'](
    {
      eventsRead: stats.eventsRead,
      eventsNew: stats.eventsNew,
      eventsLate: stats.eventsLate,
      recordsFetched: stats.recordsFetched,
      staleReads: stats.staleReads,
      staleAccepted: stats.staleAccepted,
      deleted: stats.deleted,
      quarantined: stats.quarantined,
      requests: stats.requests,
      retries: stats.retries,
      reportRefreshMs: Math.round(stats.reportRefreshMs),
      durationMs,
      stepsMs: roundedSteps(stats.steps),
      lagSeconds,
      watermark: result.watermark,
      fullLookback: result.fullLookback,
      behind: result.behindReason,
    },
    result.stopped ? 'sync cycle stopped early' : 'sync cycle',
  );
  return { result, stats, durationMs, lagSeconds };
}

/**
 * Lag = how far the mirror's watermark trails the newest upstream event (0 when caught up); null
 * when it cannot be known: no head while the mirror has a watermark (a resumed window, or a newest
 * event beyond the upstream's clock).
 */
export function lagBetween(head: string | null, watermark: string | null): number | null {
  if (head === null) return watermark === null ? 0 : null;
  if (watermark === null) return null;
  return Math.max(0, (Date.parse(head) - Date.parse(watermark)) / 1000);
}
