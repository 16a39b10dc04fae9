import { afterEach, describe, expect, it } from 'vitest';
import { emptyStats, MAX_LIST_PASSES, readBackfill, runBackfill } from '../../src/sync/index.js';
import { dialects } from '../helpers/dialects.js';
import { callApi, harness as makeHarness, type Harness, type HarnessOptions } from './harness.js';

type Ref = { id: string; priority?: string };

const TICKETS = 200;
const DEALS = 120;
const PAGE = 40;
/** The fault: on the second page of each list, three records page one served leave it. */
const REMOVAL = { removeServedAtPage: 2, removeServedCount: 3 };

/**
 * Lists that page by position (docs/sync.md, "Lists that page by position"): records leaving
 * pages already served must not cost the mirror the records behind them, under either paging,
 * in the backfill's lists and in the drain's list scan; and the common case stays frugal.
 */
for (const dialect of dialects)
  describe(`lists paged by position on ${dialect.name}`, () => {
    let h: Harness | null = null;
    const harness = (options: HarnessOptions = {}) => makeHarness({ pageSize: PAGE, ...options, dialect });
    afterEach(async () => {
      await h?.close();
      h = null;
    });
    const gets = () => h!.sim.control.requests().filter((r) => r.method === 'GET');
    /** First pages of a list the simulator served: one per pass over it. */
    const passes = (list: 'tickets' | 'deals') => gets().filter((r) => r.path === `/api/v1/${list}` && r.query.cursor === undefined).length;

    for (const listPaging of ['offset', 'keyset'] as const)
      it(`backfill and one sync lose no record when served ones leave a ${listPaging} list mid-copy`, async () => {
        h = await harness({ sim: { tickets: TICKETS, deals: DEALS, dialect: { listPaging }, faults: REMOVAL } });
        await h.backfill();
        // wsmirror saw them leave in the log and paged each list once more (whatever the paging: it cannot tell).
        const backfillPasses = [passes('deals'), passes('tickets')];
        const truth = h.sim.control.truth();
        // The fault fired through the simulator's own writes: three tickets and three deals left.
        expect(truth.hiddenTickets).toHaveLength(3);
        expect(truth.deletedDealIds).toHaveLength(3);
        await h.sync();
        expect(await h.diff()).toEqual([]);
        expect(await h.store.dirtyCount()).toBe(0);
        expect(backfillPasses).toEqual([2, 2]);
      });

    it('a backfill stopped in its second pass resumes that pass, and loses nothing', async () => {
      const stop = new AbortController();
      h = await harness({
        sim: { tickets: TICKETS, deals: DEALS, dialect: { listPaging: 'offset' }, faults: REMOVAL },
        // Stops after the second pass over the deals committed its first page.
        hooks: { onPage: (kind) => void (kind === 'deals' && passes('deals') === 2 && stop.abort()) },
      });
      const stopped = await runBackfill({ ...h.ctx, stopSignal: stop.signal }, emptyStats());
      // Saved with the pages it covers: within the pass, or (SQLite commits a small list whole) at the log read after it.
      expect(stopped).toMatchObject({ phase: 'deals', pass: 2 });
      expect(await readBackfill(h.store)).toEqual(stopped);
      await h.backfill();
      // Resumed at the saved cursor: no third first page of the deals.
      expect(passes('deals')).toBe(2);
      await h.sync();
      expect(await h.diff()).toEqual([]);
    });

    it(`stops with LIST_UNSETTLED after ${MAX_LIST_PASSES} passes that all lose records, and the next run goes on`, async () => {
      let rearm = true;
      h = await harness({
        sim: { tickets: TICKETS, deals: DEALS, dialect: { listPaging: 'offset' }, faults: REMOVAL },
        // Every pass over the deals loses three: the fault is armed again as each pass begins.
        hooks: { onPage: (kind) => void (rearm && kind === 'deals' && h!.sim.control.setFaults({})) },
      });
      await expect(h.backfill()).rejects.toMatchObject({ code: 'LIST_UNSETTLED' });
      expect(passes('deals')).toBe(MAX_LIST_PASSES);
      expect(await readBackfill(h.store)).toMatchObject({ phase: 'deals', pass: MAX_LIST_PASSES + 1, step: 'list', cursor: null });
      rearm = false;
      h.sim.control.setFaults({ removeServedAtPage: 0 });
      await h.backfill();
      expect(passes('deals')).toBe(MAX_LIST_PASSES + 1);
      await h.sync();
      expect(await h.diff()).toEqual([]);
    });

    it('the backfill without removals costs at most 1.05 x the requests of one pass', async () => {
      h = await harness({ sim: { tickets: TICKETS, deals: DEALS, dialect: { listPaging: 'offset' } } });
      await h.backfill();
      const all = gets();
      const firstList = all.findIndex((r) => r.path === '/api/v1/deals' || r.path === '/api/v1/tickets');
      const logBefore = all.slice(0, firstList).filter((r) => r.path === '/api/v1/events').length;
      // One pass, as the backfill paged before: the head, the log's lookback, the pipelines, the list pages, a read per ticket.
      const onePass = logBefore + 1 + Math.ceil(DEALS / PAGE) + Math.ceil(TICKETS / PAGE) + TICKETS;
      expect(all.length - all.slice(firstList).filter((r) => r.path === '/api/v1/events').length).toBe(onePass);
      expect(all.length).toBeLessThanOrEqual(1.05 * onePass);
      expect(passes('tickets') + passes('deals')).toBe(2);
      await h.sync();
      expect(await h.diff()).toEqual([]);
    });

    it('the list plan loses no dirty record when served ones leave an offset list mid-scan', async () => {
      h = await harness({ sim: { tickets: TICKETS, deals: DEALS, dialect: { listPaging: 'offset' } }, drainPlan: 'list' });
      await h.backfill();
      await h.sync();
      const tickets = h.sim.control.truth().tickets as Ref[];
      const deals = h.sim.control.truth().deals as Ref[];
      // Field-only changes the list can carry, spread over the first pages.
      for (const t of tickets.slice(0, 120).filter((_t, i) => i % 2 === 0))
        await callApi(h.sim, 'PATCH', `/tickets/${t.id}`, { priority: t.priority === 'high' ? 'low' : 'high' });
      for (const d of deals.slice(0, 90).filter((_d, i) => i % 2 === 0))
        await callApi(h.sim, 'PATCH', `/deals/${d.id}`, { name: `scan ${d.id}` });
      h.sim.control.setFaults(REMOVAL);
      h.sim.control.clearRequests();
      await h.sync();
      expect(h.sim.control.truth().hiddenTickets).toHaveLength(3);
      expect(h.sim.control.truth().deletedDealIds).toHaveLength(3);
      expect(gets().some((r) => r.path === '/api/v1/tickets' && r.query.cursor !== undefined)).toBe(true);
      await h.sync();
      expect(await h.diff()).toEqual([]);
      expect(await h.store.dirtyCount()).toBe(0);
    });
  });
