import { afterEach, describe, expect, it } from 'vitest';
import type { ActivityRecord } from '../../src/simulator/index.js';
import { emptyStats, recordRun, runBackfill, runSyncCycle } from '../../src/sync/index.js';
import { dialects } from '../helpers/dialects.js';
import { harness as makeHarness, type Harness, type HarnessOptions } from './harness.js';

/**
 * The backfill's hand-over (docs/sync.md, "Backfill"): the log's lookback before the hand-over
 * watermark is read before anything is copied, so the first sync re-reads only what changed after
 * that read, and every change made during the copy still reaches the mirror.
 */
for (const dialect of dialects)
  describe(`backfill hand-over on ${dialect.name}`, () => {
    let h: Harness | null = null;
    const harness = (options: HarnessOptions = {}) => makeHarness({ ...options, dialect });
    afterEach(async () => {
      await h?.close();
      h = null;
    });
    const recordReads = (hh: Harness) => hh.sim.control.requests().filter((r) => /^\/api\/v1\/(tickets|deals)\/[^/]+$/.test(r.path));
    const touched = (activity: readonly ActivityRecord[]) =>
      new Set(activity.filter((a) => a.entityType === 'ticket' || a.entityType === 'deal').map((a) => `${a.entityType}:${a.entityId}`));

    it('records changed in the lookback before the hand-over are not read again by the first sync', async () => {
      h = await harness({ sim: { seed: 3, tickets: 40, deals: 15 } });
      expect(touched(h.sim.control.act(20)).size).toBeGreaterThan(5);
      await h.backfill();
      h.sim.control.clearRequests();
      const stats = await h.sync();
      // The full window still re-reads that stretch of the log (a late event there is caught) ...
      expect(stats.eventsRead).toBeGreaterThan(20);
      expect(stats.eventsNew).toBe(0);
      // ... but the copies, read after those events were visible, already hold their changes. Only
      // a record deleted before the copy, which it could not hold, is confirmed by id (a 404).
      const reads = recordReads(h);
      expect(reads.filter((r) => r.status !== 404)).toEqual([]);
      expect(stats.recordsFetched).toBe(reads.length);
      expect(reads.length).toBeLessThan(3);
      expect(await h.diff()).toEqual([]);
    });

    it('an event from before the hand-over that shows only after the backfill read the log still marks its record', async () => {
      h = await harness({ sim: { seed: 3, tickets: 40, deals: 15 } });
      h.sim.control.setFaults({ lateEventRate: 1, lateEventDelayMs: 3_000 });
      const late = touched(h.sim.control.act(4));
      h.sim.control.clearFaults();
      await h.backfill();
      h.sim.control.advanceClock(4_000);
      const stats = emptyStats();
      await runSyncCycle(h.ctx, stats);
      expect(stats.eventsNew).toBeGreaterThanOrEqual(4);
      expect(stats.recordsFetched).toBeGreaterThanOrEqual(late.size);
      expect(await h.diff()).toEqual([]);
    });

    for (const history of ['none', 'all'] as const)
      it(`changes made while the backfill copies (history ${history}) reach the mirror with the first sync`, async () => {
        let fired = false;
        h = await harness({
          pageSize: 10,
          sim: { seed: 7, tickets: 60, deals: 40 },
          hooks: {
            onPage: (kind) => {
              // The deals are copied by now: these writes change records the copy already holds.
              if (kind === 'tickets' && !fired) {
                fired = true;
                h!.sim.control.act(30);
              }
            },
          },
        });
        await recordRun(h.ctx, 'backfill', (s) => runBackfill(h!.ctx, s, { history }));
        expect(fired).toBe(true);
        await h.sync();
        expect(await h.diff()).toEqual([]);
      });
  });
