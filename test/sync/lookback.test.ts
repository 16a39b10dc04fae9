import { afterEach, describe, expect, it } from 'vitest';
import type { ActivityRecord } from '../../src/simulator/index.js';
import { emptyStats, readLookback, readSavedWindow, runSyncCycle, type CycleResult, type SyncContext } from '../../src/sync/index.js';
import { dialects } from '../helpers/dialects.js';
import { diffMirror } from '../helpers/truth.js';
import { harness as makeHarness, type Harness, type HarnessOptions } from './harness.js';
import { databaseOf } from '../../src/store/internal.js';

/**
 * Tick windows and full-lookback windows (docs/sync.md, "Windows and lookback") and the evidence a
 * cycle gives for catching up ("Catch-up"), against the simulator over HTTP, whole mirror compared
 * with the truth. The local clock of the sync is a test-controlled offset from the real one, so
 * "the full window is due" is a step of the test, not a wait.
 */
for (const dialect of dialects)
  describe(`change-log windows on ${dialect.name}`, () => {
    let h: Harness | null = null;
    const harness = (options: HarnessOptions = {}) => makeHarness({ ...options, dialect });
    afterEach(async () => {
      await h?.close();
      h = null;
    });

    /** A context whose local clock runs `offset.ms` ahead of the real one. */
    function clocked(base: SyncContext, config: Partial<SyncContext['config']>, offset: { ms: number }): SyncContext {
      return { ...base, config: { ...base.config, ...config }, now: () => new Date(Date.now() + offset.ms).toISOString() };
    }
    const cycle = (ctx: SyncContext): Promise<CycleResult> => runSyncCycle(ctx, emptyStats());
    const eventRequests = (hh: Harness) => hh.sim.control.requests().filter((r) => r.path === '/api/v1/events').length;

    // The simulator's clock may run at most 60 s ahead of its Date header before its events count as
    // implausible (docs/sync.md, "Hostile upstream"), so these scenarios advance it by less than that.
    it('an event visible late by less than the lookback but more than the tick overlap is missed by ticks and caught by the next full window', async () => {
      h = await harness({ lookbackSeconds: 20 });
      const offset = { ms: 0 };
      const ctx = clocked(h.ctx, { tickOverlapSeconds: 2, fullLookbackEverySeconds: 300 }, offset);
      const diff = () => diffMirror(databaseOf(h!.store), h!.sim.control.truth(), { lookbackSeconds: 20 });
      await h.backfill();
      expect((await cycle(ctx)).fullLookback).toBe(true); // a mirror's first window is a full one
      h.sim.control.act(5);
      expect((await cycle(ctx)).fullLookback).toBe(false);
      offset.ms += 301_000;
      const second = await cycle(ctx);
      expect(second.fullLookback).toBe(true);
      const anchor = (await readLookback(h.store))!.anchor!;
      expect(await diff()).toEqual([]);

      // Three writes whose events show 15 s late (within the 20 s lookback, beyond the 2 s overlap).
      h.sim.control.advanceClock(1_000);
      h.sim.control.setFaults({ lateEventRate: 1, lateEventDelayMs: 15_000 });
      h.sim.control.act(3);
      h.sim.control.clearFaults();
      h.sim.control.advanceClock(8_000);
      h.sim.control.act(2);
      expect((await cycle(ctx)).fullLookback).toBe(false);
      h.sim.control.advanceClock(8_000); // the late events are visible now, 8 s behind the watermark
      expect((await cycle(ctx)).fullLookback).toBe(false);
      // The watermark moves on by more than the lookback: `watermark − lookback` no longer reaches
      // the late events, only the previous full window's anchor does.
      h.sim.control.advanceClock(25_000);
      h.sim.control.act(2);
      const tick = await cycle(ctx);
      expect(tick.fullLookback).toBe(false);
      const missed = await diff();
      expect(missed.some((d) => d.includes('events missing'))).toBe(true);
      const lateIds = (h.sim.control.truth().events as Array<{ id: string; occurredAt: string }>)
        .filter((e) => Date.parse(e.occurredAt) > Date.parse(anchor) && Date.parse(e.occurredAt) < Date.parse(tick.watermark!) - 20_000)
        .map((e) => e.id);
      expect(lateIds.length).toBeGreaterThanOrEqual(3);

      offset.ms += 301_000; // fullLookbackEverySeconds later
      const full = await cycle(ctx);
      expect(full.fullLookback).toBe(true);
      expect(await diff()).toEqual([]);
      const state = await readLookback(h.store);
      expect(Date.parse(state!.lastFullAt)).toBeGreaterThan(Date.now() + 600_000);
      expect(state!.anchor).toBe(tick.watermark);
      // The next cycle is a tick again.
      expect((await cycle(ctx)).fullLookback).toBe(false);
    });

    it('ticks read one change-log page where full windows every cycle read the whole lookback, within the goal budget', async () => {
      const run = async (fullLookbackEverySeconds: number) => {
        h = await harness({ sim: { seed: 11, tickets: 60, deals: 20 } });
        const ctx = clocked(h.ctx, { tickOverlapSeconds: 5, fullLookbackEverySeconds }, { ms: 0 });
        await h.backfill();
        await cycle(ctx);
        const eventsBefore = h.sim.control.truth().events.length;
        h.sim.control.clearRequests();
        const perTick: number[] = [];
        // 40 simulated seconds on a 5-second schedule at 5 writes/s.
        for (let tick = 0; tick < 8; tick++) {
          h.sim.control.advanceClock(5_000);
          h.sim.control.act(25);
          const before = eventRequests(h);
          await cycle(ctx);
          perTick.push(eventRequests(h) - before);
        }
        const newEvents = h.sim.control.truth().events.length - eventsBefore;
        expect(await h.diff()).toEqual([]);
        await h.close();
        h = null;
        return { perTick, total: perTick.reduce((a, b) => a + b, 0), newEvents };
      };
      const ticks = await run(300);
      const everyCycle = await run(0);
      expect(ticks.perTick).toEqual(Array(8).fill(1));
      const budget = 1.2 * Math.ceil(ticks.newEvents / 100) + 8;
      expect(ticks.total).toBeLessThanOrEqual(budget);
      // Re-reading the lookback on every cycle grows with the log: it is over the budget here.
      expect(everyCycle.total).toBeGreaterThan(budget);
      expect(Math.max(...everyCycle.perTick)).toBeGreaterThan(1);
    });

    it('a restart keeps the full-window pace: the lookback state is persisted with the full window', async () => {
      h = await harness();
      const offset = { ms: 0 };
      const config = { tickOverlapSeconds: 5, fullLookbackEverySeconds: 300 };
      await h.backfill();
      expect((await cycle(clocked(h.ctx, config, offset))).fullLookback).toBe(true);
      // A new context (a restarted process) reads the same state: not due yet, then due.
      expect((await cycle(clocked(h.ctx, config, offset))).fullLookback).toBe(false);
      offset.ms += 299_000;
      expect((await cycle(clocked(h.ctx, config, offset))).fullLookback).toBe(false);
      offset.ms += 2_000;
      expect((await cycle(clocked(h.ctx, config, offset))).fullLookback).toBe(true);
      // A local clock set back before the last full window makes one due at once.
      offset.ms -= 3_600_000;
      expect((await cycle(clocked(h.ctx, config, offset))).fullLookback).toBe(true);
    });

    it('a full window cut by a stop resumes as a full window, says it is behind, and records the lookback state only at its end', async () => {
      const stop = new AbortController();
      let pages = 0;
      h = await harness({ pageSize: 5, hooks: { onPage: (kind) => void (kind === 'events' && ++pages === 2 && stop.abort()) } });
      await h.backfill();
      h.sim.control.act(30);
      const stopped = await cycle({ ...h.ctx, stopSignal: stop.signal });
      expect(stopped).toMatchObject({ stopped: true, behind: false, fullLookback: true });
      expect(await readLookback(h.store)).toBeNull();
      expect((await readSavedWindow(h.store))?.full).toBeDefined();
      const resumed = await cycle(h.ctx);
      expect(resumed).toMatchObject({ stopped: false, behind: true, behindReason: 'resumed-window', fullLookback: true });
      expect(await readLookback(h.store)).not.toBeNull();
      const quiet = await cycle(h.ctx);
      expect(quiet).toMatchObject({ behind: false, behindReason: null, fullLookback: false });
      expect(await h.diff()).toEqual([]);
    });

    it('a drained record newer than the watermark means the upstream moved on: the cycle says it is behind', async () => {
      h = await harness();
      await h.backfill();
      await cycle(h.ctx);
      expect((await cycle(h.ctx)).behind).toBe(false);
      // A write whose own event is not visible yet, and a visible event one second older naming the
      // same record: the re-read finds the record already past the window's newest event.
      h.sim.control.setFaults({ lateEventRate: 1, lateEventDelayMs: 3_600_000 });
      const write = firstLiveWrite(() => h!.sim.control.act(1));
      h.sim.control.clearFaults();
      const at = h.sim.control.now().getTime();
      h.sim.control.injectEvent({
        type: `${write.entityType}.updated`,
        entityType: write.entityType,
        entityId: write.entityId,
        occurredAt: new Date(at - 1000).toISOString(),
      });
      const behind = await cycle(h.ctx);
      expect(behind).toMatchObject({ behind: true, behindReason: 'newer-records' });
      expect(Date.parse(behind.watermark!)).toBe(at - 1000);
      const after = await cycle(h.ctx);
      expect(after).toMatchObject({ behind: false, behindReason: null });
    });
  });

/** Acts until a write changes a ticket or deal that stays listed (not a deletion). */
function firstLiveWrite(act: () => ActivityRecord[]): ActivityRecord {
  for (let i = 0; i < 50; i++) {
    const w = act().find((a) => (a.entityType === 'ticket' || a.entityType === 'deal') && !a.kind.startsWith('delete'));
    if (w) return w;
  }
  throw new Error('no write to a ticket or deal in 50 tries');
}
