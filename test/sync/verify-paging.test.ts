import { afterEach, describe, expect, it } from 'vitest';
import { emptyStats, readAsOf, runVerify } from '../../src/sync/index.js';
import { byHand } from '../helpers/by-hand.js';
import { dialects } from '../helpers/dialects.js';
import { callApi, harness as makeHarness, type Harness } from './harness.js';

const TICKETS = 150;
const DEALS = 100;
const PAGE = 40;
/** The fault: on the second page of each list verify reads, three records page one served leave it. */
const REMOVAL = { removeServedAtPage: 2, removeServedCount: 3 };

/**
 * `verify` under lists that page by position (docs/sync.md, "Verify"): records leaving a page
 * verify already read shift the rest forward, and the records at the next page boundary, which
 * stayed, are never listed. Verify must not call them drift (it reads them by id), must name the
 * records that left as in flight, and must still find drift planted by hand, including on a
 * skipped record. The simulator's own list order, read before the fault is armed, says which
 * records the shifted pages skip.
 */
for (const dialect of dialects)
  describe(`verify on lists paged by position (${dialect.name})`, () => {
    let h: Harness | null = null;
    afterEach(async () => {
      await h?.close();
      h = null;
    });

    /** Syncs until the mirror's as-of passes `at` (a change then is no longer in flight): keyed to the mirror's own claim. */
    async function syncPast(at: Date): Promise<void> {
      // Bounded by time, not by a count of cycles: the as-of trails the upstream's clock by its
      // overlap and the Date header's second, which a fast machine's 200 cycles may not span.
      for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
        await h!.sync();
        const asOf = (await readAsOf(h!.store))?.asOf;
        if (asOf && Date.parse(asOf) > at.getTime()) return;
      }
      throw new Error(`the as-of never passed ${at.toISOString()}`);
    }

    /** The list's ids in the simulator's order, paged with no removal armed. */
    async function listed(list: 'tickets' | 'deals'): Promise<string[]> {
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const q: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
        const page = (await callApi(h!.sim, 'GET', `/${list}?limit=${PAGE}${q}`)) as Record<string, unknown>;
        ids.push(...(page[list] as Array<{ id: string }>).map((r) => r.id));
        cursor = page.nextCursor as string | null;
      } while (cursor);
      return ids;
    }

    for (const listPaging of ['offset', 'keyset'] as const)
      it(`reports no false drift when served records leave a ${listPaging} list mid-verify, and finds planted drift`, async () => {
        h = await makeHarness({ dialect, pageSize: PAGE, sim: { tickets: TICKETS, deals: DEALS, dialect: { listPaging } } });
        await h.backfill();
        // Planted: a ticket deleted upstream well before the as-of, live again in the mirror by hand.
        const gone = (await listed('tickets')).at(-1)!;
        h.sim.control.hideTicket(gone, 'deleted');
        await syncPast(h.sim.control.now());
        await byHand(dialect, h.database, 'UPDATE tickets SET deleted_at = NULL WHERE id = $1', [gone]);
        const tickets = await listed('tickets');
        const deals = await listed('deals');
        // Under offset paging page two starts three places later: places 40-42 of each list are skipped.
        const skippedTickets = tickets.slice(PAGE, PAGE + 3);
        const skippedDeals = deals.slice(PAGE, PAGE + 3);
        // Planted: a content edit on a record the list will skip (only a read by id can show it).
        await byHand(dialect, h.database, "UPDATE tickets SET subject = 'planted' WHERE id = $1", [skippedTickets[1]]);

        h.sim.control.setFaults(REMOVAL);
        h.sim.control.clearRequests();
        const result = await runVerify(h.ctx, emptyStats(), { repair: false, settleMs: 0 });
        const truth = h.sim.control.truth();
        const left = [...truth.hiddenTickets.map((t) => `ticket:${t.id}`), ...truth.deletedDealIds.map((id) => `deal:${id}`)]
          .filter((k) => k !== `ticket:${gone}`)
          .sort();
        // The fault fired during verify's listing: three tickets and three deals left.
        expect(left).toHaveLength(6);

        const named = (ds: ReadonlyArray<{ entityType: string; entityId: string; kind: string; field?: string }>) =>
          ds.map((d) => `${d.entityType}:${d.entityId}:${d.field ?? d.kind}`).sort();
        expect(named(result.drift)).toEqual([`ticket:${gone}:extra`, `ticket:${skippedTickets[1]}:subject`].sort());
        // The records that left after verify listed them are named in flight; so is the deal count they moved.
        const records = result.inFlight.filter((d) => d.entityType !== 'pipeline');
        expect(named(records)).toEqual(left.map((k) => `${k}:extra`));
        expect(result.inFlight.filter((d) => d.entityType === 'pipeline').every((d) => (d.field ?? d.kind) === 'deal_count')).toBe(true);

        const reads = h.sim.control
          .requests()
          .filter((r) => r.method === 'GET' && /^\/api\/v1\/(tickets|deals)\/[^/]+$/.test(r.path))
          .map((r) => r.path.replace('/api/v1/', ''))
          .sort();
        // Read by id: the records the list did not show and the change log does not name, no more.
        const skipped =
          listPaging === 'offset' ? [...skippedTickets.map((id) => `tickets/${id}`), ...skippedDeals.map((id) => `deals/${id}`)] : [];
        expect(reads).toEqual([`tickets/${gone}`, ...skipped].sort());
        expect(result.readById).toBe(reads.length);
      });

    it('reads nothing by id when the change log shows no record leaving', async () => {
      h = await makeHarness({ dialect, pageSize: PAGE, sim: { tickets: TICKETS, deals: DEALS, dialect: { listPaging: 'offset' } } });
      await h.backfill();
      await h.sync();
      const gone = (await listed('deals')).at(-1)!;
      // Planted: the mirror holds a deal the list no longer shows, deleted before the as-of.
      await callApi(h.sim, 'DELETE', `/deals/${gone}`);
      await syncPast(h.sim.control.now());
      await byHand(dialect, h.database, 'UPDATE deals SET deleted_at = NULL WHERE id = $1', [gone]);
      h.sim.control.clearRequests();
      const result = await runVerify(h.ctx, emptyStats(), { repair: false, settleMs: 0 });
      // The planted deal, and its pipeline's deal count it inflates in the mirror.
      expect(result.drift.filter((d) => d.entityType === 'deal').map((d) => `${d.entityId}:${d.kind}`)).toEqual([`${gone}:extra`]);
      expect(result.drift.filter((d) => d.entityType !== 'deal').every((d) => (d.field ?? d.kind) === 'deal_count')).toBe(true);
      expect(result.inFlight).toEqual([]);
      expect(result.readById).toBe(0);
    });
  });
