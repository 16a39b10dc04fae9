/**
 * `maxRequestsPerSecond: "auto"`: find the upstream's allowance instead of trusting a fixed
 * ceiling (docs/rate-limits.md). AIMD in the manner of TCP congestion control:
 *
 * - start at a safe rate and grow fast (slow start, about ×1.65 per second) while requests wait
 *   on the pacer and the upstream accepts them;
 * - after the first sign of pressure grow slowly (about +5 % per second);
 * - a 429 halves the rate and holds every request until its `Retry-After` has passed;
 * - rate-limit headers, when sent, steer before any 429: a stated policy (`RateLimit-Policy`) caps
 *   the rate just below it; `Remaining` under 90 % of `Limit` stops growth (and ends slow start
 *   with a cut), and under a tenth cuts the rate and (for a reset of 2 s or more) spreads what is
 *   left over the time to `Reset`;
 * - the hard ceiling is never exceeded, whatever the upstream says.
 *
 * Starts are spaced 1000/rate ms apart by a StartQueue, which reads the rate and the pause afresh
 * at every start, so bursts never exceed the rate and a 429 holds the callers already waiting too.
 */
import { parseRateHints, type RateHints } from './adaptive-headers.js';
import { RateLimiter, realClock, StartQueue, type Clock, type Pacer, type RateFeedback } from './limiter.js';
import { parseRetryAfter } from './retry-policy.js';

export interface AdaptiveRateOptions {
  /** Hard ceiling in requests per second; never exceeded. */
  ceiling: number;
  /** First rate. Default 5 (or the ceiling when lower). */
  start?: number;
  /** Longest pause a Retry-After may impose on all requests, in ms. Default 60000. */
  maxPauseMs?: number;
}

/** Stay this far under a rate the server states, so clock skew and rounding do not cost 429s. */
const POLICY_MARGIN = 0.95;
/** Lowest rate: one request every 10 s still makes progress against a per-minute allowance. */
const FLOOR = 0.1;
/** Pressure signals closer together than this are one event (concurrent 429s of one burst). */
const DECREASE_COOLDOWN_MS = 1000;
/** Without Retry-After, a 429 holds requests this long. */
const DEFAULT_PAUSE_MS = 1000;
/** Remaining/Reset pacing applies to windows at least this long. */
const PACE_MIN_RESET_MS = 2000;
/** Growth only while the pacer was the bottleneck this recently: idle time proves nothing. */
const DEMAND_WINDOW_MS = 1000;

export class AdaptiveRateLimiter implements Pacer {
  private currentRate: number;
  private slowStart = true;
  private policyCap = Number.POSITIVE_INFINITY;
  /** Temporary cap from Remaining/Reset, lifted by the next response with headroom. */
  private paceCap = Number.POSITIVE_INFINITY;
  private readonly starts: StartQueue;
  private pausedUntil = Number.NEGATIVE_INFINITY;
  private lastDecreaseAt = Number.NEGATIVE_INFINITY;
  private lastWaitAt = Number.NEGATIVE_INFINITY;
  private readonly ceiling: number;
  private readonly maxPauseMs: number;

  constructor(
    options: AdaptiveRateOptions,
    private readonly clock: Clock = realClock,
  ) {
    if (!(options.ceiling > 0) || !Number.isFinite(options.ceiling)) {
      throw new RangeError(`maxRequestsPerSecondCeiling must be a positive number, got ${options.ceiling}`);
    }
    this.ceiling = options.ceiling;
    this.currentRate = Math.min(this.ceiling, options.start ?? 5);
    this.maxPauseMs = options.maxPauseMs ?? 60_000;
    this.starts = new StartQueue(
      (lastStart) => Math.max(lastStart + 1000 / this.rate, this.pausedUntil),
      clock,
      (now) => (this.lastWaitAt = now),
    );
  }

  /** The rate request starts are paced at now (requests per second). */
  get rate(): number {
    return Math.min(this.currentRate, this.paceCap);
  }

  acquire(signal?: AbortSignal): Promise<void> {
    return this.starts.acquire(signal);
  }

  observe({ status, headers }: RateFeedback): void {
    const now = this.clock.now();
    const hints = parseRateHints(headers);
    if (hints.policyPerSecond !== undefined) this.policyCap = Math.max(FLOOR, hints.policyPerSecond * POLICY_MARGIN);
    if (status === 429) {
      const wait = parseRetryAfter(headers['retry-after']) ?? DEFAULT_PAUSE_MS;
      this.pausedUntil = Math.max(this.pausedUntil, now + Math.min(wait, this.maxPauseMs));
      this.decrease(0.5, now);
    } else if (!this.steerByRemaining(hints, now) && now - this.lastWaitAt <= DEMAND_WINDOW_MS) {
      this.increase();
    }
    this.currentRate = Math.min(this.currentRate, this.ceiling, this.policyCap);
  }

  /** True when the headers say to hold back (no growth on this response). */
  private steerByRemaining(h: RateHints, now: number): boolean {
    if (h.remaining === undefined || h.limit === undefined) {
      this.paceCap = Number.POSITIVE_INFINITY;
      return false;
    }
    const low = Math.max(1, Math.ceil(h.limit * 0.1));
    if (h.remaining <= low) {
      this.decrease(0.85, now);
      // Spreading what is left over the time to the reset is safe for a fixed window and for a
      // bucket alike; the cap lasts until a response shows headroom again. Over a short reset
      // it would only idle the slots already handed out; a 429's Retry-After covers that case.
      if (h.resetMs !== undefined && h.resetMs >= PACE_MIN_RESET_MS) {
        this.paceCap = Math.max(FLOOR, ((h.remaining + 1) * 1000) / h.resetMs);
      }
      return true;
    }
    this.paceCap = Number.POSITIVE_INFINITY;
    // Below the allowance a bucket stays (nearly) full; a falling level means we are past it:
    // slow start overshot (cut), or additive growth reached it (hold).
    const draining = h.remaining < h.limit * 0.9;
    if (draining && this.slowStart) this.decrease(0.85, now);
    return draining;
  }

  private increase(): void {
    // Per response: r successes a second add 0.5·r (slow start) or 0.05·r (after pressure).
    this.currentRate += this.slowStart ? 0.5 : 0.05;
  }

  private decrease(factor: number, now: number): void {
    this.slowStart = false;
    if (now - this.lastDecreaseAt < DECREASE_COOLDOWN_MS) return;
    this.lastDecreaseAt = now;
    this.currentRate = Math.max(Math.min(FLOOR, this.ceiling), this.currentRate * factor);
  }
}

/** The pacer for a resolved `maxRequestsPerSecond`: a fixed ceiling, or "auto" under a hard ceiling. */
export function createPacer(rate: number | 'auto', ceiling: number, maxPauseMs: number, clock: Clock, start?: number): Pacer {
  return rate === 'auto'
    ? new AdaptiveRateLimiter({ ceiling, maxPauseMs, ...(start !== undefined ? { start } : {}) }, clock)
    : new RateLimiter(rate, clock);
}
