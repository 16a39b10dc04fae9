/**
 * `schedule: "continuous"` (docs/design.md §4.10): the next cycle starts as soon as one ends, no
 * sooner than `minPollIntervalMs` after the previous one began; an idle cycle (no new event) is
 * followed no sooner than its poll's requests allow at {@link IDLE_SHARE} of the request rate. Only
 * the poll is charged: a backfill before it and a full lookback window's re-read are work with
 * their own bounds (docs/sync.md), and charging them made the loop doze for minutes after them.
 */

/** The share of the request rate idle polls may spend: the rest stays free for a burst that follows. */
export const IDLE_SHARE = 0.2;
/** What an idle poll costs when the log was quiet: `GET /pipelines` and one change-log page. */
export const IDLE_POLL_REQUESTS = 2;
/** The longest pause after cycles that failed in a row (doubling from `minPollIntervalMs`). */
export const MAX_FAILURE_PAUSE_MS = 60_000;

/** What one cycle of the continuous loop did; null when it could not start (a reconcile was running). */
export interface PollOutcome {
  ok: boolean;
  /**
   * Request attempts of the cycle's sync (retries included); never those of a backfill that ran
   * before it in the same turn of the loop.
   */
  requests: number;
  /**
   * The sync's window re-read the full lookback (CycleResult.fullLookback): its pages beyond an
   * ordinary poll's are the full window's own cost, due once per `fullLookbackEverySeconds`.
   */
  fullLookback: boolean;
  /** Events new to the mirror. */
  eventsNew: number;
  /** The cycle ended with evidence that the upstream is already ahead (CycleResult.behind). */
  behind: boolean;
}

export interface PollPacing {
  /** Config `minPollIntervalMs`. */
  minPollIntervalMs: number;
  /** The request rate now: the fixed ceiling, or the "auto" rate the client paces at. */
  ratePerSecond: number;
  /**
   * Config `fullLookbackEverySeconds` is 0: every window is a full one, so its pages are every
   * poll's own and are charged in full. Default false.
   */
  everyWindowFull?: boolean;
}

/**
 * The requests an idle spacing is charged for: the poll's own. A full lookback window (periodic,
 * bounded in docs/sync.md) is charged as the ordinary poll it stands in for, at most
 * {@link IDLE_POLL_REQUESTS}, unless every window is a full one.
 */
export function chargedRequests(outcome: PollOutcome, pacing: PollPacing): number {
  if (outcome.fullLookback && pacing.everyWindowFull !== true) return Math.min(outcome.requests, IDLE_POLL_REQUESTS);
  return outcome.requests;
}

/**
 * Milliseconds to wait after a cycle that began `elapsedMs` ago. Busy (new events, or behind): the
 * next starts at once, at least `minPollIntervalMs` after this one began, and drains at the full
 * rate. Idle: its requests spaced at IDLE_SHARE of the rate, so idle polling never takes more than
 * that share. Failed: the idle spacing too (its retries count), and at least a pause after the end
 * that doubles from `minPollIntervalMs` up to MAX_FAILURE_PAUSE_MS with each failure in a row (the
 * client has already retried each request with its own back-off).
 */
export function nextPollDelay(outcome: PollOutcome, elapsedMs: number, failuresInARow: number, pacing: PollPacing): number {
  const min = pacing.minPollIntervalMs;
  const idleSpacing = Math.max(min, (chargedRequests(outcome, pacing) * 1000) / (IDLE_SHARE * pacing.ratePerSecond));
  if (!outcome.ok) return Math.max(Math.min(MAX_FAILURE_PAUSE_MS, min * 2 ** Math.max(0, failuresInARow - 1)), idleSpacing - elapsedMs);
  const busy = outcome.eventsNew > 0 || outcome.behind;
  return Math.max(0, (busy ? min : idleSpacing) - elapsedMs);
}

export interface ContinuousLoop {
  /**
   * Runs one cycle (a backfill first while the mirror's is unfinished, then a sync); null when
   * other work held the mirror (it is awaited before the next try). Its `requests` are the sync's.
   */
  cycle(): Promise<PollOutcome | null>;
  pacing(): PollPacing;
  stop: AbortSignal;
  /** Ends a pause early (no sooner than `minPollIntervalMs` after the cycle began): evidence of a change upstream. */
  nudges?: PollNudge;
  onPause?(delayMs: number, outcome: PollOutcome): void;
}

/**
 * Evidence that the upstream holds a change the mirror has not read (a `GET /wait` for a record
 * whose copy is older than the write): the loop's pause ends early, as after a busy cycle. Nudges
 * coalesce; polls stay at least `minPollIntervalMs` apart whatever arrives.
 */
export class PollNudge {
  #wake: (() => void) | null = null;
  #pending = false;

  nudge(): void {
    this.#pending = true;
    this.#wake?.();
  }

  /** Resolves at the first nudge since the last take (at once if one came meanwhile). */
  next(): Promise<void> {
    if (this.#pending) return Promise.resolve();
    return new Promise((resolve) => (this.#wake = resolve));
  }

  /** A cycle starts: what nudged it is being read now. */
  take(): void {
    this.#pending = false;
    this.#wake = null;
  }
}

/** Cycles until `stop` aborts; a pause ends at once on the stop. */
export async function pollContinuously(loop: ContinuousLoop): Promise<void> {
  let failures = 0;
  while (!loop.stop.aborted) {
    const began = performance.now();
    loop.nudges?.take();
    const outcome = await loop.cycle();
    if (outcome === null || loop.stop.aborted) continue;
    failures = outcome.ok ? 0 : failures + 1;
    const delay = nextPollDelay(outcome, performance.now() - began, failures, loop.pacing());
    loop.onPause?.(delay, outcome);
    if (delay <= 0) continue;
    // A failed cycle keeps its back-off: a nudge cannot make a failing upstream answer sooner.
    const soonest = () => Math.max(0, loop.pacing().minPollIntervalMs - (performance.now() - began));
    await pauseOrNudge(delay, soonest, loop.stop, outcome.ok ? loop.nudges : undefined);
  }
}

/** Waits `delayMs`, or until a nudge and then `soonest()` more, whichever ends first; at once on the stop. */
async function pauseOrNudge(delayMs: number, soonest: () => number, stop: AbortSignal, nudges?: PollNudge): Promise<void> {
  const over = new AbortController();
  const signal = AbortSignal.any([stop, over.signal]);
  const nudged = nudges ? [nudges.next().then(() => pause(soonest(), signal))] : [];
  await Promise.race([pause(delayMs, signal), ...nudged]);
  over.abort();
}

function pause(ms: number, stop: AbortSignal): Promise<void> {
  if (stop.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      stop.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    stop.addEventListener('abort', done, { once: true });
  });
}
