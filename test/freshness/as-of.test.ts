import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { collectStatus } from '../../src/daemon/index.js';
import { emptyStats, readAsOf, readWatermark, runSyncCycle, type SyncContext } from '../../src/sync/index.js';
import { dialects } from '../helpers/dialects.js';
import { harness as makeHarness, type Harness } from '../sync/harness.js';
import { claimMisses } from './as-of-oracle.js';
import { databaseOf } from '../../src/store/internal.js';

/**
 * "Current as of" (docs/design.md §4.11) never runs ahead of the truth: after every cycle, each
 * change upstream at or before the as-of, visible late by at most the guaranteed overlap (1 s),
 * is in the mirror or quarantined, checked against the simulator's truth once every such change
 * is visible. The simulated clock moves only by the test's steps (realTime: false), and the
 * sync's local clock is the simulator's, so the read floor is always trusted.
 */
for (const dialect of dialects)
  describe(`current as of on ${dialect.name}`, () => {
    let h: Harness | null = null;
    afterEach(async () => {
      await h?.close();
      h = null;
    });

    async function setup(seed: number): Promise<{ hh: Harness; ctx: SyncContext }> {
      const hh = await makeHarness({ sim: { seed, tickets: 30, deals: 10, realTime: false }, dialect });
      h = hh;
      const ctx: SyncContext = { ...hh.ctx, now: () => hh.sim.control.now().toISOString() };
      await hh.backfill();
      await runSyncCycle(ctx, emptyStats());
      return { hh, ctx };
    }
    const quarantinedKeys = async (hh: Harness) =>
      new Set(
        (await collectStatus(hh.store, { retentionDays: 90, upstream: null, rowCounts: false })).quarantined.map(
          (q) => `${q.entityType}:${q.entityId}`,
        ),
      );

    it('covers every change visible within the overlap, where the watermark would claim late events it has not read', async () => {
      const { hh, ctx } = await setup(31);
      hh.sim.control.setFaults({ lateEventRate: 0.5, lateEventDelayMs: 800 });
      let watermarkMisses = 0;
      let previous: string | null = null;
      for (let round = 0; round < 6; round++) {
        for (let i = 0; i < 5; i++) {
          hh.sim.control.advanceClock(100);
          hh.sim.control.act(1);
        }
        hh.sim.control.advanceClock(150 * round);
        await runSyncCycle(ctx, emptyStats());
        const state = (await readAsOf(hh.store))!;
        const watermark = (await readWatermark(hh.store))!;
        expect(state.asOf).not.toBeNull();
        if (previous !== null) expect(Date.parse(state.asOf!)).toBeGreaterThanOrEqual(Date.parse(previous));
        previous = state.asOf;
        // Every event late by at most 800 ms that happened by the as-of is visible now.
        hh.sim.control.advanceClock(1000);
        const truth = hh.sim.control.truth();
        expect(await claimMisses(hh.store, truth, state.asOf!)).toEqual([]);
        watermarkMisses += (await claimMisses(hh.store, truth, watermark)).length;
        // BI tools read the same instant, refreshed by the same cycle.
        const row = await sql<{ current_as_of: unknown }>`SELECT current_as_of FROM rpt_sync_health`.execute(databaseOf(hh.store));
        expect(new Date(String(row.rows[0]!.current_as_of).replace(' ', 'T').replace(/(\d)$/, '$1Z')).toISOString()).toBe(state.asOf);
      }
      // The test has teeth: the newest event read would have claimed changes the mirror lacked.
      expect(watermarkMisses).toBeGreaterThan(0);
    });

    it('is held by a record still dirty, covers a quarantined one only as quarantined, and stays put through a failing cycle', async () => {
      const { hh, ctx } = await setup(32);
      const [bad, stale] = (hh.sim.control.truth().tickets as { id: string }[]).map((t) => t.id);
      hh.sim.control.corrupt('ticket', bad!, 'missing-field');
      hh.sim.control.advanceClock(100);
      hh.sim.control.injectEvent({ type: 'ticket.updated', entityType: 'ticket', entityId: bad! });
      // An event the record's updatedAt never catches up with: every read of it is stale.
      hh.sim.control.advanceClock(100);
      hh.sim.control.injectEvent({ type: 'ticket.updated', entityType: 'ticket', entityId: stale! });
      const mark = hh.sim.control.now().toISOString();
      hh.sim.control.advanceClock(2500);
      await runSyncCycle(ctx, emptyStats());

      const held = (await readAsOf(hh.store))!;
      expect(held.heldBy).toMatchObject({ entityType: 'ticket', entityId: stale, occurredAt: mark });
      expect(Date.parse(held.asOf!)).toBe(Date.parse(mark) - 1);
      const quarantined = await quarantinedKeys(hh);
      expect([...quarantined]).toEqual([`ticket:${bad}`]);
      const truth = hh.sim.control.truth();
      expect(await claimMisses(hh.store, truth, held.asOf!, quarantined)).toEqual([]);
      // Without the quarantine the claim would be false: the bad record's copy is older than its change.
      const unexcused = await claimMisses(hh.store, truth, held.asOf!);
      expect(unexcused.length).toBeGreaterThan(0);
      expect(unexcused.filter((m) => !m.startsWith(`ticket:${bad}:`))).toEqual([]);

      // The stale record is accepted after three reads in a row; then the as-of passes its mark.
      for (let i = 0; i < 3; i++) {
        hh.sim.control.advanceClock(500);
        await runSyncCycle(ctx, emptyStats());
      }
      const passed = (await readAsOf(hh.store))!;
      expect(passed.heldBy).toBeNull();
      expect(Date.parse(passed.asOf!)).toBeGreaterThan(Date.parse(mark));

      // A failing cycle records nothing: the as-of stays where the last complete one left it.
      hh.sim.control.act(5);
      hh.sim.control.advanceClock(3000);
      hh.sim.control.failNext({ status: 503, count: 100, path: '/api/v1/events' });
      await expect(runSyncCycle(ctx, emptyStats())).rejects.toThrow();
      expect(await readAsOf(hh.store)).toEqual(passed);
      expect(await claimMisses(hh.store, hh.sim.control.truth(), passed.asOf!, quarantined)).toEqual([]);
      hh.sim.control.clearFaults();
      await runSyncCycle(ctx, emptyStats());
      const after = (await readAsOf(hh.store))!;
      expect(Date.parse(after.asOf!)).toBeGreaterThan(Date.parse(passed.asOf!));
      expect(await claimMisses(hh.store, hh.sim.control.truth(), after.asOf!, quarantined)).toEqual([]);
    });
  });
