import {
  AUTO_ACKNOWLEDGEMENT,
  AUTOMATION_AUTHORS,
  checkFields,
  DEFAULT_PRIORITY,
  DEFAULT_STATUS,
  priorityValues,
  resolvePriority,
} from './catalog.js';
import { logChanges } from './change-log.js';
import { Issues, notFound } from './errors.js';
import { asBody, bool, has, normalizeTags, stringList, text } from './input.js';
import type { Contact, FieldChange, Message, Ticket } from './model.js';
import { ticketBody } from './render.js';
import { refreshSla, slaDue } from './sla.js';
import { applyStatus, refuseIfClosed, settableStatus } from './ticket-status.js';
import type { World } from './world.js';

export function findListedTicket(world: World, id: string): Ticket {
  const t = world.tickets.get(id);
  if (!t || t.hidden !== null) throw notFound('ticket', id);
  return t;
}

export function beginTicketWrite(world: World, t: Ticket): void {
  world.beginWrite('ticket', t, () => ticketBody(world, t));
}

export function commitTicketWrite(world: World, t: Ticket, ms: number): void {
  refreshSla(t, ms);
  world.commitWrite('ticket', t, ms);
}

export function createTicket(world: World, actor: string, input: unknown): Ticket {
  const req = readNewTicket(world, input);
  const ms = world.clock.nowMs();
  const contact = req.contact ?? contactByEmail(world, actor, req, ms);
  const message: Message = {
    id: world.ids.next('msg'),
    body: req.firstBody,
    authorType: req.outreach ? 'agent' : 'customer',
    authorId: req.outreach ? actor : contact.id,
    isInternal: false,
    attachments: [],
    createdAtMs: ms,
  };
  const cleanFields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(req.fields ?? {})) if (v !== null) cleanFields[k] = v;
  const t: Ticket = {
    id: world.ids.next('tkt'),
    number: world.nextTicketNumber++,
    subject: req.subject,
    status: DEFAULT_STATUS,
    priority: req.priority,
    summary: null,
    tags: normalizeTags(req.tags ?? []),
    fields: cleanFields,
    contactId: contact.id,
    assigneeId: req.assigneeId ?? null,
    teamId: req.teamId ?? null,
    cc: [],
    messages: [message],
    ...slaDue(req.priority, ms),
    firstReplyBreachedMs: null,
    resolveBreachedMs: null,
    firstAgentReplyAtMs: req.outreach ? ms : null,
    resolvedAtMs: null,
    statusChangedAtMs: ms,
    createdAtMs: ms,
    updatedAtMs: ms,
    keyHistory: [],
    corrupt: null,
    hidden: null,
  };
  world.addTicket(t);
  world.emit('ticket.created', 'ticket', t.id, { number: t.number, subject: t.subject, contactId: contact.id }, actor, ms);
  if (world.dialect.unlistedValues && !req.outreach) automationReply(world, t, ms);
  commitTicketWrite(world, t, ms);
  return t;
}

/**
 * The on-create automation of a workspace with unlisted author types: the AI assistant (`bot`)
 * answers a first message that asks a question, the workspace (`system`) acknowledges any other.
 * Neither is an agent reply: firstAgentReplyAt and the status stay as they are.
 */
function automationReply(world: World, t: Ticket, ms: number): void {
  const asks = (t.messages[0]?.body ?? '').includes('?');
  const authorType = asks ? 'bot' : 'system';
  const message: Message = {
    id: world.ids.next('msg'),
    body: asks ? 'I found an article that may answer your question; an agent will follow up.' : AUTO_ACKNOWLEDGEMENT,
    authorType,
    authorId: AUTOMATION_AUTHORS[authorType].id,
    isInternal: false,
    attachments: [],
    createdAtMs: ms,
  };
  t.messages.push(message);
  world.emit('ticket.replied', 'ticket', t.id, { messageId: message.id }, null, ms);
}

/** A create-ticket body that passed validation: a known contact, or an email to find or add one by. */
type NewTicket = ReturnType<typeof readNewTicket>;

