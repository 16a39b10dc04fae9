import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { drainDirty, emptyStats, type SyncContext } from '../../src/sync/index.js';
import { dialects } from '../helpers/dialects.js';
import { callApi, harness as makeHarness, type Harness, type HarnessOptions } from './harness.js';
import { databaseOf } from '../../src/store/internal.js';

type Ref = { id: string; priority?: string };

/** The drain's cost model (docs/sync.md, "Drain"), each case ending in a whole-mirror comparison. */
for (const dialect of dialects)
  describe(`drain plans on ${dialect.name}`, () => {
    let h: Harness | null = null;
    const harness = (options: HarnessOptions = {}) => makeHarness({ drainPlan: 'auto', ...options, dialect });
    afterEach(async () => {
      await h?.close();
      h = null;
    });

    /** GETs the simulator saw since the last clearRequests, by kind. */
    const seen = () => {
      const gets = h!.sim.control.requests().filter((r) => r.method === 'GET');
      const count = (re: RegExp) => gets.filter((r) => re.test(r.path)).length;
      return {
        ticketReads: count(/\/tickets\/[^/]+$/),
        dealReads: count(/\/deals\/[^/]+$/),
        ticketPages: count(/\/tickets$/),
        dealPages: count(/\/deals$/),
      };
    };
    const tickets = () => h!.sim.control.truth().tickets as Ref[];
    const deals = () => h!.sim.control.truth().deals as Ref[];

    it('field-only changes of many records come from one list page each, not one read per record', async () => {
      h = await harness();
      await h.backfill();
      await h.sync();
      for (const t of tickets().slice(0, 20))
        await callApi(h.sim, 'PATCH', `/tickets/${t.id}`, { priority: 'urgent', subject: `plan ${t.id}` });
      for (const d of deals().slice(0, 10)) await callApi(h.sim, 'PATCH', `/deals/${d.id}`, { name: `plan ${d.id}` });
      h.sim.control.clearRequests();
      const stats = await h.sync();
      expect(seen()).toEqual({ ticketReads: 0, dealReads: 0, ticketPages: 1, dealPages: 1 });
      expect(stats.recordsFetched).toBe(30);
      expect(await h.store.dirtyCount()).toBe(0);
      expect(await h.diff()).toEqual([]);
    });

    it('a ticket with a new message is read by id, even when the message event is not visible yet', async () => {
      h = await harness();
      await h.backfill();
      const [replied, quiet] = tickets();
      // The reply's events show up late; only the later priority change is visible to this sync.
      h.sim.control.setFaults({ lateEventRate: 1, lateEventDelayMs: 60_000 });
      await callApi(h.sim, 'POST', `/tickets/${replied!.id}/messages`, { body: 'late reply', internal: true });
      h.sim.control.clearFaults();
      for (const t of [replied!, quiet!]) await callApi(h.sim, 'PATCH', `/tickets/${t.id}`, { priority: 'low' });
      h.sim.control.clearRequests();
      await h.sync();
      // The list's messageCount moved against the mirror's: the list copy is not enough.
      expect(h.sim.control.requests().filter((r) => r.path.endsWith(`/tickets/${replied!.id}`))).toHaveLength(1);
      expect(h.sim.control.requests().filter((r) => r.path.endsWith(`/tickets/${quiet!.id}`))).toHaveLength(0);
      expect(await h.diff()).toEqual([]);
      h.sim.control.advanceClock(61_000);
      await h.sync();
      expect(await h.diff()).toEqual([]);
    });

    it('a dirty record the list leaves out is confirmed by id: 404 marks it deleted', async () => {
      h = await harness();
      await h.backfill();
      const [ticket] = tickets();
      const [deal] = deals();
      // A real change, so an event marks it (the backfill already read the log before its copy).
      await callApi(h.sim, 'PATCH', `/tickets/${ticket!.id}`, { priority: ticket!.priority === 'high' ? 'low' : 'high' });
      await callApi(h.sim, 'PATCH', `/deals/${deal!.id}`, { name: 'about to go' });
      // The events that remove them arrive late: the mirror only knows of field changes.
      h.sim.control.setFaults({ lateEventRate: 1, lateEventDelayMs: 60_000 });
      h.sim.control.hideTicket(ticket!.id, 'spam');
      await callApi(h.sim, 'DELETE', `/deals/${deal!.id}`);
      h.sim.control.clearFaults();
      // Enough other changes that the lists are the cheaper plan.
      for (const t of tickets().slice(0, 6)) await callApi(h.sim, 'PATCH', `/tickets/${t.id}`, { priority: 'low' });
      for (const d of deals().slice(0, 6)) await callApi(h.sim, 'PATCH', `/deals/${d.id}`, { name: `still here ${d.id}` });
      h.sim.control.clearRequests();
      const stats = await h.sync();
      expect(seen()).toMatchObject({ ticketReads: 1, dealReads: 1, ticketPages: 1, dealPages: 1 });
      expect(stats.deleted).toBe(2);
      for (const table of ['tickets', 'deals'] as const) {
        const id = table === 'tickets' ? ticket!.id : deal!.id;
        const row = await databaseOf(h.store).selectFrom(table).select('deleted_at').where('id', '=', id).executeTakeFirstOrThrow();
        expect(row.deleted_at).not.toBeNull();
      }
      expect(await h.diff()).toEqual([]);
    });

    it('an invalid list item is quarantined while the rest syncs', async () => {
      h = await harness();
      await h.backfill();
      const [bad, ...rest] = tickets();
      h.sim.control.corrupt('ticket', bad!.id, 'wrong-type');
      for (const t of rest.slice(0, 5)) await callApi(h.sim, 'PATCH', `/tickets/${t.id}`, { priority: 'low' });
      h.sim.control.clearRequests();
      await h.sync();
      expect(seen().ticketReads).toBe(0);
      const q = await databaseOf(h.store).selectFrom('quarantine').selectAll().where('entity_id', '=', bad!.id).executeTakeFirstOrThrow();
      expect(q.reason).toMatch(/number/);
      expect(await h.store.dirtyCount()).toBe(0);
      expect((await h.diff()).filter((d) => !d.includes(bad!.id))).toEqual([]);
      h.sim.control.repair('ticket', bad!.id);
      await h.sync();
      expect(await h.diff()).toEqual([]);
    });

    it('writes commit in transactions of many records; a stop between them leaves the rest dirty, and nothing is lost', async () => {
      h = await harness({ sim: { tickets: 300, deals: 10 }, pageSize: 20 });
      await h.backfill();
      await h.sync();
      let transactions = 0;
      const counted: Store = { ...h.store, transaction: (fn) => (transactions++, h!.store.transaction(fn)) };
      const stop = new AbortController();
      const ctx: SyncContext = { ...h.ctx, store: counted, stopSignal: stop.signal };

      await changeAndMark(h, 250, 'batch');
      await drainDirty(ctx, emptyStats());
      // 250 records in batches of at most 200: two commits (a slow machine may cut more by time).
      expect(transactions).toBeGreaterThanOrEqual(2);
      expect(transactions).toBeLessThanOrEqual(12);
      expect(await h.store.dirtyCount()).toBe(0);
      expect((await h.diff()).filter((d) => !d.includes('events missing'))).toEqual([]);

      await changeAndMark(h, 250, 'stopped');
      let committed = 0;
      await drainDirty({ ...ctx, hooks: { onRecord: () => void (++committed === 1 && stop.abort()) } }, emptyStats());
      // Every record is either committed (and counted) or still dirty: none is lost between the two.
      expect(committed).toBeGreaterThan(0);
      expect(committed + (await h.store.dirtyCount())).toBe(250);
      await h.sync();
      expect(await h.store.dirtyCount()).toBe(0);
      expect(await h.diff()).toEqual([]);
    });
  });

/**
 * Changes `count` tickets' subjects and marks them dirty directly (as verify --repair does, with
 * the change's time), so a drain can be run on its own.
 */
async function changeAndMark(h: Harness, count: number, label: string): Promise<void> {
  const ids = (h.sim.control.truth().tickets as Ref[]).slice(0, count).map((t) => t.id);
  for (const id of ids) await callApi(h.sim, 'PATCH', `/tickets/${id}`, { subject: `${label} ${id}` });
  const updated = new Map((h.sim.control.truth().tickets as Array<Ref & { updatedAt: string }>).map((t) => [t.id, t.updatedAt]));
  await h.store.transaction((tx) =>
    tx.markDirty(ids.map((id) => ({ entityType: 'ticket', entityId: id, occurredAt: updated.get(id)!, readUnlisted: false }))),
  );
}
