import { TICKET_LIST, TICKET_READ, type Ticket, type TicketWithMessages } from '../api/index.js';
import { entityNames, type BuiltInEntity, type ListTaken } from './entity.js';
import { childTable, col, fieldsTable, historyTable, key, recordTable } from './table-decl.js';

/**
 * Ticket events that change fields the ticket list carries and never a message (docs/upstream.md,
 * "Change log"). Every other ticket event may touch the messages or take the ticket out of the
 * list: created, replied, note_added, customer_replied, message_removed, deleted, spam, merged,
 * and any type wsmirror does not know, which is read in full to be safe.
 */
const FIELD_ONLY_EVENTS: ReadonlySet<string> = new Set([
  'ticket.status_changed',
  'ticket.priority_changed',
  'ticket.assigned',
  'ticket.updated',
]);

const text = col('text');
const ts = col('timestamp');
const json = col('json');

const tickets = recordTable('tickets', {
  number: col('integer'),
  key: text,
  subject: text,
  status: text,
  priority: text,
  summary: text,
  contact_id: text,
  assignee_id: text,
  team_id: text,
  team_name: text,
  team_json: json,
  tags_json: json,
  fields_json: json,
  cc_json: json,
  message_count: col('integer'),
  first_reply_due_at: ts,
  resolve_due_at: ts,
  first_reply_breached_at: ts,
  resolve_breached_at: ts,
  first_agent_reply_at: ts,
  resolved_at: ts,
  status_changed_at: ts,
});

// Keyed by (ticket_id, id) since 0700_owner_keyed_children: a message id the upstream reuses in
// another ticket is another message, not a move (docs/sync.md, "Hostile upstream").
const ticket_messages = childTable(
  {
    id: key('text'),
    ticket_id: key('text'),
    body: text,
    author_type: text,
    author_id: text,
    is_internal: col('boolean'),
    attachments_json: json,
    created_at: ts,
    raw_json: json,
  },
  ['ticket_id', 'id'],
);

const ticket_tags = childTable({ ticket_id: key('text'), tag: key('text') }, ['ticket_id', 'tag']);

/** A ticket's names, and its tables (docs/schema.md): the record, its messages, tags and custom fields, and its history. */
const names = entityNames('ticket', 'tickets', {
  tickets,
  ticket_messages,
  ticket_tags,
  ticket_fields: fieldsTable('ticket_id'),
  ticket_history: historyTable('ticket_id', 'ticket_history'),
});

/** Tickets: list items lack messages, which only `GET /tickets/:id` shows. */
export const ticket: BuiltInEntity<TicketWithMessages, Ticket, typeof names> = {
  ...names,
  list: TICKET_LIST,
  single: TICKET_READ,
  childTables: ['ticket_messages', 'ticket_tags', 'ticket_fields'],
  tracked: [
    { field: 'status', name: 'status', value: 'text' },
    { field: 'priority', name: 'priority', value: 'text' },
    { field: 'assignee_id', name: 'assignee', value: 'id', verbs: ['assigned', 'reassigned', 'unassigned'] },
    { field: 'team_id', name: 'team', value: 'id' },
  ],
  metricLabel: 'ticket',
  touchesUnlisted: (eventType) => eventType === null || !FIELD_ONLY_EVENTS.has(eventType),
  // A mark whose events may have touched the messages is read by id, the only read that shows them.
  listable: (entry) => !entry.readUnlisted,

  /**
   * A listed ticket comes with the messages the mirror holds, which is only right when its message
   * count has not moved; one whose count moved, or that the mirror lacks, is read by id instead.
   */
  async fromList(held, items) {
    const hits = items;
    if (hits.length === 0) return { copies: [], readById: [] };
    const stored = await held.heldUnlisted(
      'ticket',
      hits.map((t) => t.id),
    );
    const taken: ListTaken<TicketWithMessages> = { copies: [], readById: [] };
    for (const item of hits) {
      const copy = stored.get(item.id);
      // Messages moved without an event the mirror holds yet (or it has none to keep): read them.
      if (!copy || copy.parts === null || copy.count !== item.messageCount) taken.readById.push(item.id);
      else taken.copies.push({ id: item.id, record: { ...item, messages: copy.parts as TicketWithMessages['messages'] } });
    }
    return taken;
  },
};
