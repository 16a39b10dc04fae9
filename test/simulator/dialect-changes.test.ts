import { describe, expect, it } from 'vitest';
import type { DialectOptions } from '../../src/simulator/index.js';
import { eventsOf } from './dialect-helpers.js';
import { start, type Client, type Wire } from './helpers.js';

/** Payload names per `changeFieldNames`, from the dialect's documentation (test-side). */
type Names = Record<'assignee' | 'team' | 'stage' | 'owner' | 'company' | 'contacts' | 'closeDate', string>;
const NAMES: Record<DialectOptions['changeFieldNames'], Names> = {
  apiId: {
    assignee: 'assigneeId',
    team: 'teamId',
    stage: 'stageId',
    owner: 'ownerId',
    company: 'companyId',
    contacts: 'contactIds',
    closeDate: 'closeDate',
  },
  api: {
    assignee: 'assignee',
    team: 'team',
    stage: 'stage',
    owner: 'owner',
    company: 'company',
    contacts: 'contacts',
    closeDate: 'closeDate',
  },
  snake: {
    assignee: 'assignee_id',
    team: 'team_id',
    stage: 'stage_id',
    owner: 'owner_id',
    company: 'company_id',
    contacts: 'contact_ids',
    closeDate: 'close_date',
  },
};
const DEDICATED = ['ticket.status_changed', 'ticket.priority_changed', 'ticket.assigned', 'deal.stage_changed'];

/** Events logged since `before` (an event id), newest first. */
async function since(c: Client, before: string): Promise<Wire[]> {
  const out: Wire[] = [];
  for (const e of await c.pageAll('/api/v1/events?limit=100', 'events')) {
    if (e.id === before) return out;
    out.push(e);
  }
  throw new Error('marker event not found');
}

async function newestEventId(c: Client): Promise<string> {
  return (await c.get('/api/v1/events?limit=1')).body.events[0].id;
}

/** A ticket to change: open, unassigned, with a team; and the names a ref needs. */
function fixtures(c: Client) {
  const truth = c.sim.control.truth();
  const tickets = truth.tickets as Wire[];
  const ticket =
    tickets.find((t) => t.status === 'open' && t.assignee === null && t.team !== null) ?? tickets.find((t) => t.status === 'open');
  const otherTeam = tickets.map((t) => t.team).find((tm: Wire) => tm && tm.id !== ticket.team?.id);
  const members = truth.members as Wire[];
  const deal = (truth.deals as Wire[]).find((d) => d.owner !== null && d.company !== null && d.contacts.length > 0 && d.status === 'open');
  const pipeline = (truth.pipelines as Wire[]).find((p) => p.id === deal.pipeline.id);
  const company = (truth.deals as Wire[]).map((d) => d.company).find((co: Wire) => co && co.id !== deal.company.id);
  return { truth, ticket, otherTeam, members, deal, pipeline, company };
}

