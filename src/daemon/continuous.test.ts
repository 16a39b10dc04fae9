import { describe, expect, it } from 'vitest';
import {
  IDLE_POLL_REQUESTS,
  IDLE_SHARE,
  MAX_FAILURE_PAUSE_MS,
  nextPollDelay,
  PollNudge,
  pollContinuously,
  type PollOutcome,
} from './continuous.js';

const pacing = { minPollIntervalMs: 500, ratePerSecond: 10 };
const idle: PollOutcome = { ok: true, requests: 2, eventsNew: 0, behind: false, fullLookback: false };

describe('continuous pacing (docs/design.md §4.10)', () => {
  it('spaces idle polls so that they spend at most the idle share of the rate', () => {
    // Two requests at a fifth of 10/s: one idle poll a second, 2 requests/s.
    expect(nextPollDelay(idle, 100, 0, pacing)).toBe(900);
    for (const rate of [1, 5, 10, 37, 100]) {
      for (const requests of [1, 2, 3, 9]) {
        const spacing = 40 + nextPollDelay({ ...idle, requests }, 40, 0, { ...pacing, ratePerSecond: rate });
        expect(requests / (spacing / 1000)).toBeLessThanOrEqual(IDLE_SHARE * rate + 1e-9);
        expect(spacing).toBeGreaterThanOrEqual(pacing.minPollIntervalMs);
      }
    }
  });

  it('reads again at once after a busy cycle, but never sooner than minPollIntervalMs after it began', () => {
    expect(nextPollDelay({ ...idle, eventsNew: 40 }, 120, 0, pacing)).toBe(380);
    expect(nextPollDelay({ ...idle, eventsNew: 40, requests: 30 }, 4000, 0, pacing)).toBe(0);
    expect(nextPollDelay({ ...idle, behind: true }, 900, 0, pacing)).toBe(0);
  });

  it('backs off after failures, doubling to a bound, and still counts their retries against the idle share', () => {
    const failed = { ...idle, ok: false, requests: 1 };
    expect([1, 2, 3, 4].map((n) => nextPollDelay(failed, 10_000, n, pacing))).toEqual([500, 1000, 2000, 4000]);
    expect(nextPollDelay(failed, 10_000, 30, pacing)).toBe(MAX_FAILURE_PAUSE_MS);
    // Twelve attempts in 300 ms: the idle share wants 6 s between starts.
    expect(nextPollDelay({ ...failed, requests: 12 }, 300, 1, pacing)).toBe(5700);
  });

  it('charges a full lookback window as the idle poll it stands in for, unless every window is a full one', () => {
    // 400 pages of an idle full window at 10/s: not 200 s of doze, one idle poll's spacing.
    const full = { ...idle, requests: 401, fullLookback: true };
    expect(nextPollDelay(full, 30_000, 0, pacing)).toBe(0);
    expect(nextPollDelay(full, 100, 0, pacing)).toBe((IDLE_POLL_REQUESTS * 1000) / (IDLE_SHARE * 10) - 100);
    // fullLookbackEverySeconds 0: the full window is every poll, so all of it is charged.
    expect(nextPollDelay(full, 100, 0, { ...pacing, everyWindowFull: true })).toBe(200_400);
    // An ordinary idle poll that read many pages (the overlap after a burst) is charged in full.
    expect(nextPollDelay({ ...idle, requests: 12 }, 100, 0, pacing)).toBe(5900);
  });

  it('ends an idle pause at a nudge, no sooner than minPollIntervalMs after the cycle began, and stops at once', async () => {
    const stop = new AbortController();
    const nudges = new PollNudge();
    const starts: number[] = [];
    const pauses: number[] = [];
    let secondStarted!: () => void;
    const second = new Promise<void>((r) => (secondStarted = r));
    const run = pollContinuously({
      stop: stop.signal,
      nudges,
      // An idle spacing of 1,000 s: only the nudge can start the second cycle within the test.
      pacing: () => ({ minPollIntervalMs: 50, ratePerSecond: 0.01 }),
      cycle: () => {
        starts.push(performance.now());
        if (starts.length === 2) secondStarted();
        return Promise.resolve(idle);
      },
      onPause: (delayMs) => {
        pauses.push(delayMs);
        if (pauses.length === 1) nudges.nudge();
        else stop.abort();
      },
    });
    await second;
    expect(pauses[0]).toBeGreaterThan(900_000);
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(49);
    await run;
    expect(starts).toHaveLength(2);
  });
});
