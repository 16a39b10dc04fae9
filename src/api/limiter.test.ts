import { describe, expect, it } from 'vitest';
import { abortableSleep, RateLimiter, Semaphore, type Clock } from './limiter.js';

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
  return { clock, wakes, advance: (ms: number) => (t += ms) };
}

describe('RateLimiter', () => {
  it('spaces request starts 1000/rps apart, including a burst of concurrent callers', async () => {
    const { clock, wakes } = fakeClock();
    const limiter = new RateLimiter(10, clock);
    await Promise.all(Array.from({ length: 5 }, () => limiter.acquire()));
    // the first goes at once (no sleep); the others wait for their slot
    expect(wakes).toEqual([1100, 1200, 1300, 1400]);
  });

  it('never sleeps for a start due within a millisecond: a ceiling above 1,000/s is not paced by the timer', async () => {
    const { clock, wakes } = fakeClock();
    // 0.01 ms apart: 8 concurrent callers are all due within one millisecond.
    const limiter = new RateLimiter(100_000, clock);
    await Promise.all(Array.from({ length: 8 }, () => limiter.acquire()));
    expect(wakes).toEqual([]);
    // 500 more (5 ms of slots) sleep only for the whole milliseconds the spacing adds up to.
    await Promise.all(Array.from({ length: 500 }, () => limiter.acquire()));
    expect(wakes.length).toBeLessThanOrEqual(5);
  });

  it('keeps starts spaced after a stall instead of releasing the overdue waiters together', async () => {
    let t = 1000;
    let stalls = 1;
    // The first sleep overruns by 500 ms, as a busy event loop would make it.
    // Time moves on a later turn of the event loop, after the woken callers have recorded theirs.
    const clock: Clock = {
      now: () => t,
      sleep: (ms) => new Promise((resolve) => setImmediate(() => resolve(void (t += ms + (stalls-- > 0 ? 500 : 0))))),
    };
    const limiter = new RateLimiter(10, clock);
    const starts: number[] = [];
    await Promise.all(Array.from({ length: 4 }, () => limiter.acquire().then(() => starts.push(t))));
    expect(starts).toEqual([1000, 1600, 1700, 1800]);
  });

  it('does not bank unused time into a burst', async () => {
    const { clock, wakes, advance } = fakeClock();
    const limiter = new RateLimiter(4, clock);
    await limiter.acquire();
    advance(10_000);
    await limiter.acquire();
    await limiter.acquire();
    expect(wakes).toEqual([11_000 + 250]);
  });

  it('holds at most maxPerSecond starts in any one-second window (real time)', async () => {
    const limiter = new RateLimiter(20);
    const t0 = performance.now();
    const starts: number[] = [];
    await Promise.all(
      Array.from({ length: 12 }, async () => {
        await limiter.acquire();
        starts.push(performance.now());
      }),
    );
    starts.sort((a, b) => a - b);
    // The k-th start (0-based) can come no earlier than k slots after the first call.
    starts.forEach((at, k) => expect(at - t0).toBeGreaterThanOrEqual(50 * k));
    // ...so any 1 s window holds at most 20 starts; here 12 starts span at least 550 ms.
    expect(starts[11]! - t0).toBeGreaterThanOrEqual(550);
  });

  it('rejects bad ceilings', () => {
    expect(() => new RateLimiter(0)).toThrow(RangeError);
    expect(() => new RateLimiter(Number.NaN)).toThrow(RangeError);
  });

  it('gives up a wait when the signal aborts', async () => {
    const limiter = new RateLimiter(1);
    await limiter.acquire();
    const ac = new AbortController();
    const waiting = limiter.acquire(ac.signal);
    ac.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
  });
});

describe('Semaphore', () => {
  it('keeps at most `limit` holders and hands slots over in FIFO order', async () => {
    const sem = new Semaphore(2);
    const order: number[] = [];
    const r1 = await sem.acquire();
    const r2 = await sem.acquire();
    const p3 = sem.acquire().then((r) => (order.push(3), r));
    const p4 = sem.acquire().then((r) => (order.push(4), r));
    await Promise.resolve();
    expect(sem.inFlight).toBe(2);
    expect(order).toEqual([]);
    r1();
    r1(); // releasing twice is a no-op
    const r3 = await p3;
    expect(order).toEqual([3]);
    r2();
    const r4 = await p4;
    expect(order).toEqual([3, 4]);
    expect(sem.inFlight).toBe(2);
    r3();
    r4();
    expect(sem.inFlight).toBe(0);
  });

  it('drops an aborted waiter from the queue', async () => {
    const sem = new Semaphore(1);
    const r1 = await sem.acquire();
    const ac = new AbortController();
    const p2 = sem.acquire(ac.signal);
    const p3 = sem.acquire();
    ac.abort(new Error('cancelled'));
    await expect(p2).rejects.toThrow('cancelled');
    r1();
    const r3 = await p3;
    expect(sem.inFlight).toBe(1);
    r3();
    expect(sem.inFlight).toBe(0);
  });

  it('never exceeds the limit under load', async () => {
    const sem = new Semaphore(3);
    let active = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const release = await sem.acquire();
        active++;
        peak = Math.max(peak, active);
        await abortableSleep(i % 3);
        active--;
        release();
      }),
    );
    expect(peak).toBe(3);
  });
});

describe('abortableSleep', () => {
  it('rejects at once with the abort reason', async () => {
    const ac = new AbortController();
    const started = performance.now();
    const p = abortableSleep(10_000, ac.signal);
    ac.abort(new Error('bye'));
    await expect(p).rejects.toThrow('bye');
    // Far below the 10 s sleep: the abort ended it (the margin only absorbs a loaded machine).
    expect(performance.now() - started).toBeLessThan(5000);
  });
});
