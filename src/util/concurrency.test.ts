import { describe, expect, it } from 'vitest';
import { mapConcurrent } from './concurrency.js';

const tick = () => new Promise((r) => setTimeout(r, 1));

describe('mapConcurrent', () => {
  it('never exceeds the limit and visits every item once', async () => {
    let inFlight = 0;
    let peak = 0;
    const seen: number[] = [];
    await mapConcurrent([...Array(25).keys()], 4, async (n) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await tick();
      seen.push(n);
      inFlight--;
    });
    expect(peak).toBe(4);
    expect(seen.sort((a, b) => a - b)).toEqual([...Array(25).keys()]);
  });

  it('lets in-flight work finish, starts nothing new, and throws the first error', async () => {
    const finished: number[] = [];
    await expect(
      mapConcurrent([0, 1, 2, 3, 4, 5, 6, 7], 2, async (n) => {
        await tick();
        if (n === 1) throw new Error('first');
        finished.push(n);
      }),
    ).rejects.toThrow('first');
    expect(finished).toContain(0);
    expect(finished.length).toBeLessThanOrEqual(2);
  });
});
