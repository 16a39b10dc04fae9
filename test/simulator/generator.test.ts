import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/index.js';
import { START, type Wire } from './helpers.js';

describe('generator', () => {
  it('the same seed gives the same workspace; another seed does not', async () => {
    // A real-time clock places the generated history before the moment of generation (the first
    // request), which differs by a few ms between two servers; a stopped clock compares the seeds alone.
    const opts = { tickets: 60, deals: 25, startTime: START, realTime: false };
    const [a, b, other] = await Promise.all([
      startSimulator({ ...opts, seed: 42 }),
      startSimulator({ ...opts, seed: 42 }),
      startSimulator({ ...opts, seed: 43 }),
    ]);
    try {
      const ta = a.control.truth();
      expect(b.control.truth()).toEqual(ta);
      expect(other.control.truth().tickets).not.toEqual(ta.tickets);
      // The same seed also drives the same activity (the writes' times follow the running clock).
      const writes = (sim: typeof a) => sim.control.act(20).map((w) => [w.kind, w.entityType, w.entityId]);
      expect(writes(a)).toEqual(writes(b));
    } finally {
      await Promise.all([a.close(), b.close(), other.close()]);
    }
  });

  it('produces a realistic spread of statuses, priorities, messages, currencies and amounts', async () => {
    const sim = await startSimulator({ tickets: 400, deals: 150, startTime: START });
    try {
      const t = sim.control.truth();
      const tickets = t.tickets as Wire[];
      const deals = t.deals as Wire[];
      expect(new Set(tickets.map((x) => x.status))).toEqual(new Set(['open', 'pending', 'on_hold', 'solved', 'closed']));
      expect(new Set(tickets.map((x) => x.priority))).toEqual(new Set(['low', 'normal', 'high', 'urgent']));
      expect(tickets.every((x) => x.messageCount >= 1 && x.messageCount <= 8)).toBe(true);
      const messages = tickets.flatMap((x) => x.messages);
      expect(new Set(messages.map((m: Wire) => m.authorType))).toEqual(new Set(['customer', 'agent']));
      expect(messages.some((m: Wire) => m.isInternal)).toBe(true);
      expect(tickets.some((x) => x.cc.length > 0)).toBe(true);
      expect(tickets.every((x) => Date.parse(x.updatedAt) < START.getTime())).toBe(true);
      expect(new Set(deals.map((d) => d.currency))).toEqual(new Set(['USD', 'EUR', 'GBP']));
      expect(deals.some((d) => d.amount === null)).toBe(true);
      expect(deals.some((d) => d.amount !== null && !d.amount.endsWith('.00'))).toBe(true);
      expect(deals.every((d) => d.amount === null || /^\d+\.\d\d$/.test(d.amount))).toBe(true);
      expect(new Set(deals.map((d) => d.status))).toEqual(new Set(['open', 'won', 'lost']));
      expect(t.members).toHaveLength(8);
    } finally {
      await sim.close();
    }
  });

  // How long generation takes is the benchmark's business; this checks that the size works.
  it('generates 50,000 tickets and 10,000 deals', async () => {
    const sim = await startSimulator({ tickets: 50_000, deals: 10_000, startTime: START });
    try {
      const r = await fetch(`${sim.url}/api/v1/tickets?limit=100`, { headers: { authorization: 'Bearer test-key' } });
      expect(((await r.json()) as Wire).tickets).toHaveLength(100);
    } finally {
      await sim.close();
    }
  }, 60_000);
});
