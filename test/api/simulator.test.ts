import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type Page } from '../../src/api/index.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';

// The simulator is an independent reading of the upstream API (docs/upstream.md): agreement here is the real test.
let sim: Simulator;
let client: ApiClient;

beforeAll(async () => {
  sim = await startSimulator({ apiKeys: { k_sim: '' }, tickets: 230, deals: 120, control: true, seed: 7 });
  client = createApiClient({
    baseUrl: sim.url,
    apiKey: 'k_sim',
    pageSize: 50,
    maxRequestsPerSecond: 500,
    retry: { minDelayMs: 5, maxDelayMs: 50 },
  });
});

afterAll(async () => {
  await client?.close();
  await sim?.close();
});

async function collect<T extends { id: string }>(pages: AsyncIterable<Page<T>>): Promise<{ ids: string[]; invalid: number }> {
  const ids: string[] = [];
  let invalid = 0;
  for await (const page of pages) {
    ids.push(...page.items.map((i) => i.id));
    invalid += page.invalid.length;
  }
  return { ids, invalid };
}

const ids = (records: object[]) => records.map((r) => (r as { id: string }).id);

describe('against the bundled simulator', () => {
  it('pages every ticket, deal and event exactly once, all valid', async () => {
    const truth = sim.control.truth();
    const tickets = await collect(client.iterateTickets());
    const deals = await collect(client.iterateDeals());
    const events = await collect(client.iterateEvents({}));
    for (const [got, want] of [
      [tickets, truth.tickets],
      [deals, truth.deals],
      [events, truth.events],
    ] as const) {
      expect(got.invalid).toBe(0);
      expect(new Set(got.ids).size).toBe(got.ids.length);
      expect([...got.ids].sort()).toEqual(ids(want).sort());
    }
    expect(tickets.ids.length).toBeGreaterThan(100);
  });

  it('reads single records and pipelines that validate', async () => {
    const truth = sim.control.truth();
    const t = await client.getTicket(ids(truth.tickets)[0]!);
    expect(Array.isArray(t.messages)).toBe(true);
    const d = await client.getDeal(ids(truth.deals)[0]!);
    expect(d.amount === null || /^-?\d+\.\d{2}$/.test(d.amount)).toBe(true);
    const before = Math.floor(sim.control.now().getTime() / 1000) * 1000;
    const p = await client.listPipelines();
    expect(p.invalid).toEqual([]);
    // The answer's Date header (the simulator's clock, to the second), which bounds a sync's window.
    expect(Date.parse(p.serverDate!)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(p.serverDate!)).toBeLessThanOrEqual(sim.control.now().getTime());
    expect(ids(p.items).sort()).toEqual(ids(truth.pipelines).sort());
  });

  it('retries injected 503s and dropped connections', async () => {
    sim.control.clearRequests();
    sim.control.failNext({ status: 503, count: 2, path: '/api/v1/pipelines', retryAfter: '0' });
    sim.control.failNext({ status: 0, drop: true, count: 1, path: '/api/v1/pipelines' });
    const before = client.stats().retries;
    await client.listPipelines();
    expect(client.stats().retries - before).toBe(3);
    expect(sim.control.requests().filter((r) => r.path === '/api/v1/pipelines')).toHaveLength(4);
  });

  it('quarantines a corrupted ticket in its page without losing the others', async () => {
    const victim = ids(sim.control.truth().tickets)[3]!;
    sim.control.corrupt('ticket', victim, 'bad-timestamp');
    try {
      const invalid: string[] = [];
      let valid = 0;
      for await (const page of client.iterateTickets()) {
        invalid.push(...page.invalid.map((i) => i.id ?? '?'));
        valid += page.items.length;
      }
      expect(invalid).toEqual([victim]);
      expect(valid).toBe(sim.control.truth().tickets.length - 1);
      await expect(client.getTicket(victim)).rejects.toMatchObject({ code: 'INVALID_RECORD', entityId: victim });
    } finally {
      sim.control.repair('ticket', victim);
    }
  });

  it('a wrong key is AUTH_REJECTED', async () => {
    const bad = createApiClient({ baseUrl: sim.url, apiKey: 'nope' });
    try {
      await expect(bad.ticketsPage({})).rejects.toMatchObject({ code: 'AUTH_REJECTED' });
      expect(bad.stats().requests).toBe(1);
    } finally {
      await bad.close();
    }
  });
});
