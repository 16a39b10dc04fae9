import { TICKET_LIST, TICKET_READ, type Ticket, type TicketWithMessages } from '../api/index.js';
import type { ListTaken, RecordEntity } from './entity.js';

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

/** Tickets: list items lack messages, which only `GET /tickets/:id` shows. */
export const ticket: RecordEntity<TicketWithMessages, Ticket> = {
  type: 'ticket',
  plural: 'tickets',
  list: TICKET_LIST,
  single: TICKET_READ,
  table: 'tickets',
  childTables: ['ticket_messages', 'ticket_tags', 'ticket_fields'],
  historyTable: 'ticket_history',
  historyOwner: 'ticket_id',
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
