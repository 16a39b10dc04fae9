import type { ContactRef, Message, TicketWithMessages, UserRef } from '../api/index.js';
import { StoreError } from './errors.js';
import type { TicketsTable } from './schema.js';
import { upsertContacts, upsertUsers } from './refs.js';
import { diffFields } from './history.js';
import { recordWrites } from './record-writes.js';
import { trackedFields } from './tracked-fields.js';
import { bool, cleanText, fieldRows, firstOfEach, foldRefs, json, jsonWithList, requiredTs, str, ts } from './values.js';
import type { ChildList, ChildRow, ChildTable } from './children.js';
import type { RecordKind } from './record-upsert.js';
import { rowUpsert } from './sql.js';
import { columnsOf, jsonColumnsOf, valueColumnsOf } from '../entities/table-decl.js';
import { rowMapping, TABLES } from './tables.js';

/** The tracked fields (tracked-fields.ts), compared column by column on a re-read. */
const TRACKED = trackedFields('ticket').map((f) => ({ column: f.field as keyof Previous, field: f.field }));

/** What a ticket's row is made from: the ticket, its team and SLA objects, and when it was read. */
interface TicketSource {
  readonly t: TicketWithMessages;
  readonly team: Record<string, unknown> | null;
  readonly sla: TicketWithMessages['sla'];
  readonly syncedAt: string;
  /** json of each of `t.messages`, in order, which the ticket's raw_json reuses. */
  readonly messageTexts: readonly (string | null)[];
}

/** A ticket's row: the mapping from the declaration of `tickets` (src/entities/ticket.ts). */
const ticketMapping = rowMapping<TicketSource>()('tickets', TABLES.tickets, {
  id: ({ t }) => String(t.id),
  number: ({ t }) => (typeof t.number === 'number' ? t.number : null),
  key: ({ t }) => str(t.key),
  subject: ({ t }) => str(t.subject),
  status: ({ t }) => str(t.status),
  priority: ({ t }) => str(t.priority),
  summary: ({ t }) => str(t.summary),
  contact_id: ({ t }) => (t.contact?.id != null ? String(t.contact.id) : null),
  assignee_id: ({ t }) => (t.assignee?.id != null ? String(t.assignee.id) : null),
  team_id: ({ team }) => str(team?.id),
  team_name: ({ team }) => str(team?.name),
  team_json: ({ team }) => (team ? json(team) : null),
  tags_json: ({ t }) => json(t.tags ?? []),
  fields_json: ({ t }) => json(t.fields ?? {}),
  cc_json: ({ t }) => json(t.cc ?? []),
  message_count: ({ t }) => (typeof t.messageCount === 'number' ? t.messageCount : null),
  first_reply_due_at: ({ sla }) => ts(sla?.firstReplyDueAt, 'sla.firstReplyDueAt'),
  resolve_due_at: ({ sla }) => ts(sla?.resolveDueAt, 'sla.resolveDueAt'),
  first_reply_breached_at: ({ sla }) => ts(sla?.firstReplyBreachedAt, 'sla.firstReplyBreachedAt'),
  resolve_breached_at: ({ sla }) => ts(sla?.resolveBreachedAt, 'sla.resolveBreachedAt'),
  first_agent_reply_at: ({ t }) => ts(t.firstAgentReplyAt, 'firstAgentReplyAt'),
  resolved_at: ({ t }) => ts(t.resolvedAt, 'resolvedAt'),
  status_changed_at: ({ t }) => ts(t.statusChangedAt, 'statusChangedAt'),
  created_at: ({ t }) => ts(t.createdAt, 'createdAt'),
  updated_at: ({ t }) => requiredTs(t.updatedAt, 'updatedAt'),
  deleted_at: () => null,
  synced_at: ({ syncedAt }) => syncedAt,
  raw_json: ({ t, messageTexts }) => jsonWithList(t, 'messages', messageTexts),
});

/** `messageTexts`: json of each of `t.messages`, in order, which the ticket's raw_json reuses. */
function ticketRow(t: TicketWithMessages, syncedAt: string, messageTexts: readonly (string | null)[]): TicketsTable {
  const team = t.team && typeof t.team === 'object' ? t.team : null;
  const sla = t.sla && typeof t.sla === 'object' ? t.sla : null;
  return ticketMapping({ t, team, sla, syncedAt, messageTexts });
}

// Keyed by (ticket_id, id) since 0700_owner_keyed_children: a message id the upstream reuses in
// another ticket is another message, not a move (docs/sync.md, "Hostile upstream").
export const MESSAGES: ChildTable = {
  table: 'ticket_messages',
  parent: 'ticket_id',
  key: 'id',
  values: valueColumnsOf(TABLES.ticket_messages, 'ticket_id', 'id'),
  json: jsonColumnsOf(TABLES.ticket_messages),
};
export const TAGS: ChildTable = {
  table: 'ticket_tags',
  parent: 'ticket_id',
  key: 'tag',
  values: valueColumnsOf(TABLES.ticket_tags, 'ticket_id', 'tag'),
};
export const FIELDS: ChildTable = {
  table: 'ticket_fields',
  parent: 'ticket_id',
  key: 'key',
  values: valueColumnsOf(TABLES.ticket_fields, 'ticket_id', 'key'),
  json: jsonColumnsOf(TABLES.ticket_fields),
};

