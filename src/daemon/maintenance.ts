import type { Logger } from '../log/index.js';
import type { Store } from '../store/index.js';
import type { DaemonMetrics } from './metrics.js';
import { pruneRetainedEvents } from '../sync/index.js';

/**
 * Between cycles, the writer keeps the mirror's growth bounded: change-log events older than the
 * retention are deleted (src/sync/retention.ts), and the SQLite WAL is checkpointed back to zero.
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
  const prune = await pruneRetainedEvents(store, watermark, retentionDays);
  if (prune && prune.pruned > 0) {
    metrics.eventsPruned.inc(prune.pruned);
    logger.info(prune, 'old change-log events deleted (eventsRetentionDays)');
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
  // The quarantine alone: counting every table after each cycle scanned the whole mirror a second
  // in continuous mode (count(*) of every ticket and message on PostgreSQL).
  const quarantined = Object.values(await store.quarantinedByType()).reduce((a, b) => a + b, 0);
  metrics.quarantined.set(quarantined);
}