/** Checks a create-ticket body, collecting every problem before answering 422 with all of them. */
function readNewTicket(world: World, input: unknown) {
  const body = asBody(input);
  const issues = new Issues();
  const subject = text(body, 'subject', issues, { required: true });
  const firstBody = text(body, 'body', issues, { required: true });
  const contactId = text(body, 'contactId', issues);
  const email = text(body, 'email', issues);
  const firstName = text(body, 'firstName', issues);
  const lastName = text(body, 'lastName', issues);
  let contact: Contact | undefined;
  if (contactId != null) {
    contact = world.contacts.get(contactId);
    if (!contact) issues.add('contactId', 'no contact has this id');
  } else if (email != null) {
    if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) issues.add('email', 'is not an email address');
  } else if (!has(body, 'contactId') && !has(body, 'email')) {
    issues.add('contactId', 'one of contactId or email is required');
  }
  const intent = has(body, 'intent') ? body.intent : 'on_behalf';
  if (intent !== 'on_behalf' && intent !== 'outreach') issues.add('intent', 'must be on_behalf or outreach');
  const { priority: given, assigneeId, teamId } = routing(world, body, issues);
  const priority = given ?? DEFAULT_PRIORITY;
  const tags = stringList(body, 'tags', issues);
  const fields = has(body, 'fields') ? checkFields(world.customFields.ticket, body.fields, issues) : {};
  issues.throwIfAny();
  return {
    subject: subject as string,
    firstBody: firstBody as string,
    contact,
    email,
    firstName,
    lastName,
    // The agent wrote first: the first message is theirs and counts as the first reply.
    outreach: intent === 'outreach',
    priority,
    assigneeId,
    teamId,
    tags,
    fields,
  };
}

/** The contact with this email, added (and logged) when the workspace has none yet. */
function contactByEmail(world: World, actor: string, req: NewTicket, ms: number): Contact {
  const existing = world.contactsByEmail.get((req.email as string).toLowerCase());
  if (existing) return existing;
  const local = (req.email as string).split('@')[0] as string;
  const contact: Contact = {
    id: world.ids.next('con'),
    firstName: req.firstName ?? local,
    lastName: req.lastName ?? '',
    email: req.email as string,
    companyId: null,
  };
  world.addContact(contact);
  world.emit('contact.created', 'contact', contact.id, { email: contact.email }, actor, ms);
  return contact;
}

export function updateTicket(world: World, actor: string, id: string, input: unknown): Ticket {
  const t = findListedTicket(world, id);
  const body = asBody(input);
  const issues = new Issues();
  const subject = text(body, 'subject', issues);
  if (subject != null && subject.trim() === '') issues.add('subject', 'must not be empty');
  const status = has(body, 'status') ? settableStatus(world, body.status, 'status', issues) : undefined;
  const { priority, assigneeId, teamId } = routing(world, body, issues);
  const tags = stringList(body, 'tags', issues);
  const addTags = stringList(body, 'addTags', issues);
  const removeTags = stringList(body, 'removeTags', issues);
  const summary = text(body, 'summary', issues, { nullable: true });
  const fields = has(body, 'fields') ? checkFields(world.customFields.ticket, body.fields, issues) : undefined;
  issues.throwIfAny();
  if (status !== undefined && status !== t.status) refuseIfClosed(t, 'changing the status');

  const changes: Record<string, { from: unknown; to: unknown }> = {};
  const note = (field: string, from: unknown, to: unknown): void => {
    if (JSON.stringify(from) !== JSON.stringify(to)) changes[field] = { from, to };
  };
  if (subject !== undefined) note('subject', t.subject, subject);
  if (summary !== undefined) note('summary', t.summary, summary);
  if (teamId !== undefined) note('teamId', t.teamId, teamId);
  if (tags !== undefined || addTags !== undefined || removeTags !== undefined) {
    let next = tags !== undefined ? normalizeTags(tags) : t.tags.slice();
    if (addTags) next = normalizeTags([...next, ...addTags]);
    if (removeTags) next = next.filter((x) => !removeTags.map((r) => r.trim()).includes(x));
    note('tags', t.tags, next);
  }
  const nextFields = { ...t.fields };
  if (fields) {
    for (const [k, v] of Object.entries(fields)) {
      note(`fields.${k}`, t.fields[k] ?? null, v);
      if (v === null) delete nextFields[k];
      else nextFields[k] = v;
    }
  }
  const priorityChanges = priority !== undefined && priority !== t.priority;
  const assigneeChanges = assigneeId !== undefined && assigneeId !== t.assigneeId;
  const statusChanges = status !== undefined && status !== t.status;
  // A no-op PATCH neither logs an event nor bumps updatedAt.
  if (Object.keys(changes).length === 0 && !priorityChanges && !assigneeChanges && !statusChanges) return t;

  const ms = world.clock.nowMs();
  beginTicketWrite(world, t);
  if (changes.subject) t.subject = subject as string;
  if (changes.summary) t.summary = summary ?? null;
  if (changes.teamId) t.teamId = teamId ?? null;
  if (changes.tags) t.tags = changes.tags.to as string[];
  t.fields = nextFields;
  // The log order of the original dialect: other fields, priority, assignee, status.
  const logged: FieldChange[] = Object.entries(changes).map(([field, c]) => ({ field, from: c.from, to: c.to }));
  if (priorityChanges) {
    logged.push({ field: 'priority', from: t.priority, to: priority });
    t.priority = priority;
    Object.assign(t, slaDue(t.priority, t.createdAtMs));
  }
  if (assigneeChanges) {
    logged.push({ field: 'assigneeId', from: t.assigneeId, to: assigneeId ?? null });
    t.assigneeId = assigneeId ?? null;
  }
  const statusChange = statusChanges ? applyStatus(world, t, status, ms) : null;
  if (statusChange) logged.push(statusChange);
  logChanges(world, 'ticket', t.id, logged, actor, ms);
  commitTicketWrite(world, t, ms);
  return t;
}

