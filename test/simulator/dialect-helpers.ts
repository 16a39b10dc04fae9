import type { Client, Wire } from './helpers.js';

/**
 * Test-side knowledge of the upstream API (docs/upstream.md) for the dialect tests: the documented keys of every
 * object kind, a walk over the documented objects of an answer, and a tour that collects answers
 * of every endpoint. Written from the documented shapes, not from the simulator's code.
 */

export const DOC_KEYS: Record<string, readonly string[]> = {
  user: ['id', 'name', 'email'],
  contactRef: ['id', 'firstName', 'lastName', 'email'],
  ticket: [
    'id',
    'number',
    'key',
    'subject',
    'status',
    'priority',
    'summary',
    'tags',
    'fields',
    'contact',
    'assignee',
    'team',
    'cc',
    'messageCount',
    'sla',
    'firstAgentReplyAt',
    'resolvedAt',
    'statusChangedAt',
    'createdAt',
    'updatedAt',
    'messages',
  ],
  team: ['id', 'name'],
  teamLead: ['id', 'name'],
  cc: ['email', 'name'],
  sla: ['firstReplyDueAt', 'resolveDueAt', 'firstReplyBreachedAt', 'resolveBreachedAt'],
  message: ['id', 'body', 'authorType', 'author', 'isInternal', 'attachments', 'createdAt'],
  attachment: ['id', 'filename', 'contentType', 'size'],
  pipeline: ['id', 'name', 'dealCount', 'stages'],
  stage: ['id', 'name', 'position', 'isWon', 'isLost'],
  deal: [
    'id',
    'name',
    'amount',
    'currency',
    'closeDate',
    'status',
    'pipeline',
    'stage',
    'owner',
    'company',
    'contacts',
    'fields',
    'createdAt',
    'updatedAt',
  ],
  pipelineRef: ['id', 'name'],
  company: ['id', 'name', 'domain'],
  dealContact: ['id', 'firstName', 'lastName', 'email', 'isPrimary'],
  event: ['id', 'type', 'entityType', 'entityId', 'payload', 'actor', 'occurredAt'],
  ticketsList: ['tickets', 'nextCursor'],
  dealsList: ['deals', 'nextCursor'],
  eventsList: ['events', 'nextCursor'],
  pipelinesList: ['pipelines'],
  ticketEnvelope: ['ticket'],
  dealEnvelope: ['deal'],
  replyEnvelope: ['message', 'ticket'],
  deletedEnvelope: ['deleted'],
};

export type Visit = (kind: string, obj: Wire) => void;

function visitTicket(t: Wire, visit: Visit): void {
  visit('ticket', t);
  visit('contactRef', t.contact);
  if (t.assignee) visit('user', t.assignee);
  if (t.team) {
    visit('team', t.team);
    if (t.team.lead) visit('teamLead', t.team.lead);
  }
  for (const e of t.cc) visit('cc', e);
  visit('sla', t.sla);
  for (const m of t.messages ?? []) visitMessage(m, visit);
}

function visitMessage(m: Wire, visit: Visit): void {
  visit('message', m);
  visit('user', m.author);
  for (const a of m.attachments) visit('attachment', a);
}

function visitDeal(d: Wire, visit: Visit): void {
  visit('deal', d);
  visit('pipelineRef', d.pipeline);
  visit('stage', d.stage);
  if (d.owner) visit('user', d.owner);
  if (d.company) visit('company', d.company);
  for (const c of d.contacts) visit('dealContact', c);
}

function visitPipeline(p: Wire, visit: Visit): void {
  visit('pipeline', p);
  for (const s of p.stages) visit('stage', s);
}

/** Calls `visit` on every documented object of an answer (payloads and `fields` are data, not visited). */
export function walkDocumented(body: Wire, visit: Visit): void {
  if (body.tickets) {
    visit('ticketsList', body);
    for (const t of body.tickets) visitTicket(t, visit);
  } else if (body.deals) {
    visit('dealsList', body);
    for (const d of body.deals) visitDeal(d, visit);
  } else if (body.events) {
    visit('eventsList', body);
    for (const e of body.events) {
      visit('event', e);
      if (e.actor) visit('user', e.actor);
    }
  } else if (body.pipelines) {
    visit('pipelinesList', body);
    for (const p of body.pipelines) visitPipeline(p, visit);
  } else if (body.message) {
    visit('replyEnvelope', body);
    visitMessage(body.message, visit);
    visitTicket(body.ticket, visit);
  } else if (body.ticket) {
    visit('ticketEnvelope', body);
    visitTicket(body.ticket, visit);
  } else if (body.deal) {
    visit('dealEnvelope', body);
    visitDeal(body.deal, visit);
  } else if (body.deleted === true) {
    visit('deletedEnvelope', body);
  } else {
    throw new Error(`unknown answer ${JSON.stringify(body).slice(0, 200)}`);
  }
}

