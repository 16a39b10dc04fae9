import { afterEach, describe, expect, it } from 'vitest';
import type { FaultConfig, RequestLogEntry } from '../../src/simulator/index.js';
import { emptyStats, readWatermark, runSyncCycle, type SyncContext } from '../../src/sync/index.js';
import { dialects } from '../helpers/dialects.js';
import { harness as makeHarness, type Harness, type HarnessOptions } from './harness.js';

/**
 * The read floor of a tick window (docs/sync.md, "Windows and lookback"): once the log is idle, a
 * tick reads from the watermark alone (one request) instead of re-reading the overlap before it;
 * events visible late by up to the overlap are still caught, and an upstream `Date` that cannot be
 * trusted falls back to the plain overlap. Against the simulator over HTTP, whose `Date` header is
 * its own clock; the sync's local clock is the simulator's clock plus `skew.ms`, so that simulated
 * seconds pass without waiting.
 */
for (const dialect of dialects)
  describe(`idle ticks on ${dialect.name}`, () => {
    let h: Harness | null = null;
    const harness = (options: HarnessOptions = {}) => makeHarness({ sim: { seed: 17, tickets: 60, deals: 20 }, ...options, dialect });
    afterEach(async () => {
      await h?.close();
      h = null;
    });

    const OVERLAP_MS = 5_000;
    /** A context whose local clock is the simulator's plus `skew.ms`. */
    function simClocked(hh: Harness, skew = { ms: 0 }): SyncContext {
      return {
        ...hh.ctx,
        config: { ...hh.ctx.config, tickOverlapSeconds: OVERLAP_MS / 1000 },
        now: () => new Date(hh.sim.control.now().getTime() + skew.ms).toISOString(),
      };
    }
    const eventRequests = (hh: Harness): RequestLogEntry[] => hh.sim.control.requests().filter((r) => r.path === '/api/v1/events');

    /** One cycle: its change-log requests, the `since` of its first one, and the watermark it started from. */
    async function tick(hh: Harness, ctx: SyncContext): Promise<{ requests: number; since: string; from: string }> {
      const from = (await readWatermark(hh.store))!;
      const before = eventRequests(hh).length;
      await runSyncCycle(ctx, emptyStats());
      const mine = eventRequests(hh).slice(before);
      return { requests: mine.length, since: mine[0]!.query.since!, from };
    }

    /** Two idle ticks, each re-reading the plain overlap: the read floor is not trusted. */
    async function idleTicksReadPlainOverlap(hh: Harness, ctx: SyncContext): Promise<void> {
      for (let i = 0; i < 2; i++) {
        hh.sim.control.advanceClock(OVERLAP_MS + 1_000);
        const idle = await tick(hh, ctx);
        expect(idle.since).toBe(new Date(Date.parse(idle.from) - OVERLAP_MS).toISOString());
      }
    }

    /** Backfill, the first (full) window, then a burst of more than 150 events over 1.6 simulated seconds. */
    async function burst(hh: Harness, ctx: SyncContext): Promise<void> {
      await hh.backfill();
      await runSyncCycle(ctx, emptyStats());
      const before = hh.sim.control.truth().events.length;
      for (let i = 0; i < 16; i++) {
        hh.sim.control.act(10);
        hh.sim.control.advanceClock(100);
      }
      expect(hh.sim.control.truth().events.length - before).toBeGreaterThan(150);
    }

    /**
     * Writes whose events show `lateMs` late, then a visible write one second later that moves the
     * watermark past them, a tick that cannot see them yet, and one after they became visible.
     * Returns both ticks; the mirror must then hold every event.
     */
    async function lateBehindWatermark(hh: Harness, ctx: SyncContext, lateMs = 3_000) {
      const visible = () => hh.sim.control.truth().events.length;
      const before = visible();
      hh.sim.control.setFaults({ lateEventRate: 1, lateEventDelayMs: lateMs });
      hh.sim.control.act(3);
      hh.sim.control.setFaults({ lateEventRate: 0 });
      expect(visible()).toBe(before);
      hh.sim.control.advanceClock(1_000);
      hh.sim.control.act(2);
      const withoutLate = visible();
      const blind = await tick(hh, ctx);
      hh.sim.control.advanceClock(lateMs);
      expect(visible()).toBeGreaterThanOrEqual(withoutLate + 3);
      const seeing = await tick(hh, ctx);
      return { blind, seeing };
    }

    it('after a burst, every idle tick but the first reads one change-log page, from the watermark', async () => {
      h = await harness();
      const ctx = simClocked(h);
      await burst(h, ctx);
      await tick(h, ctx); // reads the burst
      const idle = [];
      for (let i = 0; i < 5; i++) {
        h.sim.control.advanceClock(OVERLAP_MS + 1_000);
        idle.push(await tick(h, ctx));
      }
      // The first idle tick re-reads the overlap: the window that read the burst ran right after it,
      // so one of the burst's events could have shown late since. After that, nothing could have.
      // (Its start may pass `watermark − overlap` by the part of a second the floor's Date has on the watermark.)
      expect(idle[0]!.requests).toBeGreaterThanOrEqual(2);
      expect(Date.parse(idle[0]!.since)).toBeLessThan(Date.parse(idle[0]!.from) - OVERLAP_MS + 1_000);
      expect(idle.slice(1).map((t) => t.requests)).toEqual([1, 1, 1, 1]);
      for (const t of idle.slice(1)) expect(t.since).toBe(t.from);
      expect(await h.diff()).toEqual([]);
    });

    it('an event visible late by less than the overlap, behind the watermark, is caught right after idle ticks', async () => {
      h = await harness();
      const ctx = simClocked(h);
      await burst(h, ctx);
      await tick(h, ctx);
      for (let i = 0; i < 2; i++) {
        h.sim.control.advanceClock(OVERLAP_MS + 1_000);
        await tick(h, ctx);
      }
      const { blind, seeing } = await lateBehindWatermark(h, ctx);
      expect(blind.since).toBe(blind.from); // the shortcut was in force when the late events were missed
      expect(Date.parse(seeing.since)).toBeLessThan(Date.parse(seeing.from) - 3_000);
      expect(await h.diff()).toEqual([]);
    });

    const hostile: Array<[string, Partial<FaultConfig>]> = [
      ['no Date header', { dateHeader: 'none' }],
      ['a Date that is not a date', { dateHeader: 'invalid' }],
      ['a Date a day ahead', { dateSkewMs: 86_400_000 }],
      // Only on the answer the floor comes from: a change-log page dated a day behind would
      // quarantine every event as beyond the upstream's clock (docs/sync.md, "Hostile upstream").
      ['a Date a day behind', { dateSkewMs: -86_400_000, paths: ['/api/v1/pipelines'] }],
    ];
    for (const [what, faults] of hostile)
      it(`${what}: ticks re-read the plain overlap and lose nothing`, async () => {
        h = await harness();
        const ctx = simClocked(h);
        h.sim.control.setFaults(faults);
        await burst(h, ctx);
        await tick(h, ctx);
        await idleTicksReadPlainOverlap(h, ctx);
        const { blind, seeing } = await lateBehindWatermark(h, ctx);
        expect(blind.since).toBe(new Date(Date.parse(blind.from) - OVERLAP_MS).toISOString());
        expect(seeing.since).toBe(new Date(Date.parse(seeing.from) - OVERLAP_MS).toISOString());
        expect(await h.diff()).toEqual([]);
      });

    it('a Date that goes back between two cycles falls back to the plain overlap', async () => {
      h = await harness();
      // The upstream answers 10 s ahead, and the local clock agrees with it, until its clock is set right.
      const skew = { ms: 10_000 };
      const ctx = simClocked(h, skew);
      h.sim.control.setFaults({ dateSkewMs: 10_000 });
      await burst(h, ctx);
      await tick(h, ctx);
      h.sim.control.advanceClock(OVERLAP_MS + 1_000);
      await tick(h, ctx);
      h.sim.control.setFaults({ lateEventRate: 1, lateEventDelayMs: 3_000 });
      h.sim.control.act(3);
      h.sim.control.setFaults({ lateEventRate: 0 });
      h.sim.control.advanceClock(1_000);
      h.sim.control.act(2);
      const blind = await tick(h, ctx);
      expect(blind.since).toBe(blind.from);
      h.sim.control.setFaults({ dateSkewMs: 0 });
      h.sim.control.advanceClock(3_000);
      const seeing = await tick(h, ctx);
      expect(seeing.since).toBe(new Date(Date.parse(seeing.from) - OVERLAP_MS).toISOString());
      expect(await h.diff()).toEqual([]);
    });

    it('a change-log page dated before the window’s read floor drops the floor: the next tick re-reads the overlap', async () => {
      h = await harness();
      // Only the pipelines answer runs 10 s ahead (and the local clock with it): the change log's
      // own Date shows that clock is not the one the events are stamped with.
      const ctx = simClocked(h, { ms: 10_000 });
      h.sim.control.setFaults({ dateSkewMs: 10_000, paths: ['/api/v1/pipelines'] });
      await burst(h, ctx);
      await tick(h, ctx);
      await idleTicksReadPlainOverlap(h, ctx);
      const { seeing } = await lateBehindWatermark(h, ctx);
      expect(seeing.since).toBe(new Date(Date.parse(seeing.from) - OVERLAP_MS).toISOString());
      expect(await h.diff()).toEqual([]);
    });
  });