describe.each(['apiId', 'api', 'snake'] as const)('changeEvents updated, changeFieldNames %s', (names) => {
  const N = NAMES[names];

  it.each(['ids', 'refs'] as const)(
    'one PATCH is ONE <entity>.updated event with every change as {from, to} (values %s)',
    async (values) => {
      const c = await start({
        tickets: 40,
        deals: 20,
        seed: 6,
        dialect: { changeEvents: 'updated', changeFieldNames: names, changeValues: values },
      });
      try {
        const { ticket, otherTeam, members, deal, pipeline, company } = fixtures(c);
        const ref = (id: string | null, name: string | null) => (id === null ? null : values === 'refs' ? { id, name } : id);
        let before = await newestEventId(c);
        const body = {
          subject: 'New subject',
          summary: 'sum',
          tags: ['a'],
          fields: { plan: 'pro' },
          priority: 'urgent',
          assigneeId: members[2].id,
          teamId: otherTeam.id,
          status: 'on_hold',
        };
        await c.send('PATCH', `/api/v1/tickets/${ticket.id}`, body);
        let unseen = await since(c, before);
        expect(unseen).toHaveLength(1);
        expect(unseen[0]).toMatchObject({ type: 'ticket.updated', entityId: ticket.id });
        expect(unseen[0].payload).toEqual({
          subject: { from: ticket.subject, to: 'New subject' },
          summary: { from: ticket.summary, to: 'sum' },
          [N.team]: { from: ref(ticket.team?.id ?? null, ticket.team?.name ?? null), to: ref(otherTeam.id, otherTeam.name) },
          tags: { from: ticket.tags, to: ['a'] },
          'fields.plan': { from: ticket.fields.plan ?? null, to: 'pro' },
          priority: { from: ticket.priority, to: 'urgent' },
          [N.assignee]: { from: null, to: ref(members[2].id, members[2].name) },
          status: { from: 'open', to: 'on_hold' },
        });

        // A public reply: its own event, then one update for the auto-assignment and the status move.
        before = await newestEventId(c);
        await c.send('PATCH', `/api/v1/tickets/${ticket.id}`, { assigneeId: null });
        await c.send('POST', `/api/v1/tickets/${ticket.id}/messages`, { body: 'hi' });
        unseen = await since(c, before);
        expect(unseen.map((e) => e.type)).toEqual(['ticket.updated', 'ticket.replied', 'ticket.updated']);
        expect(unseen[2].payload).toEqual({ [N.assignee]: { from: ref(members[2].id, members[2].name), to: null } });
        const key = (truth: Wire) => truth.members.find((m: Wire) => m.id === unseen[0].actor.id);
        expect(unseen[0].payload).toEqual({
          [N.assignee]: { from: null, to: ref(unseen[0].actor.id, key(c.sim.control.truth()).name) },
          status: { from: 'on_hold', to: 'pending' },
        });

        // A deal PATCH, with the stage move also on every linked contact's timeline.
        before = await newestEventId(c);
        const stage = pipeline.stages.find((s: Wire) => s.id !== deal.stage.id && !s.isWon && !s.isLost) ?? pipeline.stages[0];
        const dealBody = {
          name: 'Renamed',
          amount: '99.90',
          currency: 'EUR',
          closeDate: '2025-01-31',
          stage: stage.id,
          ownerId: members[3].id,
          companyId: company.id,
          contactIds: [ticket.contact.id],
          fields: { source: 'event' },
        };
        await c.send('PATCH', `/api/v1/deals/${deal.id}`, dealBody);
        unseen = await since(c, before);
        const update = unseen.filter((e) => e.entityId === deal.id);
        expect(update).toHaveLength(1);
        expect(update[0].type).toBe('deal.updated');
        const contactRefs = (list: Wire[]) => list.map((x) => ref(x.id, `${x.firstName} ${x.lastName}`));
        expect(update[0].payload).toEqual({
          name: { from: deal.name, to: 'Renamed' },
          amount: { from: deal.amount, to: '99.90' },
          currency: { from: deal.currency, to: 'EUR' },
          [N.closeDate]: { from: deal.closeDate, to: '2025-01-31' },
          [N.owner]: { from: ref(deal.owner.id, deal.owner.name), to: ref(members[3].id, members[3].name) },
          [N.company]: { from: ref(deal.company.id, deal.company.name), to: ref(company.id, company.name) },
          [N.contacts]: {
            from: values === 'refs' ? contactRefs(deal.contacts) : deal.contacts.map((x: Wire) => x.id),
            to: values === 'refs' ? contactRefs([ticket.contact]) : [ticket.contact.id],
          },
          'fields.source': { from: deal.fields.source ?? null, to: 'event' },
          [N.stage]: { from: ref(deal.stage.id, deal.stage.name), to: ref(stage.id, stage.name) },
        });
        // The timeline entries go to the contacts linked by this very write.
        const timeline = unseen.filter((e) => e.type === 'contact.activity_logged');
        expect(timeline.map((e) => e.entityId)).toEqual([ticket.contact.id]);
        for (const e of timeline)
          expect(e.payload).toEqual({
            dealId: deal.id,
            activity: 'deal_stage_changed',
            from: ref(deal.stage.id, deal.stage.name),
            to: ref(stage.id, stage.name),
          });
      } finally {
        await c.sim.close();
      }
    },
  );
});

describe('changeEvents updated: automations and seeded history', () => {
  it('the seeded log and the auto-close automation speak the dialect; truth.changes agrees with the default dialect', async () => {
    const opts = { tickets: 120, deals: 40, seed: 9 };
    const c = await start({ ...opts, dialect: { changeEvents: 'updated', changeValues: 'refs', changeFieldNames: 'api' } });
    const d = await start(opts);
    try {
      const truth = c.sim.control.truth();
      const events = truth.events as Wire[];
      expect(events.filter((e) => DEDICATED.includes(e.type))).toEqual([]);
      for (const t of truth.tickets as Wire[]) {
        const own = events.filter((e) => e.entityId === t.id);
        expect(own[0].occurredAt).toBe(t.updatedAt);
        const lastStatus = own.find((e) => e.type === 'ticket.updated' && e.payload.status);
        expect(lastStatus ? lastStatus.payload.status.to : 'open').toBe(t.status);
        const lastAssignee = own.find((e) => e.type === 'ticket.updated' && 'assignee' in e.payload);
        if (lastAssignee) expect(lastAssignee.payload.assignee.to?.id ?? null).toBe(t.assignee?.id ?? null);
      }
      for (const deal of truth.deals as Wire[]) {
        const own = events.filter((e) => e.entityId === deal.id);
        const move = own.find((e) => e.type === 'deal.updated' && e.payload.stage);
        expect(move ? move.payload.stage.to : { id: own[own.length - 1].payload.stageId }).toMatchObject({ id: deal.stage.id });
        if (move) expect(move.payload.stage.to.name).toBe(deal.stage.name);
      }
      // An agent reply that assigns and moves the status is one seeded write: one event with both.
      expect(events.some((e) => e.type === 'ticket.updated' && e.payload.assignee && e.payload.status)).toBe(true);

      // The same history, told differently: the dialect-free changes are the same.
      const key = (x: Wire) => `${x.entityId} ${x.field} ${JSON.stringify(x.from)} ${JSON.stringify(x.to)} ${x.occurredAt}`;
      const mine = (truth.changes as Wire[]).map(key).sort();
      const theirs = (d.sim.control.truth().changes as Wire[]).map(key).sort();
      expect(mine.length).toBeGreaterThan(200);
      expect(mine).toEqual(theirs);

      // Auto-close: one update from solved to closed, no actor.
      const ticket = (truth.tickets as Wire[]).find((t) => t.status === 'open');
      await c.send('PATCH', `/api/v1/tickets/${ticket.id}`, { status: 'solved' });
      c.sim.control.advanceClock(4 * 86_400_000 + 1);
      const own = await eventsOf(c, ticket.id);
      expect(own[0]).toMatchObject({ type: 'ticket.updated', actor: null, payload: { status: { from: 'solved', to: 'closed' } } });
      expect(own[1]).toMatchObject({ type: 'ticket.updated', payload: { status: { from: 'open', to: 'solved' } } });
    } finally {
      await Promise.all([c.sim.close(), d.sim.close()]);
    }
  });
});

