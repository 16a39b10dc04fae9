import type { Logger } from '../log/index.js';
import type { Store } from '../store/index.js';
import type { DaemonMetrics } from './metrics.js';

const DAY_MS = 86_400_000;

/**
 * Between cycles, the writer keeps the mirror's growth bounded: change-log events older than the
 * retention (counted back from the watermark, never from the wall clock, so a paused mirror keeps
 * what it has not caught up on) are deleted, and the SQLite WAL is checkpointed back to zero.
 * History tables keep what they derived: their rows do not reference the events table.
 */
export async function maintainMirror(options: {
  store: Store;
  watermark: string | null;
  retentionDays: number;
  metrics: DaemonMetrics;
  logger: Logger;
}): Promise<void> {
  const { store, watermark, retentionDays, metrics, logger } = options;
  if (retentionDays > 0 && watermark !== null) {
    const cutoff = new Date(Date.parse(watermark) - retentionDays * DAY_MS).toISOString();
    const pruned = await store.pruneEvents(cutoff);
    if (pruned > 0) {
      metrics.eventsPruned.inc(pruned);
      logger.info({ pruned, cutoff }, 'old change-log events deleted (eventsRetentionDays)');
    }
  }
  const checkpoint = await store.checkpoint();
  if (checkpoint) {
    metrics.checkpoints.inc({ result: checkpoint.busy ? 'busy' : 'complete' });
    if (checkpoint.busy)
      logger.debug(
        { walPages: checkpoint.walPages },
        'WAL checkpoint incomplete: a reader holds an older snapshot; the next cycle retries',
      );
  }
  metrics.dirty.set(await store.dirtyCount());
  const counts = await store.counts();
  metrics.quarantined.set(counts.quarantine ?? 0);
}
