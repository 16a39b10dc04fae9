import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { boundHeapGrowth, HEAP_GROWING_PERCENT } from './heap-growth.js';

/**
 * A process that keeps 200,000 small objects alive and throws away 2,000,000 that live long
 * enough to be promoted to the old space (a ring of 150,000 outlives a scavenge), as a backfill's
 * pages waiting for their commit do; it applies `flags` at run time first and prints its peak
 * committed heap in MB (here about 135 with the bound, 250-285 without).
 */
const CHURN = `
const v8 = require('node:v8');
if (process.argv[1]) v8.setFlagsFromString(process.argv[1]);
const live = [];
for (let i = 0; i < 200000; i++) live.push({ i, s: 'live-' + i });
const ring = new Array(150000);
let peak = 0;
for (let i = 0; i < 2000000; i++) {
  ring[i % ring.length] = { i, pair: [i, i + 1], s: 'garbage-' + i };
  if (i % 5000 === 0) peak = Math.max(peak, v8.getHeapStatistics().total_heap_size);
}
console.log(JSON.stringify({ peakMb: peak / 2 ** 20, live: live.length }));
`;

function peakHeapMb(flags: string): number {
  const out = execFileSync(process.execPath, ['-e', CHURN, flags], { encoding: 'utf8' });
  return (JSON.parse(out) as { peakMb: number }).peakMb;
}

describe('boundHeapGrowth', () => {
  it("sets V8's heap growing factor, and says so", () => {
    const set: string[] = [];
    expect(boundHeapGrowth({ setFlags: (f) => set.push(f) })).toBe(true);
    expect(boundHeapGrowth({ percent: 35, setFlags: (f) => set.push(f) })).toBe(true);
    expect(set).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`, '--heap-growing-percent=35']);
  });

  it('changes nothing and says so where the runtime refuses the flag', () => {
    expect(
      boundHeapGrowth({
        setFlags: () => {
          throw new Error('no V8 here');
        },
      }),
    ).toBe(false);
  });

  it('bounds the garbage a real V8 keeps between full collections, set at run time', () => {
    let flags = '';
    boundHeapGrowth({ setFlags: (f) => (flags = f) });
    const bounded = peakHeapMb(flags);
    const unbounded = peakHeapMb('');
    // Unbounded, V8 lets the old space grow to several times what is alive here.
    expect(bounded, `bounded ${bounded} MB, unbounded ${unbounded} MB`).toBeLessThan(unbounded * 0.75);
  });
});
