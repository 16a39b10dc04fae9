import { CursorRejectedError, PagingError, PagingGuard, type Page, type WorkspaceEvent } from '../api/index.js';
import { WsmirrorError } from '../util/errors.js';
import { toIsoTimestamp } from '../util/time.js';
import { laterOf, type SyncContext } from './context.js';
import { drainDirty } from './drain.js';
import { refreshPipelines } from './pipelines.js';
import { FUTURE_TOLERANCE_MS, isPlausible, plausibleLimit } from './plausible.js';
import type { RejectedEvent } from './quarantine.js';
import { commitPage } from './event-page.js';
import { refreshReports } from './reporting.js';
import type { RunStats } from './stats.js';
import { DEFAULT_STALL_TIMEOUT_MS, ProgressWatchdog } from './watchdog.js';
import {
  abandonWindow,
  isBackfilled,
  readLateEvent,
  readLookback,
  readReadFloor,
  readWatermark,
  readWindow as readSavedWindow,
  type WindowState,
} from './state.js';
import { newestFirst, planWindow, reachedBelow, trustedReadFloor } from './window.js';

/** Past this many pending records a window drains before reading on, so a catch-up shows progress. */
export const MID_WINDOW_DRAIN_THRESHOLD = 1000;
const MAX_CURSOR_RESTARTS = 3;
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
  const watchdog = new ProgressWatchdog(ctx.config.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS);
  const cycleCtx: SyncContext = { ...ctx, cycleSignal: watchdog.signal, progress: () => watchdog.progress() };
  try {
    return await cycle(cycleCtx, stats, watchdog);
  } finally {
    watchdog.stop();
  }
}

async function cycle(ctx: SyncContext, stats: RunStats, watchdog: ProgressWatchdog): Promise<CycleResult> {
  const { store } = ctx;
  // Answered before the window's first request is sent: its Date is this window's read floor.
  const pipelinesDate = await refreshPipelines(ctx);
  watchdog.check();

  const watermark = await readWatermark(store);
  const saved = await readSavedWindow(store);
  const lookback = await readLookback(store);
  const now = ctx.now();
  const floors = { previous: await readReadFloor(store), current: trustedReadFloor(pipelinesDate, now) };
  const lateSeenAt = (await readLateEvent(store))?.seenAt ?? null;
  const start = saved ?? planWindow(watermark, lookback, ctx.config, now, floors, lateSeenAt);
  const read = await readWindow(ctx, stats, watchdog, start);

  if (!read.stopped) await drainDirty(ctx, stats);
  watchdog.check();
  await refreshReports(ctx, stats, stats.changed);
  const newWatermark = read.stopped ? watermark : read.window.maxOccurredAt;
  const reason = read.stopped ? null : await behindReason(ctx, stats, saved !== null, read.midWindowDrain, newWatermark);
  return {
    head: read.head,
    watermark: newWatermark,
    stopped: read.stopped,
    fullLookback: start.full !== undefined,
    behind: reason !== null,
    behindReason: reason,
  };
}

interface WindowRead {
  window: WindowState;
  head: string | null;
  stopped: boolean;
  midWindowDrain: boolean;
}

