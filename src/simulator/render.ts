import { AUTOMATION_AUTHORS } from './catalog.js';
import * as x from './extras.js';
import type { Deal, Member, Message, Pipeline, SimEvent, Stage, Ticket } from './model.js';
import type { Spelling } from './spelling.js';
import type { World } from './world.js';

/**
 * Output shapes of the upstream records (docs/upstream.md, "Records"), written in a spelling (timestamp form, extra fields,
 * team shape). Serialized JSON is cached per record version in the served spelling (cleared by
 * World.commitWrite and by a change of spelling), so hot reads cost a map lookup and a socket write.
 */

type Obj = Record<string, unknown>;

/** `o`, plus the extra fields of its kind when the spelling has them. */
function more(sp: Spelling, o: Obj, extras: () => Obj): Obj {
  return sp.extraFields ? Object.assign(o, extras()) : o;
}

function userRef(sp: Spelling, m: { id: string; name: string | null; email: string | null }): Obj {
  return more(sp, { id: m.id, name: m.name, email: m.email }, () => x.userExtras(m.id));
}

function memberRef(world: World, sp: Spelling, id: string | null): Obj | null {
  if (id === null) return null;
  const m: Member | undefined = world.members.get(id);
  return userRef(sp, m ?? { id, name: null, email: null });
}

function teamOut(world: World, sp: Spelling, id: string | null): Obj | null {
  if (id === null) return null;
  const team = world.teams.get(id);
  if (!sp.richTeam || team === undefined) return more(sp, { id, name: team?.name ?? null }, () => x.teamExtras(id));
  const lead = world.members.get(team.leadId);
  const leadRef = more(sp, { id: team.leadId, name: lead?.name ?? null }, () => x.userExtras(team.leadId));
  const out = { id, name: team.name, email: team.email, memberCount: team.memberCount, lead: leadRef };
  return more(sp, out, () => x.teamExtras(id));
}

export function messageOut(world: World, sp: Spelling, m: Message): Obj {
  let author: Obj;
  if (m.authorType === 'customer') {
    const c = world.contacts.get(m.authorId);
    author = userRef(
      sp,
      c ? { id: c.id, name: `${c.firstName} ${c.lastName}`, email: c.email } : { id: m.authorId, name: null, email: null },
    );
  } else if (m.authorType === 'system' || m.authorType === 'bot') {
    author = userRef(sp, AUTOMATION_AUTHORS[m.authorType]);
  } else {
    author = memberRef(world, sp, m.authorId) as Obj;
  }
  const attachments = sp.extraFields ? m.attachments.map((a) => ({ ...a, ...x.attachmentExtras(a.id) })) : m.attachments;
  const out: Obj = {
    id: m.id,
    body: m.body,
    authorType: m.authorType,
    author,
    isInternal: m.isInternal,
    attachments,
    createdAt: sp.stamp(m.createdAtMs),
  };
  return more(sp, out, () => x.messageExtras(m.id, m.body));
}

