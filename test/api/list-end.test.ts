import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../src/api/index.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { dialects } from '../helpers/dialects.js';
import { callApi, harness } from '../sync/harness.js';

/**
 * The end of a listing, spelled as a server may: `nextCursor: null` (the document's form), `""` or
 * no key at all. Every listing the client pages (events, tickets, deals) ends on each of them, and
 * a backfill and a sync cycle over such a server make an exact mirror.
 */
describe.each(['null', 'empty', 'absent'] as const)('a listing ending with listEnd %s', (listEnd) => {
  let sim: Simulator;
  let client: ApiClient;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 3, tickets: 12, deals: 7, apiKeys: { k: '' }, dialect: { listEnd } });
    // A page size that does not divide any list, and one that makes the last page full.
    client = createApiClient({ baseUrl: sim.url, apiKey: 'k', pageSize: 5, maxRequestsPerSecond: 5000 });
  });
  afterAll(async () => {
    await client?.close();
    await sim?.close();
  });

  const all = async <T extends { id: string }>(pages: AsyncIterable<{ items: T[]; nextCursor: string | null }>) => {
    const ids: string[] = [];
    let last: string | null | undefined;
    for await (const p of pages) {
      ids.push(...p.items.map((i) => i.id));
      last = p.nextCursor;
    }
    return { ids, last };
  };

  it('pages events, tickets and deals to their end, every record once', async () => {
    const truth = sim.control.truth() as unknown as Record<'events' | 'tickets' | 'deals', { id: string }[]>;
    const events = await all(client.iterateEvents({ since: '2000-01-01T00:00:00.000Z' }));
    expect(events.ids.sort()).toEqual(truth.events.map((e) => e.id).sort());
    expect(events.last).toBeNull();
    const tickets = await all(client.iterateTickets());
    expect(tickets.ids.sort()).toEqual(truth.tickets.map((t) => t.id).sort());
    const deals = await all(client.iterateDeals());
    expect(deals.ids.sort()).toEqual(truth.deals.map((d) => d.id).sort());
  });

  it('one page that is also the last one ends the listing', async () => {
    const page = await client.dealsPage({ limit: 100 });
    expect(page.items).toHaveLength((sim.control.truth().deals as unknown[]).length);
    expect(page.nextCursor).toBeNull();
  });
});

describe('a listing whose last page carries no nextCursor key at all', () => {
  for (const db of dialects)
    it(`backfills and syncs an exact mirror (${db.name})`, async () => {
      const h = await harness({ sim: { tickets: 9, deals: 6, dialect: { listEnd: 'absent' } }, pageSize: 4, dialect: db });
      try {
        await h.backfill();
        expect(await h.diff()).toEqual([]);
        await callApi(h.sim, 'POST', '/tickets', { subject: 'after', body: 'x', email: 'x@example.com' });
        await h.sync();
        expect(await h.diff()).toEqual([]);
      } finally {
        await h.close();
      }
    });
});