const PREVIOUS_COLUMNS = ['status', 'priority', 'assignee_id', 'team_id', 'contact_id', 'updated_at'] as const;
type Previous = Pick<TicketsTable, 'status' | 'priority' | 'assignee_id' | 'team_id' | 'contact_id' | 'updated_at'>;

// The upsert binds each value once and updates from `excluded`, where binding the row twice (insert
// values and update set) doubled the strings sent to the driver. The columns are the declaration's.
export const TICKET_COLUMNS = columnsOf(TABLES.tickets);
const writeTicket = rowUpsert('tickets', TICKET_COLUMNS, ['status', 'assignee_id', 'contact_id', 'updated_at']);

/** One ticket converted for writing: every value checked before the first write. */
export interface PreparedTicket {
  readonly row: TicketsTable;
  readonly tags: ChildRow[];
  readonly fields: ChildRow[];
  readonly messages: ChildRow[];
  readonly users: readonly (UserRef | null | undefined)[];
  readonly contact: ContactRef | null | undefined;
}

/**
 * ticket_messages rows (id, then MESSAGES.values) of a ticket's messages, one per id (two different
 * messages under one id throw: distinctMessages). `verify` builds them from the stored copy too, to
 * check the rows against it.
 */
export function messageRows(messages: readonly Message[] | null | undefined, texts?: readonly (string | null)[]): ChildRow[] {
  return distinctMessages(Array.isArray(messages) ? messages : [], texts).map(([m, raw]) => [
    String(m.id),
    str(m.body),
    str(m.authorType),
    m.author?.id != null ? String(m.author.id) : null,
    bool(m.isInternal),
    json(m.attachments ?? []),
    ts(m.createdAt, `message ${String(m.id)} createdAt`),
    raw,
  ]);
}

/** Converts one ticket; a junk value throws StoreError('INVALID_VALUE') before anything is written. */
export function prepareTicket(ticket: TicketWithMessages, syncedAt: string): PreparedTicket {
  // Each message's JSON once: its own raw_json and its part of the ticket's.
  const texts = Array.isArray(ticket.messages) ? ticket.messages.map((m) => json(m)) : [];
  const row = ticketRow(ticket, syncedAt, texts);
  const messages = messageRows(ticket.messages, texts);
  const tags: ChildRow[] = [...new Set((Array.isArray(ticket.tags) ? ticket.tags : []).map((tag) => cleanText(String(tag))))].map((tag) => [
    tag,
  ]);
  const fields: ChildRow[] = fieldRows(ticket.fields).map((f) => [f.key, f.value_text, f.value_json]);
  return {
    row,
    tags,
    fields,
    messages,
    users: [ticket.assignee, ...(ticket.messages ?? []).map((m) => m.author)],
    contact: ticket.contact,
  };
}

/**
 * One message per id within a ticket, with its raw JSON text. The same message listed twice (equal in every field) is
 * one; two different messages under one id cannot both be stored under the ticket's key, and
 * keeping either would lose the other silently, so the ticket is refused (StoreError
 * INVALID_VALUE: quarantined with this reason, its previous copy kept).
 */
function distinctMessages(messages: readonly Message[], texts?: readonly (string | null)[]): [message: Message, raw: string | null][] {
  const byId = new Map<string, string | null>();
  const out: [Message, string | null][] = [];
  for (const [i, m] of messages.entries()) {
    const text = texts?.[i] ?? json(m);
    const before = byId.get(String(m.id));
    if (before === undefined) {
      byId.set(String(m.id), text);
      out.push([m, text]);
    } else if (before !== text) {
      throw new StoreError(
        'INVALID_VALUE',
        `two different messages share the id ${JSON.stringify(String(m.id))} in this ticket; keeping either would lose the other`,
      );
    }
  }
  return out;
}

/** A ticket's child tables, written in this order for new and re-read tickets alike. */
const TICKET_CHILDREN: readonly ChildList<PreparedTicket>[] = [
  { table: TAGS, rows: (p) => p.tags },
  { table: FIELDS, rows: (p) => p.fields },
  { table: MESSAGES, rows: (p) => p.messages },
];

/** How a ticket takes the one upsert path (record-upsert.ts): users and its contact, then tags, fields and messages. */
export const TICKET_KIND: RecordKind<TicketWithMessages, PreparedTicket, Previous & { id: string }> = {
  entityType: 'ticket',
  table: 'tickets',
  prepare: (t, syncedAt) => prepareTicket(t, syncedAt),
  previousColumns: PREVIOUS_COLUMNS,
  async writeRefs(db, live) {
    await upsertUsers(db, foldRefs(live.map((p) => firstOfEach(p.users))));
    await upsertContacts(db, foldRefs(live.map((p) => firstOfEach([p.contact]))));
  },
  ...recordWrites<PreparedTicket, Previous & { id: string }>('ticket', writeTicket, TICKET_CHILDREN, (before, row) =>
    diffFields(before, row, TRACKED),
  ),
};
