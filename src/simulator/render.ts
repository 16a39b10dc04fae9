import { iso } from './clock.js';
import type { Deal, Member, Message, Pipeline, SimEvent, Stage, Ticket } from './model.js';
import type { World } from './world.js';

/**
 * Output shapes of the API document, part 2. Serialized JSON is cached per record version
 * (cleared by World.commitWrite), so hot reads cost a map lookup and a socket write.
 */

function userRef(m: Member): object {
  return { id: m.id, name: m.name, email: m.email };
}

function memberRef(world: World, id: string | null): object | null {
  if (id === null) return null;
  const m = world.members.get(id);
  return m ? userRef(m) : { id, name: null, email: null };
}

function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : iso(ms);
}

export function messageOut(world: World, m: Message): object {
  let author: object;
  if (m.authorType === 'customer') {
    const c = world.contacts.get(m.authorId);
    author = c ? { id: c.id, name: `${c.firstName} ${c.lastName}`, email: c.email } : { id: m.authorId, name: null, email: null };
  } else {
    author = memberRef(world, m.authorId) as object;
  }
  return {
    id: m.id,
    body: m.body,
    authorType: m.authorType,
    author,
    isInternal: m.isInternal,
    attachments: m.attachments,
    createdAt: iso(m.createdAtMs),
  };
}

function ticketObject(world: World, t: Ticket): Record<string, unknown> {
  const c = world.contacts.get(t.contactId);
  const team = t.teamId === null ? null : (world.teams.get(t.teamId) ?? { id: t.teamId, name: null });
  const out: Record<string, unknown> = {
    id: t.id,
    number: t.number,
    key: `#${t.number}`,
    subject: t.subject,
    status: t.status,
    priority: t.priority,
    summary: t.summary,
    tags: t.tags,
    fields: t.fields,
    contact: c
      ? { id: c.id, firstName: c.firstName, lastName: c.lastName, email: c.email }
      : { id: t.contactId, firstName: null, lastName: null, email: null },
    assignee: memberRef(world, t.assigneeId),
    team: team === null ? null : { id: team.id, name: team.name },
    cc: t.cc,
    messageCount: t.messages.length,
    sla: {
      firstReplyDueAt: iso(t.firstReplyDueMs),
      resolveDueAt: iso(t.resolveDueMs),
      firstReplyBreachedAt: isoOrNull(t.firstReplyBreachedMs),
      resolveBreachedAt: isoOrNull(t.resolveBreachedMs),
    },
    firstAgentReplyAt: isoOrNull(t.firstAgentReplyAtMs),
    resolvedAt: isoOrNull(t.resolvedAtMs),
    statusChangedAt: iso(t.statusChangedAtMs),
    createdAt: iso(t.createdAtMs),
    updatedAt: iso(t.updatedAtMs),
  };
  switch (t.corrupt) {
    case 'bad-timestamp':
      out.createdAt = 'not-a-date';
      break;
    case 'missing-field':
      delete out.status;
      break;
    case 'wrong-type':
      out.number = 'N/A';
      break;
  }
  return out;
}

/** The ticket as list items show it (no messages). */
export function ticketListJson(world: World, t: Ticket): string {
  if (t.listJson === undefined) t.listJson = JSON.stringify(ticketObject(world, t));
  return t.listJson;
}

/** Body of GET /tickets/:id: `{"ticket":{...,"messages":[...]}}`. */
export function ticketBody(world: World, t: Ticket): Buffer {
  if (t.fullBody === undefined) {
    const list = ticketListJson(world, t);
    const messages = JSON.stringify(t.messages.map((m) => messageOut(world, m)));
    t.fullBody = Buffer.from(`{"ticket":${list.slice(0, -1)},"messages":${messages}}}`);
  }
  return t.fullBody;
}

export function ticketFull(world: World, t: Ticket): object {
  return (JSON.parse(ticketBody(world, t).toString()) as { ticket: object }).ticket;
}

export function stageOut(s: Stage): object {
  return { id: s.id, name: s.name, position: s.position, isWon: s.isWon, isLost: s.isLost };
}

export function dealStatus(s: Stage): 'open' | 'won' | 'lost' {
  return s.isWon ? 'won' : s.isLost ? 'lost' : 'open';
}

export function formatCents(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

function dealObject(world: World, d: Deal): Record<string, unknown> {
  const stage = world.stages.get(d.stageId) as Stage;
  const pipeline = world.pipelines.find((p) => p.id === d.pipelineId) as Pipeline;
  const company = d.companyId === null ? null : (world.companies.get(d.companyId) ?? null);
  const out: Record<string, unknown> = {
    id: d.id,
    name: d.name,
    amount: d.amountCents === null ? null : formatCents(d.amountCents),
    currency: d.currency,
    closeDate: d.closeDate,
    status: dealStatus(stage),
    pipeline: { id: pipeline.id, name: pipeline.name },
    stage: stageOut(stage),
    owner: memberRef(world, d.ownerId),
    company: company === null ? null : { id: company.id, name: company.name, domain: company.domain },
    contacts: d.contactIds.map((id, i) => {
      const c = world.contacts.get(id);
      return { id, firstName: c?.firstName ?? null, lastName: c?.lastName ?? null, email: c?.email ?? null, isPrimary: i === 0 };
    }),
    fields: d.fields,
    createdAt: iso(d.createdAtMs),
    updatedAt: iso(d.updatedAtMs),
  };
  switch (d.corrupt) {
    case 'bad-timestamp':
      out.createdAt = 'not-a-date';
      break;
    case 'missing-field':
      delete out.stage;
      break;
    case 'wrong-type':
      out.contacts = 'n/a';
      break;
  }
  return out;
}

export function dealListJson(world: World, d: Deal): string {
  if (d.listJson === undefined) d.listJson = JSON.stringify(dealObject(world, d));
  return d.listJson;
}

export function dealBody(world: World, d: Deal): Buffer {
  if (d.fullBody === undefined) d.fullBody = Buffer.from(`{"deal":${dealListJson(world, d)}}`);
  return d.fullBody;
}

export function pipelineOut(p: Pipeline): object {
  return { id: p.id, name: p.name, dealCount: p.dealCount, stages: p.stages.map(stageOut) };
}

export function eventJson(world: World, e: SimEvent): string {
  if (e.json === undefined) {
    const actor = e.actor === null ? null : typeof e.actor === 'string' ? memberRef(world, e.actor) : e.actor;
    e.json = JSON.stringify({
      id: e.id,
      type: e.type,
      entityType: e.entityType,
      entityId: e.entityId,
      payload: e.payload,
      actor,
      occurredAt: iso(e.occurredAtMs),
    });
  }
  return e.json;
}
