import { AUTO_ACKNOWLEDGEMENT, AUTOMATION_AUTHORS, SENTENCES, statusCategory, SUBJECTS, TAGS } from './catalog.js';
import { DAY, draftChanges, type GenContext } from './generator.js';
import type { Attachment, CcEntry, FieldChange, Message, Ticket } from './model.js';
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
/** With unlisted values the workspace also has `critical` tickets. */
const UNLISTED_PRIORITY_WEIGHTS: [string, number][] = [
  ['low', 0.2],
  ['normal', 0.45],
  ['high', 0.2],
  ['urgent', 0.08],
  ['critical', 0.07],
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
/**
 * The seeded history of one ticket: drafts its events in the world's dialect, logging the field
 * changes of one write (one actor, one time) together as a live write logs them, and keeps the
 * ticket's updatedAt at its newest event.
 */
class TicketHistory {
  private batch: FieldChange[] = [];
  private batchActor: string | null = null;
  private batchMs = 0;

  constructor(
    private readonly ctx: GenContext,
    private readonly t: Ticket,
  ) {}

  draft(type: string, payload: object, actor: string | null, ms: number): void {
    this.flush();
    this.ctx.drafts.push({ type, entityType: 'ticket', entityId: this.t.id, payload, actor, ms });
    this.bump(ms);
  }

  change(c: FieldChange, actor: string | null, ms: number): void {
    if (this.batch.length > 0 && (actor !== this.batchActor || ms !== this.batchMs)) this.flush();
    this.batch.push(c);
    this.batchActor = actor;
    this.batchMs = ms;
    this.bump(ms);
  }

  setStatus(to: string, actor: string | null, ms: number): void {
    const t = this.t;
    if (t.status === to) return;
    this.change({ field: 'status', from: t.status, to }, actor, ms);
    t.status = to;
    t.statusChangedAtMs = ms;
    if (to === 'solved') t.resolvedAtMs = ms;
    else if (statusCategory(to) === 'unresolved') t.resolvedAtMs = null;
    else if (t.resolvedAtMs === null) t.resolvedAtMs = ms;
  }

  flush(): void {
    if (this.batch.length > 0) draftChanges(this.ctx, 'ticket', this.t.id, this.batch, this.batchActor, this.batchMs);
    this.batch = [];
  }

  private bump(ms: number): void {
    if (ms > this.t.updatedAtMs) this.t.updatedAtMs = ms;
  }
}

export function generateTickets(ctx: GenContext, count: number): void {
  const { world, rng, startMs } = ctx;
  const members = world.memberList.map((m) => m.id);
  const teams = [...world.teams.keys()];
  const contacts = world.contactList;
  const unlisted = world.dialect.unlistedValues;
  const priorityWeights = unlisted ? UNLISTED_PRIORITY_WEIGHTS : PRIORITY_WEIGHTS;
  const all: Ticket[] = [];
  for (let i = 0; i < count; i++) {
    const id = world.ids.next('tkt');
    const contact = rng.pick(contacts);
    const createdAtMs = startMs - 10 * MINUTE - Math.floor(rng.next() ** 2 * 90 * DAY);
    const endMs = Math.min(createdAtMs + 14 * DAY, startMs - MINUTE);
    const finalPriority = weighted(ctx, priorityWeights);
    const initialPriority = rng.chance(0.08) ? weighted(ctx, priorityWeights) : finalPriority;
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

    const log = new TicketHistory(ctx, t);

    log.draft('ticket.created', { number: t.number, subject: t.subject, contactId: contact.id }, null, createdAtMs);
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
      if (j === 0) {
        if (unlisted) automationMessage(ctx, t, log);
        continue;
      }
      if (kind === 'note') {
        log.draft('ticket.note_added', { messageId: m.id }, agent, ms);
      } else if (kind === 'agent') {
        log.draft('ticket.replied', { messageId: m.id }, agent, ms);
        if (t.firstAgentReplyAtMs === null) t.firstAgentReplyAtMs = ms;
        if (t.assigneeId === null) {
          t.assigneeId = agent;
          log.change({ field: 'assigneeId', from: null, to: agent }, agent, ms);
        }
        log.setStatus('pending', agent, ms);
        lastPublic = 'agent';
      } else {
        log.draft('ticket.customer_replied', { messageId: m.id }, null, ms);
        log.setStatus('open', null, ms);
        lastPublic = 'customer';
      }
      if (j === 1 && initialPriority !== finalPriority) {
        log.change({ field: 'priority', from: initialPriority, to: finalPriority }, agent, ms);
        t.priority = finalPriority;
      }
    }
    if (t.priority !== finalPriority) {
      log.change({ field: 'priority', from: t.priority, to: finalPriority }, agent, t.updatedAtMs);
      t.priority = finalPriority;
    }
    if (lastPublic === 'agent') seedEnding(ctx, t, log, agent);
    log.flush();
    refreshSla(t, t.updatedAtMs);
    t.keyHistory.push(0, t.updatedAtMs);
    world.addTicket(t);
    all.push(t);
  }
  world.solvedQueue.sort((a, b) => a.solvedAtMs - b.solvedAtMs);
  world.ticketIndex.load(all);
}

/**
 * How a ticket the agent answered last ends up: solved (and closed by the automation when that is
 * due before the start), on hold, or left pending; unlisted values take a share as archived and
 * waiting on the customer.
 */
function seedEnding(ctx: GenContext, t: Ticket, log: TicketHistory, agent: string): void {
  const { world, rng, startMs } = ctx;
  const autoClose = world.settings.autoCloseSolvedAfterMs;
  const unlisted = world.dialect.unlistedValues;
  const r = rng.next();
  const at = t.updatedAtMs + Math.floor(rng.next() * Math.max(0, Math.min(2880 * MINUTE, startMs - 1000 - t.updatedAtMs)));
  if (r < (unlisted ? 0.5 : 0.55)) {
    log.setStatus('solved', agent, at);
    if (autoClose > 0 && at + autoClose < startMs) log.setStatus('closed', null, at + autoClose);
    else if (autoClose > 0) world.solvedQueue.push({ ticket: t, solvedAtMs: at });
  } else if (unlisted && r < 0.55) {
    log.setStatus('archived', agent, at);
  } else if (r < 0.63) {
    log.setStatus('on_hold', agent, at);
  } else if (unlisted && r < 0.7) {
    log.setStatus('waiting_on_customer', agent, at);
  }
}

/**
 * The on-create automation of a workspace with unlisted author types: the workspace (`system`)
 * acknowledges some new tickets and the AI assistant (`bot`) answers others, logged as
 * `ticket.replied` with a null actor at the ticket's creation. Neither counts as an agent reply.
 */
function automationMessage(ctx: GenContext, t: Ticket, log: TicketHistory): void {
  const r = ctx.rng.next();
  if (r >= 0.7) return;
  const authorType = r < 0.45 ? 'system' : 'bot';
  const m: Message = {
    id: ctx.world.ids.next('msg'),
    body: authorType === 'system' ? AUTO_ACKNOWLEDGEMENT : `Suggested answer: ${messageText(ctx)}`,
    authorType,
    authorId: AUTOMATION_AUTHORS[authorType].id,
    isInternal: false,
    attachments: NO_ATTACHMENTS,
    createdAtMs: t.createdAtMs,
  };
  t.messages.push(m);
  log.draft('ticket.replied', { messageId: m.id }, null, t.createdAtMs);
}
