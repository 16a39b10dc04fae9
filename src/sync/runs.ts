import { refreshSyncHealthOnly } from '../report/index.js';
import type { SyncContext } from './context.js';
import type { StoreTx } from '../store/index.js';
import { emptyStats, requestMeter, type RunStats } from './stats.js';

export interface RecordRunOptions {
  /**
   * Fold an idle run (nothing new, nothing re-read) into the idle row before it, so continuous
   * mode's polls of a quiet workspace do not write a row a second (src/store/run-fold.ts).
   * Default false: every run is its own row.
   */
  foldIdle?: boolean;
  /** Written in the transaction that records the run as finished, when the work succeeded (the cycle's `last_cycle`). */
  onSuccess?: (tx: StoreTx) => Promise<void>;
}

/**
 * Wraps one command run in a `sync_runs` row: started before the work, finished with its outcome
 * and figures after. A process killed mid-run leaves the row unfinished, which `status` reports.
 * `folded` is true when the finished run was folded into the row before it.
 */
export async function recordRun<T>(
  ctx: SyncContext,
  kind: string,
  work: (stats: RunStats) => Promise<T>,
  options: RecordRunOptions = {},
): Promise<{ result: T; stats: RunStats; durationMs: number; folded: boolean }> {
  const started = Date.now();
  let folded = false;
  const runId = await ctx.store.startRun(kind, ctx.now());
  const stats: RunStats = { ...emptyStats(), healthAfterRun: true };
  const measure = requestMeter(ctx.client);
  const finish = async (outcome: 'success' | 'failed' | 'aborted', error: string | null, succeeded: boolean) => {
    measure(stats);
    folded = await ctx.store.transaction(async (tx) => {
      const result = await tx.finishRun(
        runId,
        {
          finishedAt: ctx.now(),
          outcome,
          eventsRead: stats.eventsRead,
          eventsNew: stats.eventsNew,
          recordsFetched: stats.recordsFetched,
          requests: stats.requests,
          retries: stats.retries,
          error,
        },
        { foldIdle: options.foldIdle === true },
      );
      if (succeeded) await options.onSuccess?.(tx);
      return result;
    });
    // rpt_sync_health was last written while this run was still running (an idle run leaves it
    // alone: src/sync/reporting.ts): written now, it describes the run just finished (an alert on
    // last_run_outcome = 'failed' must be able to fire).
    await refreshSyncHealthOnly(ctx.store, { now: new Date(ctx.now()) }).catch((err: unknown) => {
      ctx.logger.warn({ err }, 'refreshing rpt_sync_health after the run failed; it is rewritten at the next run');
    });
  };
  try {
    const result = await work(stats);
    await finish(ctx.stopSignal.aborted ? 'aborted' : 'success', null, true);
    return { result, stats, durationMs: Date.now() - started, folded };
  } catch (err) {
    const code = (err as { code?: string }).code;
    await finish(
      ctx.stopSignal.aborted ? 'aborted' : 'failed',
      `${code ? `${code}: ` : ''}${(err as Error).message ?? String(err)}`,
      false,
    ).catch(() => undefined);
    throw err;
  }
}