function ticketObject(world: World, sp: Spelling, t: Ticket): Obj {
  const c = world.contacts.get(t.contactId);
  const stampOrNull = (ms: number | null): string | null => (ms === null ? null : sp.stamp(ms));
  const contact: Obj = c
    ? { id: c.id, firstName: c.firstName, lastName: c.lastName, email: c.email }
    : { id: t.contactId, firstName: null, lastName: null, email: null };
  const sla: Obj = {
    firstReplyDueAt: sp.stamp(t.firstReplyDueMs),
    resolveDueAt: sp.stamp(t.resolveDueMs),
    firstReplyBreachedAt: stampOrNull(t.firstReplyBreachedMs),
    resolveBreachedAt: stampOrNull(t.resolveBreachedMs),
  };
  const out: Obj = {
    id: t.id,
    number: t.number,
    key: `#${t.number}`,
    subject: t.subject,
    status: t.status,
    priority: t.priority,
    summary: t.summary,
    tags: t.tags,
    fields: t.fields,
    contact: more(sp, contact, () => x.contactExtras(t.contactId)),
    assignee: memberRef(world, sp, t.assigneeId),
    team: teamOut(world, sp, t.teamId),
    cc: sp.extraFields ? t.cc.map((e) => ({ ...e, ...x.ccExtras(e.email) })) : t.cc,
    messageCount: t.messages.length,
    sla: more(sp, sla, () => x.slaExtras(t.priority)),
    firstAgentReplyAt: stampOrNull(t.firstAgentReplyAtMs),
    resolvedAt: stampOrNull(t.resolvedAtMs),
    statusChangedAt: sp.stamp(t.statusChangedAtMs),
    createdAt: sp.stamp(t.createdAtMs),
    updatedAt: sp.stamp(t.updatedAtMs),
  };
  more(sp, out, () => x.ticketExtras(t.id, t.number, t.messages.length));
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

/** `{"<key>":<record>}` plus the envelope's extra fields, from the record's JSON. */
function envelope(sp: Spelling, key: string, recordJson: string): string {
  return `{"${key}":${recordJson}${sp.extraFields ? x.envelopeExtrasJson(key) : ''}}`;
}

/** `{"ticket":{...,"messages":[...]}}` written in `sp`, from the ticket's list JSON in that spelling. */
function ticketEnvelope(world: World, sp: Spelling, t: Ticket, list: string): string {
  const messages = JSON.stringify(t.messages.map((m) => messageOut(world, sp, m)));
  return envelope(sp, 'ticket', `${list.slice(0, -1)},"messages":${messages}}`);
}

/** The ticket as list items show it (no messages). */
export function ticketListJson(world: World, t: Ticket): string {
  if (t.listJson === undefined) t.listJson = JSON.stringify(ticketObject(world, world.spelling, t));
  return t.listJson;
}

/** Body of GET /tickets/:id: `{"ticket":{...,"messages":[...]}}`. */
export function ticketBody(world: World, t: Ticket): Buffer {
  t.fullBody ??= Buffer.from(ticketEnvelope(world, world.spelling, t, ticketListJson(world, t)));
  return t.fullBody;
}

/** The ticket with its messages as control.truth() shows it (the truth spelling). */
export function ticketTruth(world: World, t: Ticket): object {
  const sp = world.truthSpelling;
  const body = world.spelling.original
    ? ticketBody(world, t).toString()
    : ticketEnvelope(world, sp, t, JSON.stringify(ticketObject(world, sp, t)));
  return (JSON.parse(body) as { ticket: object }).ticket;
}

export function stageOut(sp: Spelling, s: Stage): Obj {
  return more(sp, { id: s.id, name: s.name, position: s.position, isWon: s.isWon, isLost: s.isLost }, () =>
    x.stageExtras(s.id, s.position, s.isWon, s.isLost),
  );
}

export function dealStatus(s: Stage): 'open' | 'won' | 'lost' {
  return s.isWon ? 'won' : s.isLost ? 'lost' : 'open';
}

export function formatCents(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

function dealObject(world: World, sp: Spelling, d: Deal): Obj {
  const stage = world.stages.get(d.stageId) as Stage;
  const pipeline = world.pipelines.find((p) => p.id === d.pipelineId) as Pipeline;
  const isDefault = world.pipelines[0] === pipeline;
  const company = d.companyId === null ? null : (world.companies.get(d.companyId) ?? null);
  const out: Obj = {
    id: d.id,
    name: d.name,
    amount: d.amountCents === null ? null : formatCents(d.amountCents),
    currency: d.currency,
    closeDate: d.closeDate,
    status: dealStatus(stage),
    pipeline: more(sp, { id: pipeline.id, name: pipeline.name }, () => x.pipelineRefExtras(isDefault)),
    stage: stageOut(sp, stage),
    owner: memberRef(world, sp, d.ownerId),
    company:
      company === null ? null : more(sp, { id: company.id, name: company.name, domain: company.domain }, () => x.companyExtras(company.id)),
    contacts: d.contactIds.map((id, i) => {
      const c = world.contacts.get(id);
      const ref = { id, firstName: c?.firstName ?? null, lastName: c?.lastName ?? null, email: c?.email ?? null, isPrimary: i === 0 };
      return more(sp, ref, () => x.dealContactExtras(id));
    }),
    fields: d.fields,
    createdAt: sp.stamp(d.createdAtMs),
    updatedAt: sp.stamp(d.updatedAtMs),
  };
  more(sp, out, () => x.dealExtras(d.id, d.amountCents, stage.isWon ? 100 : stage.isLost ? 0 : Math.min(90, 10 + stage.position * 20)));
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
  if (d.listJson === undefined) d.listJson = JSON.stringify(dealObject(world, world.spelling, d));
  return d.listJson;
}

export function dealBody(world: World, d: Deal): Buffer {
  if (d.fullBody === undefined) d.fullBody = Buffer.from(envelope(world.spelling, 'deal', dealListJson(world, d)));
  return d.fullBody;
}

export function dealTruth(world: World, d: Deal): object {
  return JSON.parse(world.spelling.original ? dealListJson(world, d) : JSON.stringify(dealObject(world, world.truthSpelling, d))) as object;
}

export function pipelineOut(world: World, sp: Spelling, p: Pipeline): Obj {
  const out: Obj = { id: p.id, name: p.name, dealCount: p.dealCount, stages: p.stages.map((s) => stageOut(sp, s)) };
  return more(sp, out, () => x.pipelineExtras(world.pipelines[0] === p, world.pipelines.indexOf(p)));
}

/** Body of GET /pipelines. */
export function pipelinesBody(world: World): string {
  const sp = world.spelling;
  const list = JSON.stringify(world.pipelines.map((p) => pipelineOut(world, sp, p)));
  return `{"pipelines":${list}${sp.extraFields ? x.envelopeExtrasJson('pipelines', world.pipelines.length) : ''}}`;
}

/** Body of the reply endpoint: `{"message":...,"ticket":...}`. */
export function replyBody(world: World, m: Message, t: Ticket): string {
  return `{"message":${JSON.stringify(messageOut(world, world.spelling, m))},${ticketBody(world, t).toString().slice(1)}`;
}

/** Body of DELETE /deals/:id. */
export function deletedBody(world: World): string {
  return `{"deleted":true${world.spelling.extraFields ? x.envelopeExtrasJson('deal') : ''}}`;
}

function eventObject(world: World, sp: Spelling, e: SimEvent): Obj {
  const actor = e.actor === null ? null : typeof e.actor === 'string' ? memberRef(world, sp, e.actor) : e.actor;
  const out: Obj = {
    id: e.id,
    type: e.type,
    entityType: e.entityType,
    entityId: e.entityId,
    payload: e.payload,
    actor,
    occurredAt: sp.stamp(e.occurredAtMs),
  };
  return more(sp, out, () => x.eventExtras(e.id, e.actor === null));
}

export function eventJson(world: World, e: SimEvent): string {
  if (e.json === undefined) e.json = JSON.stringify(eventObject(world, world.spelling, e));
  return e.json;
}

export function eventTruth(world: World, e: SimEvent): object {
  return JSON.parse(world.spelling.original ? eventJson(world, e) : JSON.stringify(eventObject(world, world.truthSpelling, e))) as object;
}
