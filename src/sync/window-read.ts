import { CursorRejectedError, PagingError, PagingGuard, type Page, type WorkspaceEvent } from '../api/index.js';
import { toIsoTimestamp } from '../util/time.js';
import { laterOf, type SyncContext } from './context.js';
import { drainDirty } from './drain.js';
import { commitPages, type CommittedPage, type ReadPage } from './event-page.js';
import { groupBounds, logGroupLimits, settle, settledBefore, type Settled } from './page-group.js';
import {
  boundingClock,
  ClockWarning,
  clockName,
  FUTURE_TOLERANCE_MS,
  isPlausible,
  stampedByClockAhead,
  UpstreamClockAheadError,
  type BoundingClock,
} from './plausible.js';
import type { RejectedEvent } from './quarantine.js';
import type { RunStats } from './stats.js';
import { timed } from './steps.js';
import { abandonWindow, type WindowState } from './state.js';
import type { ProgressWatchdog } from './watchdog.js';
import { newestFirst, reachedBelow } from './window.js';
import { RECORD_ENTITIES, recordSet } from '../entities/index.js';

/** Past this many pending records a window drains before reading on, so a catch-up shows progress. */
export const MID_WINDOW_DRAIN_THRESHOLD = 1000;
const MAX_CURSOR_RESTARTS = 3;

export interface WindowRead {
  window: WindowState;
  head: string | null;
  stopped: boolean;
  midWindowDrain: boolean;
}

/**
 * Pages the window to its end (or a graceful stop). Pages commit in groups with the window's
 * position after the group's last page (docs/sync.md, "Change-log pages commit in groups"): up to
 * 10 pages or 1 s of reading, on every database. A group closes early
 * where a tick may end, on a stop and before a failure is thrown (what was read commits first).
 * While a group commits, the next page is already being read when it is certain to be needed,
 * so that read costs no request the window would not make anyway.
 */
export async function readWindow(ctx: SyncContext, stats: RunStats, watchdog: ProgressWatchdog, start: WindowState): Promise<WindowRead> {
  const reader = new WindowReader(ctx, stats, watchdog, start);
  try {
    return await reader.run();
  } finally {
    await reader.settleAhead();
  }
}

/** One window's read in progress: its position, its open group of pages and the page read ahead. */
class WindowReader {
  // The position after the last page read; it commits with the group that holds that page.
  private window: WindowState;
  private head: string | null = null;
  private restarts = 0;
  private midWindowDrain = false;
  private guard: PagingGuard;
  // Whether every page so far came newest first: only then may a tick end at its reach.
  private inOrder = true;
  private previousOldest: string | null = null;
  private lateLogged = false;
  private readonly clockWarning: ClockWarning;
  private group: ReadPage[] = [];
  private groupStarted = 0;
  private ahead: Promise<Settled<Page<WorkspaceEvent>>> | null = null;
  private readonly maxPages: number;
  private readonly maxDelayMs: number;

  constructor(
    private readonly ctx: SyncContext,
    private readonly stats: RunStats,
    private readonly watchdog: ProgressWatchdog,
    start: WindowState,
  ) {
    ({ maxPages: this.maxPages, maxDelayMs: this.maxDelayMs } = groupBounds(logGroupLimits()));
    this.window = start;
    this.guard = newGuard(start);
    this.clockWarning = new ClockWarning(ctx.logger);
  }

  async run(): Promise<WindowRead> {
    for (;;) {
      if (this.ctx.stopSignal.aborted) {
        // A read already under way is awaited and dropped: the saved cursor is the group's.
        await this.settleAhead();
        await this.flush();
        return this.result(true);
      }
      const page = await this.nextPage();
      if (page !== null && (await this.take(page))) return this.result(false);
    }
  }

  /** Awaits (and drops) a page read ahead, so no request outlives the window. */
  async settleAhead(): Promise<void> {
    if (this.ahead) await this.ahead;
    this.ahead = null;
  }

  private result(stopped: boolean): WindowRead {
    return { window: this.window, head: this.head, stopped, midWindowDrain: this.midWindowDrain };
  }

  private fetchPage(from: WindowState): Promise<Settled<Page<WorkspaceEvent>>> {
    const { client, config, cycleSignal } = this.ctx;
    return settle(
      client.eventsPage({ since: from.since ?? undefined, cursor: from.cursor, limit: config.pageSize }, { signal: cycleSignal }),
    );
  }

  /** The next page; null when a rejected cursor restarted the window from its start. */
  private async nextPage(): Promise<Page<WorkspaceEvent> | null> {
    const request = this.ahead ?? this.fetchPage(this.window);
    this.ahead = null;
    // Read pages do not wait past their group's time for a slow upstream's next answer.
    if (this.group.length > 0 && !(await settledBefore(request, this.groupStarted + this.maxDelayMs))) await this.flush();
    try {
      const got = await request;
      if (!got.ok) throw got.error;
      this.guard.check(pageIds(got.value), got.value.nextCursor);
      return got.value;
    } catch (err) {
      await this.flush();
      if (err instanceof CursorRejectedError && this.window.cursor !== null && this.restarts < MAX_CURSOR_RESTARTS) {
        this.restarts++;
        this.ctx.logger.warn(
          { since: this.window.since, status: err.status },
          'the workspace rejected the saved cursor; restarting the window from its start',
        );
        this.window = { ...this.window, cursor: null };
        this.guard = newGuard(this.window);
        this.previousOldest = null;
        return null;
      }
      // A runaway listing restarts from the window's start next cycle, not from a cursor that loops.
      if (err instanceof PagingError) await this.ctx.store.transaction((tx) => abandonWindow(tx));
      throw err;
    }
  }

