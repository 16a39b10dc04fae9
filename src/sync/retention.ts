import type { Store } from '../store/index.js';
import { prunedTo } from './state.js';

const DAY_MS = 86_400_000;

/**
 * How far the cutoff moves before the next prune: a writer polling every second would otherwise
 * run a DELETE a second that finds nothing (docs/sync.md, "An idle cycle's cost"). An event is
 * kept at most this much longer than `eventsRetentionDays`.
 */
export const PRUNE_STEP_MS = 3_600_000;

/**
 * Deletes change-log events older than the retention, counted back from the watermark (never
 * from the wall clock, so a paused mirror keeps what it has not caught up on), once the cutoff has
 * moved PRUNE_STEP_MS past the last prune's. Returns what it deleted, or null when it did not run.
 */
export async function pruneRetainedEvents(
  store: Store,
  watermark: string | null,
  retentionDays: number,
): Promise<{ pruned: number; cutoff: string } | null> {
  if (retentionDays <= 0 || watermark === null) return null;
  const cutoff = new Date(Date.parse(watermark) - retentionDays * DAY_MS).toISOString();
  const last = await prunedTo.read(store);
  if (last !== null && Date.parse(cutoff) - Date.parse(last) < PRUNE_STEP_MS) return null;
  const pruned = await store.pruneEvents(cutoff);
  await store.transaction((tx) => prunedTo.record(tx, cutoff));
  return { pruned, cutoff };
}
