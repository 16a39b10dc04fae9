import { afterEach, describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../../src/simulator/index.js';
import { emptyStats, LATE_EVENT_HOLD_SECONDS, readLateEvent, readWatermark, runSyncCycle, type SyncContext } from '../../src/sync/index.js';
import { dialects } from '../helpers/dialects.js';
import { harness as makeHarness, type Harness } from './harness.js';

/**
 * The guaranteed part of a tick's overlap (docs/sync.md, "The overlap's cost"): a busy tick stops
 * following the change log's cursor once a page reaches before `watermark − tickOverlapMinSeconds`
 * (default 1 s), instead of re-reading all of `tickOverlapSeconds` (5 s) at a request per page; an
 * event later than the guaranteed part is caught by the next full window, which then makes ticks
 * read the whole overlap for an hour. Pages of 20 events, so that a few dozen writes span pages.
 * The local clock of the sync is the simulator's plus `skew.ms`: a full window or the end of the
 * hour is a step of the test, not a wait.
 */
for (const dialect of dialects)
  describe(`the guaranteed tick overlap on ${dialect.name}`, () => {
    let h: Harness | null = null;
    afterEach(async () => {
      await h?.close();
      h = null;
    });

    const PAGE = 20;
    const OVERLAP_S = 5;
    async function setup(): Promise<{ hh: Harness; ctx: SyncContext; skew: { ms: number } }> {
      // The simulated clock moves only by the test's own steps: which events a page holds, and when a
      // late event shows, must not depend on how fast a loaded machine runs the cycles in between.
      const hh = await makeHarness({ sim: { seed: 23, tickets: 60, deals: 20, realTime: false }, pageSize: PAGE, dialect });
      h = hh;
      const skew = { ms: 0 };
      const ctx: SyncContext = {
        ...hh.ctx,
        config: { ...hh.ctx.config, tickOverlapSeconds: OVERLAP_S, fullLookbackEverySeconds: 1800 },
        now: () => new Date(hh.sim.control.now().getTime() + skew.ms).toISOString(),
      };
      await hh.backfill();
      expect((await runSyncCycle(ctx, emptyStats())).fullLookback).toBe(true);
      return { hh, ctx, skew };
    }

    const eventRequests = (hh: Harness): RequestLogEntry[] => hh.sim.control.requests().filter((r) => r.path === '/api/v1/events');
    const visibleEvents = (hh: Harness) => hh.sim.control.truth().events as Array<{ id: string; occurredAt: string }>;
    /** Requests a newest-first read of every visible event at or after `since` takes: one per page of PAGE. */
    const pagesFrom = (hh: Harness, since: string) =>
      Math.max(1, Math.ceil(visibleEvents(hh).filter((e) => Date.parse(e.occurredAt) >= Date.parse(since)).length / PAGE));

    /** One cycle: its change-log requests, the `since` of its first one, and the watermark it started from. */
    async function cycle(hh: Harness, ctx: SyncContext) {
      const from = (await readWatermark(hh.store))!;
      const before = eventRequests(hh).length;
      const stats = emptyStats();
      const result = await runSyncCycle(ctx, stats);
      const mine = eventRequests(hh).slice(before);
      return { result, stats, requests: mine.length, since: mine[0]!.query.since!, from };
    }

    /** `writes` writes, 100 simulated ms apart. */
    function spread(hh: Harness, writes: number): void {
      for (let i = 0; i < writes; i++) {
        hh.sim.control.advanceClock(100);
        hh.sim.control.act(1);
      }
    }

    /** 4 s of writes read by one tick, then 4 s more and the tick measured: the overlap is busy. */
    async function busyTick(hh: Harness, ctx: SyncContext) {
      spread(hh, 40);
      await cycle(hh, ctx);
      spread(hh, 40);
      return cycle(hh, ctx);
    }

    /**
     * Writes whose events show `lateMs` late, then at least PAGE visible events within the next
     * 0.9 s, then two writes 2 s after the late ones: a tick then (`blind`) cannot see the late
     * events. Once they are visible, a burst of 4 s of writes. The next tick's guaranteed overlap
     * (1 s before the watermark) ends above the PAGE-plus events, so no page it needs reaches the
     * late ones.
     */
    async function lateBehindBusyTick(hh: Harness, ctx: SyncContext, lateMs = 3_000) {
      const lateFrom = visibleEvents(hh).length;
      hh.sim.control.setFaults({ lateEventRate: 1, lateEventDelayMs: lateMs });
      hh.sim.control.act(2);
      hh.sim.control.setFaults({ lateEventRate: 0 });
      const beforeCover = visibleEvents(hh).length;
      expect(beforeCover).toBe(lateFrom);
      for (let i = 0; i < 8; i++) {
        hh.sim.control.advanceClock(100);
        hh.sim.control.act(4);
      }
      expect(visibleEvents(hh).length - beforeCover).toBeGreaterThanOrEqual(PAGE);
      hh.sim.control.advanceClock(1_200);
      hh.sim.control.act(2);
      const blind = await cycle(hh, ctx);
      hh.sim.control.advanceClock(lateMs);
      spread(hh, 40);
      const busy = await cycle(hh, ctx);
      return { blind, busy };
    }

    it('a busy tick reads its pages down to the guaranteed overlap, not the whole overlap, and loses nothing', async () => {
      const { hh, ctx } = await setup();
      const tick = await busyTick(hh, ctx);
      const watermark = tick.from;
      expect(tick.result.fullLookback).toBe(false);
      expect(Date.parse(tick.since)).toBeLessThanOrEqual(Date.parse(watermark) - (OVERLAP_S - 1) * 1000);
      const guaranteed = new Date(Date.parse(watermark) - 1_000).toISOString();
      // It read every page down to the guaranteed part, and fewer than all of the overlap takes.
      expect(tick.requests).toBeGreaterThanOrEqual(pagesFrom(hh, guaranteed));
      expect(tick.requests).toBeLessThan(pagesFrom(hh, tick.since));
      expect(await readLateEvent(hh.store)).toBeNull();
      expect(tick.stats.eventsLate).toBe(0);
      expect(await hh.diff()).toEqual([]);
    });

    it('with tickOverlapMinSeconds equal to the overlap, a busy tick reads the whole overlap', async () => {
      const { hh, ctx: base } = await setup();
      const ctx = { ...base, config: { ...base.config, tickOverlapMinSeconds: OVERLAP_S } };
      const tick = await busyTick(hh, ctx);
      expect(tick.requests).toBe(pagesFrom(hh, tick.since));
      expect(await hh.diff()).toEqual([]);
    });

    it('an event later than the guaranteed overlap is caught by the next full window, and ticks then read the whole overlap for an hour', async () => {
      const { hh, ctx, skew } = await setup();
      const first = await lateBehindBusyTick(hh, ctx);
      expect(first.busy.requests).toBeLessThan(pagesFrom(hh, first.busy.since));
      expect((await hh.diff()).some((d) => d.includes('events missing'))).toBe(true);
      expect(await readLateEvent(hh.store)).toBeNull();

      skew.ms += 1_801_000; // the full window is due
      const fullStarted = ctx.now();
      const full = await cycle(hh, ctx);
      expect(full.result.fullLookback).toBe(true);
      expect(full.stats.eventsLate).toBeGreaterThanOrEqual(2);
      expect(await hh.diff()).toEqual([]);
      const late = await readLateEvent(hh.store);
      expect(late).not.toBeNull();
      expect(Date.parse(late!.seenAt)).toBeGreaterThanOrEqual(Date.parse(fullStarted));

      // Within the hour, the same lateness is caught by the busy tick itself.
      const second = await lateBehindBusyTick(hh, ctx);
      expect(second.busy.result.fullLookback).toBe(false);
      expect(second.busy.requests).toBe(pagesFrom(hh, second.busy.since));
      expect(await hh.diff()).toEqual([]);
      const renewed = await readLateEvent(hh.store);
      expect(Date.parse(renewed!.seenAt)).toBeGreaterThan(Date.parse(late!.seenAt));

      // An hour without one (a full window in between finds nothing late): ticks cut again.
      skew.ms += LATE_EVENT_HOLD_SECONDS * 1000;
      expect((await cycle(hh, ctx)).result.fullLookback).toBe(true);
      const quiet = await busyTick(hh, ctx);
      expect(quiet.requests).toBeLessThan(pagesFrom(hh, quiet.since));
      expect((await readLateEvent(hh.store))!.seenAt).toBe(renewed!.seenAt);
      expect(await hh.diff()).toEqual([]);
    });

    it('a late event on a page the tick needs anyway is recorded, and the tick reads on through the whole overlap', async () => {
      const { hh, ctx } = await setup();
      // 5 s of dense writes: once the late events show, the overlap behind them holds several pages.
      for (let i = 0; i < 50; i++) {
        hh.sim.control.advanceClock(100);
        hh.sim.control.act(3);
      }
      await cycle(hh, ctx);
      hh.sim.control.advanceClock(500);
      hh.sim.control.setFaults({ lateEventRate: 1, lateEventDelayMs: 2_500 });
      hh.sim.control.act(2);
      hh.sim.control.setFaults({ lateEventRate: 0 });
      hh.sim.control.advanceClock(2_000);
      hh.sim.control.act(1);
      await cycle(hh, ctx); // blind: the late events are not visible yet
      hh.sim.control.advanceClock(1_000);
      spread(hh, 3);
      const tick = await cycle(hh, ctx);
      // The late events are on the first page; the pages after it, all before the guaranteed part, are read too.
      expect(pagesFrom(hh, tick.since)).toBeGreaterThanOrEqual(3);
      expect(tick.requests).toBe(pagesFrom(hh, tick.since));
      expect(await readLateEvent(hh.store)).not.toBeNull();
      expect(await hh.diff()).toEqual([]);
    });

    it('change-log pages that do not come newest first: a tick reads to the end of its overlap and loses nothing', async () => {
      const { hh, ctx } = await setup();
      hh.sim.control.setFaults({ eventPageOrder: 'oldest-first' });
      const tick = await busyTick(hh, ctx);
      expect(tick.requests).toBe(pagesFrom(hh, tick.since));
      expect(await hh.diff()).toEqual([]);
    });
  });
