import { describe, expect, it } from 'vitest';
import { DOC_KEYS, tour, walkDocumented } from './dialect-helpers.js';
import { start, type Client, type Wire } from './helpers.js';

/** The raw pages of a list, each as received. */
async function rawPages(c: Client, path: string): Promise<Wire[]> {
  const pages: Wire[] = [];
  let cursor: string | null | undefined = null;
  for (let i = 0; i < 1000; i++) {
    const sep = path.includes('?') ? '&' : '?';
    const page: Wire = (await c.get(cursor ? `${path}${sep}cursor=${encodeURIComponent(cursor)}` : path)).body;
    pages.push(page);
    cursor = page.nextCursor;
    if (typeof cursor !== 'string' || cursor === '') return pages;
  }
  throw new Error('too many pages');
}

describe.each(['null', 'empty', 'absent'] as const)('listEnd %s', (listEnd) => {
  it('ends tickets, deals and events in that form; earlier pages carry a cursor', async () => {
    const c = await start({ tickets: 30, deals: 12, seed: 2, dialect: { listEnd } });
    try {
      for (const path of [
        '/api/v1/tickets?limit=7',
        '/api/v1/deals?limit=5',
        '/api/v1/events?limit=40',
        '/api/v1/tickets?tag=no-such-tag',
      ]) {
        const pages = await rawPages(c, path);
        for (const p of pages.slice(0, -1)) expect(p.nextCursor).toMatch(/^[A-Za-z0-9_-]{10,}$/);
        const last = pages[pages.length - 1];
        if (listEnd === 'absent') expect(Object.keys(last)).not.toContain('nextCursor');
        else expect(last.nextCursor).toBe(listEnd === 'empty' ? '' : null);
        if (!path.includes('no-such-tag')) expect(pages.length).toBeGreaterThan(1);
      }
    } finally {
      await c.sim.close();
    }
  });
});

describe('extraFields', () => {
  it('every object of every answer has a field the document does not list, and keeps every documented one', async () => {
    const c = await start({ tickets: 40, deals: 15, seed: 3, dialect: { extraFields: true, teamShape: 'rich' } });
    try {
      const kinds = new Map<string, number>();
      const values = new Set<string>();
      for (const a of await tour(c)) {
        walkDocumented(a.body, (kind, obj) => {
          const documented = DOC_KEYS[kind] as readonly string[];
          const extra = Object.keys(obj).filter(
            (k) => !documented.includes(k) && !(kind === 'team' && ['email', 'memberCount', 'lead'].includes(k)),
          );
          expect(extra.length, `${a.what}: ${kind} ${JSON.stringify(obj).slice(0, 160)}`).toBeGreaterThan(0);
          for (const k of documented) {
            // The list envelope's last page keeps nextCursor (listEnd null); a list item has no messages.
            if (k === 'messages' && !('messages' in obj)) continue;
            expect(Object.keys(obj), `${a.what}: ${kind} lacks ${k}`).toContain(k);
          }
          for (const k of extra) values.add(obj[k] === null ? 'null' : Array.isArray(obj[k]) ? 'array' : typeof obj[k]);
          kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
        });
      }
      expect([...kinds.keys()].sort()).toEqual(Object.keys(DOC_KEYS).sort());
      expect([...values].sort()).toEqual(['array', 'boolean', 'null', 'number', 'object', 'string']);
      // The same record reads the same on every read (the extras are stable and cached).
      const id = (c.sim.control.truth().tickets as Wire[])[0].id;
      expect((await c.get(`/api/v1/tickets/${id}`)).body).toEqual((await c.get(`/api/v1/tickets/${id}`)).body);
    } finally {
      await c.sim.close();
    }
  });
});

describe('teamShape', () => {
  it('rich teams have email, memberCount and a lead {id, name}; plain teams are {id, name}', async () => {
    const rich = await start({ tickets: 30, deals: 5, seed: 2, dialect: { teamShape: 'rich' } });
    const plain = await start({ tickets: 30, deals: 5, seed: 2 });
    try {
      const members = new Map((rich.sim.control.truth().members as Wire[]).map((m) => [m.id, m.name]));
      const richTeams = (await rich.pageAll('/api/v1/tickets?limit=100', 'tickets')).map((t) => t.team).filter(Boolean);
      expect(richTeams.length).toBeGreaterThan(5);
      for (const team of richTeams) {
        expect(Object.keys(team).sort()).toEqual(['email', 'id', 'lead', 'memberCount', 'name']);
        expect(team.email).toMatch(/@workspace\.example$/);
        expect(Number.isInteger(team.memberCount)).toBe(true);
        expect(team.lead).toEqual({ id: team.lead.id, name: members.get(team.lead.id) });
      }
      for (const t of await plain.pageAll('/api/v1/tickets?limit=100', 'tickets'))
        if (t.team) expect(Object.keys(t.team).sort()).toEqual(['id', 'name']);
      // Truth keeps the plain shape, so it does not depend on the dialect's spelling.
      expect(rich.sim.control.truth().tickets).toEqual(plain.sim.control.truth().tickets);
    } finally {
      await Promise.all([rich.sim.close(), plain.sim.close()]);
    }
  });
});

