import { afterEach, describe, expect, it } from 'vitest';
import { emptyStats, readSavedWindow, runSyncCycle, type SyncContext } from '../../src/sync/index.js';
import { dialects } from '../helpers/dialects.js';
import { harness as makeHarness, type Harness } from './harness.js';
import { databaseOf } from '../../src/store/internal.js';

/**
 * Change-log pages commit in groups (docs/sync.md, "Change-log pages commit in groups"): every
 * page fetched is a page used, a stop
 * or a failure commits what was read before it, and the next cycle goes on from the saved cursor.
 * Small pages (5 events) make a window of many pages.
 */
for (const dialect of dialects)
  describe(`change-log page groups on ${dialect.name}`, () => {
    let h: Harness | null = null;
    afterEach(async () => {
      await h?.close();
      h = null;
    });

    const eventRequests = () => h!.sim.control.requests().filter((r) => r.path === '/api/v1/events').length;
    const storedEvents = async () =>
      Number(
        (
          await databaseOf(h!.store)
            .selectFrom('events')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    /** A context whose hook runs `after(n)` once the cycle has used its n-th change-log page. */
    function counting(after: (pages: number) => void): { ctx: SyncContext; pages: () => number } {
      let pages = 0;
      const ctx: SyncContext = {
        ...h!.ctx,
        hooks: {
          onPage: (kind) => {
            if (kind !== 'events') return;
            pages++;
            after(pages);
          },
        },
      };
      return { ctx, pages: () => pages };
    }

    /** `writes` writes, 100 simulated ms apart. */
    function spread(writes: number): void {
      for (let i = 0; i < writes; i++) {
        h!.sim.control.advanceClock(100);
        h!.sim.control.act(1);
      }
    }

    /** Writes spread over 30 s of the simulator's clock, so the tick's overlap ends inside the log. */
    function spreadWrites(n: number): void {
      for (let i = 0; i < 10; i++) {
        h!.sim.control.act(n / 10);
        h!.sim.control.advanceClock(3_000);
      }
    }

    /** A synced mirror, then 60 writes over 30 s: a window of many 5-event pages. Returns it and the events stored before them. */
    async function behindSixtyWrites(): Promise<{ hh: Harness; before: number }> {
      const hh = await makeHarness({ dialect, pageSize: 5 });
      h = hh;
      await hh.backfill();
      await hh.sync();
      spreadWrites(60);
      return { hh, before: await storedEvents() };
    }

    it('a tick that ends at its guaranteed overlap fetches no page it does not use, and the mirror matches the truth', async () => {
      h = await makeHarness({ dialect, pageSize: 5, sim: { seed: 23, tickets: 60, deals: 20 } });
      // The sync's clock is the simulator's, as in tick-reach.test.ts: a busy tick, not a full window.
      const clocked: SyncContext = {
        ...h.ctx,
        config: { ...h.ctx.config, tickOverlapSeconds: 5, fullLookbackEverySeconds: 1800 },
        now: () => h!.sim.control.now().toISOString(),
      };
      await h.backfill();
      await runSyncCycle(clocked, emptyStats());
      // 4 s of writes read by one tick, then 4 s more: the measured tick's overlap is busy.
      spread(40);
      await runSyncCycle(clocked, emptyStats());
      spread(40);
      h.sim.control.clearRequests();
      const { ctx, pages } = counting(() => {});
      const result = await runSyncCycle({ ...clocked, hooks: ctx.hooks! }, emptyStats());
      expect(result.fullLookback).toBe(false);
      const requests = h.sim.control.requests().filter((r) => r.path === '/api/v1/events');
      const since = requests[0]!.query.since!;
      const visible = (h.sim.control.truth().events as Array<{ occurredAt: string }>).filter(
        (e) => Date.parse(e.occurredAt) >= Date.parse(since),
      );
      // It ended before the log's end (at its reach), having used every page it fetched.
      expect(pages()).toBeGreaterThan(10);
      expect(pages()).toBeLessThan(Math.ceil(visible.length / 5));
      expect(requests.length).toBe(pages());
      expect(await h.diff()).toEqual([]);
    });

    it('a stop between pages commits the pages read; the next cycle resumes at the saved cursor and loses nothing', async () => {
      const { hh, before } = await behindSixtyWrites();
      hh.sim.control.clearRequests();
      const stop = new AbortController();
      const first = counting((n) => {
        if (n === 3) stop.abort();
      });
      const stopped = await runSyncCycle({ ...first.ctx, stopSignal: stop.signal }, emptyStats());
      expect(stopped.stopped).toBe(true);
      expect(first.pages()).toBe(3);
      expect(eventRequests()).toBe(3);
      // The three pages committed with the cursor after the third, not just some of them.
      expect((await readSavedWindow(hh.store))?.cursor).not.toBeNull();
      expect((await storedEvents()) - before).toBe(15);

      hh.sim.control.clearRequests();
      const second = counting(() => {});
      const resumed = await runSyncCycle(second.ctx, emptyStats());
      expect(resumed.behindReason).toBe('resumed-window');
      expect(eventRequests()).toBe(second.pages());
      expect(await hh.diff()).toEqual([]);
    });

    it('a failed page read commits the pages before it first; the next cycle goes on from there', async () => {
      const { hh, before } = await behindSixtyWrites();
      const { ctx } = counting((n) => {
        // Past the client's retries: the cycle fails.
        if (n === 4) hh.sim.control.failNext({ status: 500, count: 1000, path: '/api/v1/events' });
      });
      await expect(runSyncCycle(ctx, emptyStats())).rejects.toThrow();
      expect((await readSavedWindow(hh.store))?.cursor).not.toBeNull();
      expect((await storedEvents()) - before).toBe(20);
      hh.sim.control.clearFaults();
      await hh.sync();
      expect(await hh.diff()).toEqual([]);
    });
  });