/** Every string anywhere in `v`, with the key it sits under. */
export function strings(v: unknown, key = '', out: { key: string; value: string }[] = []): { key: string; value: string }[] {
  if (typeof v === 'string') out.push({ key, value: v });
  else if (Array.isArray(v)) for (const x of v) strings(x, key, out);
  else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) strings(x, k, out);
  return out;
}

/** The record in canonical form: documented keys only, timestamps as ms Z of the same instant, teams as {id, name}. */
export function canonical(kind: string, obj: Wire): Wire {
  const out: Wire = {};
  for (const k of DOC_KEYS[kind] ?? []) {
    if (!(k in obj)) continue;
    let v = obj[k];
    if (typeof v === 'string' && /^\d{4}-\d\d-\d\dT/.test(v)) v = new Date(Date.parse(v)).toISOString();
    out[k] = v;
  }
  const sub = (k: string, child: string) => {
    if (out[k] !== null && out[k] !== undefined) out[k] = canonical(child, out[k]);
  };
  const list = (k: string, child: string) => {
    if (Array.isArray(out[k])) out[k] = out[k].map((x: Wire) => canonical(child, x));
  };
  if (kind === 'ticket') {
    sub('contact', 'contactRef');
    sub('assignee', 'user');
    sub('team', 'team');
    sub('sla', 'sla');
    list('cc', 'cc');
    list('messages', 'message');
  } else if (kind === 'message') {
    sub('author', 'user');
    list('attachments', 'attachment');
  } else if (kind === 'deal') {
    sub('pipeline', 'pipelineRef');
    sub('stage', 'stage');
    sub('owner', 'user');
    sub('company', 'company');
    list('contacts', 'dealContact');
  } else if (kind === 'pipeline') {
    list('stages', 'stage');
  } else if (kind === 'event') {
    sub('actor', 'user');
  }
  return out;
}

export interface Answer {
  what: string;
  status: number;
  body: Wire;
}

/** Answers of every endpoint, reads and writes, with the bodies as received. */
export async function tour(c: Client): Promise<Answer[]> {
  const out: Answer[] = [];
  const take = async (what: string, p: Promise<{ status: number; body: Wire }>) => {
    const r = await p;
    out.push({ what, status: r.status, body: r.body });
    return r.body;
  };
  for (const list of ['tickets', 'deals', 'events']) {
    let cursor: string | null | undefined = null;
    do {
      const page = await take(list, c.get(`/api/v1/${list}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`));
      cursor = page.nextCursor;
    } while (cursor);
  }
  const pipelines = await take('pipelines', c.get('/api/v1/pipelines'));
  const truth = c.sim.control.truth();
  for (const t of (truth.tickets as Wire[]).slice(0, 15)) await take('ticket', c.get(`/api/v1/tickets/${t.id}`));
  for (const d of (truth.deals as Wire[]).slice(0, 15)) await take('deal', c.get(`/api/v1/deals/${d.id}`));
  const created = await take(
    'create ticket',
    c.send('POST', '/api/v1/tickets', { subject: 'Tour', body: 'Any news?', email: 'tour@x.example' }),
  );
  const team = (truth.tickets as Wire[]).find((t) => t.team)?.team.id;
  const member = (truth.members as Wire[])[1].id;
  await take(
    'patch ticket',
    c.send('PATCH', `/api/v1/tickets/${created.ticket.id}`, { priority: 'high', assigneeId: member, teamId: team }),
  );
  await take('reply', c.send('POST', `/api/v1/tickets/${created.ticket.id}/messages`, { body: 'On it' }));
  const pipeline = pipelines.pipelines[0];
  const deal = await take('create deal', c.send('POST', '/api/v1/deals', { name: 'Tour deal', amount: '10.50', ownerId: member }));
  await take('patch deal', c.send('PATCH', `/api/v1/deals/${deal.deal.id}`, { stage: pipeline.stages[1].id, closeDate: '2024-12-01' }));
  await take('delete deal', c.send('DELETE', `/api/v1/deals/${deal.deal.id}`));
  await take('events after writes', c.get('/api/v1/events?limit=20'));
  for (const a of out) if (a.status >= 300) throw new Error(`${a.what} answered ${a.status} ${JSON.stringify(a.body)}`);
  return out;
}

/** Events of one record, newest first, over every page. */
export async function eventsOf(c: Client, entityId: string): Promise<Wire[]> {
  return c.pageAll(`/api/v1/events?entityId=${entityId}&limit=100`, 'events');
}
