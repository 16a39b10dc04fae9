import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, type Client, type Wire } from './helpers.js';

let c: Client;
let member: { id: string };
beforeAll(async () => {
  c = await start({ tickets: 40, deals: 5, seed: 3 });
  member = c.sim.control.truth().members[0] as { id: string };
});
afterAll(() => c.sim.close());

async function newTicket(extra: object = {}): Promise<Wire> {
  const r = await c.send('POST', '/api/v1/tickets', { subject: 'Help', body: 'It broke', email: 'new.person@example.com', ...extra });
  expect(r.status).toBe(201);
  return r.body.ticket;
}

describe('authentication', () => {
  it('401 with a JSON error body for a missing or unknown key', async () => {
    for (const key of [null, 'wrong-key']) {
      const r = await c.get('/api/v1/tickets', key);
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
    }
    const logged = c.sim.control.requests().filter((e) => !e.authorized);
    expect(logged.length).toBeGreaterThanOrEqual(2);
  });
});

describe('list validation', () => {
  it.each(['0', '101', '2.5', 'abc', '-1'])('limit=%s is refused with 422 naming the field', async (limit) => {
    const r = await c.get(`/api/v1/tickets?limit=${limit}`);
    expect(r.status).toBe(422);
    expect(r.body.error.details[0].field).toBe('limit');
  });

  it('limit defaults to 50 and accepts 1..100', async () => {
    expect((await c.get('/api/v1/tickets')).body.tickets.length).toBeLessThanOrEqual(50);
    expect((await c.get('/api/v1/tickets?limit=1')).body.tickets).toHaveLength(1);
    expect((await c.get('/api/v1/events?limit=100')).body.events).toHaveLength(100);
  });

  it('garbage cursors are 400', async () => {
    expect((await c.get('/api/v1/tickets?cursor=garbage')).status).toBe(400);
    const ev = (await c.get('/api/v1/events?limit=1')).body.nextCursor;
    expect((await c.get(`/api/v1/tickets?cursor=${ev}`)).status).toBe(400);
  });

  it('filters: status categories and labels, unassigned, tag, q by number', async () => {
    const all = c.sim.control.truth().tickets as Wire[];
    const unresolved = (await c.get('/api/v1/tickets?status=unresolved&limit=100')).body.tickets;
    expect(unresolved.map((t: Wire) => t.id).sort()).toEqual(
      all
        .filter((t) => ['open', 'pending', 'on_hold'].includes(t.status))
        .map((t) => t.id)
        .sort(),
    );
    const onHold = (await c.get('/api/v1/tickets?status=On%20hold&limit=100')).body.tickets;
    expect(onHold.every((t: Wire) => t.status === 'on_hold')).toBe(true);
    const unassigned = (await c.get('/api/v1/tickets?assigneeId=unassigned&limit=100')).body.tickets;
    expect(unassigned.length).toBe(all.filter((t) => t.assignee === null).length);
    const target = all[3];
    const byNumber = (await c.get(`/api/v1/tickets?q=${encodeURIComponent(target.key)}`)).body.tickets;
    expect(byNumber.map((t: Wire) => t.id)).toContain(target.id);
    expect((await c.get('/api/v1/tickets?status=bogus')).status).toBe(422);
  });
});

