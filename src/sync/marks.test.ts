import { describe, expect, it } from 'vitest';
import type { WorkspaceEvent } from '../api/index.js';
import { dirtyMarks } from './marks.js';

const event = (type: string, entityId: string, occurredAt: string): WorkspaceEvent => ({
  id: `${type}-${entityId}-${occurredAt}`,
  type,
  entityType: type.split('.')[0]!,
  entityId,
  payload: {},
  actor: null,
  occurredAt,
});

describe('dirtyMarks', () => {
  it('marks a ticket to read its messages when any of its events may touch them, whichever is newest', () => {
    const marks = dirtyMarks([
      event('ticket.priority_changed', 't1', '2024-05-01T12:00:00.000Z'),
      event('ticket.replied', 't1', '2024-05-01T11:00:00.000Z'),
      event('ticket.status_changed', 't2', '2024-05-01T11:00:00.000Z'),
      event('ticket.updated', 't2', '2024-05-01T10:00:00.000Z'),
      event('ticket.teleported', 't3', '2024-05-01T10:00:00.000Z'),
      event('deal.updated', 'd1', '2024-05-01T10:00:00.000Z'),
      event('widget.exploded', 'w1', '2024-05-01T10:00:00.000Z'),
    ]);
    expect(marks).toEqual([
      { entityType: 'ticket', entityId: 't1', occurredAt: '2024-05-01T12:00:00.000Z', readUnlisted: true },
      { entityType: 'ticket', entityId: 't2', occurredAt: '2024-05-01T11:00:00.000Z', readUnlisted: false },
      // A type wsmirror does not know is read in full.
      { entityType: 'ticket', entityId: 't3', occurredAt: '2024-05-01T10:00:00.000Z', readUnlisted: true },
      { entityType: 'deal', entityId: 'd1', occurredAt: '2024-05-01T10:00:00.000Z', readUnlisted: false },
    ]);
  });
});
