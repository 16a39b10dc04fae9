import { describe, expect, it } from 'vitest';
import { CatchUpPolicy, MAX_CATCH_UP_CYCLES } from '../../src/daemon/catch-up.js';

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

  it('waits for the schedule after a cycle that is not behind, and that ends the streak', () => {
    const policy = new CatchUpPolicy(1);
    expect(policy.after(behind)).toMatchObject({ next: 'now' });
    expect(policy.after({ ok: true, behind: null, tickMissed: false })).toEqual({ next: 'schedule', reason: null, capped: false });
    expect(policy.after(behind)).toMatchObject({ next: 'now', streak: 1 });
  });
});
