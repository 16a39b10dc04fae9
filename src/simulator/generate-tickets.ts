import { SENTENCES, SUBJECTS, TAGS } from './catalog.js';
import { DAY, type GenContext } from './generator.js';
import type { Attachment, CcEntry, Message, Ticket } from './model.js';
import { refreshSla, slaDue } from './sla.js';

const MINUTE = 60_000;
/** Shared by every seeded message without attachments; nothing mutates attachment arrays. */
const NO_ATTACHMENTS: Attachment[] = [];
const PRIORITY_WEIGHTS: [string, number][] = [
  ['low', 0.2],
  ['normal', 0.5],
  ['high', 0.22],
  ['urgent', 0.08],
];

export function messageText(ctx: GenContext): string {
  const n = ctx.rng.int(1, 3);
  let s = ctx.rng.pick(SENTENCES);
  for (let i = 1; i < n; i++) s += ' ' + ctx.rng.pick(SENTENCES);
  return s;
}

function weighted(ctx: GenContext, weights: [string, number][]): string {
  let r = ctx.rng.next();
  for (const [v, w] of weights) {
    if ((r -= w) < 0) return v;
  }
  return (weights[weights.length - 1] as [string, number])[0];
}

/**
 * Tickets with a realistic lifecycle: the customer writes, agents reply (ticket goes pending),
 * the customer answers (back to open), some are solved, and those solved long enough ago were
 * closed by the automation. Each step drafts the event that a live workspace would have logged.
 */