  /** Adds a page to its group and commits the group when due; true when the window ended (or may end here). */
  private async take(page: Page<WorkspaceEvent>): Promise<boolean> {
    const { ctx, stats, window } = this;
    const { events, rejected, clock, clockAhead } = splitImplausible(page, ctx.now());
    this.clockWarning.observe(clock);
    if (clockAhead !== null) {
      // What was read before this page commits first; this page and the watermark stay as they were.
      await this.flush();
      throw new UpstreamClockAheadError(clock, clockAhead);
    }
    if (window.cursor === null && this.head === null) this.head = events[0]?.occurredAt ?? null;
    stats.eventsRead += page.items.length + page.invalid.length;
    ctx.hooks?.onPage?.('events', { items: events.length, invalid: page.invalid.length + rejected.length });

    const maxOccurredAt = events.reduce<string | null>((max, e) => laterOf(max, e.occurredAt), window.maxOccurredAt);
    const next: WindowState = { ...window, cursor: page.nextCursor, maxOccurredAt, readFloor: checkedFloor(window.readFloor, page) };
    const occurredAts = events.map((e) => e.occurredAt);
    this.inOrder &&= newestFirst(occurredAts, this.previousOldest);
    this.previousOldest = occurredAts[occurredAts.length - 1] ?? this.previousOldest;
    const mayEnd = next.cursor !== null && reachedBelow(window.reach, occurredAts, this.inOrder);
    if (this.group.length === 0) this.groupStarted = performance.now();
    this.group.push({ page, events, rejected, next, mayEnd });
    this.window = next;
    const full = this.group.length >= this.maxPages || performance.now() - this.groupStarted >= this.maxDelayMs;
    if (next.cursor !== null && !mayEnd && !full) return false;
    // Neither the end nor a possible end: the next page is read whatever this commit finds.
    if (next.cursor !== null && !mayEnd && !ctx.stopSignal.aborted) this.ahead = this.fetchPage(this.window);
    if (await this.flush()) {
      if (next.cursor !== null)
        ctx.logger.debug(
          { reach: this.window.reach, since: this.window.since },
          'the tick reached its guaranteed overlap; the rest of the overlap would cost more requests',
        );
      return true;
    }
    if ((await timed(ctx, 'dirty-marks', () => ctx.store.dirtyCount())) > MID_WINDOW_DRAIN_THRESHOLD) {
      this.midWindowDrain = true;
      await drainDirty(ctx, stats);
    }
    return false;
  }

  /** Commits the group; true when its last page ended the window. */
  private async flush(): Promise<boolean> {
    if (this.group.length === 0) return false;
    const pages = this.group;
    this.group = [];
    const committed = await commitPages(this.ctx, pages);
    this.watchdog.progress();
    committed.forEach((c, i) => this.counted(c, pages[i]!));
    const last = committed[committed.length - 1]!;
    this.window = last.window;
    return last.ended;
  }

  private counted(c: CommittedPage, read: ReadPage): void {
    const { stats, ctx } = this;
    stats.eventsNew += c.newCount;
    stats.eventsLate += c.lateCount;
    stats.quarantined += read.rejected.length + c.reused.length;
    if (c.reused.length > 0)
      ctx.logger.warn(
        { eventIds: c.reused.slice(0, 5).map((e) => e.id), count: c.reused.length },
        'the change log reused event ids for other events; those events are quarantined and their records re-read',
      );
    // A late event can change the history of a record the cycle does not re-read (already newer).
    for (const { plural } of RECORD_ENTITIES) for (const id of recordSet(c.historyOf, plural)) recordSet(stats.changed, plural).add(id);
    if (c.late !== null && !this.lateLogged) {
      this.lateLogged = true;
      ctx.logger.info(
        { eventId: c.late.id, occurredAt: c.late.occurredAt, lateBefore: read.next.lateBefore },
        'read an event that became visible later than the guaranteed tick overlap reaches; ticks re-read the whole tickOverlapSeconds for the next hour',
      );
    }
  }
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
 * Events beyond the bounding clock (the upstream's Date when it lies near the local clock, else
 * the local clock) plus the tolerance never reach the events table nor the watermark: one such
 * event would otherwise make every later one look already read. `clockAhead` is the first of them
 * that an upstream clock running ahead explains better than a bad event (stampedByClockAhead).
 */
export function splitImplausible(
  page: Page<WorkspaceEvent>,
  now: string,
): { events: WorkspaceEvent[]; rejected: RejectedEvent[]; clock: BoundingClock; clockAhead: WorkspaceEvent | null } {
  const clock = boundingClock(page.serverDate, now);
  const limit = clock.at + FUTURE_TOLERANCE_MS;
  const events: WorkspaceEvent[] = [];
  const rejected: RejectedEvent[] = [];
  let clockAhead: WorkspaceEvent | null = null;
  for (const raw of page.items) {
    const e = normaliseEvent(raw);
    if (isPlausible(e, limit)) {
      events.push(e);
      continue;
    }
    if (clockAhead === null && stampedByClockAhead(clock, e.occurredAt)) clockAhead = e;
    const ahead = Math.round((Date.parse(e.occurredAt) - clock.at) / 1000);
    rejected.push({
      id: e.id,
      reason: `occurredAt ${e.occurredAt} is ${ahead} s ahead of ${clockName(clock, now)}, beyond the ${FUTURE_TOLERANCE_MS / 1000} s tolerance; it cannot move the watermark`,
      raw,
    });
  }
  return { events, rejected, clock, clockAhead };
}

function normaliseEvent(event: WorkspaceEvent): WorkspaceEvent {
  return { ...event, occurredAt: toIsoTimestamp(event.occurredAt) as string };
}
