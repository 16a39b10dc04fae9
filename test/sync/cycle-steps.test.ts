import { afterEach, describe, expect, it } from 'vitest';
import { CYCLE_STEPS } from '../../src/sync/index.js';
import { dialects } from '../helpers/dialects.js';
import { harness as makeHarness, type Harness } from './harness.js';

/**
 * A sync cycle's step timings (src/sync/steps.ts; docs/operations.md, "Cycle steps"): every step
 * is reported, the steps a cycle with changes to read must run took time, and together they never
 * exceed the cycle's wall time (a moment counts for one step only), yet account for most of it.
 */
for (const dialect of dialects)
  describe(`a sync cycle's step timings on ${dialect.name}`, () => {
    let h: Harness | null = null;
    afterEach(async () => {
      await h?.close();
      h = null;
    });

    it('covers every step, and the steps sum to no more than the cycle', async () => {
      h = await makeHarness({ sim: { seed: 41, tickets: 120, deals: 40 }, dialect });
      await h.backfill();
      await h.sync();
      h.sim.control.act(200);
      const t0 = performance.now();
      const stats = await h.sync();
      const wall = performance.now() - t0;

      expect(stats.recordsFetched).toBeGreaterThan(0);
      expect(Object.keys(stats.steps).sort()).toEqual([...CYCLE_STEPS].sort());
      // Every step but quarantine: nothing the simulator serves here is invalid.
      const ran = CYCLE_STEPS.filter((step) => step !== 'quarantine');
      for (const step of ran) expect(stats.steps[step], step).toBeGreaterThan(0);
      const sum = CYCLE_STEPS.reduce((s, step) => s + stats.steps[step], 0);
      expect(sum).toBeLessThanOrEqual(wall);
      // What the steps leave out is the cycle's set-up (is the mirror backfilled, the watchdog).
      expect(sum).toBeGreaterThan(0.8 * wall);
    });
  });
