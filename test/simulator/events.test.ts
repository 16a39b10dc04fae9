import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, type Client, type Wire } from './helpers.js';

let c: Client;
beforeAll(async () => {
  c = await start({ tickets: 30, deals: 10, seed: 5 });
});
afterAll(() => c.sim.close());

describe('events', () => {
  it('since is inclusive', async () => {
    const all = c.sim.control.truth().events as Wire[];
    const pivot = all[20];
    const r = await c.pageAll(`/api/v1/events?limit=100&since=${encodeURIComponent(pivot.occurredAt)}`, 'events');
    expect(r.map((e) => e.id)).toContain(pivot.id);
    expect(r.every((e) => e.occurredAt >= pivot.occurredAt)).toBe(true);
    expect(r.length).toBe(all.filter((e) => e.occurredAt >= pivot.occurredAt).length);
    expect((await c.get('/api/v1/events?since=yesterday')).status).toBe(422);
  });

  it('the eventPageOrder fault reverses each page and keeps the pages and cursors', async () => {
    const newestFirst = await c.pageAll('/api/v1/events?limit=7', 'events');
    c.sim.control.setFaults({ eventPageOrder: 'oldest-first' });
    try {
      const first = (await c.get('/api/v1/events?limit=7')).body;
      expect(first.events.map((e: Wire) => e.id)).toEqual(
        newestFirst
          .slice(0, 7)
          .map((e) => e.id)
          .reverse(),
      );
      const reversed = await c.pageAll('/api/v1/events?limit=7', 'events');
      const pages = [];
      for (let i = 0; i < newestFirst.length; i += 7) pages.push(...newestFirst.slice(i, i + 7).reverse());
      expect(reversed.map((e) => e.id)).toEqual(pages.map((e) => e.id));
      expect(() => c.sim.control.setFaults({ eventPageOrder: 'random' as 'oldest-first' })).toThrow(/eventPageOrder/);
    } finally {
      c.sim.control.setFaults({ eventPageOrder: 'newest-first' });
    }
  });

  it('type filters match exactly or by a prefix ending in a dot', async () => {
    const prefix = await c.pageAll('/api/v1/events?type=deal.&limit=100', 'events');
    expect(prefix.length).toBeGreaterThan(0);
    expect(prefix.every((e) => e.type.startsWith('deal.'))).toBe(true);
    const exact = await c.pageAll('/api/v1/events?type=deal.created&limit=100', 'events');
    expect(exact.length).toBe(10);
    expect((await c.get('/api/v1/events?type=deal')).body.events).toEqual([]);
  });

  it('the seeded log is consistent with the records', () => {
    const truth = c.sim.control.truth();
    const events = truth.events as Wire[];
    for (const t of truth.tickets as Wire[]) {
      const own = events.filter((e) => e.entityId === t.id);
      expect(own.some((e) => e.type === 'ticket.created')).toBe(true);
      expect(own[0].occurredAt).toBe(t.updatedAt);
      const lastStatus = own.find((e) => e.type === 'ticket.status_changed');
      expect(lastStatus ? lastStatus.payload.to : 'open').toBe(t.status);
      const replies = own.filter((e) => e.type === 'ticket.replied').length;
      expect(replies).toBe(t.messages.filter((m: Wire) => m.authorType === 'agent' && !m.isInternal).length);
    }
    for (const d of truth.deals as Wire[]) {
      const own = events.filter((e) => e.entityId === d.id);
      expect(own[own.length - 1].type).toBe('deal.created');
      const move = own.find((e) => e.type === 'deal.stage_changed');
      expect(move ? move.payload.to : own[own.length - 1].payload.stageId).toBe(d.stage.id);
    }
  });

  it('actEveryKind performs every kind of write with the documented events', async () => {
    const before = (await c.get('/api/v1/events?limit=1')).body.events[0].id;
    const records = c.sim.control.actEveryKind();
    expect(records.map((r) => r.kind)).toEqual([
      'create_ticket',
      'update_ticket',
      'change_status',
      'reply',
      'add_note',
      'change_tags',
      'create_deal',
      'move_deal_stage',
      'change_amount',
      'delete_deal',
    ]);
    const unseen: Wire[] = [];
    for (const e of await c.pageAll('/api/v1/events?limit=100', 'events')) {
      if (e.id === before) break;
      unseen.push(e);
    }
    const types = new Set(unseen.map((e) => e.type));
    for (const t of [
      'contact.created',
      'ticket.created',
      'ticket.status_changed',
      'ticket.replied',
      'ticket.note_added',
      'ticket.updated',
      'deal.created',
      'deal.stage_changed',
      'deal.updated',
      'deal.deleted',
    ])
      expect(types).toContain(t);
    for (const e of unseen) {
      expect(e.actor).toEqual(expect.objectContaining({ id: expect.any(String) }));
      expect(JSON.stringify(e.payload).length).toBeLessThan(400);
    }
    // Every write bumps the record's updatedAt to its newest event.
    const truth = c.sim.control.truth();
    for (const r of records.filter((x) => !truth.deletedDealIds.includes(x.entityId))) {
      const rec = [...(truth.tickets as Wire[]), ...(truth.deals as Wire[])].find((x) => x.id === r.entityId);
      const newest = unseen.find((e) => e.entityId === r.entityId);
      expect(rec.updatedAt).toBe(newest.occurredAt);
    }
  });

  it('injected events of unknown types are listed; late-visible ones appear later', async () => {
    const id = c.sim.control.injectEvent({ type: 'task.completed', entityType: 'task', entityId: 'task_1', payload: { x: 1 } });
    expect((await c.get('/api/v1/events?limit=1')).body.events[0]).toMatchObject({ id, type: 'task.completed', actor: null });
    const late = c.sim.control.injectEvent({ type: 'ticket.updated', entityType: 'ticket', entityId: 'tkt_x', visibleAfterMs: 60_000 });
    expect((await c.get('/api/v1/events?entityId=tkt_x')).body.events).toEqual([]);
    c.sim.control.advanceClock(60_001);
    expect((await c.get('/api/v1/events?entityId=tkt_x')).body.events.map((e: Wire) => e.id)).toEqual([late]);
  });

  it('lateEventRate hides new events until lateEventDelayMs has passed', async () => {
    const id = (c.sim.control.truth().tickets[0] as Wire).id as string;
    c.sim.control.setFaults({ lateEventRate: 1, lateEventDelayMs: 30_000 });
    const patched = (await c.send('PATCH', `/api/v1/tickets/${id}`, { summary: 'late news' })).body.ticket;
    c.sim.control.clearFaults();
    const head = (await c.get(`/api/v1/events?entityId=${id}&limit=1`)).body.events[0];
    expect(head.occurredAt < patched.updatedAt).toBe(true);
    c.sim.control.advanceClock(30_001);
    const visible = (await c.get(`/api/v1/events?entityId=${id}&limit=1`)).body.events[0];
    expect(visible).toMatchObject({ type: 'ticket.updated', occurredAt: patched.updatedAt });
  });
});
