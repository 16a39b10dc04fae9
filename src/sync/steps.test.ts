import { describe, expect, it } from 'vitest';
import { CYCLE_STEPS, roundedSteps, StepClock } from './steps.js';

/** Holds the event loop for `ms`: a step's own time without a timer (the clock reads wall time). */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

const total = (clock: StepClock) => CYCLE_STEPS.reduce((sum, s) => sum + clock.times[s], 0);

describe('StepClock', () => {
  it('charges a nested step to itself, not also to the step around it', async () => {
    const clock = new StepClock();
    const t0 = performance.now();
    await clock.time('window-read', async () => {
      spin(4);
      await clock.time('events', () => Promise.resolve(spin(8)));
      spin(4);
    });
    const wall = performance.now() - t0;
    expect(clock.times.events).toBeGreaterThanOrEqual(8);
    expect(clock.times['window-read']).toBeGreaterThanOrEqual(8);
    expect(clock.times['window-read']).toBeLessThan(wall - 8 + 0.001);
    expect(total(clock)).toBeLessThanOrEqual(wall);
  });

  it('counts a moment once when steps overlap in time, charging it to the one opened last', async () => {
    const clock = new StepClock();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const t0 = performance.now();
    // A drain's reads go on (drain-read) while a batch commits (commit): both open at once.
    const reads = clock.time('drain-read', () => gate);
    const commit = clock.time('commit', async () => {
      spin(10);
      release();
      await gate;
    });
    await Promise.all([reads, commit]);
    const wall = performance.now() - t0;
    expect(clock.times.commit).toBeGreaterThanOrEqual(10);
    // Each step's own span is about 10 ms: summed naively they would be twice the wall time.
    expect(total(clock)).toBeLessThanOrEqual(wall);
  });

  it('rounds for the log line and leaves out the steps that took no time', async () => {
    const clock = new StepClock();
    await clock.time('report', () => Promise.resolve(spin(2)));
    expect(roundedSteps(clock.times)).toEqual({ report: Math.round(clock.times.report) });
  });
});
