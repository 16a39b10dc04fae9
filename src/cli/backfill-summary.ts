import type { Logger } from '../log/index.js';
import type { runBackfill, RunStats } from '../sync/index.js';

type BackfillResult = Awaited<ReturnType<typeof runBackfill>>;

/**
 * The one summary line of a backfill, logged alike by `backfill` and by `run`'s first backfill
 * (docs/operations.md, "Logs"): the phase reached, what each list copied, and its cost.
 */
export function logBackfillSummary(logger: Logger, result: BackfillResult, stats: RunStats, durationMs: number): void {
  const line = {
    phase: result.phase,
    ...result.copied,
    quarantined: stats.quarantined,
    requests: stats.requests,
    retries: stats.retries,
    durationMs,
  };
  logger.info(line, result.phase === 'done' ? 'backfill complete' : 'backfill stopped; run it again to resume');
}