export function addMessage(world: World, actor: string, id: string, input: unknown): { message: Message; ticket: Ticket } {
  const t = findListedTicket(world, id);
  const body = asBody(input);
  const issues = new Issues();
  const messageBody = text(body, 'body', issues, { required: true });
  const internal = bool(body, 'internal', issues) ?? false;
  const status = has(body, 'status') ? settableStatus(world, body.status, 'status', issues) : undefined;
  issues.throwIfAny();
  if (!internal) refuseIfClosed(t, 'a public reply');
  if (status !== undefined && status !== t.status) refuseIfClosed(t, 'changing the status');

  const ms = world.clock.nowMs();
  beginTicketWrite(world, t);
  const message: Message = {
    id: world.ids.next('msg'),
    body: messageBody as string,
    authorType: 'agent',
    authorId: actor,
    isInternal: internal,
    attachments: [],
    createdAtMs: ms,
  };
  t.messages.push(message);
  const logged: FieldChange[] = [];
  if (internal) {
    world.emit('ticket.note_added', 'ticket', t.id, { messageId: message.id }, actor, ms);
  } else {
    world.emit('ticket.replied', 'ticket', t.id, { messageId: message.id }, actor, ms);
    if (t.firstAgentReplyAtMs === null) t.firstAgentReplyAtMs = ms;
    if (world.settings.autoAssignOnReply && t.assigneeId === null) {
      t.assigneeId = actor;
      logged.push({ field: 'assigneeId', from: null, to: actor });
    }
  }
  // Reply rule: a public agent reply waits on the customer unless the caller chose a status.
  const to = internal ? status : (status ?? 'pending');
  const statusChange = to === undefined ? null : applyStatus(world, t, to, ms);
  if (statusChange) logged.push(statusChange);
  logChanges(world, 'ticket', t.id, logged, actor, ms);
  commitTicketWrite(world, t, ms);
  return { message, ticket: t };
}

/** Priority, assignee and team of a create or update body: each checked the same way in both. */
function routing(world: World, body: Record<string, unknown>, issues: Issues) {
  let priority: string | undefined;
  if (has(body, 'priority')) {
    const unlisted = world.dialect.unlistedValues;
    const p = typeof body.priority === 'string' ? resolvePriority(body.priority, unlisted) : undefined;
    if (p) priority = p.value;
    else issues.add('priority', `must be one of ${priorityValues(unlisted).join(', ')}`);
  }
  const assigneeId = text(body, 'assigneeId', issues, { nullable: true });
  if (assigneeId != null && !world.members.has(assigneeId)) issues.add('assigneeId', 'no member has this id');
  const teamId = text(body, 'teamId', issues, { nullable: true });
  if (teamId != null && !world.teams.has(teamId)) issues.add('teamId', 'no team has this id');
  return { priority, assigneeId, teamId };
}
