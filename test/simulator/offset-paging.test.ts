import { afterEach, describe, expect, it } from 'vitest';
import { start, type Client, type Wire } from './helpers.js';

let c: Client | null = null;
afterEach(async () => {
  await c?.sim.close();
  c = null;
});

const ids = (list: Wire[]): string[] => list.map((x: { id: string }) => x.id);
const truthIds = (list: object[]): string[] => list.map((x) => (x as { id: string }).id);

/** `listPaging` (docs/simulator.md, "List paging") and the `removeServedAtPage` fault. */
describe('lists paged by position', () => {
  it('serve every record once, newest updated first, while nothing changes', async () => {
    c = await start({ tickets: 47, deals: 23, dialect: { listPaging: 'offset' } });
    const truth = c.sim.control.truth();
    expect(ids(await c.pageAll('/api/v1/tickets?limit=10', 'tickets'))).toEqual(truthIds(truth.tickets));
    expect(ids(await c.pageAll('/api/v1/deals?limit=7', 'deals'))).toEqual(truthIds(truth.deals));
  });

  it('a record written between pages moves to the front: the next page repeats one, none is lost', async () => {
    c = await start({ tickets: 30, dialect: { listPaging: 'offset' } });
    const first = await c.get('/api/v1/tickets?limit=10');
    const last = c.sim.control.truth().tickets.at(-1) as { id: string };
    await c.send('PATCH', `/api/v1/tickets/${last.id}`, { summary: 'moved to the front' });
    const rest = await c.pageAll(`/api/v1/tickets?limit=10&cursor=${encodeURIComponent(first.body.nextCursor)}`, 'tickets');
    expect(rest[0].id).toBe(first.body.tickets[9].id);
    expect(ids(rest)).not.toContain(last.id);
  });

  for (const listPaging of ['offset', 'keyset'] as const)
    it(`the removal fault takes served records out through real writes (${listPaging})`, async () => {
      c = await start({ tickets: 30, deals: 20, dialect: { listPaging }, faults: { removeServedAtPage: 2, removeServedCount: 3 } });
      const before = c.sim.control.truth();
      const tickets = ids(await c.pageAll('/api/v1/tickets?limit=10', 'tickets'));
      const deals = ids(await c.pageAll('/api/v1/deals?limit=5', 'deals'));
      const after = c.sim.control.truth();
      // The three newest of page one left, each with the event its write logs.
      const gone = truthIds(before.tickets).slice(0, 3);
      expect(after.hiddenTickets.map((h) => h.id).sort()).toEqual([...gone].sort());
      expect(after.hiddenTickets.map((h) => h.reason).sort()).toEqual(['deleted', 'merged', 'spam']);
      expect(after.deletedDealIds.sort()).toEqual(truthIds(before.deals).slice(0, 3).sort());
      const types = (after.events as { type: string; entityId: string }[])
        .filter((e) => gone.includes(e.entityId))
        .map((e) => e.type)
        .filter((t) => /\.(deleted|spam|merged)$/.test(t));
      expect(types.sort()).toEqual(['ticket.deleted', 'ticket.merged', 'ticket.spam']);
      // Keyset pages keep their places; offset pages skip the three behind the boundary.
      const stayed = truthIds(after.tickets).filter((id) => !tickets.includes(id));
      expect(stayed).toHaveLength(listPaging === 'offset' ? 3 : 0);
      expect(truthIds(after.deals).filter((id) => !deals.includes(id))).toHaveLength(listPaging === 'offset' ? 3 : 0);
      // Spent once per list kind; setting faults again re-arms it.
      await c.pageAll('/api/v1/tickets?limit=10', 'tickets');
      expect(c.sim.control.truth().hiddenTickets).toHaveLength(3);
      c.sim.control.setFaults({ removeServedCount: 1 });
      await c.pageAll('/api/v1/tickets?limit=10', 'tickets');
      expect(c.sim.control.truth().hiddenTickets).toHaveLength(4);
    });

  it('refuses a listPaging value it does not know, naming the option', async () => {
    c = await start({ tickets: 1 });
    expect(() => c!.sim.control.setDialect({ listPaging: 'pages' as never })).toThrow(/dialect\.listPaging must be one of keyset, offset/);
  });
});
