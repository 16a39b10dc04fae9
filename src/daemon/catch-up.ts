import type { BehindReason } from '../sync/index.js';

/** Default bound on back-to-back catch-up cycles before `run` waits for its schedule again. */
export const MAX_CATCH_UP_CYCLES = 5;
/**
 * The longest a cycle that is behind waits for a tick due soon rather than catch up: what it
 * would have shown is late by at most this. Past it a catch-up pays for its change-log request
 * (on a 30-second schedule at 20 writes/s an unbounded wait took p95 from 21.8 to 31.9 s).
 */
export const MAX_TICK_WAIT_MS = 5_000;

export type CatchUpReason = BehindReason | 'tick-missed';

/** What one finished cycle tells the scheduler. */
export interface CycleEnd {
  /** False for a failed cycle: it is never followed at once, so a failing upstream cannot spin it. */
  ok: boolean;
  /** The cycle's own evidence that the upstream is ahead (CycleResult.behindReason), or null. */
  behind: BehindReason | null;
  /** A schedule tick fell due (and was skipped) while the cycle ran. */
  tickMissed: boolean;
  /** Milliseconds until the schedule's next tick; absent or null when unknown. */
  msToNextTick?: number | null;
  /** How long the cycle took, in ms; absent when unknown. */
  durationMs?: number;
}

export type CatchUpDecision =
  | { next: 'now'; reason: CatchUpReason; streak: number }
  | { next: 'schedule'; reason: CatchUpReason | null; capped: boolean; tickSoon?: true };

/**
 * When `run` starts the next cycle at once instead of at the next tick (docs/sync.md, "Catch-up").
 * A tick missed while the cycle ran is made up at once: that cycle was due anyway, so this never
 * runs faster than the schedule. A cycle that says it is behind is followed at once at most `max`
 * times in a row; a hostile upstream that always looks ahead then costs `max` extra cycles per tick,
 * never a hot loop. A failed cycle, or one not behind, ends the streak. A cycle that is behind
 * waits for the tick when the tick is due sooner than that cycle took and within
 * {@link MAX_TICK_WAIT_MS}: a catch-up would still be running at the tick and make it a missed
 * one, so back-to-back cycles each read the change log's head for a few seconds of events (at 20
 * writes/s on a 5-second schedule, 22-24 cycles for 16 ticks in the benchmark); waiting delays
 * what it would have shown by less than one cycle's duration and never more than that bound.
 */
export class CatchUpPolicy {
  private streak = 0;

  /** @param max back-to-back catch-up cycles allowed (default {@link MAX_CATCH_UP_CYCLES}). */
  constructor(private readonly max = MAX_CATCH_UP_CYCLES) {}

  after(end: CycleEnd): CatchUpDecision {
    if (!end.ok) {
      this.streak = 0;
      return { next: 'schedule', reason: null, capped: false };
    }
    if (end.tickMissed) return { next: 'now', reason: 'tick-missed', streak: this.streak };
    if (end.behind === null) {
      this.streak = 0;
      return { next: 'schedule', reason: null, capped: false };
    }
    const wait = end.msToNextTick;
    if (wait != null && end.durationMs !== undefined && wait <= end.durationMs && wait <= MAX_TICK_WAIT_MS)
      return { next: 'schedule', reason: end.behind, capped: false, tickSoon: true };
    if (this.streak >= this.max) {
      this.streak = 0;
      return { next: 'schedule', reason: end.behind, capped: true };
    }
    this.streak++;
    return { next: 'now', reason: end.behind, streak: this.streak };
  }
}
