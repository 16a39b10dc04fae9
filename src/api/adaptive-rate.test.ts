import { describe, expect, it } from 'vitest';
import { AdaptiveRateLimiter } from './adaptive-rate.js';
import type { Clock } from './limiter.js';

/** Time moves only by sleeps and advance(); each sleep records when its caller wakes. */
function fakeClock() {
  const wakes: number[] = [];
  let t = 1000;
  const clock: Clock = {
    now: () => t,
    sleep: (ms) => {
      t += ms;
      wakes.push(t);
      return Promise.resolve();
    },
  };
  return { clock, wakes, now: () => t, advance: (ms: number) => (t += ms) };
}

const ok = { status: 200, headers: {} };

/** Keeps the limiter busy (every start waited for its slot) and feeds each start one response. */
async function drive(limiter: AdaptiveRateLimiter, n: number, answer: (i: number) => { status: number; headers: Record<string, string> }) {
  for (let i = 0; i < n; i++) {
    await limiter.acquire();
    limiter.observe(answer(i));
  }
}

describe('AdaptiveRateLimiter', () => {
  it('a 429 holds the callers already waiting, not only those who come after it', async () => {
    let t = 1000;
    // Time moves on a later turn of the event loop, so a 429 can arrive while callers wait.
    const clock: Clock = { now: () => t, sleep: (ms) => new Promise((resolve) => setImmediate(() => resolve(void (t += ms)))) };
    const limiter = new AdaptiveRateLimiter({ ceiling: 100, start: 10 }, clock);
    const starts: number[] = [];
    const waiting = Array.from({ length: 3 }, () => limiter.acquire().then(() => starts.push(t)));
    // The first request started at once; the other two wait for their turn when its 429 comes.
    limiter.observe({ status: 429, headers: { 'retry-after': '5' } });
    await Promise.all(waiting);
    expect(starts[0]).toBe(1000);
    // Held until the Retry-After has passed, then spaced at the halved rate (5/s: 200 ms apart).
    expect(starts.slice(1)).toEqual([6000, 6200]);
  });

  it('starts at a safe rate and grows while the upstream accepts and the pacer is the bottleneck', async () => {
    const { clock } = fakeClock();
    const limiter = new AdaptiveRateLimiter({ ceiling: 100 }, clock);
    expect(limiter.rate).toBe(5);
    await drive(limiter, 40, () => ok);
    expect(limiter.rate).toBeGreaterThan(15);
  });

  it('does not grow while idle: spare capacity proves nothing about the allowance', async () => {
    const { clock, advance } = fakeClock();
    const limiter = new AdaptiveRateLimiter({ ceiling: 100 }, clock);
    for (let i = 0; i < 20; i++) {
      advance(5000);
      await limiter.acquire();
      limiter.observe(ok);
    }
    expect(limiter.rate).toBe(5);
  });

  it('never exceeds the hard ceiling, whatever the upstream states', async () => {
    const { clock } = fakeClock();
    const limiter = new AdaptiveRateLimiter({ ceiling: 7 }, clock);
    await drive(limiter, 200, () => ({
      status: 200,
      headers: { 'ratelimit-policy': '1000;w=1', 'ratelimit-limit': '1000', 'ratelimit-remaining': '1000' },
    }));
    expect(limiter.rate).toBe(7);
  });

  it('on 429 halves the rate and holds every request until Retry-After has passed', async () => {
    const { clock, now, wakes } = fakeClock();
    const limiter = new AdaptiveRateLimiter({ ceiling: 100, start: 40 }, clock);
    await limiter.acquire();
    const at = now();
    limiter.observe({ status: 429, headers: { 'retry-after': '3' } });
    expect(limiter.rate).toBe(20);
    // A second 429 from the same burst is the same signal, not another halving.
    limiter.observe({ status: 429, headers: { 'retry-after': '3' } });
    expect(limiter.rate).toBe(20);
    wakes.length = 0;
    await limiter.acquire();
    expect(wakes.at(-1)).toBeGreaterThanOrEqual(at + 3000);
  });

  it('caps a Retry-After pause at maxPauseMs', async () => {
    const { clock, now } = fakeClock();
    const limiter = new AdaptiveRateLimiter({ ceiling: 10, maxPauseMs: 2000 }, clock);
    await limiter.acquire();
    const at = now();
    limiter.observe({ status: 429, headers: { 'retry-after': '86400' } });
    await limiter.acquire();
    expect(now() - at).toBeLessThanOrEqual(2000 + 1000 / limiter.rate + 1);
  });

  it('stays just under a stated policy instead of probing for 429s', async () => {
    const { clock } = fakeClock();
    const limiter = new AdaptiveRateLimiter({ ceiling: 100 }, clock);
    await drive(limiter, 300, () => ({ status: 200, headers: { 'ratelimit-policy': '50;w=1' } }));
    expect(limiter.rate).toBeCloseTo(47.5);
  });

  it('stops growing once Remaining falls, and cuts and paces to Remaining/Reset when nearly out', async () => {
    const { clock, advance } = fakeClock();
    const limiter = new AdaptiveRateLimiter({ ceiling: 100, start: 20 }, clock);
    const draining = { status: 200, headers: { 'ratelimit-limit': '100', 'ratelimit-remaining': '40', 'ratelimit-reset': '30' } };
    // Slow start ends with one cut; then the rate holds however many responses come.
    await drive(limiter, 50, () => draining);
    expect(limiter.rate).toBe(17);
    advance(1000);
    limiter.observe({ status: 200, headers: { 'ratelimit-limit': '100', 'ratelimit-remaining': '5', 'ratelimit-reset': '30' } });
    // 6 requests over 30 s: 0.2 per second until a response shows headroom again.
    expect(limiter.rate).toBeCloseTo(0.2);
    limiter.observe({ status: 200, headers: { 'ratelimit-limit': '100', 'ratelimit-remaining': '95', 'ratelimit-reset': '1' } });
    // Headroom lifts the cap; the cut (17 × 0.85) stays, and no growth: the pacer sat idle.
    expect(limiter.rate).toBeCloseTo(17 * 0.85);
  });

  it('after pressure grows slowly (additive), not back into slow start', async () => {
    const { clock, advance } = fakeClock();
    const limiter = new AdaptiveRateLimiter({ ceiling: 1000, start: 40 }, clock);
    limiter.observe({ status: 429, headers: { 'retry-after': '0' } });
    advance(2000);
    await drive(limiter, 100, () => ok);
    // +0.05 per response, except the first: after the idle gap it did not wait for its slot.
    expect(limiter.rate).toBeCloseTo(20 + 99 * 0.05);
  });

  it('rejects a ceiling that is not a positive number', () => {
    expect(() => new AdaptiveRateLimiter({ ceiling: 0 })).toThrow(/maxRequestsPerSecondCeiling/);
    expect(() => new AdaptiveRateLimiter({ ceiling: Number.NaN })).toThrow(/maxRequestsPerSecondCeiling/);
  });
});
