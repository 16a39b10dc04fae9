import { advanceAsOf } from './as-of.js';
import { plausibleAgainstLocal } from '../util/clock-bounds.js';
import { WsmirrorError } from '../util/errors.js';
import type { SyncContext } from './context.js';
import { drainDirty } from './drain.js';
import { refreshPipelines } from './pipelines.js';
import { refreshReports } from './reporting.js';
import type { RunStats } from './stats.js';
import { StepClock, timed } from './steps.js';
import { DEFAULT_STALL_TIMEOUT_MS, ProgressWatchdog } from './watchdog.js';
import { isBackfilled, readLateEvent, readLookback, readReadFloor, readWatermark, readSavedWindow } from './state.js';
import { planWindow, trustedReadFloor } from './window.js';
import { readWindow } from './window-read.js';
import { RECORD_ENTITIES, recordSet } from '../entities/index.js';
import { boundHeapGrowth } from '../util/heap-growth.js';

/** Drained records checked for a version newer than the watermark; enough to see a busy upstream. */
const NEWER_CHECK_LIMIT = 2000;

/** Why a cycle ended with the upstream likely ahead of the mirror (see CycleResult.behind). */
export type BehindReason = 'resumed-window' | 'mid-window-drain' | 'newer-records';

export interface CycleResult {
  /** Newest event upstream as seen on the window's first page (null when unknown or empty log). */
  head: string | null;
  watermark: string | null;
  /** True when a graceful stop ended the window early; the cursor is persisted. */
  stopped: boolean;
  /** True when the window re-read the full lookback, not just the tick overlap (src/sync/window.ts). */
  fullLookback: boolean;
  /**
   * True when the cycle has evidence that the upstream is already ahead of what it read, so `run`
   * starts the next cycle at once instead of waiting for the schedule (docs/sync.md, "Catch-up"):
   * the window resumed a saved cursor (nothing newer than its start was read), it stopped to drain
   * mid-window (its head aged meanwhile), or a drained record came back newer than the watermark
   * (it changed again after the window was read). Never true for a stopped cycle.
   */
  behind: boolean;
  behindReason: BehindReason | null;
}

/**
 * One incremental cycle (docs/design.md §4.2, §4.3): read the change log from watermark − overlap
 * until the last page (src/sync/window.ts picks the overlap), storing events and dirty marks with
 * the window's position after every page, then re-read every dirty record. The watermark only
 * moves when the window's last page commits.
 */
export async function runSyncCycle(ctx: SyncContext, stats: RunStats): Promise<CycleResult> {
  if (!(await isBackfilled(ctx.store))) {
    throw new WsmirrorError(
      'NOT_BACKFILLED',
      'The mirror has not been backfilled yet: run `wsmirror backfill` first (or `wsmirror run`, which backfills an empty mirror).',
    );
  }
  // From the window's first page, not only the drain's: a tick's change-log pages alone grew the
  // heap of an L PostgreSQL tick to its peak before the drain set the bound (docs/operations.md, "Memory").
  boundHeapGrowth();
  const watchdog = new ProgressWatchdog(ctx.config.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS);
  const cycleCtx: SyncContext = {
    ...ctx,
    cycleSignal: watchdog.signal,
    progress: () => watchdog.progress(),
    // A caller's own clock (one that tallies statements per step) must charge stats.steps too.
    steps: ctx.steps ?? new StepClock(stats.steps),
  };
  try {
    return await cycle(cycleCtx, stats, watchdog);
  } finally {
    watchdog.stop();
  }
}

async function cycle(ctx: SyncContext, stats: RunStats, watchdog: ProgressWatchdog): Promise<CycleResult> {
  const { store } = ctx;
  // Answered before the window's first request is sent: its Date is this window's read floor.
  const pipelinesDate = await timed(ctx, 'pipelines', () => refreshPipelines(ctx));
  watchdog.check();

  const { watermark, saved, start } = await timed(ctx, 'state', async () => {
    const watermark = await readWatermark(store);
    const saved = await readSavedWindow(store);
    const lookback = await readLookback(store);
    const now = ctx.now();
    const floors = { previous: await readReadFloor(store), current: trustedReadFloor(pipelinesDate, now) };
    const lateSeenAt = (await readLateEvent(store))?.seenAt ?? null;
    return { watermark, saved, start: saved ?? planWindow(watermark, lookback, ctx.config, now, floors, lateSeenAt) };
  });
  const read = await timed(ctx, 'window-read', () => readWindow(ctx, stats, watchdog, start));

  const drained = read.stopped ? null : await drainDirty(ctx, stats);
  watchdog.check();
  if (drained) await timed(ctx, 'as-of', () => advanceAsOf(ctx, drained));
  await timed(ctx, 'report', () => refreshReports(ctx, stats, stats.changed));
  const newWatermark = read.stopped ? watermark : read.window.maxOccurredAt;
  const reason = read.stopped
    ? null
    : await timed(ctx, 'behind', () => behindReason(ctx, stats, saved !== null, read.midWindowDrain, newWatermark));
  return {
    head: read.head,
    watermark: newWatermark,
    stopped: read.stopped,
    fullLookback: start.full !== undefined,
    behind: reason !== null,
    behindReason: reason,
  };
}

async function behindReason(
  ctx: SyncContext,
  stats: RunStats,
  resumed: boolean,
  midWindowDrain: boolean,
  watermark: string | null,
): Promise<BehindReason | null> {
  if (resumed) return 'resumed-window';
  if (midWindowDrain) return 'mid-window-drain';
  return (await drainedNewer(ctx, stats, watermark)) ? 'newer-records' : null;
}

/**
 * Whether a record this cycle wrote is newer than the watermark: it changed again after the window
 * was read, so the change log already holds an event this cycle did not read. Free of requests;
 * only the first NEWER_CHECK_LIMIT records are looked at.
 */
async function drainedNewer(ctx: SyncContext, stats: RunStats, watermark: string | null): Promise<boolean> {
  if (watermark === null) return false;
  const refs = RECORD_ENTITIES.flatMap(({ type, plural }) =>
    [...recordSet(stats.changed, plural)].map((entityId) => ({ entityType: type, entityId })),
  ).slice(0, NEWER_CHECK_LIMIT);
  if (refs.length === 0) return false;
  const mark = Date.parse(watermark);
  const now = Date.parse(ctx.now());
  // A copy stamped beyond what the local clock makes plausible says nothing about the log's head.
  for (const updatedAt of (await ctx.store.mirroredUpdatedAt(refs)).values()) {
    const at = Date.parse(updatedAt);
    if (at > mark && plausibleAgainstLocal(at, now)) return true;
  }
  return false;
}
