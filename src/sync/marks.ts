import type { WorkspaceEvent } from '../api/index.js';

export interface DirtyMark {
  entityType: 'ticket' | 'deal';
  entityId: string;
  occurredAt: string;
  /**
   * A ticket's messages may have changed, so the drain must read `GET /tickets/:id` rather than
   * take the ticket from its list (docs/sync.md, "Drain"). Absent counts as true.
   */
  readMessages?: boolean;
}

/**
 * Ticket events that change fields the ticket list carries and never a message (the simulator's
 * shapes, docs/simulator.md). Every other ticket event may touch the messages or take the ticket
 * out of the list: created, replied, note_added, customer_replied, message_removed, deleted, spam,
 * merged, and any type wsmirror does not know, which is read in full to be safe.
 */
const FIELD_ONLY_TICKET_EVENTS: ReadonlySet<string> = new Set([
  'ticket.status_changed',
  'ticket.priority_changed',
  'ticket.assigned',
  'ticket.updated',
]);

export function touchesMessages(event: Pick<WorkspaceEvent, 'type' | 'entityType'>): boolean {
  return event.entityType === 'ticket' && !FIELD_ONLY_TICKET_EVENTS.has(event.type);
}

/**
 * Events of tickets and deals collapse into one mark per record, with its newest occurredAt; a
 * ticket's mark reads its messages when any of its events may have touched them.
 */
export function dirtyMarks(events: readonly WorkspaceEvent[]): DirtyMark[] {
  const byKey = new Map<string, DirtyMark>();
  for (const e of events) {
    if (e.entityType !== 'ticket' && e.entityType !== 'deal') continue;
    const key = `${e.entityType}:${e.entityId}`;
    const prev = byKey.get(key);
    const readMessages = (prev?.readMessages ?? false) || touchesMessages(e);
    const occurredAt = !prev || Date.parse(e.occurredAt) > Date.parse(prev.occurredAt) ? e.occurredAt : prev.occurredAt;
    byKey.set(key, { entityType: e.entityType, entityId: e.entityId, occurredAt, readMessages });
  }
  return [...byKey.values()];
}
