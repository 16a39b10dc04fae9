/**
 * `schedule: "continuous"` (docs/design.md §4.10): the next cycle starts as soon as one ends, no
 * sooner than `minPollIntervalMs` after the previous one began; an idle cycle (no new event) is
 * followed no sooner than its requests allow at {@link IDLE_SHARE} of the request rate.
 */

/** The share of the request rate idle polls may spend: the rest stays free for a burst that follows. */
export const IDLE_SHARE = 0.2;
/** The longest pause after cycles that failed in a row (doubling from `minPollIntervalMs`). */
export const MAX_FAILURE_PAUSE_MS = 60_000;

/** What one cycle of the continuous loop did; null when it could not start (a reconcile was running). */
export interface PollOutcome {
  ok: boolean;
  /** Request attempts the cycle made (retries included). */
  requests: number;
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
  const idleSpacing = Math.max(min, (outcome.requests * 1000) / (IDLE_SHARE * pacing.ratePerSecond));
  if (!outcome.ok) return Math.max(Math.min(MAX_FAILURE_PAUSE_MS, min * 2 ** Math.max(0, failuresInARow - 1)), idleSpacing - elapsedMs);
  const busy = outcome.eventsNew > 0 || outcome.behind;
  return Math.max(0, (busy ? min : idleSpacing) - elapsedMs);
}

export interface ContinuousLoop {
  /** Runs one cycle; null when other work held the mirror (it is awaited before the next try). */
  cycle(): Promise<Omit<PollOutcome, 'requests'> | null>;
  /** Request attempts so far (client stats). */
  requests(): number;
  pacing(): PollPacing;
  stop: AbortSignal;
  onPause?(delayMs: number, outcome: PollOutcome): void;
}

/** Cycles until `stop` aborts; a pause ends at once on the stop. */
export async function pollContinuously(loop: ContinuousLoop): Promise<void> {
  let failures = 0;
  while (!loop.stop.aborted) {
    const began = performance.now();
    const before = loop.requests();
    const done = await loop.cycle();
    if (done === null || loop.stop.aborted) continue;
    const outcome: PollOutcome = { ...done, requests: loop.requests() - before };
    failures = outcome.ok ? 0 : failures + 1;
    const delay = nextPollDelay(outcome, performance.now() - began, failures, loop.pacing());
    loop.onPause?.(delay, outcome);
    if (delay > 0) await pause(delay, loop.stop);
  }
}

function pause(ms: number, stop: AbortSignal): Promise<void> {
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