/** Pages the window to its end (or a graceful stop), committing each page with the window's position. */
async function readWindow(ctx: SyncContext, stats: RunStats, watchdog: ProgressWatchdog, start: WindowState): Promise<WindowRead> {
  const { store, client, logger } = ctx;
  let window = start;
  let head: string | null = null;
  let restarts = 0;
  let midWindowDrain = false;
  let guard = newGuard(window);
  // Whether every page so far came newest first: only then may a tick end at its reach.
  let inOrder = true;
  let previousOldest: string | null = null;
  let lateLogged = false;

  for (;;) {
    if (ctx.stopSignal.aborted) return { window, head, stopped: true, midWindowDrain };
    let page: Page<WorkspaceEvent>;
    try {
      page = await client.eventsPage(
        { since: window.since ?? undefined, cursor: window.cursor, limit: ctx.config.pageSize },
        { signal: ctx.cycleSignal },
      );
      guard.check(pageIds(page), page.nextCursor);
    } catch (err) {
      if (err instanceof CursorRejectedError && window.cursor !== null && restarts < MAX_CURSOR_RESTARTS) {
        restarts++;
        logger.warn(
          { since: window.since, status: err.status },
          'the workspace rejected the saved cursor; restarting the window from its start',
        );
        window = { ...window, cursor: null };
        guard = newGuard(window);
        previousOldest = null;
        continue;
      }
      // A runaway listing restarts from the window's start next cycle, not from a cursor that loops.
      if (err instanceof PagingError) await store.transaction((tx) => abandonWindow(tx));
      throw err;
    }
    const { events, rejected } = splitImplausible(page, ctx.now());
    if (window.cursor === null && head === null) head = events[0]?.occurredAt ?? null;
    stats.eventsRead += page.items.length + page.invalid.length;
    ctx.hooks?.onPage?.('events', { items: events.length, invalid: page.invalid.length + rejected.length });

    const maxOccurredAt = events.reduce<string | null>((max, e) => laterOf(max, e.occurredAt), window.maxOccurredAt);
    const next: WindowState = { ...window, cursor: page.nextCursor, maxOccurredAt, readFloor: checkedFloor(window.readFloor, page) };
    const occurredAts = events.map((e) => e.occurredAt);
    inOrder &&= newestFirst(occurredAts, previousOldest);
    previousOldest = occurredAts[occurredAts.length - 1] ?? previousOldest;
    const mayEnd = next.cursor !== null && reachedBelow(window.reach, occurredAts, inOrder);
    const committed = await commitPage(ctx, page, events, rejected, next, mayEnd);
    watchdog.progress();
    stats.eventsNew += committed.newCount;
    stats.eventsLate += committed.lateCount;
    stats.quarantined += rejected.length;
    if (committed.late !== null && !lateLogged) {
      lateLogged = true;
      logger.info(
        { eventId: committed.late.id, occurredAt: committed.late.occurredAt, lateBefore: window.lateBefore },
        'read an event that became visible later than the guaranteed tick overlap reaches; ticks re-read the whole tickOverlapSeconds for the next hour',
      );
    }
    window = committed.window;
    if (committed.ended) {
      if (next.cursor !== null)
        logger.debug(
          { reach: window.reach, since: window.since },
          'the tick reached its guaranteed overlap; the rest of the overlap would cost more requests',
        );
      return { window, head, stopped: false, midWindowDrain };
    }
    if ((await store.dirtyCount()) > MID_WINDOW_DRAIN_THRESHOLD) {
      midWindowDrain = true;
      await drainDirty(ctx, stats);
    }
  }
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
  const refs = [
    ...[...stats.changed.tickets].map((entityId) => ({ entityType: 'ticket' as const, entityId })),
    ...[...stats.changed.deals].map((entityId) => ({ entityType: 'deal' as const, entityId })),
  ].slice(0, NEWER_CHECK_LIMIT);
  if (refs.length === 0) return false;
  const mark = Date.parse(watermark);
  for (const updatedAt of (await ctx.store.mirroredUpdatedAt(refs)).values()) if (Date.parse(updatedAt) > mark) return true;
  return false;
}

/**
 * A page answered after the window's read floor cannot carry an earlier Date unless the upstream's
 * clock went back; then the floor may lie ahead of the times events are stamped with, and the
 * window stores none (the next tick re-reads the plain overlap).
 */
function checkedFloor(floor: string | null | undefined, page: Page<WorkspaceEvent>): string | null {
  if (floor == null) return null;
  if (page.serverDate != null && Date.parse(page.serverDate) < Date.parse(floor)) return null;
  return floor;
}

function newGuard(window: WindowState): PagingGuard {
  const guard = new PagingGuard('/api/v1/events');
  if (window.cursor !== null) guard.start(window.cursor);
  return guard;
}

function pageIds(page: Page<WorkspaceEvent>): string[] {
  return [...page.items.map((e) => e.id), ...page.invalid.map((i) => `invalid:${i.id ?? i.reason}`)];
}

/**
 * Events beyond the upstream's clock (plus the tolerance) never reach the events table nor the
 * watermark: one such event would otherwise make every later one look already read.
 */
export function splitImplausible(page: Page<WorkspaceEvent>, now: string): { events: WorkspaceEvent[]; rejected: RejectedEvent[] } {
  const limit = plausibleLimit(page, now);
  const events: WorkspaceEvent[] = [];
  const rejected: RejectedEvent[] = [];
  for (const raw of page.items) {
    const e = normaliseEvent(raw);
    if (isPlausible(e, limit)) {
      events.push(e);
      continue;
    }
    const clock = page.serverDate
      ? `the upstream's clock (Date header ${page.serverDate})`
      : `the local clock (${now}; the upstream sent no Date header)`;
    const ahead = Math.round((Date.parse(e.occurredAt) - (limit - FUTURE_TOLERANCE_MS)) / 1000);
    rejected.push({
      id: e.id,
      reason: `occurredAt ${e.occurredAt} is ${ahead} s ahead of ${clock}, beyond the ${FUTURE_TOLERANCE_MS / 1000} s tolerance; it cannot move the watermark`,
      raw,
    });
  }
  return { events, rejected };
}

function normaliseEvent(event: WorkspaceEvent): WorkspaceEvent {
  return { ...event, occurredAt: toIsoTimestamp(event.occurredAt) as string };
}