describe('unlistedValues', () => {
  it('unlisted statuses, priorities and author types appear in seeded data and activity, in their categories', async () => {
    const c = await start({ tickets: 400, deals: 20, seed: 12, dialect: { unlistedValues: true } });
    try {
      const tickets = c.sim.control.truth().tickets as Wire[];
      const statuses = new Set(tickets.map((t) => t.status));
      for (const s of ['waiting_on_customer', 'archived']) expect(statuses).toContain(s);
      expect(new Set(tickets.map((t) => t.priority))).toContain('critical');
      const authors = new Set(tickets.flatMap((t) => t.messages.map((m: Wire) => m.authorType)));
      expect([...authors].sort()).toEqual(['agent', 'bot', 'customer', 'system']);
      // Automation messages are not agent replies: a ticket answered only by automation has no first agent reply.
      const onlyAutomation = tickets.filter((t) => t.messages.every((m: Wire) => m.authorType !== 'agent'));
      expect(onlyAutomation.length).toBeGreaterThan(0);
      for (const t of onlyAutomation) expect(t.firstAgentReplyAt).toBeNull();
      // Their replies are logged with no actor.
      const events = c.sim.control.truth().events as Wire[];
      const automated = new Set(
        tickets.flatMap((t) => t.messages.filter((m: Wire) => m.authorType === 'system' || m.authorType === 'bot').map((m: Wire) => m.id)),
      );
      const logged = events.filter((e) => e.type === 'ticket.replied' && automated.has(e.payload.messageId));
      expect(logged.length).toBe(automated.size);
      for (const e of logged) expect(e.actor).toBeNull();

      // The shorthand filters are the one way a client can learn an unlisted status's category.
      const unresolved = new Set((await c.pageAll('/api/v1/tickets?status=unresolved&limit=100', 'tickets')).map((t) => t.status));
      const resolved = new Set((await c.pageAll('/api/v1/tickets?status=resolved&limit=100', 'tickets')).map((t) => t.status));
      expect(unresolved).toContain('waiting_on_customer');
      expect(resolved).toContain('archived');
      expect([...unresolved].some((s) => resolved.has(s))).toBe(false);

      // Accepted by value and label while the workspace has them.
      const open = tickets.find((t) => t.status === 'open');
      const patched = (await c.send('PATCH', `/api/v1/tickets/${open.id}`, { status: 'Waiting on customer', priority: 'Critical' })).body
        .ticket;
      expect(patched).toMatchObject({ status: 'waiting_on_customer', priority: 'critical', resolvedAt: null });
      const archived = (await c.send('PATCH', `/api/v1/tickets/${open.id}`, { status: 'archived' })).body.ticket;
      expect(archived.resolvedAt).toBe(archived.statusChangedAt);

      // Activity uses them, and a created ticket gets an automation message.
      c.sim.control.act(400);
      const moved = (c.sim.control.truth().events as Wire[]).filter((e) => e.type === 'ticket.status_changed' && e.actor !== null);
      expect(moved.some((e) => e.payload.to === 'waiting_on_customer' || e.payload.to === 'archived')).toBe(true);
      const created = (await c.send('POST', '/api/v1/tickets', { subject: 'Hi', body: 'Can you help?', email: 'q@x.example' })).body.ticket;
      expect(created.messages.map((m: Wire) => m.authorType)).toEqual(['customer', 'bot']);
      expect(created.firstAgentReplyAt).toBeNull();
    } finally {
      await c.sim.close();
    }
  });

  it('without the option they are refused like any unknown value', async () => {
    const c = await start({ tickets: 400, deals: 5, seed: 12 });
    try {
      const tickets = c.sim.control.truth().tickets as Wire[];
      expect(tickets.some((t) => ['waiting_on_customer', 'archived'].includes(t.status) || t.priority === 'critical')).toBe(false);
      const id = tickets[0].id;
      expect((await c.send('PATCH', `/api/v1/tickets/${id}`, { status: 'waiting_on_customer' })).status).toBe(422);
      expect((await c.send('PATCH', `/api/v1/tickets/${id}`, { priority: 'critical' })).status).toBe(422);
      expect((await c.get('/api/v1/tickets?status=archived')).status).toBe(422);
      const created = (await c.send('POST', '/api/v1/tickets', { subject: 'Hi', body: 'Can you help?', email: 'q@x.example' })).body.ticket;
      expect(created.messages.map((m: Wire) => m.authorType)).toEqual(['customer']);
    } finally {
      await c.sim.close();
    }
  });
});