describe('single tickets', () => {
  it('GET returns messages oldest first and 404 for unknown ids', async () => {
    const id = (c.sim.control.truth().tickets[0] as Wire).id;
    const r = await c.get(`/api/v1/tickets/${id}`);
    expect(r.status).toBe(200);
    const times = r.body.ticket.messages.map((m: Wire) => Date.parse(m.createdAt));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(r.body.ticket.messageCount).toBe(r.body.ticket.messages.length);
    const missing = await c.get('/api/v1/tickets/tkt_nope');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
  });

  it('create: defaults, new contact, contact.created and ticket.created events', async () => {
    const t = await newTicket({ email: 'fresh.customer@example.com', firstName: 'Fresh', fields: { region: 'emea', vip: true } });
    expect(t).toMatchObject({ status: 'open', priority: 'normal', assignee: null, messageCount: 1, fields: { region: 'emea', vip: true } });
    expect(t.contact).toMatchObject({ firstName: 'Fresh', email: 'fresh.customer@example.com' });
    expect(t.key).toBe(`#${t.number}`);
    const events = (await c.get('/api/v1/events?limit=2')).body.events;
    expect(events.map((e: Wire) => e.type)).toEqual(['ticket.created', 'contact.created']);
    expect(events[0].actor.id).toBe(member.id);
    expect(events[0].occurredAt).toBe(t.updatedAt);
  });

  it('create: 422 without contactId/email, for unknown custom fields and unknown contacts', async () => {
    const cases = [
      [{ subject: 's', body: 'b' }, 'contactId'],
      [{ subject: 's', body: 'b', email: 'a@b.co', fields: { nope: 1 } }, 'fields.nope'],
      [{ subject: 's', body: 'b', contactId: 'con_missing' }, 'contactId'],
      [{ body: 'b', email: 'a@b.co' }, 'subject'],
      [{ subject: 's', body: 'b', email: 'a@b.co', priority: 'extreme' }, 'priority'],
    ] as const;
    for (const [body, field] of cases) {
      const r = await c.send('POST', '/api/v1/tickets', body);
      expect(r.status).toBe(422);
      expect(r.body.error.details.map((d: Wire) => d.field)).toContain(field);
    }
    expect((await c.send('POST', '/api/v1/tickets', '{not json')).status).toBe(400);
  });

  it('PATCH emits one event per kind of change and bumps updatedAt', async () => {
    const t = await newTicket();
    const r = await c.send('PATCH', `/api/v1/tickets/${t.id}`, {
      status: 'Pending',
      priority: 'high',
      assigneeId: member.id,
      addTags: ['vip'],
      subject: 'Help!',
      fields: { mrr: 10 },
    });
    expect(r.status).toBe(200);
    expect(r.body.ticket).toMatchObject({ status: 'pending', priority: 'high', subject: 'Help!', tags: ['vip'] });
    const events = (await c.get(`/api/v1/events?entityType=ticket&entityId=${t.id}&limit=10`)).body.events;
    const byType = Object.fromEntries(events.map((e: Wire) => [e.type, e]));
    expect(byType['ticket.status_changed'].payload).toEqual({ from: 'open', to: 'pending' });
    expect(byType['ticket.priority_changed'].payload).toEqual({ from: 'normal', to: 'high' });
    expect(byType['ticket.assigned'].payload).toEqual({ from: null, to: member.id });
    expect(byType['ticket.updated'].payload).toEqual({
      subject: { from: 'Help', to: 'Help!' },
      tags: { from: [], to: ['vip'] },
      'fields.mrr': { from: null, to: 10 },
    });
    expect(r.body.ticket.updatedAt).toBe(byType['ticket.status_changed'].occurredAt);
    expect(r.body.ticket.statusChangedAt).toBe(r.body.ticket.updatedAt);
  });

  it('setting closed by hand is refused with 422, in PATCH and in a reply', async () => {
    const t = await newTicket();
    for (const status of ['closed', 'Closed']) {
      const r = await c.send('PATCH', `/api/v1/tickets/${t.id}`, { status });
      expect(r.status).toBe(422);
      expect(r.body.error).toMatchObject({ code: 'status_not_settable', details: [{ field: 'status' }] });
    }
    expect((await c.send('POST', `/api/v1/tickets/${t.id}/messages`, { body: 'x', status: 'closed' })).status).toBe(422);
    expect((await c.get(`/api/v1/tickets/${t.id}`)).body.ticket.status).toBe('open');
  });

  it('a public reply moves the ticket to pending, sets firstAgentReplyAt and auto-assigns', async () => {
    const t = await newTicket();
    const r = await c.send('POST', `/api/v1/tickets/${t.id}/messages`, { body: 'On it' });
    expect(r.status).toBe(201);
    expect(r.body.message).toMatchObject({ body: 'On it', authorType: 'agent', isInternal: false, author: { id: member.id } });
    expect(r.body.ticket).toMatchObject({ status: 'pending', assignee: { id: member.id }, messageCount: 2 });
    expect(r.body.ticket.firstAgentReplyAt).toBe(r.body.message.createdAt);
    const types = (await c.get(`/api/v1/events?entityId=${t.id}&limit=10`)).body.events.map((e: Wire) => e.type);
    expect(types.slice(0, 3).sort()).toEqual(['ticket.assigned', 'ticket.replied', 'ticket.status_changed']);
  });

  it('an internal note changes neither status nor assignee; a reply with status uses that status', async () => {
    const t = await newTicket();
    const note = await c.send('POST', `/api/v1/tickets/${t.id}/messages`, { body: 'fyi', internal: true });
    expect(note.body.ticket).toMatchObject({ status: 'open', assignee: null, firstAgentReplyAt: null });
    expect(note.body.message.isInternal).toBe(true);
    expect((await c.get('/api/v1/events?limit=1')).body.events[0]).toMatchObject({
      type: 'ticket.note_added',
      payload: { messageId: note.body.message.id },
    });
    const solved = await c.send('POST', `/api/v1/tickets/${t.id}/messages`, { body: 'done', status: 'solved' });
    expect(solved.body.ticket.status).toBe('solved');
    expect(solved.body.ticket.resolvedAt).toBe(solved.body.message.createdAt);
  });

  it('autoAssignOnReply=false leaves the ticket unassigned', async () => {
    const other = await start({ tickets: 1, deals: 0, autoAssignOnReply: false });
    try {
      const t = (await other.send('POST', '/api/v1/tickets', { subject: 's', body: 'b', email: 'x@y.co' })).body.ticket;
      const r = await other.send('POST', `/api/v1/tickets/${t.id}/messages`, { body: 'hi' });
      expect(r.body.ticket).toMatchObject({ status: 'pending', assignee: null });
    } finally {
      await other.sim.close();
    }
  });

  it('the automation closes solved tickets after autoCloseSolvedAfterMs of simulated time', async () => {
    const t = await newTicket();
    await c.send('PATCH', `/api/v1/tickets/${t.id}`, { status: 'solved' });
    c.sim.control.advanceClock(4 * 86_400_000 + 1000);
    const r = await c.get(`/api/v1/tickets/${t.id}`);
    expect(r.body.ticket.status).toBe('closed');
    const e = (await c.get(`/api/v1/events?entityId=${t.id}&type=ticket.status_changed&limit=1`)).body.events[0];
    expect(e).toMatchObject({ payload: { from: 'solved', to: 'closed' }, actor: null });
    expect(r.body.ticket.updatedAt).toBe(e.occurredAt);
    expect((await c.send('POST', `/api/v1/tickets/${t.id}/messages`, { body: 'again?' })).status).toBe(422);
  });

  it('hidden tickets leave the list, answer 404 and log their event', async () => {
    const ids = (c.sim.control.truth().tickets as Wire[]).slice(0, 3).map((t) => t.id as string);
    c.sim.control.hideTicket(ids[0]!, 'deleted');
    c.sim.control.hideTicket(ids[1]!, 'spam');
    c.sim.control.hideTicket(ids[2]!, 'merged');
    const listed = (await c.pageAll('/api/v1/tickets?limit=100', 'tickets')).map((t) => t.id);
    for (const id of ids) {
      expect(listed).not.toContain(id);
      expect((await c.get(`/api/v1/tickets/${id}`)).status).toBe(404);
    }
    const types = (await c.get('/api/v1/events?limit=3')).body.events.map((e: Wire) => e.type);
    expect(types).toEqual(['ticket.merged', 'ticket.spam', 'ticket.deleted']);
    expect(
      c.sim.control
        .truth()
        .hiddenTickets.map((h) => h.id)
        .sort(),
    ).toEqual([...ids].sort());
  });

  it('removeMessage drops a message, bumps updatedAt and logs ticket.message_removed', async () => {
    const t = await newTicket();
    const reply = (await c.send('POST', `/api/v1/tickets/${t.id}/messages`, { body: 'oops' })).body;
    c.sim.control.advanceClock(5);
    c.sim.control.removeMessage(t.id, reply.message.id);
    const after = (await c.get(`/api/v1/tickets/${t.id}`)).body.ticket;
    expect(after.messageCount).toBe(1);
    expect(Date.parse(after.updatedAt)).toBeGreaterThan(Date.parse(reply.ticket.updatedAt));
    expect((await c.get('/api/v1/events?limit=1')).body.events[0]).toMatchObject({
      type: 'ticket.message_removed',
      payload: { messageId: reply.message.id },
    });
  });
});
