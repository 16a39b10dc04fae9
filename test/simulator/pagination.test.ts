import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, type Client } from './helpers.js';

let c: Client;
beforeAll(async () => {
  c = await start({ tickets: 230, deals: 90, seed: 7 });
});
afterAll(() => c.sim.close());

function ids(list: { id: string }[]): string[] {
  return list.map((x) => x.id);
}

describe('paging while writes happen between pages', () => {
  it('tickets: every ticket listed at the first page appears exactly once', async () => {
    const before = new Set(ids(c.sim.control.truth().tickets as { id: string }[]));
    const seen = await c.pageAll('/api/v1/tickets?limit=17', 'tickets', () => c.sim.control.act(4));
    const seenIds = ids(seen);
    expect(new Set(seenIds).size).toBe(seenIds.length);
    const after = new Set(ids(c.sim.control.truth().tickets as { id: string }[]));
    for (const id of before) if (after.has(id)) expect(seenIds).toContain(id);
    // New tickets arrive through the change log, not in the middle of an old listing.
    for (const id of seenIds) expect(before.has(id)).toBe(true);
  });

  it('tickets: items are served in their current version', async () => {
    const first = await c.get('/api/v1/tickets?limit=5');
    const victim = first.body.tickets[4].id as string;
    await c.send('PATCH', `/api/v1/tickets/${victim}`, { summary: 'changed between pages' });
    const rest = await c.pageAll(`/api/v1/tickets?limit=5&cursor=${encodeURIComponent(first.body.nextCursor)}`, 'tickets');
    expect(ids(rest)).not.toContain(victim);
    const again = await c.pageAll('/api/v1/tickets?limit=50', 'tickets');
    expect(again.find((t) => t.id === victim).summary).toBe('changed between pages');
  });

  it('tickets: newest updated first', async () => {
    const all = await c.pageAll('/api/v1/tickets?limit=100', 'tickets');
    const times = all.map((t) => Date.parse(t.updatedAt));
    for (let i = 1; i < times.length; i++) expect(times[i - 1]).toBeGreaterThanOrEqual(times[i] as number);
  });

  it('deals: no gaps or duplicates across writes and deletes', async () => {
    const before = new Set(ids(c.sim.control.truth().deals as { id: string }[]));
    const seen = ids(await c.pageAll('/api/v1/deals?limit=7', 'deals', () => c.sim.control.act(5)));
    expect(new Set(seen).size).toBe(seen.length);
    const after = new Set(ids(c.sim.control.truth().deals as { id: string }[]));
    for (const id of before) if (after.has(id)) expect(seen).toContain(id);
  });

  it('events: every event visible at the first page is read exactly once, newest first', async () => {
    const before = c.sim.control.truth().events as { id: string }[];
    const seen = await c.pageAll('/api/v1/events?limit=100', 'events', () => c.sim.control.act(3));
    const seenIds = ids(seen);
    expect(new Set(seenIds).size).toBe(seenIds.length);
    expect(seenIds).toEqual(ids(before));
    const times = seen.map((e) => Date.parse(e.occurredAt));
    for (let i = 1; i < times.length; i++) expect(times[i - 1]).toBeGreaterThanOrEqual(times[i] as number);
  });

  it('events: a burst sharing one millisecond pages without loss', async () => {
    c.sim.control.burst(30);
    const newest = (await c.get('/api/v1/events?limit=1')).body.events[0].occurredAt as string;
    const all = await c.pageAll(`/api/v1/events?limit=3&since=${encodeURIComponent(newest)}`, 'events');
    expect(all.length).toBeGreaterThanOrEqual(30);
    expect(new Set(all.map((e) => e.occurredAt))).toEqual(new Set([newest]));
    expect(new Set(ids(all)).size).toBe(all.length);
  });

  it('a cursor keeps the filters of its first page and refuses different ones', async () => {
    const first = await c.get('/api/v1/tickets?limit=2&status=unresolved');
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const cur = encodeURIComponent(first.body.nextCursor);
    const next = await c.get(`/api/v1/tickets?limit=2&cursor=${cur}`);
    expect(next.status).toBe(200);
    for (const t of next.body.tickets) expect(['open', 'pending', 'on_hold']).toContain(t.status);
    expect((await c.get(`/api/v1/tickets?limit=2&status=unresolved&cursor=${cur}`)).status).toBe(200);
    const changed = await c.get(`/api/v1/tickets?limit=2&status=solved&cursor=${cur}`);
    expect(changed.status).toBe(400);
  });
});