describe.each(['summary', 'changed'] as const)('changeEvents opaque (%s)', (form) => {
  it('names what changed without from/to, in live writes, automations and seeded history', async () => {
    const c = await start({
      tickets: 60,
      deals: 20,
      seed: 10,
      dialect: { changeEvents: 'opaque', opaquePayload: form, changeFieldNames: 'api' },
    });
    try {
      const truth = c.sim.control.truth();
      const events = truth.events as Wire[];
      expect(events.filter((e) => DEDICATED.includes(e.type))).toEqual([]);
      expect(events.some((e) => JSON.stringify(e.payload).includes('"from"'))).toBe(false);
      const ticket = (truth.tickets as Wire[]).find((t) => t.status === 'open');
      const before = await newestEventId(c);
      await c.send('PATCH', `/api/v1/tickets/${ticket.id}`, { priority: ticket.priority === 'low' ? 'high' : 'low', status: 'pending' });
      const member = (truth.members as Wire[]).find((m) => m.id !== ticket.assignee?.id);
      await c.send('PATCH', `/api/v1/tickets/${ticket.id}`, { subject: 'x', teamId: null, assigneeId: member.id });
      const unseen = await since(c, before);
      expect(unseen.map((e) => e.type)).toEqual(['ticket.updated', 'ticket.updated']);
      if (form === 'summary') {
        expect(unseen[1].payload).toEqual({ summary: 'Priority and status updated' });
        expect(unseen[0].payload.summary).toMatch(/^Subject(, team)? and assignee updated$/);
      } else {
        expect(unseen[1].payload).toEqual({ changed: ['priority', 'status'] });
        expect(unseen[0].payload.changed).toEqual(ticket.team ? ['subject', 'team', 'assignee'] : ['subject', 'assignee']);
      }
      // The truth still knows what the log does not show.
      const told = (truth.changes as Wire[]).length;
      expect(told).toBeGreaterThan(50);
      const now = c.sim.control.truth().changes as Wire[];
      expect(now.find((x) => x.eventId === unseen[1].id && x.field === 'status')).toMatchObject({ from: 'open', to: 'pending' });
    } finally {
      await c.sim.close();
    }
  });
});

describe('changeEvents dedicated with other names and values', () => {
  it('ticket.assigned and deal.stage_changed carry refs; the rest goes to <entity>.updated under the chosen names', async () => {
    const c = await start({ tickets: 40, deals: 20, seed: 6, dialect: { changeValues: 'refs', changeFieldNames: 'snake' } });
    try {
      const { ticket, otherTeam, members } = fixtures(c);
      const before = await newestEventId(c);
      await c.send('PATCH', `/api/v1/tickets/${ticket.id}`, { teamId: otherTeam.id, assigneeId: members[1].id, status: 'pending' });
      const unseen = await since(c, before);
      expect(unseen.map((e) => e.type)).toEqual(['ticket.status_changed', 'ticket.assigned', 'ticket.updated']);
      expect(unseen[2].payload).toEqual({
        team_id: {
          from: ticket.team ? { id: ticket.team.id, name: ticket.team.name } : null,
          to: { id: otherTeam.id, name: otherTeam.name },
        },
      });
      expect(unseen[1].payload).toEqual({ from: null, to: { id: members[1].id, name: members[1].name } });
      expect(unseen[0].payload).toEqual({ from: 'open', to: 'pending' });
      const moves = (c.sim.control.truth().events as Wire[]).filter((e) => e.type === 'deal.stage_changed');
      expect(moves.length).toBeGreaterThan(0);
      for (const m of moves) expect(Object.keys(m.payload.to).sort()).toEqual(['id', 'name']);
    } finally {
      await c.sim.close();
    }
  });
});