export function generateTickets(ctx: GenContext, count: number): void {
  const { world, rng, startMs } = ctx;
  const members = world.memberList.map((m) => m.id);
  const teams = [...world.teams.keys()];
  const contacts = world.contactList;
  const autoClose = world.settings.autoCloseSolvedAfterMs;
  const all: Ticket[] = [];
  for (let i = 0; i < count; i++) {
    const id = world.ids.next('tkt');
    const contact = rng.pick(contacts);
    const createdAtMs = startMs - 10 * MINUTE - Math.floor(rng.next() ** 2 * 90 * DAY);
    const endMs = Math.min(createdAtMs + 14 * DAY, startMs - MINUTE);
    const finalPriority = weighted(ctx, PRIORITY_WEIGHTS);
    const initialPriority = rng.chance(0.08) ? weighted(ctx, PRIORITY_WEIGHTS) : finalPriority;
    const agent = rng.pick(members);
    const assignedAtCreate = rng.chance(0.4);
    const messageCount = rng.chance(0.08) ? 1 : rng.int(3, 8);
    const times: number[] = [createdAtMs];
    for (let j = 1; j < messageCount; j++) times.push(createdAtMs + Math.floor(rng.next() * (endMs - createdAtMs)));
    times.sort((a, b) => a - b);

    const t: Ticket = {
      id,
      number: world.nextTicketNumber++,
      subject: rng.pick(SUBJECTS),
      status: 'open',
      priority: finalPriority,
      summary: rng.chance(0.25) ? messageText(ctx) : null,
      tags: rng.sample(TAGS, rng.int(0, 3)),
      fields: {},
      contactId: contact.id,
      assigneeId: assignedAtCreate ? agent : null,
      teamId: rng.chance(0.7) ? rng.pick(teams) : null,
      cc: [],
      messages: [],
      ...slaDue(finalPriority, createdAtMs),
      firstReplyBreachedMs: null,
      resolveBreachedMs: null,
      firstAgentReplyAtMs: null,
      resolvedAtMs: null,
      statusChangedAtMs: createdAtMs,
      createdAtMs,
      updatedAtMs: createdAtMs,
      keyHistory: [],
      corrupt: null,
      hidden: null,
    };
    if (rng.chance(0.6)) t.fields.plan = rng.pick(['free', 'starter', 'pro', 'enterprise']);
    if (rng.chance(0.7)) t.fields.region = rng.pick(['na', 'emea', 'apac', 'latam']);
    if (rng.chance(0.4)) t.fields.mrr = rng.int(0, 500) * 10;
    if (rng.chance(0.15)) t.fields.vip = rng.chance(0.5);
    if (rng.chance(0.15)) {
      const cc: CcEntry[] = [];
      for (let k = rng.int(1, 2); k > 0; k--) {
        const other = rng.pick(contacts);
        cc.push({ email: other.email, name: rng.chance(0.7) ? `${other.firstName} ${other.lastName}` : null });
      }
      t.cc = cc;
    }

    const draft = (type: string, payload: object, actor: string | null, ms: number): void => {
      ctx.drafts.push({ type, entityType: 'ticket', entityId: id, payload, actor, ms });
      if (ms > t.updatedAtMs) t.updatedAtMs = ms;
    };
    const setStatus = (to: string, actor: string | null, ms: number): void => {
      if (t.status === to) return;
      draft('ticket.status_changed', { from: t.status, to }, actor, ms);
      t.status = to;
      t.statusChangedAtMs = ms;
      if (to === 'solved') t.resolvedAtMs = ms;
      else if (to !== 'closed') t.resolvedAtMs = null;
    };

    draft('ticket.created', { number: t.number, subject: t.subject, contactId: contact.id }, null, createdAtMs);
    t.priority = initialPriority;
    let lastPublic: 'customer' | 'agent' = 'customer';
    for (let j = 0; j < messageCount; j++) {
      const ms = times[j] as number;
      let kind: 'customer' | 'agent' | 'note';
      if (j === 0) kind = 'customer';
      else if (lastPublic === 'customer') kind = rng.chance(0.8) ? 'agent' : 'note';
      else kind = rng.chance(0.7) ? 'customer' : rng.chance(0.5) ? 'note' : 'agent';
      const m: Message = {
        id: world.ids.next('msg'),
        body: messageText(ctx),
        authorType: kind === 'customer' ? 'customer' : 'agent',
        authorId: kind === 'customer' ? contact.id : agent,
        isInternal: kind === 'note',
        attachments: rng.chance(0.05)
          ? [{ id: world.ids.next('att'), filename: 'screenshot.png', contentType: 'image/png', size: rng.int(10_000, 900_000) }]
          : NO_ATTACHMENTS,
        createdAtMs: ms,
      };
      t.messages.push(m);
      if (j === 0) continue;
      if (kind === 'note') {
        draft('ticket.note_added', { messageId: m.id }, agent, ms);
      } else if (kind === 'agent') {
        draft('ticket.replied', { messageId: m.id }, agent, ms);
        if (t.firstAgentReplyAtMs === null) t.firstAgentReplyAtMs = ms;
        if (t.assigneeId === null) {
          t.assigneeId = agent;
          draft('ticket.assigned', { from: null, to: agent }, agent, ms);
        }
        setStatus('pending', agent, ms);
        lastPublic = 'agent';
      } else {
        draft('ticket.customer_replied', { messageId: m.id }, null, ms);
        setStatus('open', null, ms);
        lastPublic = 'customer';
      }
      if (j === 1 && initialPriority !== finalPriority) {
        draft('ticket.priority_changed', { from: initialPriority, to: finalPriority }, agent, ms);
        t.priority = finalPriority;
      }
    }
    if (t.priority !== finalPriority) {
      draft('ticket.priority_changed', { from: t.priority, to: finalPriority }, agent, t.updatedAtMs);
      t.priority = finalPriority;
    }
    if (lastPublic === 'agent') {
      const r = rng.next();
      const at = t.updatedAtMs + Math.floor(rng.next() * Math.max(0, Math.min(2880 * MINUTE, startMs - 1000 - t.updatedAtMs)));
      if (r < 0.55) {
        setStatus('solved', agent, at);
        if (autoClose > 0 && at + autoClose < startMs) setStatus('closed', null, at + autoClose);
        else if (autoClose > 0) world.solvedQueue.push({ ticket: t, solvedAtMs: at });
      } else if (r < 0.63) {
        setStatus('on_hold', agent, at);
      }
    }
    refreshSla(t, t.updatedAtMs);
    t.keyHistory.push(0, t.updatedAtMs);
    world.addTicket(t);
    all.push(t);
  }
  world.solvedQueue.sort((a, b) => a.solvedAtMs - b.solvedAtMs);
  world.ticketIndex.load(all);
}
