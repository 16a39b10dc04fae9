import { describe, expect, it } from 'vitest';
import { CatchUpPolicy, MAX_CATCH_UP_CYCLES, MAX_TICK_WAIT_MS } from '../../src/daemon/catch-up.js';

/** The bounds of catch-up (docs/sync.md, "Catch-up"); the spawned daemon is in test/cli/catch-up.test.ts. */
describe('catch-up policy', () => {
  const behind = { ok: true, behind: 'newer-records' as const, tickMissed: false };

  it('follows a cycle that is behind at once, at most MAX_CATCH_UP_CYCLES times in a row, then waits for the schedule', () => {
    const policy = new CatchUpPolicy();
    for (let i = 1; i <= MAX_CATCH_UP_CYCLES; i++)
      expect(policy.after(behind)).toEqual({ next: 'now', reason: 'newer-records', streak: i });
    expect(policy.after(behind)).toEqual({ next: 'schedule', reason: 'newer-records', capped: true });
    // The tick after the wait starts a new streak.
    expect(policy.after(behind)).toMatchObject({ next: 'now', streak: 1 });
  });

  it('never follows a failed cycle at once, even one that missed a tick, and a failure ends the streak', () => {
    const policy = new CatchUpPolicy(2);
    expect(policy.after(behind)).toMatchObject({ next: 'now', streak: 1 });
    expect(policy.after({ ok: false, behind: null, tickMissed: true })).toEqual({ next: 'schedule', reason: null, capped: false });
    expect(policy.after(behind)).toMatchObject({ next: 'now', streak: 1 });
  });

  it('makes up a tick missed while the cycle ran, without using up the streak', () => {
    const policy = new CatchUpPolicy(1);
    expect(policy.after(behind)).toMatchObject({ next: 'now', streak: 1 });
    expect(policy.after({ ...behind, tickMissed: true })).toEqual({ next: 'now', reason: 'tick-missed', streak: 1 });
    expect(policy.after(behind)).toMatchObject({ next: 'schedule', capped: true });
  });

  it('waits for a tick due sooner than the cycle took, without ending or using up the streak', () => {
    const policy = new CatchUpPolicy(2);
    expect(policy.after({ ...behind, msToNextTick: 3000, durationMs: 2000 })).toEqual({ next: 'now', reason: 'newer-records', streak: 1 });
    expect(policy.after({ ...behind, msToNextTick: 1500, durationMs: 2000 })).toEqual({
      next: 'schedule',
      reason: 'newer-records',
      capped: false,
      tickSoon: true,
    });
    expect(policy.after({ ...behind, msToNextTick: 2000, durationMs: 2000 })).toMatchObject({ next: 'schedule', tickSoon: true });
    // The tick's cycle, behind again with time to spare, goes on with the same streak.
    expect(policy.after({ ...behind, msToNextTick: 4000, durationMs: 2000 })).toMatchObject({ next: 'now', streak: 2 });
    expect(policy.after({ ...behind, msToNextTick: 4000, durationMs: 2000 })).toMatchObject({ next: 'schedule', capped: true });
    // A missed tick is made up whatever the next one's distance: it was due.
    expect(policy.after({ ...behind, tickMissed: true, msToNextTick: 100, durationMs: 2000 })).toMatchObject({
      next: 'now',
      reason: 'tick-missed',
    });
    // Never a longer wait than MAX_TICK_WAIT_MS, however long the cycle took.
    expect(policy.after({ ...behind, msToNextTick: MAX_TICK_WAIT_MS + 1, durationMs: 20_000 })).toMatchObject({ next: 'now' });
    expect(policy.after({ ...behind, msToNextTick: MAX_TICK_WAIT_MS, durationMs: 20_000 })).toMatchObject({
      next: 'schedule',
      tickSoon: true,
    });
    // Unknown timings never hold a catch-up back.
    expect(policy.after({ ...behind, msToNextTick: null, durationMs: 2000 })).toMatchObject({ next: 'now' });
  });

  it('waits for the schedule after a cycle that is not behind, and that ends the streak', () => {
    const policy = new CatchUpPolicy(1);
    expect(policy.after(behind)).toMatchObject({ next: 'now' });
    expect(policy.after({ ok: true, behind: null, tickMissed: false })).toEqual({ next: 'schedule', reason: null, capped: false });
    expect(policy.after(behind)).toMatchObject({ next: 'now', streak: 1 });
  });
});
